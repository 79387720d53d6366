"""The data generation: a stamp in the database that every write which can change a comparison replaces,
in the write's own transaction. Cached comparisons (app/web/cache.py) are keyed by it, so a cached
answer is served only while the database still holds the stamp it was computed under — whichever worker,
process or CLI command wrote since.

The writers: an upload (API, upload page, text report: app/ingest/upload.py; `bonnieboard ingest`: app/cli.py),
a run's label and tags (PATCH /api/runs/{id}, the run page's form) and a run's deletion (app/store/runs.py).

A new stamp is random rather than the old one plus one: a database emptied or made again from scratch
(a restore, a test's TRUNCATE) never meets a stamp a running server still has answers cached under.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from sqlalchemy import Connection, event, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.store.models import data_generation_table as table

ROW_ID = 1
_CURRENT = select(table.c.generation).where(table.c.id == ROW_ID)


def bump(session: Session) -> None:
    """Replace the stamp, in the session's transaction: call it last, just before the commit. On
    PostgreSQL the row stays locked until then, so writers queue on it only after their own work
    (and never hold it while waiting for another lock: no deadlock)."""
    stamp = secrets.randbits(62) + 1
    # An upsert: the row is missing only in a database emptied by hand, yet a write must not fail then.
    dialect_insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    upsert = dialect_insert(table).values(id=ROW_ID, generation=stamp)
    session.execute(upsert.on_conflict_do_update(index_elements=[table.c.id], set_={"generation": stamp}))
    if not session.info.get(_LISTENING):
        session.info[_LISTENING] = True
        event.listen(session, "after_commit", _committed, once=True)


# Called after a commit that replaced the stamp, in the committing thread: they must only take note (the
# comparison cache's re-warm, app/compare/page.py, wakes its own thread).
_ON_COMMIT: list[Callable[[], None]] = []
_LISTENING = "generation_listening"


def on_commit(callback: Callable[[], None]) -> None:
    """Call `callback` after every commit of this process that replaced the stamp."""
    _ON_COMMIT.append(callback)


def _committed(session: Session) -> None:
    session.info.pop(_LISTENING, None)
    for callback in _ON_COMMIT:
        callback()


def current(connection: Session | Connection) -> int | None:
    """The stamp, or None when the row is missing (then nothing may be cached)."""
    return connection.execute(_CURRENT).scalar()
