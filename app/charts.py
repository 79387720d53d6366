"""Comparison charts: runs -> the numbers every chart draws, absolute or relative to a baseline.

Pure: no database, no HTTP. The one place chart data and units are computed: `compare()` is the
body of GET /api/compare (docs: api-contract.md), and the /compare page draws exactly that, with
`compare_view()` adding what a person needs to read it (legend names, titles, display units, notes)
and `heat_table()` the table under the charts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from app.errors import BadRequest
from app.models import MAX_ID
from app.parsing import FILE_TESTS, NOT_RUN, OK, TESTS, TOO_FAST, UNITS, Result
from app.units import KIB_PER_MIB, US_PER_MS, US_PER_S, format_latency, format_rate

ABSOLUTE, RELATIVE = "absolute", "relative"
MODES = (ABSOLUTE, RELATIVE)
# A chart with hundreds of bars per test reads as noise, and the page must stay fast (issue #3).
MAX_RUNS = 100

NO_LATENCY = "no_latency"
BASELINE_ZERO = "baseline_zero"
BASELINE_PREFIX = "baseline_"

VALUE, CPU, LATENCY = "value", "cpu", "latency"


@dataclass(frozen=True, slots=True)
class ChartSpec:
    key: str
    title: str
    tests: tuple[str, ...]
    unit: str  # the unit of the absolute values
    higher_is_better: bool
    measure: str  # VALUE, CPU or LATENCY: which figure of each result the chart shows


CHARTS = (
    ChartSpec("block_io", "Block I/O", TESTS[:5], "KiB/s", True, VALUE),
    ChartSpec("seeks", "Random seeks", ("seeks",), "seeks/s", True, VALUE),
    ChartSpec("metadata", "File create and delete", ("seq_create", "seq_del", "ran_create", "ran_del"), "files/s", True, VALUE),
    ChartSpec("metadata_stat", "File stat", ("seq_stat", "ran_stat"), "files/s", True, VALUE),
    ChartSpec("latency", "Latency", TESTS, "µs", False, LATENCY),
    ChartSpec("cpu", "%CPU", TESTS, "%CPU", False, CPU),
)
CHART_KEYS = tuple(spec.key for spec in CHARTS)

TEST_TITLES = {
    "putc": "per-char write", "put_block": "block write", "rewrite": "rewrite",
    "getc": "per-char read", "get_block": "block read", "seeks": "random seeks",
    "seq_create": "seq. create", "seq_stat": "seq. stat", "seq_del": "seq. delete",
    "ran_create": "random create", "ran_stat": "random stat", "ran_del": "random delete",
}  # fmt: skip

# Why a cell has no value; the page says these in tooltips and under each chart.
STATUS_TEXT = {
    TOO_FAST: "+++++ too fast to measure",
    NOT_RUN: "not run",
    NO_LATENCY: "no latency in this line",
    BASELINE_PREFIX + TOO_FAST: "no comparison: the baseline's result is +++++ (too fast to measure)",
    BASELINE_PREFIX + NOT_RUN: "no comparison: the baseline did not run this test",
    BASELINE_PREFIX + NO_LATENCY: "no comparison: the baseline's line has no latency",
    BASELINE_ZERO: "no comparison: the baseline's value is 0",
}
TOO_FAST_EXPLANATION = "bonnie++ prints +++++ when a test took under 0.5 s: too fast to measure, not zero."
TOO_FAST_HINT = dict.fromkeys(TESTS[:6], "a larger -s (file size)") | dict.fromkeys(FILE_TESTS, "a larger -n (number of files)")

# Display units: the largest unit not above a value. Data stays in the stored unit (KiB/s, µs);
# the page divides only in tick labels and tooltips, so the page and /api/compare agree.
UNIT_STEPS = {
    "KiB/s": [[1, "KiB/s"], [KIB_PER_MIB, "MiB/s"], [KIB_PER_MIB * KIB_PER_MIB, "GiB/s"]],
    "µs": [[1, "µs"], [US_PER_MS, "ms"], [US_PER_S, "s"]],
}


@dataclass(frozen=True, slots=True)
class RunFigures:
    """What a comparison needs of a run; `results` holds twelve Results in TESTS order."""

    id: int
    machine: str
    label: str | None
    tags: dict[str, str]
    format_version: str
    bonnie_version: str | None
    results: tuple[Result, ...]


_RESULT_STARTS = range(5, 5 + 4 * len(TESTS), 4)


def figures_of(row: Any, tags: dict[str, str]) -> RunFigures:
    """A run as queries.runs_to_compare() reads it (a row of queries.COMPARE_COLUMNS) and its tags."""
    cells = tuple(row)
    make = Result._make
    return RunFigures(cells[0], cells[1], cells[2], tags, cells[3], cells[4], tuple([make(cells[at:at + 4]) for at in _RESULT_STARTS]))


def parse_run_ids(values: Iterable[str]) -> list[int]:
    """`runs=1,2,3` (and/or repeated `run=` values) -> ids in order, each once."""
    ids: list[int] = []
    for value in values:
        for part in value.replace(" ", ",").split(","):
            if not part:
                continue
            if not (part.isdigit() and part.isascii()) or len(part) > 18 or int(part) > MAX_ID:
                raise BadRequest(f"runs must be run ids separated by commas, like 1,2,3; {part[:30]!r} is not an id")
            run_id = int(part)
            if run_id not in ids:
                ids.append(run_id)
    if len(ids) > MAX_RUNS:
        raise BadRequest(f"at most {MAX_RUNS} runs can be compared at once; {len(ids)} were asked for")
    return ids


def check_request(run_ids: Sequence[int], mode: str, baseline: int | None) -> int | None:
    """Validate a comparison request; return the baseline to use (the first run in relative mode)."""
    if not run_ids:
        raise BadRequest("no runs to compare: give their ids as runs=1,2,3")
    if mode not in MODES:
        raise BadRequest(f"mode must be 'absolute' or 'relative', not {mode[:30]!r}")
    if baseline is not None and baseline not in run_ids:
        raise BadRequest(f"baseline {baseline} is not one of the runs compared")
    if mode == RELATIVE and baseline is None:
        return run_ids[0]
    return baseline


# ==== The numbers (GET /api/compare) ====


def chart_cells(results: tuple[Result, ...], indexes: list[int], measure: str) -> tuple[list[str], list[Any]]:
    """One run's (statuses, values) for the tests at `indexes` of a chart, in absolute units."""
    picked = [results[i] for i in indexes]
    if measure == LATENCY:
        # bonnie++ prints a latency even for a +++++ result; 1.03 lines have none.
        values = [r[3] for r in picked]
        return [OK if v is not None else NO_LATENCY for v in values], values
    field = 1 if measure == VALUE else 2  # Result: status, value, cpu_pct, latency_us
    return [r[0] for r in picked], [r[field] if r[0] == OK else None for r in picked]


TEST_INDEXES = {spec.key: [TESTS.index(test) for test in spec.tests] for spec in CHARTS}


def baseline_reason(status: str, value: Any) -> str | None:
    """Why a run cannot be compared with this baseline cell, or None when it can."""
    if status != OK or value is None:
        return BASELINE_PREFIX + status
    return BASELINE_ZERO if value == 0 else None


def percent_of(value: float, base_value: float) -> float:
    """(run / baseline - 1) * 100 rounded to one decimal; + 0.0 turns a rounded -0.0 into 0.0."""
    return round((value / base_value - 1) * 100, 1) + 0.0


def relative_cell(run_cell: tuple[str, Any], baseline_cell: tuple[str, Any]) -> tuple[str, float | None]:
    """A run's (status, value) relative to the baseline's: a percentage, or None and the reason
    (the run's own status first, then the baseline's as "baseline_" + status, or "baseline_zero")."""
    status, value = run_cell
    if status != OK or value is None:
        return status, None
    reason = baseline_reason(*baseline_cell)
    return (reason, None) if reason else (OK, percent_of(value, baseline_cell[1]))


def compare(runs: Sequence[RunFigures], *, mode: str = ABSOLUTE, baseline: int | None = None) -> dict[str, Any]:
    """The body of GET /api/compare for `runs` (in the order asked)."""
    baseline = check_request([run.id for run in runs], mode, baseline)
    base_run = next((run for run in runs if run.id == baseline), None)
    relative = mode == RELATIVE
    charts = []
    for spec in CHARTS:
        indexes = TEST_INDEXES[spec.key]
        series = []
        if relative:
            base_statuses, base_values = chart_cells(base_run.results, indexes, spec.measure)
            reasons = [baseline_reason(s, v) for s, v in zip(base_statuses, base_values, strict=True)]
        for run in runs:
            if relative and run.id == baseline:
                continue
            statuses, values = chart_cells(run.results, indexes, spec.measure)
            if relative:
                # relative_cell() over a whole row at once: 50 runs x 36 cells per request.
                values = [
                    percent_of(v, b) if s == OK and v is not None and reason is None else None
                    for s, v, b, reason in zip(statuses, values, base_values, reasons, strict=True)
                ]
                statuses = [s if s != OK else reason or OK for s, reason in zip(statuses, reasons, strict=True)]
            series.append({"run": run.id, "values": values, "status": statuses})
        charts.append({
            "key": spec.key,
            "unit": "%" if relative else spec.unit,
            "higher_is_better": spec.higher_is_better,
            "tests": list(spec.tests),
            "series": series,
        })  # fmt: skip
    return {
        "mode": mode,
        "baseline": baseline,
        "runs": [{"id": run.id, "label": run.label or run.machine} for run in runs],
        "charts": charts,
    }


# ==== What a person needs to read them (the /compare page) ====


def legend_names(runs: Sequence[RunFigures]) -> dict[int, str]:
    """Label (or machine) plus the tags that differ between the runs; '#id' added where names collide."""
    keys = sorted({key for run in runs for key in run.tags})
    differing = [key for key in keys if len({run.tags.get(key) for run in runs}) > 1]
    names = {}
    for run in runs:
        base = run.label or run.machine or f"run {run.id}"
        extra = " ".join(f"{key}={run.tags[key]}" for key in differing if key in run.tags)
        names[run.id] = f"{base} · {extra}" if extra else base
    counts: dict[str, int] = {}
    for name in names.values():
        counts[name] = counts.get(name, 0) + 1
    return {run_id: f"{name} #{run_id}" if counts[name] > 1 else name for run_id, name in names.items()}


def source_of(run: RunFigures) -> str:
    """Where a run's numbers come from: the bonnie++ version and CSV format of its line."""
    if run.format_version == "1.03":
        return "bonnie++ 1.0x (CSV 1.03)"
    version = run.bonnie_version or "?"
    writer = f"bonnie++ {version}" if version[:1].isdigit() else version
    return f"{writer} (CSV {run.format_version})"


def display_unit(unit: str, values: Iterable[float | int | None]) -> tuple[str, int]:
    """The unit an axis shows (and the divisor from the data's unit): the largest not above the values."""
    steps = UNIT_STEPS.get(unit)
    if not steps:
        return unit, 1
    largest = max((abs(v) for v in values if v is not None), default=0)
    chosen = steps[0]
    for step in steps:
        if largest >= step[0]:
            chosen = step
    return chosen[1], chosen[0]


def compare_view(runs: Sequence[RunFigures], data: dict[str, Any]) -> dict[str, Any]:
    """Names, titles, axis units and notes for the charts of `data` (what compare() returned)."""
    names = legend_names(runs)
    sources = list(dict.fromkeys(source_of(run) for run in runs))
    relative = data["mode"] == RELATIVE
    charts = []
    for spec, chart in zip(CHARTS, data["charts"], strict=True):
        values = [v for series in chart["series"] for v in series["values"]]
        log = spec.measure == LATENCY and not relative
        if relative:
            unit, divisor = "%", 1
            axis_title = "% vs baseline"
        else:
            unit, divisor = display_unit(spec.unit, values)
            axis_title = f"{'latency' if log else spec.title}, {unit}" + (" (log scale)" if log else "")
            if spec.measure == CPU:
                axis_title = "%CPU"
        charts.append({
            "key": spec.key,
            "title": spec.title,
            "source": ", ".join(sources),
            "better": ("higher" if spec.higher_is_better else "lower") + " is better",
            "axis_title": axis_title,
            "scale": "logarithmic" if log else "linear",
            "display_unit": unit,
            "divisor": divisor,
            "steps": None if relative else UNIT_STEPS.get(spec.unit),
            "test_titles": [TEST_TITLES[test] for test in spec.tests],
            "hints": [TOO_FAST_HINT[test] for test in spec.tests],
            "notes": chart_notes(chart, names),
        })  # fmt: skip
    return {
        "names": {str(run_id): name for run_id, name in names.items()},
        "charts": charts,
        "status_text": STATUS_TEXT,
        "too_fast_explanation": TOO_FAST_EXPLANATION,
    }


def chart_notes(chart: dict[str, Any], names: dict[int, str]) -> list[dict[str, Any]]:
    """Every reason a bar is missing, grouped by reason: [{status, text, explanation, where}], where
    `where` lists "name: test, test" and explanation says what +++++ means and how to measure it."""
    grouped: dict[str, dict[int, list[str]]] = {}
    for series in chart["series"]:
        for test, status in zip(chart["tests"], series["status"], strict=True):
            if status != OK:
                grouped.setdefault(status, {}).setdefault(series["run"], []).append(test)
    order = list(STATUS_TEXT)
    notes = []
    for status in sorted(grouped, key=lambda s: order.index(s) if s in order else len(order)):
        by_run = grouped[status]
        explanation = None
        if status == TOO_FAST:
            hints = dict.fromkeys(TOO_FAST_HINT[test] for tests in by_run.values() for test in tests)
            explanation = f"{TOO_FAST_EXPLANATION} {' or '.join(hints).capitalize()} would measure it."
        notes.append({
            "status": status,
            "text": STATUS_TEXT.get(status, status),
            "explanation": explanation,
            "where": [f"{names[run_id]}: {', '.join(tests)}" for run_id, tests in by_run.items()],
        })  # fmt: skip
    return notes


HEAT_STEPS = 6  # shades 0 (worst) .. 6 (best), as CSS classes heat-0 .. heat-6


def _heat(values: list[float | int | None], higher_is_better: bool) -> list[int | None]:
    """Each value's place between the worst and the best of its column; None stays plain."""
    present = [v for v in values if v is not None]
    if len(present) < 2 or max(present) == min(present):
        return [None] * len(values)
    low, high = min(present), max(present)
    shades = []
    for v in values:
        if v is None:
            shades.append(None)
            continue
        share = (v - low) / (high - low)
        shades.append(round((share if higher_is_better else 1 - share) * HEAT_STEPS))
    return shades


def heat_table(runs: Sequence[RunFigures], *, mode: str = ABSOLUTE, baseline: int | None = None) -> dict[str, Any]:
    """The table under the charts, in the spirit of bon_csv2html: one row per run, each test's
    rate, %CPU and latency shaded from worst (heat-0) to best (heat-6) among the runs shown (lower
    is better for %CPU and latency); +++++ and empty cells stay plain. In relative mode a rate also
    has its difference from the baseline.

    Each row's `cells` holds, per test, (css class, text, relative text) for the rate, the %CPU and
    (when any run has latencies) the latency: ready to print, as the page prints 50 runs x 36 cells."""
    names = legend_names(runs)
    base_run = next((run for run in runs if run.id == baseline), None) if mode == RELATIVE else None
    has_latency = any(r.latency_us is not None for run in runs for r in run.results)
    shades = []
    for index in range(len(TESTS)):
        results = [run.results[index] for run in runs]
        shades.append((
            _heat([r.value if r.status == OK else None for r in results], True),
            _heat([r.cpu_pct if r.status == OK else None for r in results], False),
            _heat([r.latency_us for r in results], False),
        ))  # fmt: skip
    rows = []
    for row_index, run in enumerate(runs):
        cells = []
        for index, test in enumerate(TESTS):
            result = run.results[index]
            value_shade, cpu_shade, latency_shade = (column[row_index] for column in shades[index])
            ok = result.status == OK
            relative = ""
            if ok and base_run is not None and run is not base_run:
                base = base_run.results[index]
                status, difference = relative_cell((OK, result.value), (base.status, base.value if base.status == OK else None))
                relative = f"{difference:+.1f}%" if status == OK else ""
            cells.append((
                f"num group-start {result.status}" + _shade_class(value_shade),
                format_rate(result.value, UNITS[test]) if ok else TOO_FAST_TEXT if result.status == TOO_FAST else "",
                relative,
            ))  # fmt: skip
            cells.append(("num" + _shade_class(cpu_shade), str(result.cpu_pct) if ok and result.cpu_pct is not None else "+++" if result.status == TOO_FAST else "", ""))
            if has_latency:
                cells.append(("num" + _shade_class(latency_shade), format_latency(result.latency_us), ""))
        rows.append({"id": run.id, "name": names[run.id], "baseline": run.id == baseline, "cells": cells})
    return {"tests": list(TESTS), "has_latency": has_latency, "rows": rows}


TOO_FAST_TEXT = "+++++"


def _shade_class(shade: int | None) -> str:
    return "" if shade is None else f" heat-{shade}"
