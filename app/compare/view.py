"""What the /compare page shows of a comparison (what app/compare/engine.py's compare() returned): names,
titles, axis units from app/units.py, notes, hints and the bars of its charts, as data: the template picks the
classes and static/charts.js only draws. Pure, as the engine is: no database, no HTTP."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from app import bonnie
from app.bonnie import STATUS_OK, STATUS_TOO_FAST
from app.compare import stats
from app.compare.comparison import Cell, Chart, Comparison
from app.compare.engine import (
    BASELINE_PREFIX,
    BASELINE_ZERO,
    CHARTS,
    CPU,
    LATENCY,
    RATE_CHART_KEYS,
    STATUS_TEXT,
    TEST_TITLES,
    TOO_FAST_EXPLANATION,
    TOO_FAST_HINT,
    TOO_FAST_UNJUDGED,
    VALUE,
    ChartSpec,
    source_of,
)
from app.compare.figures import RunFigures
from app.compare.hints import general_text
from app.compare.request import RELATIVE
from app.units import UNIT_STEPS, display_unit


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


def cell_status(cell: Cell, base: Cell | None, rate: bool) -> str:
    """Why a configuration has no bar: its own status, else (relative mode) the baseline's as
    "baseline_" + status, or "baseline_zero"; "ok" when it has one. Relative, on a chart of rates, a verdict a
    +++++ bound decided has its bar (the bound: _bar), and a +++++ result it did not decide has none."""
    if base is not None and rate and _decided_by_bound(cell):
        return STATUS_OK
    if base is not None and rate and cell.status == STATUS_TOO_FAST and not _above_baseline(cell, base):
        return TOO_FAST_UNJUDGED
    if cell.status != STATUS_OK or base is None:
        return cell.status
    if base.status != STATUS_OK:
        return BASELINE_PREFIX + base.status
    return BASELINE_ZERO if cell.ratio is None else STATUS_OK


def _base_cells(chart: Chart, base_id: int) -> list[Cell]:
    return next(e.tests for e in chart.configurations if e.configuration == base_id)


# The configurations' colours: --run-0 .. --run-11 of static/app.css, then the same colours striped, then
# dotted (36 distinct series); the page's chips, the heat tables' rows and the charts' bars share them.
PALETTE_COLOURS = 12
PALETTE_PATTERNS = 3


def swatch(position: int) -> dict[str, int]:
    """The look of the configuration at `position`: its colour (--run-N) and pattern (0 solid, 1 striped, 2 dotted)."""
    return {"colour": position % PALETTE_COLOURS, "pattern": (position // PALETTE_COLOURS) % PALETTE_PATTERNS}


def _js_round(x: float) -> int:
    """JavaScript's Math.round, as the reference in tests/compare/test_engine.py (drawn_bars) rounds: the nearest integer,
    halves upwards, where Python's round() takes them to the even one."""
    whole = math.floor(x)
    return whole + 1 if x - whole >= 0.5 else whole


def _percent_bar(ratio: float) -> float:
    """A ratio as a % difference to 0.1: 1.2 -> 20.0."""
    return _js_round((ratio - 1) * 1000) / 10


def _tenth(x: float) -> float:
    return _js_round(x * 10) / 10


def shown_ratio(cell: Cell) -> float:
    """The ratio to the baseline a relative view shows of a cell that has one (shown_ratio_of)."""
    return shown_ratio_of(cell.geo_ratio, cell.ratio)


def shown_ratio_of(geo_ratio: float | None, ratio: float | None) -> float:
    """The ratio to the baseline a relative view shows of a cell that has one (`ratio` set): the geometric means'
    (what the verdict and the 95 % CI drawn with it are about), else the arithmetic means' (a side with a single
    run or a run at 0). Why: docs/decisions.md, "What a relative bar shows"."""
    shown = geo_ratio if geo_ratio is not None else ratio
    if shown is None:
        raise ValueError("only a cell compared with the baseline has a ratio to show")
    return float(shown)


def measured(mean: float | None) -> float:
    """The mean of a cell that has a bar or a difference from the baseline's: it was measured."""
    if mean is None:
        raise ValueError("a cell with a bar has a mean")
    return mean


def _above_baseline(cell: Cell, base: Cell) -> bool:
    """A +++++ result is above the baseline's: every +++++ run is above a rate over the baseline's mean, and none of
    the baseline's runs was +++++ (a mark at the top of a relative chart says so)."""
    floor = cell.too_fast_above
    return floor is not None and not base.n_too_fast and base.mean is not None and floor > base.mean


def _decided_by_bound(cell: Cell) -> bool:
    """The cell's bar is its +++++ bound: every run of one side beyond every run of the other (bound_ratio). Its
    verdict is the bound's (stats.decide_bounded) once the rank test holds on the page; where it does not, the bar
    still shows what these runs hold, as a bound, with the cell's "?"."""
    return cell.bound_ratio is not None and cell.verdict in (stats.BETTER, stats.WORSE, stats.UNKNOWN)


def _bar(cell: Cell, base: Cell, kind: str | None) -> tuple[float | None, list[float] | None]:
    """What a measured cell's bar shows (absolute: its mean; relative: its difference from the baseline's, as
    RELATIVE_KIND says, or the +++++ bound that decided its verdict: a difference at least that large) and its
    error bar (the 95 % CI in the same terms, or None)."""
    ratio_ci = cell.ratio_ci95
    if kind == PERCENT and cell.bound_ratio is not None and _decided_by_bound(cell):
        return _percent_bar(cell.bound_ratio), None
    if kind == PERCENT:
        return _percent_bar(shown_ratio(cell)), None if ratio_ci is None else [_percent_bar(r) for r in ratio_ci]
    if kind == RATIO:
        return shown_ratio(cell), None if ratio_ci is None else list(ratio_ci)
    if kind == POINTS:
        # percentage points: the difference of the means; its CI is the ratio's, scaled by the baseline's mean
        mean = measured(base.mean)
        return _tenth(measured(cell.mean) - mean), None if ratio_ci is None else [
            _tenth((r - 1) * mean) for r in ratio_ci
        ]
    return cell.mean, cell.ci95


def chart_bars(chart: Chart, data: Comparison, kind: str | None) -> list[dict[str, Any]]:
    """What the page draws of a chart of `data`: per configuration (the baseline configuration left out in
    relative mode, where it is the origin) its legend label, swatch and, per test, the bar's value and error
    bar (None for no bar), the status (why there is no bar: cell_status), the verdict, N and the +++++ floor."""
    relative = data.mode == RELATIVE
    base_id = data.baseline_configuration
    base_cells = _base_cells(chart, base_id)
    names = {c.id: c.name for c in data.configurations}
    positions = {c.id: index for index, c in enumerate(data.configurations)}
    runs_of = {c.id: len(c.runs) for c in data.configurations}
    repeated = any(n > 1 for n in runs_of.values())
    rate = chart.key in RATE_CHART_KEYS
    rate_axis = rate and not kind  # an axis of rates, not of differences from the baseline
    bars = []
    for entry in chart.configurations:
        config_id = entry.configuration
        is_base = config_id == base_id
        if relative and is_base:
            continue
        values: list[Any] = []
        errors: list[Any] = []
        statuses = []
        for cell, base in zip(entry.tests, base_cells, strict=True):
            status = cell_status(cell, base if relative else None, rate)
            value, error = _bar(cell, base, kind) if status == STATUS_OK else (None, None)
            statuses.append(status)
            values.append(value)
            errors.append(error)
        bar = {
            "configuration": config_id,
            "label": f"{names[config_id]} (N={runs_of[config_id]})" if repeated else names[config_id],
            "baseline": is_base,
            "position": positions[config_id],
            **swatch(positions[config_id]),
            "values": values,
            "errors": errors,
            "status": statuses,
            "verdicts": [None if is_base else cell.verdict for cell in entry.tests],
            "n": [cell.n for cell in entry.tests],
        }
        # Only where there is one (a 50-configuration page sends 300 bars): relative, the bars that are a +++++
        # bound (the difference is at least that large); absolute, the rate every +++++ run of a cell is above,
        # where some were (a mixed cell too): the axis reaches above it, so the +++++ mark at its top sits above
        # the figure the page gives.
        bounds = [rate and relative and _decided_by_bound(cell) for cell in entry.tests]
        if any(bounds):
            bar["bounds"] = bounds
        floors = [cell.too_fast_above if cell.n_too_fast and rate_axis else None for cell in entry.tests]
        if any(floor is not None for floor in floors):
            bar["too_fast_above"] = floors
        bars.append(bar)
    return bars


def _axis(spec: ChartSpec, chart: Chart, kind: str | None, *, relative: bool) -> tuple[str, int, str]:
    """A chart's display unit, the divisor into it, and its axis title: of its values (absolute), else of what a
    relative chart shows (RELATIVE_KIND)."""
    if kind == RATIO:
        return "×", 1, "× baseline latency (log)"
    if kind == POINTS:
        return "points", 1, "%CPU points vs baseline"
    if relative:
        return "%", 1, "% vs baseline"
    values = [v for entry in chart.configurations for cell in entry.tests for v in (cell.mean, *(cell.ci95 or ()))]
    unit, divisor = display_unit(spec.unit, values)
    if spec.measure == CPU:
        return unit, divisor, "%CPU"
    log = spec.measure == LATENCY
    return unit, divisor, f"{'latency' if log else spec.title}, {unit}" + (" (log scale)" if log else "")


def compare_view(runs: Sequence[RunFigures], data: Comparison) -> dict[str, Any]:
    """Names, titles, axis units, notes, hints and the bars for the charts of `data` (what compare() returned).
    The page draws one bar per configuration: its mean (absolute) or its difference from the baseline
    configuration's (relative), with the 95 % CI as an error bar (chart_bars); the browser only draws them."""
    names = legend_names(runs)
    config_names = {c.id: c.name for c in data.configurations}
    sources = list(dict.fromkeys(source_of(run) for run in runs))
    relative = data.mode == RELATIVE
    base_id = data.baseline_configuration
    charts = []
    for spec, chart in zip(CHARTS, data.charts, strict=True):
        kind = RELATIVE_KIND[spec.measure] if relative else None
        log = spec.measure == LATENCY  # absolute latency spans decades; relative, so do its ratios
        unit, divisor, axis_title = _axis(spec, chart, kind, relative=relative)
        charts.append(
            {
                "key": spec.key,
                "title": spec.title,
                "measure": spec.measure,
                "relative_kind": kind,
                "source": ", ".join(sources),
                "better": ("higher" if spec.higher_is_better else "lower") + " is better",
                "axis_title": axis_title,
                "scale": "logarithmic" if log else "linear",
                "display_unit": unit,
                "divisor": divisor,
                "steps": None if relative else UNIT_STEPS.get(spec.unit),
                "test_titles": [TEST_TITLES[test] for test in spec.tests],
                "hints": [TOO_FAST_HINT[test] for test in spec.tests],
                "notes": chart_notes(chart, config_names, base_id if relative else None),
                "hint_list": hint_list(chart, config_names),
                "bars": chart_bars(chart, data, kind),
            }
        )
    return {
        "names": {str(run_id): name for run_id, name in names.items()},
        "configuration_names": {str(cid): name for cid, name in config_names.items()},
        # run id -> its configuration's swatch: the colour (and pattern) of its chip, as of its bars
        "swatch_of": {str(run): swatch(index) for index, c in enumerate(data.configurations) for run in c.runs},
        "baseline_name": config_names[base_id],
        "charts": charts,
        "status_text": STATUS_TEXT,
        "verdict_text": verdict_text(data.min_effect),
        "too_fast_explanation": TOO_FAST_EXPLANATION,
        "too_fast_marks": TOO_FAST_MARKS,
        "verdict_mark": VERDICT_MARK,
    }


# How a relative chart says "compared with the baseline": rates as a % difference, latency as a
# ratio on a log axis (it spans decades: ×0.5 and ×2 are equally far from ×1, and +45,000,000 %
# would flatten every other bar), %CPU as a difference in percentage points (a ratio of two small
# %CPU figures says little).
PERCENT, RATIO, POINTS = "percent", "ratio", "points"
RELATIVE_KIND = {VALUE: PERCENT, LATENCY: RATIO, CPU: POINTS}


def verdict_text(min_effect: float) -> dict[str, str]:
    """What each verdict claims, for the charts' tooltips, with the page's own minimum effect (the setting's or
    the URL's)."""
    holds = (
        "the difference holds with every verdict of the page counted together (Holm, 5 % for the page: the more "
        "configurations and tests a page compares, the larger a change must be) and its estimate is at least the "
        f"minimum effect (×{min_effect:g} on this page; of the estimate, not of its interval)"
    )
    return {
        "better": f"better (▲): {holds}",
        "worse": f"worse (▼): {holds}",
        "within_noise": "within noise (~): no difference beyond the minimum effect holds once the page's other "
        "verdicts are counted (a smaller one may be there: the summary says how large a change each could have "
        'seen, and "cannot tell with N runs a side" where that is more than a 10 % change); the 95 % CI shown is '
        "of this comparison alone",
        "unknown": "unknown: fewer than two measured runs on a side, a run that measured 0, or +++++ runs (faster "
        "than measurable) on one that could decide it, or whose separation from the other side's runs chance gives "
        "as often with this few runs (their rank test did not hold on the page)",
    }


def chart_notes(chart: Chart, names: dict[int, str], base_id: int | None = None) -> list[dict[str, Any]]:
    """Every reason a bar is missing, grouped by reason: [{status, text, explanation, where}], where
    `where` lists "configuration: test, test" and explanation says what +++++ means and how to
    measure it. With base_id (relative mode) the baseline configuration has no bars and others
    miss one where the baseline has nothing to compare with."""
    base_cells = _base_cells(chart, base_id) if base_id is not None else None
    grouped: dict[str, dict[int, list[tuple[str, str]]]] = {}  # status -> configuration -> (test, as said)
    rate = chart.key in RATE_CHART_KEYS
    for entry in chart.configurations:
        if entry.configuration == base_id:
            continue
        for index, cell in enumerate(entry.tests):
            test = cell.test
            status = cell_status(cell, base_cells[index] if base_cells else None, rate)
            if status != STATUS_OK:
                grouped.setdefault(status, {}).setdefault(entry.configuration, []).append((test, test))
            elif cell.n_too_fast and rate:
                # a bar of the measured runs only: the rest were +++++
                some = f"{test} ({cell.n_too_fast} of {cell.n + cell.n_too_fast} runs)"
                grouped.setdefault(STATUS_TOO_FAST, {}).setdefault(entry.configuration, []).append((test, some))
    order = list(STATUS_TEXT)
    notes = []
    for status in sorted(grouped, key=lambda s: order.index(s) if s in order else len(order)):
        by_config = grouped[status]
        explanation = None
        if status == STATUS_TOO_FAST:
            hints = dict.fromkeys(TOO_FAST_HINT[test] for tests in by_config.values() for test, _ in tests)
            explanation = f"{TOO_FAST_EXPLANATION} {' or '.join(hints).capitalize()} would measure it."
        notes.append(
            {
                "status": status,
                "text": STATUS_TEXT.get(status, status),
                "explanation": explanation,
                "where": [f"{names[cid]}: {', '.join(said for _, said in tests)}" for cid, tests in by_config.items()],
            }
        )
    return notes


def hint_list(chart: Chart, names: dict[int, str]) -> list[dict[str, Any]]:
    """The chart's hints with where each applies: [{code, text, where}]. A line rule's hint is listed once per
    code, in its own words when they are the same everywhere, else in the code's general rule (hints.general_text);
    the runner's evidence is listed once per text, as its figures are one test's own."""
    items: list[dict[str, Any]] = [{**h, "where": []} for h in chart.hints]
    by_key: dict[str | tuple[str, str], dict[str, Any]] = {}
    for entry in chart.configurations:
        for cell in entry.tests:
            for h in cell.hints:
                if h["code"] == "too_fast":  # the chart's notes already say where and why
                    continue
                general = general_text(h["code"], h["text"])
                key = h["code"] if general is not None else (h["code"], h["text"])
                item = by_key.get(key)
                if item is None:
                    item = by_key[key] = {**h, "where": []}
                    items.append(item)
                elif item["text"] != h["text"] and general is not None:
                    item["text"] = general
                item["where"].append(f"{names[entry.configuration]}: {cell.test}")
    return items


# Typed by what reads it, a cell's verdict: a cell compared with the baseline has one.
VERDICT_MARK: dict[str | None, str] = {"better": "▲", "worse": "▼", "within_noise": "~", "unknown": "?"}

# A +++++ mark as the charts draw it: where it fits, and in a narrow bar.
TOO_FAST_MARKS = {"wide": bonnie.TOO_FAST_MARK, "narrow": bonnie.TOO_FAST_CPU_MARK}
