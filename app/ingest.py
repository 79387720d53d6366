"""The ingest service: parsed lines -> one upload and its runs, duplicates found by the database.

It takes a session and never commits: the caller's one transaction makes an upload whole or absent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, insert, select, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

from app import sqlite_bulk
from app.db import begin_write
from app.errors import InvalidUpload
from app.models import Tag, Upload, run_table
from app.parsing import TESTS, CheckedLine, LineError, ParsedRun, iter_parse_bytes, parse_line

BATCH_ROWS = 2000  # rows per executemany: memory stays flat however long the upload
# Errors reported per upload; the rest are only counted. 32 MiB of one-character lines are 16 million
# errors: kept, they took gigabytes and made a 76 MB answer per MiB (issue #8).
MAX_REPORTED_ERRORS = 100
# SQLite allows 32766 bound parameters per statement; PostgreSQL 65535.
LOOKUP_CHUNK = 900


@dataclass(slots=True)
class IngestOutcome:
    upload_id: int
    created: list[int] = field(default_factory=list)
    duplicates: list[int] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)  # the first MAX_REPORTED_ERRORS
    error_count: int = 0  # all of them


def ingest_bytes(*, session: Session, data: bytes, max_line_bytes: int, **options: Any) -> IngestOutcome:
    """Parse an upload's bytes and ingest them; on SQLite, plain 1.98 lines are converted by SQLite."""
    sqlite = session.get_bind().dialect.name == "sqlite"
    items = iter_parse_bytes(data, max_line_bytes=max_line_bytes, defer_plain=sqlite)
    return ingest(session=session, items=items, **options)


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
    """Store every ParsedRun (or CheckedLine) of `items` under a new upload.

    Without `partial`, any LineError raises InvalidUpload and nothing must be committed; with it,
    the valid lines are stored and the errors returned. A line already stored (or repeated in this
    upload) is not stored again: its existing id is listed as a duplicate.
    """
    begin_write(session)
    now = datetime.now(UTC)
    upload = Upload(created_at=now, source=source, filename=filename, label=label)
    session.add(upload)
    session.flush()

    head, tail = _upload_columns(session, upload.id, now, label, document)
    errors: list[LineError] = []  # the first MAX_REPORTED_ERRORS
    error_count = 0
    seen: set[bytes] = set()
    line_hashes: list[bytes] = []  # one per valid line, in order
    batch = _Batch(session, head, tail)
    run_count = 0
    for item in items:
        if isinstance(item, LineError):
            error_count += 1
            if len(errors) < MAX_REPORTED_ERRORS:
                errors.append(item)
            if not partial:
                batch.clear()
            continue
        run_count += 1
        if errors and not partial:
            continue  # the upload has failed: nothing more is stored, the rest only counted
        digest = line_hash(item.raw_line)
        line_hashes.append(digest)
        if digest not in seen:
            seen.add(digest)
            batch.add(item, digest)

    total = run_count + error_count
    if run_count == 0:
        detail = "no bonnie++ result line in the upload" if not errors else f"all {total} lines are invalid; nothing was stored"
        raise InvalidUpload(detail, errors, error_count)
    if errors and not partial:
        verb = "is" if error_count == 1 else "are"
        raise InvalidUpload(f"{error_count} of {total} lines {verb} invalid; nothing was stored", errors, error_count)
    batch.flush()

    outcome = IngestOutcome(upload_id=upload.id, errors=errors, error_count=error_count)
    created_ids = dict(
        session.execute(
            select(run_table.c.line_hash, run_table.c.id).where(run_table.c.upload_id == upload.id)
        ).all()
    )
    existing_ids = _ids_by_hash(session, [h for h in seen if h not in created_ids])
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
            session.execute(
                insert(Tag),
                [{"run_id": run_id, "key": key, "value": value} for run_id in outcome.created[start:start + BATCH_ROWS] for key, value in tags.items()],
            )  # fmt: skip
    return outcome


# The run columns an insert fills, in the order run_values() gives them.
ROW_COLUMNS = (
    "upload_id", "created_at", "line_hash", "raw_line", "machine", "format_version", "bonnie_version",
    "concurrency", "seed", "file_size_mib", "io_chunk_bytes", "seek_count", "seek_procs", "num_files",
    "file_max_size", "file_min_size", "file_num_dirs", "file_link", "label", "document",
    *(f"{test}_{part}" for test in TESTS for part in ("status", "value", "cpu_pct", "latency_us")),
)  # fmt: skip


class _Batch:
    """Rows waiting to be inserted, converted by Python (run_values) or staged for SQLite (sqlite_bulk).

    On SQLite, which this transaction holds the write lock of, each line is given its id here, in
    line order, so the two kinds can be inserted separately and still number runs as their lines
    come (the export gives them back in that order). PostgreSQL numbers them from its sequence.
    """

    def __init__(self, session: Session, head: tuple, tail: tuple):
        self.session = session
        self.head, self.tail = head, tail
        self.values: list[tuple] = []
        self.staged: list[tuple] = []
        self.sqlite = session.get_bind().dialect.name == "sqlite"
        self.next_id = _next_sqlite_run_id(session) if self.sqlite else None
        self.upload = (*head, *tail)  # upload_id, created_at, label, document

    def add(self, item: ParsedRun | CheckedLine, digest: bytes) -> None:
        if self.sqlite:
            run_id = self.next_id
            self.next_id += 1
            if isinstance(item, CheckedLine):
                self.staged.append(sqlite_bulk.row(run_id, digest, item.raw_line, self.upload))
            else:
                self.values.append((run_id, *run_values(item, digest, self.head, self.tail)))
        else:
            if isinstance(item, CheckedLine):
                item = parse_line(item.raw_line, item.line_no)
            self.values.append(run_values(item, digest, self.head, self.tail))
        if len(self.values) >= BATCH_ROWS or len(self.staged) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.values:
            _insert_rows(self.session, self.values)
        if self.staged:
            sqlite_bulk.insert(self.session, self.staged)
        self.clear()

    def clear(self) -> None:
        self.values.clear()
        self.staged.clear()


def _next_sqlite_run_id(session: Session) -> int:
    """Above every id the run table has ever given (AUTOINCREMENT's sqlite_sequence), not just the
    largest one left: a deleted run's id is never reused."""
    highest = session.execute(
        text("SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'run'), 0), coalesce((SELECT max(id) FROM run), 0))")
    ).scalar_one()
    return highest + 1


def run_values(run: ParsedRun, digest: bytes, head: tuple, tail: tuple) -> tuple:
    """One row for ROW_COLUMNS: head = (upload_id, created_at), tail = (label, document)."""
    file_test = run.file_test or _NO_FILE_TEST
    values = (
        *head, digest, run.raw_line, run.machine, run.format_version, run.bonnie_version,
        run.concurrency, run.seed, run.file_size_mib, run.io_chunk_bytes, run.seek_count, run.seek_procs,
        *file_test, *tail,
    )  # fmt: skip
    for result in run.results:
        values += result
    return values


_NO_FILE_TEST = (None, None, None, None, None)


def _upload_columns(session: Session, upload_id: int, created_at: datetime, label: str | None, document: Any) -> tuple[tuple, tuple]:
    """The values every row of an upload shares, as the driver takes them."""
    dialect = session.get_bind().dialect
    if dialect.name != "sqlite":
        return (upload_id, created_at), (label, document)
    # The SQLite path bypasses SQLAlchemy's types, so store what they would have stored.
    created_at_text = run_table.c.created_at.type.dialect_impl(dialect).bind_processor(dialect)(created_at)
    document_text = None if document is None else run_table.c.document.type.dialect_impl(dialect).bind_processor(dialect)(document)
    return (upload_id, created_at_text), (label, document_text)


# CPython's sqlite3 binds None through its slow adaptation path (a third of a microsecond each,
# and a row has about twenty); an integer is bound directly. So missing values travel as the
# integer -1, which NULLIF turns back into NULL: no stored number is negative (the parser refuses
# them) and no text or blob compares equal to an integer.
_SQLITE_NULL = -1
_SQLITE_INSERT = (
    f"INSERT INTO run (id, {', '.join(ROW_COLUMNS)}) VALUES (?, {', '.join(f'NULLIF(?, {_SQLITE_NULL})' for _ in ROW_COLUMNS)})"
    " ON CONFLICT (line_hash) DO NOTHING"
)
_NULL_TO_SENTINEL = {None: _SQLITE_NULL}


def _sqlite_row(row: tuple) -> tuple:
    return tuple(map(_NULL_TO_SENTINEL.get, row, row))


def _insert_rows(session: Session, rows: list[tuple]) -> None:
    """INSERT ... ON CONFLICT (line_hash) DO NOTHING for each row: duplicates are the database's call.

    On SQLite each row starts with its id (see _Batch).
    """
    if session.get_bind().dialect.name == "sqlite":
        cursor = session.connection().connection.driver_connection.cursor()
        cursor.executemany(_SQLITE_INSERT, [_sqlite_row(row) for row in rows])
        cursor.close()
        return
    # Two uploads sharing lines in different orders would each wait in ON CONFLICT for a row the
    # other inserted: a deadlock, and one of them a 500 (issue #5). Run inserts take turns under one
    # transaction-scoped advisory lock, as SQLite's single writer does; parsing up to the first
    # batch still runs in parallel. Taking it again in the same transaction is free.
    session.execute(select(func.pg_advisory_xact_lock(_PG_INGEST_LOCK)))
    statement = postgresql.insert(run_table).on_conflict_do_nothing(index_elements=["line_hash"])
    session.execute(statement, [dict(zip(ROW_COLUMNS, row, strict=True)) for row in rows])


_PG_INGEST_LOCK = 0x626F6E6E6965  # "bonnie": any constant no other code locks


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
