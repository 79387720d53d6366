"""Plain bonnie++ CSV lines into SQLite (and as COPY text for PostgreSQL) through the C extension app.ingest._plain_lines.

Storing 100,000 lines within 2x of sqlite3's `.import` (docs/decisions.md, "Ingest within 2x of sqlite3's .import")
leaves no time for Python per line: binding one
statement's parameters through CPython's sqlite3 alone takes longer. So for the common line (format
1.98, 1.97, 1.96, 1.93c or 1.03, no comma in the name, every cell in its usual shape: PLAIN (tests/plain_198.py))
the extension cuts the upload
into lines, checks, hashes, converts and inserts them through SQLite's C API, without the GIL; every
other line goes to the Python parser (parsing.parse_raw_line), which names a bad line's field as always.
tests/ingest/test_sqlite_bulk.py holds the two to the same stored rows.

The extension writes through the sqlite3* of the connection the session uses, so its rows are part of
the upload's one transaction (all or nothing, rolled back like any other). CPython 3.11 offers no API
for that pointer; connection_problem() says when it cannot be trusted, and the upload then takes the
parser's path, which stores the same rows.

The extension is optional (docs/decisions.md, "The compiled ingest path is optional"): an install without a C
compiler has none, and BONNIEBOARD_INGEST_PATH=python turns it off; every line then goes to the parser.
ingest_path() says which path uploads take, for `bonnieboard --version` and /api/health.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from app.config import get_settings
from app.ingest.lines import iter_lines
from app.ingest.parsing import LineError, ParsedRun, parse_raw_line
from app.store.db import save_pragmas

try:
    from app.ingest import _plain_lines
except ImportError as exc:  # not built: the install had no C compiler or no Python headers
    _plain_lines = None  # type: ignore[assignment]
    _NOT_BUILT = f"app.ingest._plain_lines is not built ({exc})"

log = logging.getLogger(__name__)
_reported: set[str] = set()

# The values of BONNIEBOARD_INGEST_PATH (Settings.ingest_path, checked at start-up). Read per upload: the tests
# switch it per test.
COMPILED = "compiled"
PYTHON = "python"
CHOSEN_PYTHON = f"BONNIEBOARD_INGEST_PATH={PYTHON}"


def extension_problem() -> str | None:
    """Why no upload can take the compiled path in this process, or None when uploads take it (on SQLite each
    upload's connection is still checked: connection_problem())."""
    if get_settings().ingest_path == PYTHON:
        return CHOSEN_PYTHON
    if _plain_lines is None:
        return _NOT_BUILT
    if _plain_lines.SQLITE_PROBLEM is not None:
        return f"app.ingest._plain_lines finds no SQLite to call: {_plain_lines.SQLITE_PROBLEM}"
    if not _plain_lines.CONNECTION_LAYOUT_KNOWN:
        return f"the layout of CPython {sys.version.split()[0]}'s sqlite3.Connection is not known to app.ingest._plain_lines"
    return None


def ingest_path() -> str:
    """The path uploads take: "compiled" when the extension stores their plain lines, else "python"."""
    return COMPILED if extension_problem() is None else PYTHON


def describe_ingest_path() -> str:
    """ingest_path(), and why when it is the parser's: `bonnieboard --version` prints it."""
    problem = extension_problem()
    return COMPILED if problem is None else f"{PYTHON}: {problem}"


# SQLite's page cache while an upload's transaction is open. The default 2 MiB sent the pages of the hash
# and name indexes out to the WAL and read them back many times over. An upload writes about 3.2 bytes of
# pages per byte of CSV (100,000 lines: 21 MB, and 67 MB of pages with two tags); a cache that holds them all
# writes each page once, at the commit. A fixed 64 MiB spills 8 MB of them mid-transaction, which costs
# that upload up to 0.15 s, depending on the disk (bench/RESULTS.md). SQLite takes memory for a page only when
# it uses one, so room for five times the upload costs nothing the upload does not use. At most 256 MiB
# (uploads up to about 50 MB; the default limit is 32 MiB): a board that allows bigger ones spills rather
# than holding gigabytes per upload. Back to its size when the transaction ends: a reader on this connection
# must not keep an upload's pages.
UPLOAD_CACHE_MIN_KIB = 65536
UPLOAD_CACHE_MAX_KIB = 262144
UPLOAD_CACHE_PER_UPLOAD_BYTE = 5


def upload_cache_kib(upload_bytes: int) -> int:
    """The page cache, in KiB, for an upload of `upload_bytes`: room for every page it writes, within bounds."""
    wanted_kib = upload_bytes * UPLOAD_CACHE_PER_UPLOAD_BYTE // 1024
    return min(UPLOAD_CACHE_MAX_KIB, max(UPLOAD_CACHE_MIN_KIB, wanted_kib))


# The run columns the extension fills, in its order; tests/test_columns.py compares it with app.columns.
COLUMNS: tuple[str, ...] = _plain_lines.COLUMNS if _plain_lines is not None else ()
# Those copy_chunks() writes after the run's id and the upload's own columns.
COPY_COLUMNS: tuple[str, ...] = tuple(
    column for column in COLUMNS if column not in ("id", "upload_id", "created_at", "label", "document_id")
)


@dataclass(slots=True)
class PlainStored:
    created: list[int]  # the runs made, in line order (so in id order)
    duplicates: list[tuple[int, int]]  # (line number, run id) of each line stored already, in line order
    existing: list[int]  # those runs that were stored before this upload, once each


class PlainLines:
    """An upload's plain lines, held by the extension until insert(); the other lines as parser items."""

    def __init__(self, data: bytes, max_line_bytes: int):
        self.data = data
        self.max_line_bytes = max_line_bytes
        self._scan = _plain_lines.scan(data, max_line_bytes)
        self.count: int = self._scan.plain_count  # repeated lines included
        self.distinct_count: int = self._scan.distinct_count
        self.stored: PlainStored | None = None  # after insert() or numbered()

    def other_items(self) -> Iterator[ParsedRun | LineError]:
        """Every other line's ParsedRun or LineError, in line order, cut by app.ingest.lines as iter_parse_bytes cuts them."""
        data, max_line_bytes = self.data, self.max_line_bytes
        for first_line_no, start, end in self._scan.others:
            for line_no, raw in iter_lines(data, start, end, first_line_no):
                item = parse_raw_line(raw, line_no, max_line_bytes)
                if item is not None:
                    yield item

    def distinct_before(self, line_no: int) -> int:
        """The distinct plain lines before line `line_no`: how many of this upload's run ids they take first."""
        return self._scan.distinct_before(line_no)

    def hashes_copy_text(self) -> bytes:
        """The distinct lines' hashes (the run table's line_hash), in line order, as COPY text of a bytea column."""
        return self._scan.hashes_copy_text()

    def numbered(self, first_id: int, parsed_lines: list[int], stored: dict[bytes, int]) -> None:
        """Numbers the runs for another writer to store (PostgreSQL: copy_chunks()) and sets `stored`: each distinct
        line's run is `first_id` plus the distinct lines before it, the parser's (`parsed_lines`: their line
        numbers, ascending) included, as insert() numbers them; unless `stored` (line hash -> run id, of runs
        stored before this upload) holds its line."""
        created, duplicates, existing = self._scan.numbered(first_id, array("q", parsed_lines), stored)
        self.stored = PlainStored(created, duplicates, existing)

    def copy_chunks(self, lines_per_chunk: int, upload_cells: bytes) -> Iterator[bytes]:
        """The runs numbered() created, as COPY text for run's (id, upload_id, created_at, label, document_id,
        *COPY_COLUMNS), `lines_per_chunk` lines at a time. `upload_cells`: the upload's four cells as COPY text,
        each ending in a tab."""
        start = 0
        while start < self._scan.plain_count:
            text, start = self._scan.copy_text(start, lines_per_chunk, upload_cells)
            if text:
                yield text

    def insert(self, session: Session, first_id: int, parsed_lines: list[int], upload: tuple[Any, ...]) -> None:
        """Store the plain lines in the session's transaction, numbered from first_id in line order around
        `parsed_lines` (the line numbers of the parser's runs, whose ids the caller gives).
        `upload` is (upload_id, created_at, label, document_id), created_at as text as SQLite stores it."""
        connection = _driver_connection(session)
        problem = connection_problem(session)
        if problem is not None:  # scan() checked the same; a change in between is a bug
            raise RuntimeError(f"the compiled ingest path cannot write to this connection: {problem}")
        upload_id, created_at, label, document_id = upload
        _tune_until_transaction_ends(session, connection, upload_cache_kib(len(self.data)))
        try:
            created, duplicates, existing = self._scan.insert(
                connection, first_id, parsed_lines, upload_id, created_at, label, document_id
            )
        except sqlite3.Error as exc:  # as SQLAlchemy would raise it: a full disk answers 503, as elsewhere
            raise DBAPIError.instance("INSERT INTO run (app.ingest._plain_lines)", None, exc, sqlite3.Error) from exc
        self.stored = PlainStored(created, duplicates, existing)


def scan(session: Session, data: bytes, max_line_bytes: int) -> PlainLines | None:
    """The upload's plain lines for the extension to store (SQLite) or to write as COPY text (PostgreSQL), or
    None where it cannot (extension_problem(), on SQLite connection_problem()): then every line goes to the parser."""
    if session.get_bind().dialect.name != "sqlite":
        return None if extension_problem() is not None else PlainLines(data, max_line_bytes)
    problem = connection_problem(session)
    if problem is not None:
        if problem not in _reported and problem != CHOSEN_PYTHON:
            _reported.add(problem)
            log.warning("uploads take the slower parser path for every line: %s", problem)
        return None
    return PlainLines(data, max_line_bytes)


def connection_problem(session: Session) -> str | None:
    """Why the extension must not write through the session's connection, or None when it may.

    It reads the sqlite3* out of CPython's connection object, so it checks that the object is the one
    it knows, that both run the same SQLite library, and that the handle has the session's database file open.
    """
    problem = extension_problem()
    if problem is not None:
        return problem
    connection = _driver_connection(session)
    if type(connection) is not sqlite3.Connection:
        return f"the driver connection is a {type(connection).__module__}.{type(connection).__qualname__}, not a sqlite3.Connection"
    major, minor, patch = sqlite3.sqlite_version_info
    if _plain_lines.libversion_number() != major * 1_000_000 + minor * 1000 + patch:
        return f"app.ingest._plain_lines runs SQLite {_plain_lines.libversion_number()}, Python's sqlite3 {sqlite3.sqlite_version}"
    database = session.connection().engine.url.database
    filename = _plain_lines.db_filename(connection)
    if not database or database == ":memory:" or not filename:
        return "the database is in memory"
    if os.path.realpath(filename) != os.path.realpath(database):
        return f"the connection's database file is {filename!r}, not {database!r}"
    return None


def _tune_until_transaction_ends(session: Session, connection: sqlite3.Connection, cache_kib: int) -> None:
    """A page cache of `cache_kib`, and no automatic checkpoint at this transaction's commit (the upload turn
    checkpoints after the response: app.ingest.upload); both given back when the pool takes the connection back."""
    (size,) = connection.execute("PRAGMA cache_size").fetchone()
    (autocheckpoint_pages,) = connection.execute("PRAGMA wal_autocheckpoint").fetchone()
    saved = {"cache_size": size, "wal_autocheckpoint": autocheckpoint_pages}
    if size < 0 and -size < cache_kib:  # a size in KiB below ours (a size in pages is left alone)
        connection.execute(f"PRAGMA cache_size = -{int(cache_kib)}")
    # Copying 60 MB of WAL into the database file and syncing it takes 0.5 of an upload's 1.6 s; the
    # commit is as durable without it (synchronous=NORMAL: app.store.db), so the client need not wait for it.
    connection.execute("PRAGMA wal_autocheckpoint = 0")
    save_pragmas(session.connection(), saved)


def _driver_connection(session: Session) -> Any:
    return session.connection().connection.driver_connection
