"""Engine and sessions. Services borrow the session a request (or a CLI command) owns."""

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import URL, ExceptionContext
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from app.config import get_settings
from app.errors import ServiceUnavailable

SQLITE_BUSY_TIMEOUT_S = 30
WRITE = {"bonnieboard_write": True}
# An ingest: a writer whose every row refers to rows it wrote itself, or read under its write lock (app.ingest.service).
BULK_WRITE = WRITE | {"bonnieboard_bulk": True}

SQLITE_PAGE_BYTES = 16384

# Pragmas a transaction changed on its connection, keyed in the pool record's info, given back at checkin.
SAVED_PRAGMAS_KEY = "bonnieboard_saved_pragmas"


class DatabaseNotUtf8(Exception):
    """A PostgreSQL database whose encoding is not UTF8: refused on every connection, before anything is read."""


def make_engine(url: str) -> Engine:
    if not url.startswith("sqlite"):
        engine = create_engine(url, pool_pre_ping=True)
        # Before SQLAlchemy's own first-connection set-up, which cannot read a SQL_ASCII server's version.
        event.listen(engine, "connect", _require_utf8, insert=True)
        event.listen(engine, "handle_error", _drop_unavailable_connections)
        return engine
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False})
    event.listen(engine, "handle_error", _drop_unavailable_connections)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        # Let SQLAlchemy's "begin" event below issue BEGIN itself (pysqlite's own is deferred and late).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        # Takes effect only on a new, empty database, so it comes before WAL mode writes the file's header; a
        # database made with another page size keeps it. (SQLite's default 4 KiB pages make an upload of
        # 100,000 lines with two tags 14-22 % slower: bench/RESULTS.md.)
        cursor.execute(f"PRAGMA page_size={SQLITE_PAGE_BYTES}")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection):
        options = connection.get_execution_options()
        if options.get("bonnieboard_bulk", False):
            # Checking each tag's run and each run's upload is 0.15 s of an upload of 100,000 runs with two
            # tags (docs/decisions.md, "Ingest within 2x of sqlite3's .import"). An ingest only refers to the
            # upload and runs it has just written, or runs it read after taking the write lock (nobody can
            # delete them in between), so the checks cannot fail.
            # The pragma only takes effect outside a transaction: here, before BEGIN.
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            save_pragmas(connection, {"foreign_keys": 1})
        # A writer takes the write lock up front: a deferred transaction that upgrades from read
        # to write fails at once with "database is locked", whatever the busy timeout.
        write = options.get("bonnieboard_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _require_utf8(dbapi_connection: Any, _record: Any) -> None:
    """Machine names, tags and documents are Unicode text: a SQL_ASCII database (what Debian's PostgreSQL makes
    under a C or POSIX locale) stores their bytes unchecked and hands back bytes, LATIN1 and the other encodings
    cannot hold most of it."""
    info = dbapi_connection.info
    encoding = info.parameter_status("server_encoding")
    if encoding != "UTF8":
        raise DatabaseNotUtf8(
            f"the PostgreSQL database {info.dbname!r} is encoded {encoding}; bonnieboard needs UTF8: make a UTF8 "
            "database (createdb --encoding=UTF8 --locale=C.UTF-8 --template=template0 NAME) and set "
            "BONNIEBOARD_DATABASE_URL to it"
        )


def save_pragmas(connection: Connection, values: dict[str, int]) -> None:
    """Have the pool set these pragmas back to these values when it takes the connection back: after the
    commit or rollback, before it may close the connection (a session event comes too late for that). The
    first value saved for a name wins: it is the connection's own."""
    info = connection.connection.info
    info[SAVED_PRAGMAS_KEY] = values | info.get(SAVED_PRAGMAS_KEY, {})
    if not event.contains(connection.engine, "checkin", _restore_pragmas):
        event.listen(connection.engine, "checkin", _restore_pragmas)


def without_autocheckpoint(session: Session) -> None:
    """No automatic checkpoint at this session's commits on SQLite (each of its transactions' connection, given
    back as it was): for work that follows an upload, whose checkpoint is queued on its own thread
    (app.ingest.upload) and must not be done a second time, inline, by the next small commit."""
    if session.get_bind().dialect.name != "sqlite":
        return

    def skip(_session: Session, _transaction: Any, connection: Connection) -> None:
        driver = connection.connection.driver_connection
        if driver is None:
            return
        (pages,) = driver.execute("PRAGMA wal_autocheckpoint").fetchone()
        driver.execute("PRAGMA wal_autocheckpoint = 0")
        save_pragmas(connection, {"wal_autocheckpoint": pages})

    event.listen(session, "after_begin", skip)


def _restore_pragmas(dbapi_connection: Any, record: Any) -> None:
    saved = record.info.pop(SAVED_PRAGMAS_KEY, None)
    if saved is not None and dbapi_connection is not None:
        if dbapi_connection.in_transaction:  # SQLite ignores foreign_keys inside one: never left off
            dbapi_connection.rollback()
        for name, value in saved.items():
            dbapi_connection.execute(f"PRAGMA {name} = {int(value)}")


DISK_FULL = "the database's disk is full: nothing of this request was stored"

# SQLite's primary result codes (an extended code's low byte) that mean "not now", not "a bug".
_SQLITE_UNAVAILABLE = {
    sqlite3.SQLITE_BUSY: "the database is busy",
    sqlite3.SQLITE_READONLY: "the database is read-only",
    sqlite3.SQLITE_IOERR: "the database cannot be read or written (an I/O error)",
    sqlite3.SQLITE_FULL: DISK_FULL,
    sqlite3.SQLITE_CANTOPEN: "the database file cannot be opened",
}

# PostgreSQL's SQLSTATE class 53, "insufficient resources": the server cannot do this now, whatever the request.
_POSTGRES_RESOURCES = {
    "53100": DISK_FULL,
    "53200": "the database server is out of memory",
    "53300": "the database server has too many connections",
    "53400": "the database server reached a configured limit",
}


def unavailable(exc: BaseException) -> ServiceUnavailable | None:
    """A 503 for a database that is full, read-only or unreachable for now, or None for any other error. `exc`
    is SQLAlchemy's DBAPIError, or the driver's own error from code that drives the driver itself
    (app.ingest.writers' inserts on SQLite)."""
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    connection_lost = isinstance(exc, DBAPIError) and exc.connection_invalidated
    if isinstance(orig, sqlite3.Error):
        reason = _SQLITE_UNAVAILABLE.get((getattr(orig, "sqlite_errorcode", 0) or 0) & 0xFF)
    elif connection_lost or type(orig).__module__.startswith("psycopg"):
        reason = _postgres_reason(orig, connection_lost)
    else:
        reason = None
    if reason is None:
        return None
    return ServiceUnavailable(f"{reason}; try again {'once the disk has room' if reason == DISK_FULL else 'later'}")


def _postgres_reason(orig: BaseException | None, connection_lost: bool) -> str | None:
    import psycopg  # only PostgreSQL deployments have it loaded anyway

    sqlstate = getattr(orig, "sqlstate", None) or ""
    if sqlstate.startswith("53"):
        return _POSTGRES_RESOURCES.get(
            sqlstate, f"the database server lacks the resources for this (SQLSTATE {sqlstate})"
        )
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


def limit_read(session: Session) -> None:
    """Stops the session's statements after BONNIEBOARD_READ_TIMEOUT_S on PostgreSQL (SQLite has no such limit)."""
    if session.get_bind().dialect.name != "postgresql":
        return
    timeout_ms = max(1, round(get_settings().read_timeout_s * 1000))
    session.execute(text("SELECT set_config('statement_timeout', :ms, true)"), {"ms": str(timeout_ms)})


@contextmanager
def read_session() -> Iterator[Session]:
    """A read's session opened and closed in the thread that uses it: a read that does all its database work in
    one worker thread (the comparisons) saves a request session's two thread hops. Stopped as limit_read says."""
    with get_sessionmaker()() as session:
        limit_read(session)
        yield session


@lru_cache(maxsize=4)
def _unpooled(url: URL) -> Engine:
    return create_engine(url, poolclass=NullPool)


@contextmanager
def committed_apart(session: Session) -> Iterator[Connection]:
    """A connection of its own to the session's database, committed when the block ends: for a row others must
    see before the session commits. Outside the pool: a session holding a lock while it waited for a pooled
    connection could wait on the sessions that wait for its lock."""
    with _unpooled(session.get_bind().engine.url).begin() as connection:
        yield connection


def begin_write(session: Session, *, bulk: bool = False) -> None:
    """Make the session's transaction a writer that holds SQLite's write lock from its start; with `bulk`
    (an ingest only), one that does not check foreign keys either (see make_engine; on PostgreSQL where the role
    may, see _skip_key_checks_if_allowed).

    A read that ran earlier in the same session (a token check, a count) has opened a deferred
    transaction; SQLite would refuse to upgrade it with "database is locked" as soon as another
    writer committed in between, so that read-only transaction is ended first.
    """
    if session.get_bind().dialect.name != "sqlite":
        if bulk:
            _skip_key_checks_if_allowed(session)
        return
    if session.in_transaction():
        if session.new or session.dirty or session.deleted:
            raise RuntimeError("begin_write() must come before the session's first change")
        session.commit()
    session.connection(execution_options=BULK_WRITE if bulk else WRITE)


def _skip_key_checks_if_allowed(session: Session) -> None:
    """PostgreSQL's counterpart of SQLite's foreign_keys=OFF for an ingest: in `replica` mode a transaction fires
    no triggers, and a foreign key is checked by a trigger per row (a third of an upload with two tags:
    bench/RESULTS.md); a trigger of one's own fires then only if it is ENABLE ALWAYS. Only a superuser, or a role
    granted SET on the parameter (PostgreSQL 15 and later), may set it; any other role keeps every check, and
    stores the same rows."""
    connection = session.connection()
    may_set = "current_setting('is_superuser')::boolean"
    if (connection.dialect.server_version_info or (0,)) >= (15,):
        may_set += " OR has_parameter_privilege('session_replication_role', 'SET')"
    if connection.exec_driver_sql(f"SELECT {may_set}").scalar_one():
        # LOCAL: the ingest's transaction only, ended by its commit or rollback.
        connection.exec_driver_sql("SET LOCAL session_replication_role = replica")


def checkpoint_wal(engine: Engine) -> None:
    """Copy what the WAL holds into the database file: PASSIVE, so it never waits for (or blocks) readers
    and writers. Uploads leave this to after their commit (app.ingest.upload, app.ingest.sqlite_bulk)."""
    connection = engine.raw_connection()
    try:
        # The DB-API connection itself: through SQLAlchemy this would run inside the BEGIN of _on_begin.
        driver = connection.driver_connection
        if driver is not None:  # None only once the pool has closed it
            driver.execute("PRAGMA wal_checkpoint(PASSIVE)")
    finally:
        connection.close()
