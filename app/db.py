"""Engine and sessions. Services borrow the session a request (or a CLI command) owns."""

import sqlite3
from collections.abc import Iterator
from functools import lru_cache
from typing import Annotated

from fastapi import Depends
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import ExceptionContext
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from app.config import get_settings
from app.errors import ServiceUnavailable

SQLITE_BUSY_TIMEOUT_S = 30
WRITE = {"bonnieboard_write": True}


def make_engine(url: str) -> Engine:
    if not url.startswith("sqlite"):
        engine = create_engine(url, pool_pre_ping=True)
        event.listen(engine, "handle_error", _drop_unavailable_connections)
        return engine
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False})
    event.listen(engine, "handle_error", _drop_unavailable_connections)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        # Let SQLAlchemy's "begin" event below issue BEGIN itself (pysqlite's own is deferred and late).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection):
        # A writer takes the write lock up front: a deferred transaction that upgrades from read
        # to write fails at once with "database is locked", whatever the busy timeout.
        write = connection.get_execution_options().get("bonnieboard_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


# SQLite's primary result codes (an extended code's low byte) that mean "not now", not "a bug".
_SQLITE_UNAVAILABLE = {
    sqlite3.SQLITE_BUSY: "the database is busy",
    sqlite3.SQLITE_READONLY: "the database is read-only",
    sqlite3.SQLITE_IOERR: "the database cannot be read or written (an I/O error)",
    sqlite3.SQLITE_FULL: "the disk holding the database is full",
    sqlite3.SQLITE_CANTOPEN: "the database file cannot be opened",
}


def unavailable(exc: DBAPIError) -> ServiceUnavailable | None:
    """A 503 for a database that is full, read-only or unreachable for now, or None for any other error."""
    orig = exc.orig
    if isinstance(orig, sqlite3.Error):
        reason = _SQLITE_UNAVAILABLE.get((getattr(orig, "sqlite_errorcode", 0) or 0) & 0xFF)
    elif exc.connection_invalidated or type(orig).__module__.startswith("psycopg"):
        reason = _postgres_reason(orig, exc.connection_invalidated)
    else:
        reason = None
    return None if reason is None else ServiceUnavailable(f"{reason}; try again later")


def _postgres_reason(orig: BaseException | None, connection_lost: bool) -> str | None:
    import psycopg  # only PostgreSQL deployments have it loaded anyway

    if isinstance(orig, psycopg.errors.DiskFull):
        return "the disk holding the database is full"
    if isinstance(orig, psycopg.errors.ReadOnlySqlTransaction):
        return "the database is read-only"
    if connection_lost or isinstance(orig, psycopg.OperationalError):
        return "the database cannot be reached"
    return None


def _drop_unavailable_connections(context: ExceptionContext) -> None:
    """Treat a connection that met a full disk, a read-only file or a lost server as broken: the pool
    makes a new one for the next request, which so works again once the cause is gone (a SQLite file
    opened read-only stays read-only until reopened)."""
    error = context.sqlalchemy_exception
    if isinstance(error, DBAPIError) and unavailable(error) is not None and not context.is_disconnect:
        if isinstance(error.orig, sqlite3.Error) and error.orig.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY:
            return  # a busy database is fine to use again
        context.is_disconnect = True


@lru_cache
def get_engine() -> Engine:
    return make_engine(get_settings().database_url)


@lru_cache
def get_sessionmaker() -> sessionmaker[Session]:
    return sessionmaker(get_engine(), expire_on_commit=False)


def get_session() -> Iterator[Session]:
    with get_sessionmaker()() as session:
        yield session


def begin_write(session: Session) -> None:
    """Make the session's transaction a writer that holds SQLite's write lock from its start.

    A read that ran earlier in the same session (a token check, a count) has opened a deferred
    transaction; SQLite would refuse to upgrade it with "database is locked" as soon as another
    writer committed in between, so that read-only transaction is ended first.
    """
    if session.get_bind().dialect.name != "sqlite":
        return
    if session.in_transaction():
        if session.new or session.dirty or session.deleted:
            raise RuntimeError("begin_write() must come before the session's first change")
        session.commit()
    session.connection(execution_options=WRITE)


SessionDep = Annotated[Session, Depends(get_session)]


def checkpoint_wal(engine: Engine) -> None:
    """Copy what the WAL holds into the database file: PASSIVE, so it never waits for (or blocks) readers
    and writers. Uploads leave this to after their commit (app.storing, app.sqlite_bulk)."""
    connection = engine.raw_connection()
    try:
        # The DB-API connection itself: through SQLAlchemy this would run inside the BEGIN of _on_begin.
        driver = connection.driver_connection
        if driver is not None:  # None only once the pool has closed it
            driver.execute("PRAGMA wal_checkpoint(PASSIVE)")
    finally:
        connection.close()
