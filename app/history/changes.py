"""The changes found in a machine's series, kept with their triage.

Detection runs on a machine's series as they are grouped by default (app.history.series.default_group) and is
kept in the `change` table under the digest of the series it ran on (`history_state`): a machine whose series are
unchanged is never analysed twice, whichever process asks, and a triage stays with its change. A change found again
keeps its row (its id, state and note); one no longer found is dropped unless someone triaged it, then it is kept
inactive. Error control is over all of a machine's series of a measure together (detect.series_max_p): its rates,
and apart from them its latencies.

Each change is labelled where its cause is plain: a *setup change* when the runner's setup differs between the
run before it and the run where it is (kernel 6.1 → 6.6); *machine load* when the runner saw the test wait for a
CPU far more, or less, on one side (stored `explained`, not `open`); a *machine event* when every configuration of
the machine that ran across that moment changed there too.
"""

from __future__ import annotations

import hashlib
import secrets
import statistics
import struct
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from app.errors import BadRequest, NotFound
from app.history import detect
from app.history.series import (
    RATE,
    Configuration,
    Point,
    RunPoint,
    Series,
    configurations,
    default_group,
    series_of,
)
from app.history.setup import differences
from app.store import generation
from app.store.db import begin_write
from app.store.models import change_table, history_state_table, run_table

OPEN, EXPECTED, FALSE_ALARM, ACKNOWLEDGED = "open", "expected", "false_alarm", "acknowledged"
# Found where the runner's evidence shows a cause other than the storage (EXPLANATIONS: the machine's load, the
# page cache); the change's label names it. Not an alert; a person may still triage it.
EXPLAINED = "explained"
STATES = (OPEN, EXPECTED, FALSE_ALARM, ACKNOWLEDGED, EXPLAINED)
STATE_WORDS = {
    OPEN: "open",
    EXPECTED: "expected",
    FALSE_ALARM: "false alarm",
    ACKNOWLEDGED: "acknowledged",
    EXPLAINED: "explained by the runner's evidence",
}
SETUP_CHANGE, MACHINE_EVENT = "setup_change", "machine_event"
MACHINE_LOAD, PAGE_CACHE = "machine_load", "page_cache"


@dataclass(frozen=True, slots=True)
class Explanation:
    """A cause the runner's evidence can show for a change under an unchanged setup: the median of one figure of a
    test's evidence (RunPoint.`figure`, by test) moved `points` or more across the change, the way that explains
    it (`faster_when_lower`: the test is faster where the figure is lower)."""

    kind: str
    figure: str
    points: float
    faster_when_lower: bool
    words: str  # "{before}" and "{after}" are the medians


# The machine's load: the run-queue delay of a test (the share of its time it waited for a CPU), under 2 points on
# an idle machine and 30-50 with another job on every core (tests/data/history/tmpfs). The page cache: the share of
# a test's bytes its device moved; the rest the page cache served (a read) or absorbed (a write). A 32 MiB file read
# under a 16 MiB/s throttle moved 84-100 % of its bytes on the device, 19.7 MB/s at 84 % and 16.3 at 100 %
# (tests/data/history/ext4-throttled): the device's rate is the same, the page cache's share is not.
EXPLANATIONS = (
    Explanation(
        MACHINE_LOAD,
        "cpu_wait_pct",
        10.0,
        True,
        "machine load: the test waited for a CPU {before} of its time before, {after} after",
    ),
    Explanation(
        PAGE_CACHE,
        "device_share_pct",
        10.0,
        True,
        "page cache: the device moved {before} of the test's bytes before, {after} after",
    ),
)
EXPLAINED_KINDS = frozenset(explanation.kind for explanation in EXPLANATIONS)
# Bumped when detection changes: every machine's stored changes are then found again.
DETECTION_VERSION = 5


@dataclass(slots=True)
class Found:
    """A change as detection gives it, in a series, before it is stored."""

    series: Series
    change: detect.Change
    run_id: int
    time: datetime
    window_start: datetime  # the time of the series' run before it
    kind: str | None = None
    setup: list[str] = field(default_factory=list)
    # what explains it (an EXPLANATIONS entry) and its figure's median before and after, in %
    explained: tuple[Explanation, float, float] | None = None

    @property
    def label(self) -> str | None:
        if self.kind == SETUP_CHANGE:
            return "setup change: " + "; ".join(self.setup)
        if self.explained is not None:
            explanation, before, after = self.explained
            return explanation.words.format(before=f"{before:.0f} %", after=f"{after:.0f} %")
        if self.kind == MACHINE_EVENT:
            return "machine event: every configuration changed here"
        return None

    def facts(self) -> dict[str, Any]:
        change = self.change
        return {
            "ratio": change.ratio,
            "ratio_ci95": list(change.ratio_ci95) if change.ratio_ci95 is not None else None,
            "p_value": change.p_value,
            "method": change.method,
            "bound": change.bound,
            "kind": self.kind,
            "label": self.label,
        }


@dataclass(frozen=True, slots=True)
class ChangeView:
    """A change as pages and the API show it: stored (id, triage) or found just now for another grouping."""

    id: int | None
    run_id: int
    index: int  # of the first point of the new stretch, in the series' points
    facts: dict[str, Any]
    state: str = OPEN
    note: str | None = None
    triaged_by: str | None = None
    triaged_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SeriesView:
    series: Series
    points: list[Point]
    stretches: tuple[detect.Stretch, ...]
    changes: list[ChangeView]


@dataclass(frozen=True, slots=True)
class MachineHistory:
    group: tuple[str, ...]
    configurations: list[Configuration]
    series: list[SeriesView]


Points = dict[tuple[str, str], list[Point]]  # each series' points, by (configuration key, series name)


def analyse_series(
    configs: Sequence[Configuration], series: Sequence[Series], points: Points, min_effect: float
) -> dict[tuple[str, str], detect.Analysis]:
    counts = Counter(one.measure for one in series)
    changed = _setup_change_runs(configs)
    found = {}
    for one in series:
        key = (one.configuration.key, one.name)
        found[key] = detect.analyse(
            [point.value for point in points[key]],
            [point.censored for point in points[key]],
            max_p=detect.series_max_p(counts[one.measure], one.measure),
            min_effect=detect.series_min_effect(min_effect, one.measure),
            setup_changes=[index for index, point in enumerate(points[key]) if point.run_id in changed],
            by_rank=detect.series_by_rank(one.measure),
        )
    return found


def _setup_change_runs(configs: Sequence[Configuration]) -> set[int]:
    """The runs whose setup differs from the run before them in their configuration."""
    return {
        run.run_id
        for config in configs
        for before, run in zip(config.runs, config.runs[1:], strict=False)
        if differences(before.facts, run.facts)
    }


def found_changes(
    configs: Sequence[Configuration],
    series: Sequence[Series],
    points: Points,
    analyses: dict[tuple[str, str], detect.Analysis],
) -> list[Found]:
    found = []
    for one in series:
        key = (one.configuration.key, one.name)
        for change in analyses[key].changes:
            point, before = points[key][change.index], points[key][change.index - 1]
            found.append(Found(one, change, point.run_id, point.time, before.time))
    _label(configs, found)
    return found


def _label(configs: Sequence[Configuration], found: list[Found]) -> None:
    """Setup changes first (the plainer cause), then the machine's load, then machine events."""
    runs_before: dict[int, RunPoint] = {}
    for config in configs:
        for before, run in zip(config.runs, config.runs[1:], strict=False):
            runs_before[run.run_id] = before
    run_by_id = {run.run_id: run for config in configs for run in config.runs}
    for item in found:
        run, previous = run_by_id[item.run_id], runs_before.get(item.run_id)
        if previous is not None and (changed := differences(previous.facts, run.facts)):
            item.kind, item.setup = SETUP_CHANGE, changed
    starts: dict[tuple[str, str], list[int]] = {}  # each series' changes' first runs, by position in their runs
    for item in found:
        runs = item.series.configuration.runs
        starts.setdefault((item.series.configuration.key, item.series.name), []).append(
            next(i for i, run in enumerate(runs) if run.run_id == item.run_id)
        )
    for item in found:
        if item.kind is None:
            item.explained = _explained(item, sorted(starts[(item.series.configuration.key, item.series.name)]))
            if item.explained is not None:
                item.kind = item.explained[0].kind
    if len(configs) < 2:
        return
    for item in found:
        if item.kind is not None:
            continue
        spanning = [c for c in configs if c.runs[0].time <= item.window_start and c.runs[-1].time >= item.time]
        if len(spanning) < 2:
            continue
        if all(
            any(
                other.series.configuration.key == config.key
                and other.window_start < item.time
                and other.time > item.window_start
                for other in found
            )
            for config in spanning
        ):
            item.kind = MACHINE_EVENT


def _explained(item: Found, starts: list[int]) -> tuple[Explanation, float, float] | None:
    """The first of EXPLANATIONS whose figure's median, in the stretches before and after the change (`starts`:
    where each of its series' changes starts, by position in the configuration's runs), moved its points or more
    the way that explains the change; with the two medians."""
    runs = item.series.configuration.runs
    at = next(i for i, run in enumerate(runs) if run.run_id == item.run_id)
    bounds = [0, *starts, len(runs)]
    where = bounds.index(at)
    test = item.series.test
    faster = item.change.ratio > 1 if item.series.measure == RATE else item.change.ratio < 1
    for explanation in EXPLANATIONS:
        by_run = [getattr(run, explanation.figure) for run in runs]
        before = [figures[test] for figures in by_run[bounds[where - 1] : at] if test in figures]
        after = [figures[test] for figures in by_run[at : bounds[where + 1]] if test in figures]
        if len(before) < 3 or len(after) < 3:
            continue
        median_before, median_after = statistics.median(before), statistics.median(after)
        lower = median_after < median_before
        if abs(median_after - median_before) >= explanation.points and faster == (
            lower == explanation.faster_when_lower
        ):
            return explanation, median_before, median_after
    return None


def _digest(configs: Sequence[Configuration], points: Points, min_effect: float) -> bytes:
    """What detection reads and labels by, hashed: equal digests, equal changes."""
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(struct.pack("<id", DETECTION_VERSION, min_effect))
    for config in configs:
        hasher.update(f"\x00{config.key}\x00".encode())
        hasher.update(array("q", (run.run_id for run in config.runs)).tobytes())
        hasher.update(array("d", (run.time.timestamp() for run in config.runs)).tobytes())
        hasher.update(repr([sorted(run.facts.items()) for run in config.runs]).encode())
        hasher.update(repr([sorted(run.cpu_wait_pct.items()) for run in config.runs]).encode())
        hasher.update(repr([sorted(run.device_share_pct.items()) for run in config.runs]).encode())
    for (config_key, name), found in points.items():
        hasher.update(f"\x00{config_key}\x00{name}\x00".encode())
        hasher.update(array("q", (point.run_id for point in found)).tobytes())
        hasher.update(array("d", (-1.0 if point.value is None else point.value for point in found)).tobytes())
    return hasher.digest()


def machine_history(
    session: Session, machine: str, runs: list[RunPoint], min_effect: float, group: Sequence[str] | None = None
) -> MachineHistory:
    """The machine's series with their changes. By default grouping, detection is stored and run again only when
    the series changed since it last ran (the session commits then, and is used for nothing else in between);
    by another grouping it runs now and stores nothing."""
    default = default_group(runs)
    chosen = default if group is None else tuple(group)
    configs = configurations(runs, chosen)
    points = {(one.configuration.key, one.name): one.points() for config in configs for one in series_of(config)}
    # A series with no point (latency columns a 1.03 line lacks) has nothing to draw or detect.
    series = [one for config in configs for one in series_of(config) if points[(one.configuration.key, one.name)]]
    if chosen != default:
        analyses = analyse_series(configs, series, points, min_effect)
        changes = _unstored(found_changes(configs, series, points, analyses))
        return MachineHistory(chosen, configs, [_view(one, points, changes, analyses) for one in series])
    digest = _digest(configs, points, min_effect)
    stored_digest = session.scalar(select(history_state_table.c.digest).where(history_state_table.c.machine == machine))
    analyses = {}
    if stored_digest != digest:
        analyses = analyse_series(configs, series, points, min_effect)
        found = found_changes(configs, series, points, analyses)
        if not _store(session, machine, found, digest, sorted(run.run_id for run in runs)):
            # Runs came or went since these were read: what was found in them is the answer, not the store's.
            return MachineHistory(chosen, configs, [_view(one, points, _unstored(found), analyses) for one in series])
    changes = _stored_by_series(session, machine, points)
    return MachineHistory(chosen, configs, [_view(one, points, changes, analyses) for one in series])


def _unstored(found: list[Found]) -> dict[tuple[str, str], list[ChangeView]]:
    return {
        key: [ChangeView(None, item.run_id, item.change.index, item.facts()) for item in items]
        for key, items in _by_series(found).items()
    }


def _by_series(found: list[Found]) -> dict[tuple[str, str], list[Found]]:
    grouped: dict[tuple[str, str], list[Found]] = {}
    for item in found:
        grouped.setdefault((item.series.configuration.key, item.series.name), []).append(item)
    return grouped


def _stored_by_series(
    session: Session, machine: str, points: dict[tuple[str, str], list[Point]]
) -> dict[tuple[str, str], list[ChangeView]]:
    index_of = {key: {point.run_id: i for i, point in enumerate(found)} for key, found in points.items()}
    grouped: dict[tuple[str, str], list[ChangeView]] = {}
    for row in stored_changes(session, machine=machine):
        key = (row["configuration"], row["test"])
        index = index_of.get(key, {}).get(row["run_id"])
        if index is None:
            continue
        grouped.setdefault(key, []).append(
            ChangeView(
                row["id"],
                row["run_id"],
                index,
                row["facts"],
                row["state"],
                row["note"],
                row["triaged_by"],
                row["triaged_at"],
            )
        )
    for views in grouped.values():
        views.sort(key=lambda view: view.index)
    return grouped


def _view(
    one: Series,
    points: dict[tuple[str, str], list[Point]],
    changes: dict[tuple[str, str], list[Any]],
    analyses: dict[tuple[str, str], detect.Analysis],
) -> SeriesView:
    key = (one.configuration.key, one.name)
    found = points[key]
    views = changes.get(key, [])
    analysis = analyses.get(key)
    if analysis is not None and [c.index for c in analysis.changes] == [view.index for view in views]:
        stretches = analysis.stretches
    else:
        stretches = detect.stretches(
            [point.value for point in found],
            [point.censored for point in found],
            [view.index for view in views],
            by_rank=detect.series_by_rank(one.measure),
        )
    return SeriesView(one, found, stretches, views)


def _store(session: Session, machine: str, found: list[Found], digest: bytes, run_ids: list[int]) -> bool:
    """Keep what detection found in `run_ids`, the machine's runs as it read them, unless they are no longer the
    machine's runs: then a later analysis (an upload's, or the next page's) has newer runs to read, and an older one
    must not replace what it stores. Checked under the write lock, so two analyses store one after the other."""
    begin_write(session)
    now_ids = list(
        session.scalars(select(run_table.c.id).where(run_table.c.machine == machine).order_by(run_table.c.id))
    )
    if now_ids != run_ids:
        session.rollback()
        return False
    now = datetime.now(UTC)
    rows = session.execute(
        select(
            change_table.c.id,
            change_table.c.configuration,
            change_table.c.test,
            change_table.c.run_id,
            change_table.c.state,
        ).where(change_table.c.machine == machine)
    ).all()
    existing = {(row.configuration, row.test, row.run_id): row for row in rows}
    kept: set[int] = set()
    for item in found:
        key = (item.series.configuration.key, item.series.name, item.run_id)
        row = existing.get(key)
        if row is None:
            session.execute(
                change_table.insert().values(
                    machine=machine,
                    configuration=key[0],
                    test=key[1],
                    run_id=key[2],
                    active=True,
                    found_at=now,
                    facts=item.facts(),
                    state=EXPLAINED if item.kind in EXPLAINED_KINDS else OPEN,
                )
            )
        else:
            kept.add(row.id)
            session.execute(
                update(change_table).where(change_table.c.id == row.id).values(active=True, facts=item.facts())
            )
    gone = [row for row in rows if row.id not in kept]
    untriaged = [row.id for row in gone if row.state == OPEN]
    if untriaged:
        session.execute(delete(change_table).where(change_table.c.id.in_(untriaged)))
    triaged = [row.id for row in gone if row.state != OPEN]
    if triaged:
        session.execute(update(change_table).where(change_table.c.id.in_(triaged)).values(active=False))
    session.execute(delete(history_state_table).where(history_state_table.c.machine == machine))
    session.execute(
        history_state_table.insert().values(machine=machine, digest=digest, detected_at=now, version=new_version())
    )
    session.commit()
    return True


def new_version() -> int:
    """A machine's stored changes' new `history_state.version`: random, as the data's stamps are
    (app/store/generation.py), so that a database made again never meets a version a process keeps answers under."""
    return secrets.randbits(62) + 1


def machines_of_upload(session: Session, upload_id: int) -> list[str]:
    return list(session.scalars(select(run_table.c.machine).where(run_table.c.upload_id == upload_id).distinct()))


# A change needs MIN_RUNS runs on each side: a machine of fewer runs has none to find.
FEWEST_RUNS = 2 * detect.MIN_RUNS
_IN_CHUNK = 500  # machines per IN (...) list: SQLite's bound on a statement's parameters is far above it


def detectable(session: Session, machines: Sequence[str]) -> list[str]:
    """The machines of `machines` that detection has anything to do for: FEWEST_RUNS runs or more, or a detection
    kept from before (which a deletion may have to undo). An upload of 10,000 runs of 10,000 machines has
    nothing to find, and would otherwise cost each machine its read, its detection, its page and its commit."""
    found: set[str] = set()
    for start in range(0, len(machines), _IN_CHUNK):
        chunk = list(machines[start : start + _IN_CHUNK])
        found.update(
            session.scalars(
                select(run_table.c.machine)
                .where(run_table.c.machine.in_(chunk))
                .group_by(run_table.c.machine)
                .having(func.count() >= FEWEST_RUNS)
            )
        )
        found.update(
            session.scalars(select(history_state_table.c.machine).where(history_state_table.c.machine.in_(chunk)))
        )
    return [machine for machine in machines if machine in found]


def stored_changes(
    session: Session, *, machine: str | None = None, states: Sequence[str] = (), limit: int | None = None
) -> list[dict[str, Any]]:
    """Active change rows, newest first (by id: found later, or at a later run of its series)."""
    statement = select(change_table).where(change_table.c.active.is_(True)).order_by(change_table.c.id.desc())
    if machine is not None:
        statement = statement.where(change_table.c.machine == machine)
    if states:
        statement = statement.where(change_table.c.state.in_(states))
    if limit is not None:
        statement = statement.limit(limit)
    return [dict(row._mapping) for row in session.execute(statement)]


def triage(session: Session, change_id: int, *, state: str, note: str | None, by: str | None) -> dict[str, Any]:
    """Mark a change expected, a false alarm, acknowledged, or open again; the caller commits."""
    if state not in STATES:
        raise BadRequest(f"state: one of {', '.join(STATES)}; {state[:40]!r} was given")
    begin_write(session)
    if session.scalar(select(change_table.c.id).where(change_table.c.id == change_id)) is None:
        raise NotFound(f"change {change_id} not found")
    session.execute(
        update(change_table)
        .where(change_table.c.id == change_id)
        .values(state=state, note=note, triaged_by=by, triaged_at=datetime.now(UTC))
    )
    machine = session.scalar(select(change_table.c.machine).where(change_table.c.id == change_id))
    # The machine's kept page shows the triage it had: it is made again, and answers kept in processes go.
    session.execute(
        update(history_state_table)
        .where(history_state_table.c.machine == machine)
        .values(view_key=None, view=None, version=new_version())
    )
    generation.bump(session, stored_runs_changed=False)
    return dict(session.execute(select(change_table).where(change_table.c.id == change_id)).one()._mapping)
