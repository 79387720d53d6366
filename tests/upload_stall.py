"""A test-only hook, imported into a live server (live_server(preload=...)): the statement that inserts
the run of the line BONNIEBOARD_TEST_STALL_LINE waits forever, inside the upload's transaction, after
creating the file BONNIEBOARD_TEST_STALL_FILE. The crash test kills the server then, not after a guess
at how long an upload takes."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine

STALL_LINE = os.environ["BONNIEBOARD_TEST_STALL_LINE"]
STALL_FILE = Path(os.environ["BONNIEBOARD_TEST_STALL_FILE"])


def _stall_if_marked(statement: str, parameters: object) -> None:
    if statement.lstrip()[:15].upper() == "INSERT INTO RUN" and STALL_LINE in repr(parameters):
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
