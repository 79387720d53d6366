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
  go in by executemany. The plain lines (app.ingest.sqlite_bulk), when the upload has them, never reach Python:
  app.ingest.sqlite_bulk's extension stores them in finish(), numbered around the parsed ones
  (PlainLines.distinct_before), and says which it created. No other writer can run meanwhile, so
  looking up the parsed lines' ids afterwards is safe.
* PostgresWriter: ParsedRun values, streamed by COPY (a batch at a time) into a temporary table of the upload's
  own, each row with its ord: its place among the upload's distinct lines in line order, as SqliteWriter numbers
  them. Under the ingest lock (which every insert into `run` takes), the lines stored already are found and
  their runs locked against deletion until this upload commits (the parsed ones by one join with the staging
  table, which also takes them out of it; the plain ones by their hashes); the upload takes a block of ids from
  the run sequence, one per distinct line; one INSERT ... SELECT stores the parsed rest with id = the block's
  first + ord, and the plain lines go straight into `run` as COPY text the extension writes, ids included
  (PlainLines.numbered, PlainLines.copy_chunks: they never reach Python). The writer knows every id it gave, so
  nothing is read back (docs/decisions.md, "PostgreSQL runs numbered from a reserved block").

The row a writer stores is ROW_COLUMNS, built by run_values() from app.columns' names.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from itertools import chain
from operator import attrgetter
from typing import Any, Protocol

from sqlalchemy import bindparam, delete, func, insert, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from app.columns import FILE_TEST_COLUMNS, RUN_LINE_COLUMNS, STORED_COLUMNS, Conversion
from app.ingest.parsing import ParsedRun
from app.ingest.sqlite_bulk import COPY_COLUMNS, PlainLines
from app.store.db import committed_apart
from app.store.models import run_in_flight_table, run_table

BATCH_ROWS = 2000  # rows per executemany: memory stays flat however long the upload
# SQLite allows 32766 bound parameters per statement; PostgreSQL 65535.
LOOKUP_CHUNK = 900

# The run columns a writer fills, in the order run_values() gives them: app.columns.STORED_COLUMNS but the id.
ROW_COLUMNS: tuple[str, ...] = tuple(column.name for column in STORED_COLUMNS if column.conversion != Conversion.ID)
_line_values = attrgetter(*RUN_LINE_COLUMNS)  # ParsedRun's attributes are named as the columns
_NO_FILE_TEST = (None,) * len(FILE_TEST_COLUMNS)
_UPLOAD_COLUMNS = ("upload_id", "created_at", "label", "document_id")  # the same for every run of an upload


def run_values(run: ParsedRun, digest: bytes, head: tuple, tail: tuple) -> tuple:
    """One row for ROW_COLUMNS: head = (upload_id, created_at), tail = (label, document_id)."""
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
    """The writer for the session's database; made with (session, upload_id, created_at, label, document_id, plain):
    `plain` (app.ingest.sqlite_bulk's PlainLines) holds the lines the parser never sees."""
    return SqliteWriter if session.get_bind().dialect.name == "sqlite" else PostgresWriter


class SqliteWriter:
    def __init__(
        self,
        session: Session,
        upload_id: int,
        created_at: datetime,
        label: str | None,
        document_id: int | None,
        plain: PlainLines | None = None,
    ):
        self.session = session
        self.upload_id = upload_id
        dialect = session.get_bind().dialect
        # These rows bypass SQLAlchemy's types, so store what they would have stored.
        created_at_text = _bind(run_table.c.created_at, dialect, created_at)
        self.head, self.tail = (upload_id, created_at_text), (label, document_id)
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
_PG_RUN_SEQUENCE = "pg_get_serial_sequence('run', 'id')"

# How the upload's own columns are bound: as the table's types.
_PG_UPLOAD_TYPES = {name: run_table.c[name].type for name in _UPLOAD_COLUMNS}

# What differs per line; the upload's own columns (upload_id, created_at, label, document_id) are bound once.
_PG_LINE_COLUMNS: tuple[str, ...] = tuple(column for column in ROW_COLUMNS if column not in _UPLOAD_COLUMNS)


def _pg_line_values(run: ParsedRun, digest: bytes, ordinal: int) -> tuple:
    return (
        ordinal,
        digest,
        run.raw_line,
        *_line_values(run),
        *(run.file_test or _NO_FILE_TEST),
        *chain.from_iterable(run.results),
    )


class PostgresWriter:
    """COPY: the plain lines straight into `run`, the parsed ones into a temporary table and then one
    INSERT ... SELECT. A multi-row INSERT of 2,000 wide rows is a statement the driver builds and the server parses
    anew each batch; COPY streams the same rows for a fraction of that (bench/RESULTS.md)."""

    def __init__(
        self,
        session: Session,
        upload_id: int,
        created_at: datetime,
        label: str | None,
        document_id: int | None,
        plain: PlainLines | None = None,
    ):
        self.plain = plain
        self.session = session
        self.upload_id = upload_id
        self.upload_values: dict[str, Any] = {
            "upload_id": upload_id,
            "created_at": created_at,
            "label": label,
            "document_id": document_id,
        }
        # Named after the upload, so no two writers in one session can share one.
        self.staging = f"bonnieboard_ingest_{upload_id}"
        self.rows: list[tuple] = []
        self.staged = 0  # rows in the staging table
        # Of the parsed runs, in line order: their hashes, places among the distinct lines (ord), line numbers.
        self.digests: list[bytes] = []
        self.ordinals: list[int] = []
        self.line_numbers: list[int] = []

    def add(self, item: ParsedRun, digest: bytes) -> None:
        # In line order: the distinct lines before this one, parsed or plain, come before it (as in SqliteWriter).
        ordinal = len(self.digests)
        if self.plain is not None:
            ordinal += self.plain.distinct_before(item.line_no)
        self.digests.append(digest)
        self.ordinals.append(ordinal)
        self.line_numbers.append(item.line_no)
        self.rows.append(_pg_line_values(item, digest, ordinal))
        if len(self.rows) >= BATCH_ROWS:
            self._flush()

    def discard(self) -> None:
        self.rows.clear()

    def finish(self) -> tuple[dict[bytes, int], dict[bytes, int]]:
        self._flush()
        plain_count = self.plain.distinct_count if self.plain is not None else 0
        if not self.staged and not plain_count:
            return {}, {}
        if plain_count:
            self._copy_hashes()
        # Run inserts take turns under one transaction-scoped advisory lock, as SQLite's single writer does
        # (parsing and the COPYs into this upload's own tables still run in parallel). So no line can
        # be stored by another upload between the lookups below and the inserts, and the ids of the block taken
        # below are this upload's alone.
        self.session.execute(select(func.pg_advisory_xact_lock(_PG_INGEST_LOCK)))
        # The lines stored already; KEY SHARE holds their runs until this upload commits (a delete waits), since
        # the outcome names them and tags may be added to them. The parsed ones are found by one join and taken
        # out of the staging table; the plain ones by their hashes.
        stored = self._stored_staged() if self.staged else {}
        staged_new = self.staged - len(stored)
        if plain_count:
            stored.update(self._stored_plain())
        # One id per distinct line, as on SQLite: a line stored already leaves its id unused
        # (docs/decisions.md, "Run ids skip after duplicates"). setval() is safe only because every insert
        # into run holds the lock taken above.
        distinct = len(self.digests) + plain_count
        last_id = self.session.execute(
            text(f"SELECT setval({_PG_RUN_SEQUENCE}, nextval({_PG_RUN_SEQUENCE}) + :distinct - 1)"),
            {"distinct": distinct},
        ).scalar_one()
        first_id = last_id - distinct + 1
        if self.plain is not None:
            self.plain.numbered(first_id, self.line_numbers, stored)
        if len(stored) < distinct:
            self._insert_block(first_id, last_id, staged_new=bool(staged_new))
        if self.staged:
            self.session.execute(text(f"DROP TABLE {self.staging}"))
        created: dict[bytes, int] = {}
        existing: dict[bytes, int] = {}
        for digest, ordinal in zip(self.digests, self.ordinals, strict=True):
            if digest in stored:
                existing[digest] = stored[digest]
            else:
                created[digest] = first_id + ordinal
        return created, existing

    def _stored_staged(self) -> dict[bytes, int]:
        """The staged lines stored already, by one join, taken out of the staging table."""
        return dict(
            self.session.execute(
                text(
                    f"WITH stored AS (SELECT run.line_hash, run.id FROM {self.staging} AS staged "
                    "JOIN run USING (line_hash) FOR KEY SHARE OF run), "
                    f"left_out AS (DELETE FROM {self.staging} AS staged USING stored "
                    "WHERE staged.line_hash = stored.line_hash) "
                    "SELECT line_hash, id FROM stored"
                )
            ).all()
        )

    def _insert_block(self, first_id: int, last_id: int, *, staged_new: bool) -> None:
        """Insert the new lines, staged and plain, as runs first_id.. of the block."""
        # Readers step over the block while this upload is not committed (app.store.runs): the block is
        # committed apart, the stale blocks of uploads that never committed are cleared here.
        self.session.execute(delete(run_in_flight_table))
        with committed_apart(self.session) as apart:
            apart.execute(
                insert(run_in_flight_table).values(first_id=first_id, last_id=last_id, upload_id=self.upload_id)
            )
        if staged_new:
            statement = text(
                f"INSERT INTO run (id, {', '.join(_UPLOAD_COLUMNS)}, {', '.join(_PG_LINE_COLUMNS)}) "
                f"SELECT :first_id + ord, :upload_id, :created_at, :label, :document_id, "
                f"{', '.join(_PG_LINE_COLUMNS)} FROM {self.staging}"
            ).bindparams(*(bindparam(name, type_=_PG_UPLOAD_TYPES[name]) for name in _UPLOAD_COLUMNS))
            self.session.execute(statement, self.upload_values | {"first_id": first_id})
        self._copy_plain()
        self.session.execute(delete(run_in_flight_table).where(run_in_flight_table.c.first_id == first_id))

    def _flush(self) -> None:
        if not self.rows:
            return
        if not self.staged:
            # Temporary: no WAL, no other session sees it; dropped at commit or rollback whatever happens.
            self.session.execute(
                text(
                    f"CREATE TEMPORARY TABLE {self.staging} ON COMMIT DROP AS "
                    f"SELECT 0::integer AS ord, {', '.join(_PG_LINE_COLUMNS)} FROM run WITH NO DATA"
                )
            )
        statement = f"COPY {self.staging} (ord, {', '.join(_PG_LINE_COLUMNS)}) FROM STDIN"
        with _copy_into(self.session, statement) as copy:
            for row in self.rows:
                copy.write_row(row)
        self.staged += len(self.rows)
        self.rows.clear()

    def _copy_hashes(self) -> None:
        """The plain lines' hashes into a table of their own, to be joined by _stored_plain() (as one array
        parameter, 100,000 of them took ten times as long): COPY text the extension writes."""
        assert self.plain is not None
        self.session.execute(text(f"CREATE TEMPORARY TABLE {self.staging}_hashes (line_hash bytea) ON COMMIT DROP"))
        with _copy_into(self.session, f"COPY {self.staging}_hashes FROM STDIN") as copy:
            copy.write(self.plain.hashes_copy_text())

    def _stored_plain(self) -> dict[bytes, int]:
        """The runs that hold plain lines already, locked as finish() says."""
        hashes = f"{self.staging}_hashes"
        stored = self.session.execute(
            text(f"SELECT run.line_hash, run.id FROM {hashes} JOIN run USING (line_hash) FOR KEY SHARE OF run")
        ).all()
        self.session.execute(text(f"DROP TABLE {hashes}"))
        return dict(stored)

    def _copy_plain(self) -> None:
        """The plain lines' new runs, straight into `run` as COPY text made in C: none of it parsed in Python, each
        row written once (bench/RESULTS.md, "PostgreSQL: the plain lines straight into run")."""
        if self.plain is None or not self.plain.stored or not self.plain.stored.created:
            return
        values = self.upload_values
        cells = (values["upload_id"], values["created_at"].isoformat(), values["label"], values["document_id"])
        upload_cells = "".join(f"{_copy_cell(value)}\t" for value in cells).encode()
        statement = f"COPY run (id, {', '.join(_UPLOAD_COLUMNS)}, {', '.join(COPY_COLUMNS)}) FROM STDIN"
        with _copy_into(self.session, statement) as copy:
            for chunk in self.plain.copy_chunks(BATCH_ROWS, upload_cells):
                copy.write(chunk)


def _copy_cell(value: Any) -> str:
    """`value` as one cell of COPY's text format: \\N for NULL; a backslash, tab, newline or carriage return escaped."""
    return "\\N" if value is None else str(value).translate(_COPY_ESCAPES)


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


@contextmanager
def _copy_into(session: Session, statement: str) -> Iterator[Any]:
    """A COPY through the driver, past SQLAlchemy: its errors are wrapped as SQLAlchemy wraps a statement's, so a
    full disk or a server short of resources answers 503 as anywhere else (app.store.db.unavailable)."""
    driver_connection = session.connection().connection.driver_connection
    driver = session.get_bind().dialect.dbapi
    assert driver_connection is not None and driver is not None  # a checked-out connection always has both
    driver_error = driver.Error
    try:
        with driver_connection.cursor() as cursor, cursor.copy(statement) as copy:
            yield copy
    except driver_error as exc:
        raise DBAPIError.instance(statement, None, exc, driver_error) from exc


def _bind(column: Any, dialect: Any, value: Any) -> Any:
    """`value` as SQLAlchemy would bind it for `column` (DateTime and JSON have bind processors here)."""
    process = column.type.dialect_impl(dialect).bind_processor(dialect)
    return value if process is None else process(value)
