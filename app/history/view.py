"""A machine's history shaped for an answer: the API's JSON (docs/api-contract.md, "History") and the page's
compact arrays (one list per series, not one object per point: 1,000 runs × 12 tests stay a few hundred KB)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from app.bonnie import BY_NAME, FAMILIES, too_fast_above
from app.history.changes import EXPLAINED, OPEN, STATE_WORDS, ChangeView, MachineHistory, SeriesView
from app.history.series import LATENCY, RATE, Configuration, RunPoint
from app.history.setup import differences


@dataclass(frozen=True, slots=True)
class HistoryAsked:
    """What /history and /api/history are asked: the URL is the state."""

    machine: str
    tags: dict[str, str]
    group: tuple[str, ...] | None  # None: the default grouping
    measure: str = RATE

    def query(self, **changed: Any) -> str:
        """This state's query string, with `changed` fields replaced."""
        fields = {"machine": self.machine, "tags": self.tags, "group": self.group, "measure": self.measure} | changed
        pairs: list[tuple[str, str]] = [("machine", fields["machine"])]
        pairs += [("tag", f"{key}={value}") for key, value in sorted(fields["tags"].items())]
        if fields["group"] is not None:
            pairs.append(("group", ",".join(fields["group"]) or "none"))
        if fields["measure"] != RATE:
            pairs.append(("measure", fields["measure"]))
        return urlencode(pairs)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def shown(history: MachineHistory, tags: dict[str, str]) -> list[Configuration]:
    """The configurations a tag filter keeps: those with a run that has every tag asked for."""
    return [
        config
        for config in history.configurations
        if not tags or any(all(run.tags.get(k) == v for k, v in tags.items()) for run in config.runs)
    ]


def _unit(view: SeriesView) -> str:
    return "us" if view.series.measure == LATENCY else BY_NAME[view.series.test].unit


# What detection said of a change (its stored `facts`), as every answer gives it.
FACT_FIELDS = ("ratio", "ratio_ci95", "p_value", "method", "bound", "kind", "label")


def _triage_json(state: str, note: str | None, by: str | None, at: datetime | None) -> dict[str, Any]:
    return {"state": state, "note": note, "triaged_by": by, "triaged_at": None if at is None else iso(_aware(at))}


def _aware(moment: datetime) -> datetime:
    """SQLite gives back naive times (stored as UTC)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def change_json(view: SeriesView, change: ChangeView) -> dict[str, Any]:
    """A change in its series, as /api/history gives it."""
    head = {"id": change.id, "run": change.run_id, "time": iso(view.points[change.index].time)}
    facts = {field: change.facts[field] for field in FACT_FIELDS}
    return head | facts | _triage_json(change.state, change.note, change.triaged_by, change.triaged_at)


def stored_change_json(row: dict[str, Any], history_url: str) -> dict[str, Any]:
    """A stored change (a `change` row), as /api/changes and PATCH /api/changes/{id} give it."""
    test, _, latency = row["test"].partition(".")
    head = {
        "id": row["id"],
        "machine": row["machine"],
        "configuration": row["configuration"],
        "test": test,
        "measure": LATENCY if latency else RATE,
        "run": row["run_id"],
    }
    facts = {field: row["facts"][field] for field in FACT_FIELDS}
    triage = _triage_json(row["state"], row["note"], row["triaged_by"], row["triaged_at"])
    return head | facts | triage | {"found_at": iso(_aware(row["found_at"])), "history": history_url}


def _point_json(view: SeriesView, run: RunPoint | None, index: int) -> dict[str, Any]:
    point = view.points[index]
    found: dict[str, Any] = {
        "run": point.run_id,
        "time": iso(point.time),
        "value": point.value,
        "status": "too_fast" if point.censored else "ok",
    }
    if point.censored and run is not None:
        found["above"] = too_fast_above(view.series.test, run.file_size_mib, run.num_files)
    return found


def _stretch_json(view: SeriesView) -> list[dict[str, Any]]:
    return [
        {
            "first_run": view.points[stretch.start].run_id,
            "last_run": view.points[stretch.stop - 1].run_id,
            "level": stretch.level,
            "band95": None if stretch.band95 is None else list(stretch.band95),
            "censored": stretch.censored,
        }
        for stretch in view.stretches
    ]


def setup_changes(config: Configuration) -> list[dict[str, Any]]:
    """Where the runner's setup changed between two runs of a configuration, and what changed."""
    found = []
    for before, run in zip(config.runs, config.runs[1:], strict=False):
        changed = differences(before.facts, run.facts)
        if changed:
            found.append({"run": run.run_id, "time": iso(run.time), "changes": changed})
    return found


def api_answer(history: MachineHistory, asked: HistoryAsked) -> dict[str, Any]:
    configs = shown(history, asked.tags)
    keys = {config.key for config in configs}
    views = [view for view in history.series if view.series.configuration.key in keys]
    series = []
    for config in configs:
        runs = {run.run_id: run for run in config.runs}
        tests = []
        for view in views:
            if view.series.configuration.key != config.key:
                continue
            tests.append(
                {
                    "test": view.series.test,
                    "measure": view.series.measure,
                    "unit": _unit(view),
                    "points": [_point_json(view, runs.get(p.run_id), i) for i, p in enumerate(view.points)],
                    "stretches": _stretch_json(view),
                    "changes": [change_json(view, change) for change in view.changes],
                }
            )
        series.append(
            {
                "configuration": config.key,
                "tags": config.tags,
                "runs": len(config.runs),
                "setup_changes": setup_changes(config),
                "tests": tests,
            }
        )
    return {"machine": asked.machine, "group": list(history.group), "series": series}


def page_view(history: MachineHistory, asked: HistoryAsked) -> dict[str, Any]:
    """All the page shows of the history, as JSON-able data (app/history/snapshot.py keeps it)."""
    data = page_data(history, asked)
    rows = change_rows(history, asked)
    return {
        "data": data,
        "changes": rows,
        # Steps the runner's evidence explains (the machine's load, the page cache) are listed apart, unmarked.
        "groups": change_groups([row for row in rows if row["state"] != EXPLAINED]),
        "explained_groups": change_groups([row for row in rows if row["state"] == EXPLAINED]),
        "group": list(history.group),
        "run_count": sum(len(config["runs"]) for config in data["configs"]),
        "families": families_of(list(data["charts"])),
    }


def _compact(value: float | None) -> float | int | None:
    """A figure as the page needs it: whole numbers without ".0", others to 4 significant digits."""
    if value is None:
        return None
    if value == int(value) and abs(value) < 2**53:
        return int(value)
    return float(f"{value:.4g}")


def page_data(history: MachineHistory, asked: HistoryAsked) -> dict[str, Any]:
    """The charts' data: per configuration its runs (id, time), per series the values by run position (`at`:
    the positions, null when the series has a point for every run)."""
    configs = shown(history, asked.tags)
    charts: dict[str, list[dict[str, Any]]] = {}
    too_fast_only: dict[str, None] = {}
    for position, config in enumerate(configs):
        index_of = {run.run_id: i for i, run in enumerate(config.runs)}
        for view in history.series:
            if view.series.configuration.key != config.key or view.series.measure != asked.measure:
                continue
            test = view.series.test
            above = [too_fast_above(test, run.file_size_mib, run.num_files) for run in config.runs]
            if all(p.censored and above[index_of[p.run_id]] is None for p in view.points):
                too_fast_only.setdefault(test, None)  # nothing to draw: every run +++++, with no bound known
                continue
            at = [index_of[p.run_id] for p in view.points]
            charts.setdefault(test, []).append(
                {
                    "config": position,
                    "at": None if len(at) == len(config.runs) else at,
                    # +++++ is drawn at its bound, marked "above": never as zero
                    "v": [_compact(p.value if not p.censored else above[index_of[p.run_id]]) for p in view.points],
                    "above": [i for i, p in enumerate(view.points) if p.censored],
                    "steps": [
                        [s.start, s.stop - 1, *map(_compact, (s.level, *(s.band95 or (None, None))))]
                        for s in view.stretches
                    ],
                    # [point, ratio, id, explained]: a step the runner's evidence explains is drawn unmarked
                    "changes": [
                        [c.index, _compact(c.facts["ratio"]), c.id, int(c.state == EXPLAINED)] for c in view.changes
                    ],
                }
            )
    return {
        "configs": [
            {
                "name": config.key or "all runs",
                "runs": [run.run_id for run in config.runs],
                "t": [round(run.time.timestamp()) for run in config.runs],
                "setup": setup_changes(config),
            }
            for config in configs
        ],
        "charts": charts,
        "units": {test: ("us" if asked.measure == LATENCY else BY_NAME[test].unit) for test in charts},
        # +++++ in every run, where no bound says what it was above (seeks): said in words, not drawn as nothing
        "too_fast_only": [BY_NAME[test].title for test in too_fast_only if test not in charts],
    }


def families_of(tests: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The charted tests under their family titles, in bonnie++'s order."""
    return [
        (family.title, [test for test in tests if BY_NAME[test].family == family])
        for family in FAMILIES
        if any(BY_NAME[test].family == family for test in tests)
    ]


def change_rows(history: MachineHistory, asked: HistoryAsked) -> list[dict[str, Any]]:
    """Every change of the shown configurations, newest first: the page's table, readable on a phone."""
    keys = {config.key for config in shown(history, asked.tags)}
    rows = []
    for view in history.series:
        if view.series.configuration.key not in keys:
            continue
        for change in view.changes:
            row = change_json(view, change)
            row |= {
                "configuration": view.series.configuration.key or "all runs",
                "test": view.series.test,
                "title": BY_NAME[view.series.test].title,
                "measure": view.series.measure,
                "state_words": STATE_WORDS[change.state],
                "better": _better(view.series.measure, change.facts["ratio"]),
            }
            rows.append(row)
    rows.sort(key=lambda row: (row["time"], row["run"]), reverse=True)
    return rows


def change_groups(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The changes by the run they start at, newest first: a throttle that halved three tests is one entry saying
    so, with the three under it. A group's label is its changes' one label, when they share it."""
    groups: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        group = groups.setdefault(
            (row["configuration"], row["run"]),
            {"configuration": row["configuration"], "run": row["run"], "time": row["time"], "changes": []},
        )
        group["changes"].append(row)
    for group in groups.values():
        labels = {row["label"] for row in group["changes"]}
        group["label"] = labels.pop() if len(labels) == 1 else None
        group["open"] = sum(row["state"] == OPEN for row in group["changes"])
    return list(groups.values())


def _better(measure: str, ratio: float) -> bool:
    """A higher rate is better; a higher latency worse."""
    return ratio > 1 if measure == RATE else ratio < 1
