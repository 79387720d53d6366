"""A machine's runs over time, as series: a configuration (its tags) × a test × a measure (rate or latency).

A run's time is its runner's start time (`document.started_at`); else the `time=` its upload gave
(`upload.run_time`); else when its upload was stored. Runs at the same time keep their line order (their ids).

A configuration is the runs with the same values of the grouping tags (`group=K,K`). By default these are every
tag the machine's runs carry except those that name a single run rather than a setup: a key of ROUND_KEYS
(a sweep's `round=`), or a key with a value for about every run (a build id), which would make each run a series
of one; and a tag every run carries with the same value, which tells nothing apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.bonnie import STATUS_OK, STATUS_TOO_FAST, TESTS
from app.columns import result_column
from app.history.setup import run_facts
from app.store.models import document_table, run_table, tag_table, upload_table

RATE, LATENCY = "rate", "latency"
MEASURES = (RATE, LATENCY)
# Tags that name a run of a study rather than its setup: a series per value would hold one run.
ROUND_KEYS = frozenset({"round", "order_seed", "seed", "iteration", "repeat", "build", "commit", "date", "time"})
# A key with values for at least this share of the runs' count names runs, not configurations.
PER_RUN_SHARE = 0.5
MAX_GROUP_KEYS = 10


@dataclass(frozen=True, slots=True)
class Result:
    status: str  # STATUS_OK or STATUS_TOO_FAST (a run where the test did not run has no Result)
    value: float | None  # the rate, None when TOO_FAST
    latency_us: int | None


@dataclass(frozen=True, slots=True)
class RunPoint:
    run_id: int
    time: datetime
    tags: dict[str, str]
    facts: dict[str, str]  # the run's setup (app.history.setup.run_facts)
    results: dict[str, Result]  # by test: only the tests that ran
    file_size_mib: int | None
    num_files: int | None
    cpu_wait_pct: dict[str, float]  # by test, where the runner measured it: the share of its time it waited for a CPU
    # by test, where the runner measured it: the share of the test's bytes its device moved (the rest, the page cache)
    device_share_pct: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Configuration:
    key: str  # "fs=ext4 mount=noatime": its grouping tags, sorted; "" when nothing groups
    tags: dict[str, str]
    runs: tuple[RunPoint, ...]


@dataclass(frozen=True, slots=True)
class Point:
    run_id: int
    time: datetime
    value: float | None  # None when censored
    censored: bool  # +++++: above what could be measured


@dataclass(frozen=True, slots=True)
class Series:
    configuration: Configuration
    test: str
    measure: str

    @property
    def name(self) -> str:
        """How the change table names it: the test, `.latency` for its latency."""
        return self.test if self.measure == RATE else f"{self.test}.{LATENCY}"

    def points(self) -> list[Point]:
        found = []
        for run in self.configuration.runs:
            result = run.results.get(self.test)
            if result is None:
                continue
            if self.measure == LATENCY:
                if result.latency_us is not None and result.latency_us > 0:
                    found.append(Point(run.run_id, run.time, float(result.latency_us), False))
            elif result.status == STATUS_TOO_FAST:
                found.append(Point(run.run_id, run.time, None, True))
            elif result.value is not None and result.value > 0:
                found.append(Point(run.run_id, run.time, float(result.value), False))
        return found


def _results_columns() -> list:
    return [run_table.c[result_column(test, part)] for test in TESTS for part in ("status", "value", "latency_us")]


def read_runs(session: Session, machine: str) -> list[RunPoint]:
    """The machine's runs in time order, with their tags and setup."""
    run_time = func.coalesce(document_table.c.started_at, upload_table.c.run_time, upload_table.c.created_at)
    statement = (
        select(
            run_table.c.id,
            run_time.label("time"),
            run_table.c.bonnie_version,
            run_table.c.file_size_mib,
            run_table.c.num_files,
            run_table.c.limiters,
            document_table.c.setup,
            *_results_columns(),
        )
        .join(upload_table, upload_table.c.id == run_table.c.upload_id)
        .outerjoin(document_table, document_table.c.id == run_table.c.document_id)
        .where(run_table.c.machine == machine)
    )
    rows = session.execute(statement).all()
    tags = _tags_of(session, [row.id for row in rows])
    runs = [_run_point(row, tags.get(row.id, {})) for row in rows]
    runs.sort(key=lambda run: (run.time, run.run_id))
    return runs


def _tags_of(session: Session, run_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    found: dict[int, dict[str, str]] = {}
    # In chunks: SQLite takes at most 32,766 parameters in a statement.
    for start in range(0, len(run_ids), 10_000):
        chunk = run_ids[start : start + 10_000]
        statement = select(tag_table.c.run_id, tag_table.c.key, tag_table.c.value).where(tag_table.c.run_id.in_(chunk))
        for run_id, key, value in session.execute(statement):
            found.setdefault(run_id, {})[key] = value
    return found


def _aware(moment: datetime) -> datetime:
    """SQLite gives back naive times (stored as UTC)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


# Each test with the names of its status, value and latency columns: read for every run of a machine.
_RESULT_NAMES = tuple(
    (test, result_column(test, "status"), result_column(test, "value"), result_column(test, "latency_us"))
    for test in TESTS
)


def _run_point(row, tags: dict[str, str]) -> RunPoint:
    mapping = row._mapping
    results = {}
    for test, status_name, value_name, latency_name in _RESULT_NAMES:
        status = mapping[status_name]
        if status not in (STATUS_OK, STATUS_TOO_FAST):
            continue
        value = mapping[value_name]
        results[test] = Result(status, None if value is None else float(value), mapping[latency_name])
    facts = run_facts(
        row.setup if isinstance(row.setup, dict) else None, row.bonnie_version, row.file_size_mib, row.num_files
    )
    limiters = row.limiters if isinstance(row.limiters, dict) else {}
    return RunPoint(
        row.id,
        _aware(row.time),
        tags,
        facts,
        results,
        row.file_size_mib,
        row.num_files,
        _evidence(limiters, "cpu_wait_pct"),
        _evidence(limiters, "device_share_pct"),
    )


def _evidence(limiters: dict[str, Any], name: str) -> dict[str, float]:
    """One figure of the runner's evidence that ingest kept beside each test's limiter, by test, where it is."""
    return {
        test: float(limiter[name])
        for test, limiter in limiters.items()
        if isinstance(limiter, dict) and isinstance(limiter.get(name), int | float)
    }


def default_group(runs: Sequence[RunPoint]) -> tuple[str, ...]:
    """The tag keys that tell the machine's configurations apart (the module's docstring says which)."""
    values: dict[str, set[str]] = {}
    carried: dict[str, int] = {}
    for run in runs:
        for key, value in run.tags.items():
            values.setdefault(key, set()).add(value)
            carried[key] = carried.get(key, 0) + 1
    per_run_at = max(2, PER_RUN_SHARE * len(runs))
    keys = sorted(
        key
        for key, seen in values.items()
        if key not in ROUND_KEYS
        and not len(seen) >= per_run_at
        # a tag every run has with one value tells nothing apart, and would only lengthen every name
        and not (len(seen) == 1 and carried[key] == len(runs))
    )
    return tuple(keys[:MAX_GROUP_KEYS])


def configuration_key(tags: dict[str, str]) -> str:
    return " ".join(f"{key}={value}" for key, value in sorted(tags.items()))


def configurations(runs: Iterable[RunPoint], group: Sequence[str]) -> list[Configuration]:
    """The runs by their values of the `group` tags, in the order of each configuration's first run."""
    by_key: dict[str, list[RunPoint]] = {}
    tags_of: dict[str, dict[str, str]] = {}
    for run in runs:
        tags = {key: run.tags[key] for key in group if key in run.tags}
        key = configuration_key(tags)
        by_key.setdefault(key, []).append(run)
        tags_of.setdefault(key, tags)
    return [Configuration(key, tags_of[key], tuple(found)) for key, found in by_key.items()]


def series_of(configuration: Configuration) -> list[Series]:
    """Every series of a configuration with at least one point, tests in bonnie++'s order, rate before latency."""
    ran = {test for run in configuration.runs for test in run.results}
    return [Series(configuration, test, measure) for test in TESTS if test in ran for measure in MEASURES]
