"""The data behind a comparison as CSV: one row per chart, test and configuration, with the numbers of
GET /api/compare (the JSON twin is that answer itself) in the units the page's tables show (MiB/s, not the
stored KiB/s; ms, not µs), each row's `unit` naming them, so a spreadsheet and the page read alike."""

from __future__ import annotations

import csv
import io
from typing import Any

from app.compare.comparison import Chart, Comparison
from app.compare.engine import CELL_FIGURES, CHARTS
from app.units import display_unit

PAIRS = tuple(key for key in CELL_FIGURES if key.endswith("ci95"))  # [low, high] in JSON: two columns here
# The figures in the test's unit; the others are counts, ratios, percentages, p-values and verdicts.
IN_UNIT = frozenset({"mean", "median", "sd", "geo_mean", "ci95", "too_fast_above"})
COLUMNS = ("chart", "unit", "test", "configuration", "name", "runs", "baseline") + tuple(
    column for key in CELL_FIGURES for column in ((f"{key}_low", f"{key}_high") if key in PAIRS else (key,))
)


# A spreadsheet runs a cell that starts with one of these as a formula (OWASP's CSV injection list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str) -> str:
    """A free-text cell (a name from machine names, labels and tags) as text: a leading ' when a spreadsheet
    would read it as a formula, so `=HYPERLINK(...)` in a machine name is shown, not run."""
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


def _cells(key: str, value: Any, divisor: int) -> tuple[Any, ...]:
    """A figure's CSV fields: a [low, high] pair as two, null as empty, a figure in the test's unit divided
    into the display unit."""
    if key in IN_UNIT and divisor != 1 and value is not None:
        value = [_divided(v, divisor) for v in value] if key in PAIRS else _divided(value, divisor)
    if key in PAIRS:
        return (value[0], value[1]) if value else ("", "")
    return ("" if value is None else value,)


# /api/compare rounds its figures to 3 decimals; a quotient keeps them all and no float noise: x / 1024 is
# exact in 3 + 10 decimals, x / 1000 in 3 + 3.
API_DECIMALS = 3


def _divided(value: float, divisor: int) -> float:
    extra = divisor.bit_length() - 1 if divisor & (divisor - 1) == 0 else len(str(divisor)) - 1
    return round(value / divisor, API_DECIMALS + extra)


def _test_units(chart: Chart, unit: str) -> dict[str, tuple[str, int]]:
    """Per test of a chart, the unit the page's table shows it in (the largest its means reach) and its
    divisor from the stored unit (app.units)."""
    means: dict[str, list[float | None]] = {}
    for entry in chart.configurations:
        for cell in entry.tests:
            means.setdefault(cell.test, []).append(cell.mean)
    return {test: display_unit(unit, values) for test, values in means.items()}


def compare_csv(data: Comparison) -> str:
    """`data` (what app.compare.engine.compare() returned, absolute values) as CSV; empty fields for nulls."""
    configurations = {c.id: c for c in data.configurations}
    units = {spec.key: spec.unit for spec in CHARTS}  # of the means (a relative answer's "unit" is "%")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for chart in data.charts:
        shown = _test_units(chart, units[chart.key])
        for entry in chart.configurations:
            config = configurations[entry.configuration]
            for cell in entry.tests:
                unit, divisor = shown[cell.test]
                writer.writerow(
                    [
                        chart.key,
                        unit,
                        cell.test,
                        config.id,
                        _text(config.name),
                        " ".join(map(str, config.runs)),
                        int(config.id == data.baseline_configuration),
                        *(part for key in CELL_FIGURES for part in _cells(key, getattr(cell, key), divisor)),
                    ]
                )
    return out.getvalue()
