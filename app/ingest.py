"""The ingest service: parsed lines -> one upload and its runs, duplicates found by the database.

It takes a session and never commits: the caller's one transaction makes an upload whole or absent.
How rows reach the database is a writer's job (app.run_writers); this module decides which lines
are stored: each valid line once, in line order, nothing at all when a line is invalid (unless partial).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert
from sqlalchemy.orm import Session

from app.db import begin_write
from app.errors import BadRequest, InvalidUpload
from app.models import Tag, Upload
from app.parsing import CheckedLine, LineError, ParsedRun, iter_parse_bytes
from app.run_writers import BATCH_ROWS, writer_class
from app.schemas import MAX_TAGS_PER_RUN
from app.secrets_scrub import scrub_document

# Errors reported per upload; the rest are only counted. 32 MiB of one-character lines are 16 million
# errors: kept, they took gigabytes and made a 76 MB answer per MiB (issue #8).
MAX_REPORTED_ERRORS = 100


@dataclass(slots=True)
class IngestOutcome:
    upload_id: int
    created: list[int] = field(default_factory=list)
    duplicates: list[int] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)  # the first MAX_REPORTED_ERRORS
    error_count: int = 0  # all of them


def ingest_bytes(*, session: Session, data: bytes, max_line_bytes: int, **options: Any) -> IngestOutcome:
    """Parse an upload's bytes and ingest them, leaving to the writer the lines it converts itself."""
    defer_plain = writer_class(session).defer_plain
    return ingest(
        session=session, items=iter_parse_bytes(data, max_line_bytes=max_line_bytes, defer_plain=defer_plain), **options
    )


def line_hash(raw_line: str) -> bytes:
    return hashlib.blake2b(raw_line.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def ingest(
    *,
    session: Session,
    items: Iterable[ParsedRun | CheckedLine | LineError],
    partial: bool = False,
    source: str,
    filename: str | None = None,
    label: str | None = None,
    tags: dict[str, str] | None = None,
    document: Any = None,
) -> IngestOutcome:
    """Store every ParsedRun (or CheckedLine, where the writer takes them) of `items` under a new upload.

    Without `partial`, any LineError raises InvalidUpload and nothing must be committed; with it,
    the valid lines are stored and the errors returned. A line already stored (or repeated in this
    upload) is not stored again: its existing id is listed as a duplicate.
    """
    if tags and len(tags) > MAX_TAGS_PER_RUN:
        raise BadRequest(f"a run has at most {MAX_TAGS_PER_RUN} tags; {len(tags)} were given")
    begin_write(session)
    now = datetime.now(UTC)
    upload = Upload(created_at=now, source=source, filename=filename, label=label)
    session.add(upload)
    session.flush()
    # A runner before issue #8's fix posts its argv, --token SECRET included.
    writer = writer_class(session)(session, upload.id, now, label, scrub_document(document))

    errors: list[LineError] = []  # the first MAX_REPORTED_ERRORS
    error_count = 0
    run_count = 0
    seen: set[bytes] = set()
    line_hashes: list[bytes] = []  # one per valid line, in order
    for item in items:
        if isinstance(item, LineError):
            error_count += 1
            if len(errors) < MAX_REPORTED_ERRORS:
                errors.append(item)
            if not partial:
                writer.discard()
            continue
        run_count += 1
        if errors and not partial:
            continue  # the upload has failed: nothing more is stored, the rest only counted
        digest = line_hash(item.raw_line)
        line_hashes.append(digest)
        if digest not in seen:
            seen.add(digest)
            writer.add(item, digest)

    total = run_count + error_count
    if run_count == 0:
        detail = (
            "no bonnie++ result line in the upload"
            if not errors
            else f"all {total} lines are invalid; nothing was stored"
        )
        raise InvalidUpload(detail, errors, error_count)
    if errors and not partial:
        verb = "is" if error_count == 1 else "are"
        raise InvalidUpload(f"{error_count} of {total} lines {verb} invalid; nothing was stored", errors, error_count)

    created_ids, existing_ids = writer.finish()
    outcome = IngestOutcome(upload_id=upload.id, errors=errors, error_count=error_count)
    reported: set[bytes] = set()
    for digest in line_hashes:
        if digest in created_ids and digest not in reported:
            outcome.created.append(created_ids[digest])
        else:
            outcome.duplicates.append(created_ids.get(digest) or existing_ids[digest])
        reported.add(digest)

    if tags:
        # In batches: 100,000 runs with two tags were 200,000 dicts at once.
        for start in range(0, len(outcome.created), BATCH_ROWS):
            rows = [
                {"run_id": run_id, "key": key, "value": value}
                for run_id in outcome.created[start : start + BATCH_ROWS]
                for key, value in tags.items()
            ]
            session.execute(insert(Tag), rows)
    return outcome
