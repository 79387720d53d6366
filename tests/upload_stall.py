"""A test-only hook, imported into a live server (live_server(preload=...)): the statement that inserts
the run of the line BONNIEBOARD_TEST_STALL_LINE waits forever, inside the upload's transaction, after
creating the file BONNIEBOARD_TEST_STALL_FILE. The crash test kills the server then, not after a guess
at how long an upload takes.

On PostgreSQL a parsed line reaches the database by COPY into a temporary table and then one INSERT ... SELECT
whose parameters hold no line: the COPY notes the line's row, and the next insert into `run` waits. A plain line
goes straight into `run` as COPY text the extension writes: the COPY waits once it has sent the line's row."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import psycopg
from sqlalchemy import event
from sqlalchemy.engine import Engine

STALL_LINE = os.environ["BONNIEBOARD_TEST_STALL_LINE"]
STALL_FILE = Path(os.environ["BONNIEBOARD_TEST_STALL_FILE"])


_copied = threading.Event()  # the COPY of an upload took the line


def _stall_if_marked(statement: str, parameters: object) -> None:
    # Anywhere in the statement: PostgreSQL's numbers the lines in a WITH before its INSERT.
    if "INSERT INTO RUN " in statement.upper() and (_copied.is_set() or STALL_LINE in repr(parameters)):
        STALL_FILE.touch()
        threading.Event().wait()  # until SIGKILL


@event.listens_for(Engine, "before_cursor_execute")
def _before_execute(conn, cursor, statement: str, parameters, context, executemany: bool) -> None:
    _stall_if_marked(statement, parameters)


@event.listens_for(Engine, "connect")
def _trace_sqlite(dbapi_connection, _record) -> None:
    # The SQLite writer inserts through the driver's own cursor, past SQLAlchemy's events; SQLite's trace
    # callback sees each row's statement with its values filled in.
    if isinstance(dbapi_connection, sqlite3.Connection):
        dbapi_connection.set_trace_callback(lambda statement: _stall_if_marked(statement, statement))


_write_row = psycopg.Copy.write_row


def _write_row_noting_the_line(self: psycopg.Copy, row: object) -> None:
    if isinstance(row, tuple) and STALL_LINE in row:
        _copied.set()
    _write_row(self, row)


psycopg.Copy.write_row = _write_row_noting_the_line  # type: ignore[method-assign]

_write = psycopg.Copy.write
_STALL_BYTES = STALL_LINE.encode()


def _write_stalling_after_the_line(self: psycopg.Copy, buffer: bytes | str) -> None:
    _write(self, buffer)
    if _STALL_BYTES in (buffer.encode() if isinstance(buffer, str) else bytes(buffer)):
        STALL_FILE.touch()
        threading.Event().wait()  # until SIGKILL


psycopg.Copy.write = _write_stalling_after_the_line  # type: ignore[method-assign]
