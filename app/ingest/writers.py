"""Writers: how an upload's runs get into the `run` table, one class per way.

Design note
-----------
app.ingest.service decides *what* is stored (which lines, once each, in line order, all or nothing); a
writer decides *how*. Every writer has the same small interface, RunWriter:

* `add(item, digest)`: one parsed line to store, given in line order, each distinct line once.
* `discard()`: the upload has failed; drop what is pending (the caller rolls the transaction back).
* `finish()`: insert what is pending and say which line hashes got which run id: the runs this
  upload created, and the runs that already held the other lines (the duplicates).

Two writers exist:

* SqliteWriter: this transaction holds SQLite's write lock (app.store.db.begin_write), so it numbers the
  runs itself, in line order, from above every id the table has given. The lines the parser read
  (ParsedRun values; CPython binds None slowly, so they travel as a sentinel that NULLIF turns back)
  go in by executemany. The plain format-1.98 lines, when the upload has them, never reach Python:
  app.ingest.sqlite_bulk's extension stores them in finish(), numbered around the parsed ones
  (PlainLines.distinct_before), and says which it created. No other writer can run meanwhile, so
  looking up the parsed lines' ids afterwards is safe.
* PostgresWriter: ParsedRun values; runs are numbered by the sequence. One statement per batch
  inserts and names the existing run of each duplicate (ON CONFLICT DO UPDATE ... RETURNING), with
  no second lookup after the insert for a run deleted in between to make the upload fail;
  the update locks that run until this upload commits.

The row a writer stores is ROW_COLUMNS, built by run_values() from app.columns' names.
"""

from __future__ import annotations

from datetime import datetime
from itertools import chain
from operator import attrgetter
from typing import Any, Protocol

from sqlalchemy import func, select, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

from app.columns import FILE_TEST_COLUMNS, RESULT_COLUMNS, RUN_LINE_COLUMNS
from app.ingest.parsing import ParsedRun
from app.ingest.sqlite_bulk import PlainLines
from app.store.models import run_table

BATCH_ROWS = 2000  # rows per executemany: memory stays flat however long the upload
# SQLite allows 32766 bound parameters per statement; PostgreSQL 65535.
LOOKUP_CHUNK = 900

# The run columns a writer fills, in the order run_values() gives them.
ROW_COLUMNS: tuple[str, ...] = (
    "upload_id",
    "created_at",
    "line_hash",
    "raw_line",
    *RUN_LINE_COLUMNS,
    *FILE_TEST_COLUMNS,
    "label",
    "document",
    *RESULT_COLUMNS,
)
_line_values = attrgetter(*RUN_LINE_COLUMNS)  # ParsedRun's attributes are named as the columns
_NO_FILE_TEST = (None,) * len(FILE_TEST_COLUMNS)


def run_values(run: ParsedRun, digest: bytes, head: tuple, tail: tuple) -> tuple:
    """One row for ROW_COLUMNS: head = (upload_id, created_at), tail = (label, document)."""
    # A Result's fields are app.columns.RESULT_PARTS, in that order; results come in TESTS order.
    return (
        *head,
        digest,
        run.raw_line,
        *_line_values(run),
        *(run.file_test or _NO_FILE_TEST),
        *tail,
        *chain.from_iterable(run.results),
    )


class RunWriter(Protocol):
    def add(self, item: ParsedRun, digest: bytes) -> None: ...

    def discard(self) -> None: ...

    def finish(self) -> tuple[dict[bytes, int], dict[bytes, int]]:
        """(created, existing): line hash -> run id, for every hash given to add()."""
        ...


def writer_class(session: Session) -> type[SqliteWriter | PostgresWriter]:
    """The writer for the session's database; made with (session, upload_id, created_at, label, document, plain):
    `plain` (app.ingest.sqlite_bulk's PlainLines, SQLite only) holds the lines the parser never sees."""
    return SqliteWriter if session.get_bind().dialect.name == "sqlite" else PostgresWriter


class SqliteWriter:
    def __init__(
        self,
        session: Session,
        upload_id: int,
        created_at: datetime,
        label: str | None,
        document: Any,
        plain: PlainLines | None = None,
    ):
        self.session = session
        self.upload_id = upload_id
        dialect = session.get_bind().dialect
        # These rows bypass SQLAlchemy's types, so store what they would have stored.
        created_at_text = _bind(run_table.c.created_at, dialect, created_at)
        document_text = None if document is None else _bind(run_table.c.document, dialect, document)
        self.head, self.tail = (upload_id, created_at_text), (label, document_text)
        self.first_id = _next_sqlite_run_id(session)
        self.plain = plain
        self.parsed: list[tuple] = []
        self.digests: list[bytes] = []
        self.line_numbers: list[int] = []  # of the parsed runs, for plain.insert()

    def add(self, item: ParsedRun, digest: bytes) -> None:
        # In line order: the distinct lines before this one, parsed or plain, took the ids before it.
        run_id = self.first_id + len(self.digests)
        if self.plain is not None:
            run_id += self.plain.distinct_before(item.line_no)
            self.line_numbers.append(item.line_no)
        self.digests.append(digest)
        row = (run_id, *run_values(item, digest, self.head, self.tail))
        self.parsed.append(tuple(map(_NULL_TO_SENTINEL.get, row, row)))
        if len(self.parsed) >= BATCH_ROWS:
            self._flush()

    def discard(self) -> None:
        self.parsed.clear()

    def finish(self) -> tuple[dict[bytes, int], dict[bytes, int]]:
        self._flush()
        if self.plain is None:
            created = dict(
                self.session.execute(
                    select(run_table.c.line_hash, run_table.c.id).where(run_table.c.upload_id == self.upload_id)
                ).all()
            )
            # Safe as a second statement: this transaction holds the write lock, so nobody deletes these runs meanwhile.
            existing = _ids_by_hash(self.session, [digest for digest in self.digests if digest not in created])
            return created, existing
        self.plain.insert(self.session, self.first_id, self.line_numbers, (*self.head, *self.tail))
        # Only the parsed lines (few, beside plain ones) are looked up: every id from first_id on is this upload's.
        found = _ids_by_hash(self.session, self.digests)
        created = {digest: run_id for digest, run_id in found.items() if run_id >= self.first_id}
        return created, {digest: run_id for digest, run_id in found.items() if run_id < self.first_id}

    def _flush(self) -> None:
        if not self.parsed:
            return
        driver_connection = self.session.connection().connection.driver_connection
        assert driver_connection is not None  # a checked-out connection always has one
        cursor = driver_connection.cursor()
        try:
            cursor.executemany(_SQLITE_INSERT, self.parsed)
        finally:
            cursor.close()
        self.discard()


def _next_sqlite_run_id(session: Session) -> int:
    """Above every id the run table has ever given (AUTOINCREMENT's sqlite_sequence), not just the
    largest one left: a deleted run's id is never reused."""
    highest = session.execute(
        text(
            "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'run'), 0), coalesce((SELECT max(id) FROM run), 0))"
        )
    ).scalar_one()
    return highest + 1


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


def _ids_by_hash(session: Session, digests: list[bytes]) -> dict[bytes, int]:
    found: dict[bytes, int] = {}
    for start in range(0, len(digests), LOOKUP_CHUNK):
        chunk = digests[start : start + LOOKUP_CHUNK]
        found.update(
            session.execute(select(run_table.c.line_hash, run_table.c.id).where(run_table.c.line_hash.in_(chunk))).all()
        )
    return found


_PG_INGEST_LOCK = 0x626F6E6E6965  # "bonnie": any constant no other code locks

# The no-op update makes PostgreSQL return the existing row of a duplicate, and lock it.
_pg_insert = postgresql.insert(run_table)
_PG_INSERT = _pg_insert.on_conflict_do_update(
    index_elements=["line_hash"], set_={"line_hash": _pg_insert.excluded.line_hash}
).returning(run_table.c.line_hash, run_table.c.id, run_table.c.upload_id)


class PostgresWriter:
    def __init__(
        self,
        session: Session,
        upload_id: int,
        created_at: datetime,
        label: str | None,
        document: Any,
        plain: PlainLines | None = None,
    ):
        if plain is not None:
            raise TypeError("PostgresWriter stores parsed lines only")
        self.session = session
        self.upload_id = upload_id
        self.head, self.tail = (upload_id, created_at), (label, document)
        self.rows: list[dict[str, Any]] = []
        self.created: dict[bytes, int] = {}
        self.existing: dict[bytes, int] = {}

    def add(self, item: ParsedRun, digest: bytes) -> None:
        self.rows.append(dict(zip(ROW_COLUMNS, run_values(item, digest, self.head, self.tail), strict=True)))
        if len(self.rows) >= BATCH_ROWS:
            self._flush()

    def discard(self) -> None:
        self.rows.clear()

    def finish(self) -> tuple[dict[bytes, int], dict[bytes, int]]:
        self._flush()
        return self.created, self.existing

    def _flush(self) -> None:
        if not self.rows:
            return
        # Two uploads sharing lines in different orders would each wait in ON CONFLICT for a row the
        # other inserted: a deadlock, and one of them a 500. Run inserts take turns under one
        # transaction-scoped advisory lock, as SQLite's single writer does; parsing up to the first
        # batch still runs in parallel. Taking it again in the same transaction is free.
        self.session.execute(select(func.pg_advisory_xact_lock(_PG_INGEST_LOCK)))
        for digest, run_id, upload_id in self.session.execute(_PG_INSERT, self.rows):
            (self.created if upload_id == self.upload_id else self.existing)[digest] = run_id
        self.rows.clear()


def _bind(column: Any, dialect: Any, value: Any) -> Any:
    """`value` as SQLAlchemy would bind it for `column` (DateTime and JSON have bind processors here)."""
    process = column.type.dialect_impl(dialect).bind_processor(dialect)
    return value if process is None else process(value)
