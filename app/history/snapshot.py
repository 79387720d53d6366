"""A machine's /history page data, kept in the database with the key of the runs it was made from, so that the
first page after a start (or in another worker) is a read of one row, not an analysis of a thousand runs.

The key holds what changes whenever the page could: the `stored_runs` stamp (a deletion, a tag or label edit:
app/store/generation.py), the machine's highest run id (an upload to it; a run given an earlier `time=` is still a
new id), the minimum effect and the detection's version. Another machine's upload leaves it as it is. A triage
drops the machine's snapshot (app.history.changes.triage). Only the default view is kept; others are made when
asked (and cached in the process by the route).

A process keeps its answers under that key and the version of the machine's stored changes (replaced by detection's
store and by a triage, in whichever process), not under the database's every-write stamp: another machine's upload
leaves them too, and the first page after it is the process's, not the kept page read and decoded again."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.history.changes import DETECTION_VERSION, detectable, machine_history
from app.history.series import read_runs
from app.history.view import HistoryAsked, page_view
from app.store import generation
from app.store.db import begin_write
from app.store.models import history_state_table, run_table

GZIP_LEVEL = 3


@dataclass(frozen=True, slots=True)
class Keys:
    kept: str  # what a kept page was made from: the runs of the machine
    process: str  # what an answer cached in a process was made from: that and the machine's stored changes


def keys_of(session: Session, machine: str, min_effect: float) -> Keys | None:
    """The keys of the machine's runs and stored changes as they are now; None when no write has stamped the
    database (then nothing is kept)."""
    stamps = generation.current(session)
    if stamps is None:
        return None
    # One statement: both are a short read of an index or a row, and each statement is a round trip on PostgreSQL.
    newest = select(func.max(run_table.c.id)).where(run_table.c.machine == machine).scalar_subquery()
    version = select(history_state_table.c.version).where(history_state_table.c.machine == machine).scalar_subquery()
    row = session.execute(select(newest, version)).one()
    kept = f"{stamps.stored_runs}:{row[0]}:{min_effect!r}:{DETECTION_VERSION}"
    return Keys(kept, f"{kept}:{row[1]}")


def load(session: Session, machine: str, key: str) -> dict[str, Any] | None:
    row = session.execute(
        select(history_state_table.c.view_key, history_state_table.c.view).where(
            history_state_table.c.machine == machine
        )
    ).first()
    if row is None or row.view_key != key or row.view is None:
        return None
    return json.loads(gzip.decompress(row.view))


def save(session: Session, machine: str, key: str, data: dict[str, Any]) -> None:
    """Keep `data` under `key`, when detection has left the machine's state row (it always has by now); the
    caller commits."""
    body = gzip.compress(json.dumps(data, separators=(",", ":")).encode(), GZIP_LEVEL, mtime=0)
    session.execute(
        update(history_state_table).where(history_state_table.c.machine == machine).values(view_key=key, view=body)
    )


def refresh(session: Session, machines: Sequence[str], min_effect: float) -> None:
    """Detection for each machine whose series changed, and its page kept: after an upload has committed, so that
    the first page, list or feed that asks finds it done; a machine with nothing to detect (`detectable`) is left
    to its first page. Commits per machine."""
    for machine in detectable(session, machines):
        keys = keys_of(session, machine, min_effect)
        runs = read_runs(session, machine)
        if not runs:
            continue
        asked = HistoryAsked(machine, {}, None)
        page = page_view(machine_history(session, machine, runs, min_effect), asked)
        if keys is not None:
            begin_write(session)
            save(session, machine, keys.kept, page)
        session.commit()
