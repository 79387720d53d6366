"""Engine and sessions. Services borrow the session a request (or a CLI command) owns."""

from collections.abc import Iterator
from functools import lru_cache
from typing import Annotated

from fastapi import Depends
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from app.config import get_settings

SQLITE_BUSY_TIMEOUT_S = 30
WRITE = {"bonnieboard_write": True}


def make_engine(url: str) -> Engine:
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True)
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False})

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
