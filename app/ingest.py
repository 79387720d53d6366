"""The ingest service: parsed lines -> one upload and its runs, duplicates found by the database.

It takes a session and never commits: the caller's one transaction makes an upload whole or absent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.db import begin_write
from app.errors import InvalidUpload
from app.models import Tag, Upload, run_table
from app.parsing import TESTS, LineError, ParsedRun

BATCH_ROWS = 2000
# SQLite allows 32766 bound parameters per statement; PostgreSQL 65535.
LOOKUP_CHUNK = 900


@dataclass(slots=True)
class IngestOutcome:
    upload_id: int
    created: list[int] = field(default_factory=list)
    duplicates: list[int] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)


def line_hash(raw_line: str) -> bytes:
    return hashlib.blake2b(raw_line.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def ingest(
    *,
    session: Session,
    items: Iterable[ParsedRun | LineError],
    partial: bool = False,
    source: str,
    filename: str | None = None,
    label: str | None = None,
    tags: dict[str, str] | None = None,
    document: Any = None,
) -> IngestOutcome:
    """Store every ParsedRun of `items` under a new upload.

    Without `partial`, any LineError raises InvalidUpload and nothing must be committed; with it,
    the valid lines are stored and the errors returned. A line already stored (or repeated in this
    upload) is not stored again: its existing id is listed as a duplicate.
    """
    begin_write(session)
    now = datetime.now(UTC)
    upload = Upload(created_at=now, source=source, filename=filename, label=label)
    session.add(upload)
    session.flush()

    insert_stmt = _insert_ignoring_duplicates(session)
    errors: list[LineError] = []
    first_line_of: dict[bytes, int] = {}
    line_hashes: list[bytes] = []  # one per valid line, in order
    batch: list[dict[str, Any]] = []
    run_count = 0
    for item in items:
        if isinstance(item, LineError):
            errors.append(item)
            if not partial:
                batch.clear()
            continue
        run_count += 1
        digest = line_hash(item.raw_line)
        line_hashes.append(digest)
        if digest in first_line_of or (errors and not partial):
            first_line_of.setdefault(digest, item.line_no)
            continue
        first_line_of[digest] = item.line_no
        batch.append(run_row(item, digest, upload.id, now, label, document))
        if len(batch) >= BATCH_ROWS:
            session.execute(insert_stmt, batch)
            batch.clear()

    total = run_count + len(errors)
    if run_count == 0:
        detail = "no bonnie++ result line in the upload" if not errors else f"all {total} lines are invalid; nothing was stored"
        raise InvalidUpload(detail, errors)
    if errors and not partial:
        verb = "is" if len(errors) == 1 else "are"
        raise InvalidUpload(f"{len(errors)} of {total} lines {verb} invalid; nothing was stored", errors)
    if batch:
        session.execute(insert_stmt, batch)

    outcome = IngestOutcome(upload_id=upload.id, errors=errors)
    created_ids = dict(
        session.execute(
            select(run_table.c.line_hash, run_table.c.id).where(run_table.c.upload_id == upload.id)
        ).all()
    )
    existing_ids = _ids_by_hash(session, [h for h in first_line_of if h not in created_ids])
    reported: set[bytes] = set()
    for digest in line_hashes:
        if digest in created_ids and digest not in reported:
            outcome.created.append(created_ids[digest])
        else:
            outcome.duplicates.append(created_ids.get(digest) or existing_ids[digest])
        reported.add(digest)

    if tags and outcome.created:
        session.execute(
            insert(Tag),
            [{"run_id": run_id, "key": key, "value": value} for run_id in outcome.created for key, value in tags.items()],
        )
    return outcome


def run_row(run: ParsedRun, digest: bytes, upload_id: int, created_at: datetime, label: str | None, document: Any) -> dict[str, Any]:
    file_test = run.file_test
    row: dict[str, Any] = {
        "upload_id": upload_id,
        "created_at": created_at,
        "line_hash": digest,
        "raw_line": run.raw_line,
        "machine": run.machine,
        "format_version": run.format_version,
        "bonnie_version": run.bonnie_version,
        "concurrency": run.concurrency,
        "seed": run.seed,
        "file_size_mib": run.file_size_mib,
        "io_chunk_bytes": run.io_chunk_bytes,
        "seek_count": run.seek_count,
        "seek_procs": run.seek_procs,
        "num_files": file_test.num_files if file_test else None,
        "file_max_size": file_test.max_size if file_test else None,
        "file_min_size": file_test.min_size if file_test else None,
        "file_num_dirs": file_test.num_dirs if file_test else None,
        "file_link": file_test.link if file_test else None,
        "label": label,
        "document": document,
    }
    for name, result in zip(_RESULT_KEYS, run.results, strict=True):
        row[name[0]] = result.status
        row[name[1]] = result.value
        row[name[2]] = result.cpu_pct
        row[name[3]] = result.latency_us
    return row


_RESULT_KEYS = [(f"{t}_status", f"{t}_value", f"{t}_cpu_pct", f"{t}_latency_us") for t in TESTS]


def _insert_ignoring_duplicates(session: Session):
    dialect = session.get_bind().dialect.name
    module = postgresql if dialect == "postgresql" else sqlite
    return module.insert(run_table).on_conflict_do_nothing(index_elements=["line_hash"])


def _ids_by_hash(session: Session, digests: list[bytes]) -> dict[bytes, int]:
    found: dict[bytes, int] = {}
    for start in range(0, len(digests), LOOKUP_CHUNK):
        chunk = digests[start:start + LOOKUP_CHUNK]
        found.update(
            session.execute(
                select(run_table.c.line_hash, run_table.c.id).where(run_table.c.line_hash.in_(chunk))
            ).all()
        )
    return found
