"""The tables under the compare page's charts, as data (heat_table()): one per measure, a row per
configuration, a column per test. app/web/heat_html.py writes their cells as HTML, templates/_compare_figures.html
the rest. Pure, as the engine is."""

from __future__ import annotations

from typing import Any

from app import bonnie
from app.bonnie import STATUS_TOO_FAST, TESTS, UNITS
from app.compare.comparison import Cell, Chart, Comparison
from app.compare.engine import CHARTS, CPU, LATENCY, VALUE
from app.compare.summary import percent
from app.compare.view import VERDICT_MARK, measured, shown_ratio, swatch
from app.units import display_unit, format_in

# A +++++ result as a heat cell's text.
TOO_FAST_TEXT = bonnie.TOO_FAST_MARK
MEASURE_TITLES = {VALUE: "Rates", CPU: "%CPU", LATENCY: "Latency (the slowest single operation)"}
# The file tests' rounds, as the heat tables' column groups name them (each round creates, stats and deletes:
# "File create and delete" is the chart that leaves the stat out).
ROUND_TITLES = {bonnie.SEQUENTIAL: "Sequential files", bonnie.RANDOM: "Random files"}


def _heat_groups() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The column groups of the heat tables, in TESTS order (bonnie++'s, as bon_csv2html and its report show them):
    the families, the file tests split into their two rounds."""
    groups: dict[tuple[bonnie.Family, str | None], list[str]] = {}
    for test in bonnie.CATALOG:
        groups.setdefault((test.family, test.order), []).append(test.name)
    return tuple(
        (ROUND_TITLES[order] if order else family.title, tuple(tests)) for (family, order), tests in groups.items()
    )


HEAT_GROUPS = _heat_groups()
# The first test of each group: a rule before its column.
HEAT_GROUP_STARTS = frozenset(tests[0] for _, tests in HEAT_GROUPS)


def _column_unit(test: str, measure: str, means: list[float | None]) -> tuple[str, int]:
    """One unit per column: the display unit of its largest mean (MiB/s for all when one reaches it)."""
    if measure == CPU:
        return "%", 1
    return display_unit("µs" if measure == LATENCY else UNITS[test], means)


def _difference(measure: str, cell: Cell, base: Cell) -> str:
    """As the relative charts say it: a % for rates, a ratio for latency, points for %CPU."""
    ratio = shown_ratio(cell)
    if measure == LATENCY:
        return f"×{ratio:.2f}" if ratio < 10 else f"×{ratio:,.0f}"
    if measure == CPU:
        points = round(measured(cell.mean) - measured(base.mean))
        return f"{'+' if points > 0 else '−' if points < 0 else '±'}{abs(points)} pts"
    return percent(ratio)


def _heat_cell(measure: str, cell: Cell, base: Cell | None, unit: str, divisor: int) -> dict[str, Any]:
    """One cell of a heat table (heat_table()), from its chart cell; `base` is the baseline's (None for its own)."""
    relative = ""
    verdict = cell.verdict
    if measure == CPU:
        # %CPU as it is, never shaded, then what is judged: CPU per unit of work, with its mark
        if cell.ratio is not None and base is not None:
            relative = _difference(measure, cell, base)
        if cell.cpu_per_work_ratio is not None and cell.work_unit is not None:
            per_work = f"per {cell.work_unit.split('/', 1)[1]} {percent(cell.cpu_per_work_ratio)}"
            mark = VERDICT_MARK[cell.cpu_per_work_verdict]
            relative = f"{relative} · {per_work} {mark}".lstrip(" ·")
    elif cell.ratio is not None and base is not None:
        relative = f"{_difference(measure, cell, base)} {VERDICT_MARK[verdict]}"
    too_fast = cell.status == STATUS_TOO_FAST and measure != LATENCY
    ci95 = cell.ci95
    return {
        "measure": measure,
        "text": TOO_FAST_TEXT if too_fast else format_in(cell.mean, unit, divisor),
        # the whole interval, which a chart may clip at its axis
        "ci": f"{format_in(ci95[0], unit, divisor)} to {format_in(ci95[1], unit, divisor)}" if ci95 else "",
        "relative": relative,
        "verdict": verdict,
        "status": cell.status,
        "n": cell.n,
    }


def _places(by_key: dict[str, Chart]) -> dict[str, dict[str, tuple[Chart, int]]]:
    """measure -> test -> (the chart that shows it, the test's index in that chart)."""
    return {
        measure: {
            test: (by_key[spec.key], spec.tests.index(test))
            for spec in CHARTS
            if spec.measure == measure
            for test in spec.tests
        }
        for measure in (VALUE, CPU, LATENCY)
    }


def heat_table(data: Comparison) -> dict[str, Any]:
    """The tables under the charts, in the spirit of bon_csv2html but readable at 1366 px: one table
    per measure (rates, %CPU, latency when any run has one), one row per configuration, one column
    per test grouped by family, one unit per column (in its header). Each cell is a dict: `text` (the
    mean in the column's unit, or +++++), `relative` (the ratio to the baseline configuration as a %,
    with its verdict mark: ▲ better, ▼ worse, ~ within noise, ? unknown), `verdict` and `status`; the
    template shades only cells whose verdict is better or worse, so a colour always means a
    difference beyond the noise. `rows[].cells` run over TESTS x `measures`; `columns` (same order)
    give each its test, measure, unit and whether it starts a group of columns (HEAT_GROUPS); `sections`
    list per measure the indexes of its cells and the groups' titles and widths."""
    by_key = {chart.key: chart for chart in data.charts}
    base_id = data.baseline_configuration
    where = _places(by_key)
    has_latency = any(cell.n for entry in by_key["latency"].configurations for cell in entry.tests)
    measures = (VALUE, CPU, LATENCY) if has_latency else (VALUE, CPU)
    columns = []
    by_config: dict[int, list[dict[str, Any]]] = {c.id: [] for c in data.configurations}
    for test in TESTS:
        for measure in measures:
            chart, index = where[measure][test]
            cells = {e.configuration: e.tests[index] for e in chart.configurations}
            unit, divisor = _column_unit(test, measure, [cell.mean for cell in cells.values()])
            columns.append({"test": test, "measure": measure, "unit": unit, "group_start": test in HEAT_GROUP_STARTS})
            for config_id, cell in cells.items():
                base = None if config_id == base_id else cells[base_id]
                by_config[config_id].append(_heat_cell(measure, cell, base, unit, divisor))
    rows = [
        {
            "configuration": config.id,
            "name": config.name,
            "runs": config.runs,
            "baseline": config.id == base_id,
            "swatch": swatch(index),
            "cells": by_config[config.id],
        }
        for index, config in enumerate(data.configurations)
    ]
    sections = [
        {
            "measure": measure,
            "title": MEASURE_TITLES[measure],
            "families": [(title, len(tests)) for title, tests in HEAT_GROUPS],
            "indexes": [i for i, column in enumerate(columns) if column["measure"] == measure],
        }
        for measure in measures
    ]
    return {
        "tests": list(TESTS),
        "has_latency": has_latency,
        "measures": list(measures),
        "columns": columns,
        "sections": sections,
        "rows": rows,
    }
