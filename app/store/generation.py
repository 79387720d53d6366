"""The data generation: stamps in the database that writes replace, in the write's own transaction. Cached
comparisons (app/compare/cache.py) are kept under one of them, so a cached answer is served only while the
database still holds the stamp it was computed under — whichever worker, process or CLI command wrote since.

Two stamps, because most writes only add runs and a comparison of named runs cannot change when others are
added: `every_write` is replaced by every write; `stored_runs` only by a write that changes runs already
stored (a label, tags, a deletion, an upload that gives stored runs new tags). A view that reads only the runs
it names is kept under `stored_runs`; one that reads anything else (the newest runs with two tags, a run that
is not there yet) under `every_write` (app/compare/page.py decides, per answer).

The writers: an upload (API, upload page, text report: app/ingest/upload.py; `bonnieboard ingest`: app/cli.py),
a run's label and tags (PATCH /api/runs/{id}, the run page's form) and a run's deletion (app/store/runs.py).

A new stamp is random rather than the old one plus one: a database emptied or made again from scratch
(a restore, a test's TRUNCATE) never meets a stamp a running server still has answers cached under.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Connection, event, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.store.models import data_generation_table as table

ROW_ID = 1  # every_write's row
STORED_RUNS_ROW_ID = 2
_CURRENT = select(table.c.id, table.c.generation).where(table.c.id.in_((ROW_ID, STORED_RUNS_ROW_ID)))


@dataclass(frozen=True, slots=True)
class Stamps:
    """The two stamps as one read found them; `stored_runs` is None until a write has made its row."""

    every_write: int
    stored_runs: int | None

    def hold(self, stamp: int) -> bool:
        """Whether an answer kept under `stamp` is still current (stamps are random: the two never meet)."""
        return stamp == self.every_write or stamp == self.stored_runs


@dataclass(frozen=True, slots=True)
class Replaced:
    """What a write's bump did to `every_write`: the stamp it replaced (None if the row was missing) and its own."""

    before: int | None
    after: int


def bump(session: Session, *, stored_runs_changed: bool = True) -> Replaced:
    """Replace the stamps, in the session's transaction: call it last, just before the commit. Without
    `stored_runs_changed` (a write that only added runs) `stored_runs` stays. On PostgreSQL the rows stay
    locked until the commit, every writer taking every_write's first, so writers queue on it only after their
    own work (and never hold it while waiting for another lock: no deadlock). The stamp replaced is read under
    that lock: the last write committed before this one."""
    dialect_insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    before = session.scalar(select(table.c.generation).where(table.c.id == ROW_ID).with_for_update())
    # Upserts: a row is missing only in a database emptied by hand (or made before the second row), yet a
    # write must not fail then.
    stamps = {row_id: secrets.randbits(62) + 1 for row_id in (ROW_ID, STORED_RUNS_ROW_ID)}
    for row_id, stamp in stamps.items():
        upsert = dialect_insert(table).values(id=row_id, generation=stamp)
        if row_id == ROW_ID or stored_runs_changed:
            session.execute(upsert.on_conflict_do_update(index_elements=[table.c.id], set_={"generation": stamp}))
        else:
            session.execute(upsert.on_conflict_do_nothing(index_elements=[table.c.id]))
    if not session.info.get(_LISTENING):
        session.info[_LISTENING] = True
        event.listen(session, "after_commit", _committed, once=True)
    return Replaced(before, stamps[ROW_ID])


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


def current(connection: Session | Connection) -> Stamps | None:
    """The stamps, or None when every_write's row is missing (then nothing may be cached)."""
    rows: dict[int, int] = {row_id: stamp for row_id, stamp in connection.execute(_CURRENT)}
    every_write = rows.get(ROW_ID)
    return None if every_write is None else Stamps(every_write, rows.get(STORED_RUNS_ROW_ID))
