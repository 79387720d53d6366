"""The matrix view: configurations pivoted by two tag keys.

`/matrix?rows=raid&cols=fs&test=put_block` (and its JSON twin `/api/matrix`) answers "which cell of a
sweep is best for this test, and by how much": the runs are grouped by the two tags (app/compare/grouping.py,
exactly as `/compare?group=raid,fs`), each cell is that configuration's mean of `test` with its N,
95 % CI and verdict against the baseline cell (the configuration of `baseline=RUN`, else the first),
and per family of tests ("block I/O", "seeks", "metadata") the geometric mean of the cell's ratios
to the baseline over the family's tests both measured — never one score mixing families, whose
units and meaning differ. The numbers are those of app/compare/engine.compare(): the matrix only re-arranges
them, so a cell equals the configuration's mean in /api/compare?group=ROWS,COLS.

Without `runs=`, the matrix takes the newest runs (at most MAX_RUNS) that have both tags.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from app import bonnie
from app.compare import engine as charts
from app.compare.figures import RunFigures
from app.compare.grouping import UNSET, Grouping
from app.compare.request import (
    ComparisonRequest,
    effective_min_effect,
    parse_baseline,
    parse_min_effect,
    parse_run_ids,
)
from app.compare.request import permalink as permalink_of
from app.compare.summary import percent
from app.errors import BadRequest
from app.ingest.parsing import TESTS
from app.units import display_unit, format_in

# Families whose ratios may be averaged together: same kind of work, same unit.
FAMILIES = {family.key: (family.title, bonnie.family_tests(family)) for family in bonnie.FAMILIES}
DEFAULT_TEST = "put_block"


@dataclass(frozen=True, slots=True)
class MatrixRequest:
    rows: str
    cols: str
    test: str = DEFAULT_TEST
    run_ids: tuple[int, ...] = ()
    baseline: int | None = None
    min_effect: float | None = None  # None: the setting's (app/compare/request.py)


def _key(value: str | None, name: str) -> str:
    key = (value or "").strip()
    if not key or "," in key or "=" in key or " " in key or "\x00" in key or len(key) > 200:
        raise BadRequest(f"{name} must be one tag key, like {'raid' if name == 'rows' else 'fs'}")
    return key


def read_request(
    *,
    rows: str | None,
    cols: str | None,
    test: str | None,
    runs: Sequence[str],
    baseline: str | None,
    min_effect: str | None = None,
) -> MatrixRequest:
    """The query of /matrix and /api/matrix, checked (400 naming the parameter)."""
    row_key, col_key = _key(rows, "rows"), _key(cols, "cols")
    if row_key == col_key:
        raise BadRequest("rows and cols must be two different tag keys")
    test = test or DEFAULT_TEST
    if test not in TESTS:
        raise BadRequest(f"test must be one of {', '.join(TESTS)}, not {test[:30]!r}")
    return MatrixRequest(
        row_key, col_key, test, tuple(parse_run_ids(runs)), parse_baseline(baseline), parse_min_effect(min_effect)
    )


def permalink(request: MatrixRequest, path: str = "/matrix") -> str:
    params = {"rows": request.rows, "cols": request.cols, "test": request.test}
    if request.run_ids:
        params["runs"] = ",".join(map(str, request.run_ids))
    if request.baseline is not None:
        params["baseline"] = str(request.baseline)
    if request.min_effect is not None:
        params["min_effect"] = f"{request.min_effect:g}"
    return f"{path}?{urlencode(params, safe=',')}"


def _geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def build(runs: Sequence[RunFigures], request: MatrixRequest) -> dict[str, Any]:
    """The matrix of `runs` (pure: the body of GET /api/matrix)."""
    baseline = request.baseline if request.baseline in {run.id for run in runs} else None
    grouping = Grouping(keys=(request.rows, request.cols), kind="tags")
    data = charts.compare(
        runs, baseline=baseline, grouping=grouping, min_effect=effective_min_effect(request.min_effect)
    )
    base_id = data["baseline_configuration"]
    rate_charts = [chart for chart in data["charts"] if chart["key"] in charts.RATE_CHART_KEYS]
    # configuration id -> test -> its rate cell (the statistics of compare())
    cells: dict[int, dict[str, dict[str, Any]]] = {c["id"]: {} for c in data["configurations"]}
    for chart in rate_charts:
        for entry in chart["configurations"]:
            for cell in entry["tests"]:
                cells[entry["configuration"]][cell["test"]] = cell
    run_tags = {run.id: run.tags for run in runs}

    def value_of(config: dict[str, Any], key: str) -> str:
        return run_tags[config["runs"][0]].get(key, UNSET)

    row_values = sorted({value_of(c, request.rows) for c in data["configurations"]}, key=_natural)
    col_values = sorted({value_of(c, request.cols) for c in data["configurations"]}, key=_natural)
    by_position = {(value_of(c, request.rows), value_of(c, request.cols)): c for c in data["configurations"]}
    base_cells = cells[base_id]
    matrix_rows = []
    for row_value in row_values:
        row_cells: list[dict[str, Any] | None] = []
        for col_value in col_values:
            config = by_position.get((row_value, col_value))
            if config is None:
                row_cells.append(None)
                continue
            own = cells[config["id"]]
            cell = own[request.test]
            families = []
            for key, (title, tests) in FAMILIES.items():
                measured = [t for t in tests if own[t]["mean"] and base_cells[t]["mean"]]
                families.append(
                    {
                        "family": key,
                        "title": title,
                        "tests": measured,
                        "geomean": _round(_geomean([own[t]["mean"] for t in measured])),
                        "ratio_geomean": _round(_geomean([own[t]["mean"] / base_cells[t]["mean"] for t in measured])),
                    }
                )
            row_cells.append(
                {
                    "configuration": config["id"],
                    "name": config["name"],
                    "runs": config["runs"],
                    "baseline": config["id"] == base_id,
                    **{k: cell[k] for k in charts.CELL_FIGURES},
                    "families": families,
                }
            )
        matrix_rows.append({"value": row_value, "cells": row_cells})
    return {
        "rows_key": request.rows,
        "cols_key": request.cols,
        "test": request.test,
        "unit": bonnie.UNITS[request.test],
        "higher_is_better": True,
        "runs": [run.id for run in runs],
        "baseline": data["baseline"],
        "baseline_configuration": base_id,
        "min_effect": data["min_effect"],
        "columns": col_values,
        "rows": matrix_rows,
        "configurations": data["configurations"],
        "warnings": data["warnings"],
        "compare_url": permalink_of(
            ComparisonRequest(tuple(run.id for run in runs), grouping=grouping, min_effect=request.min_effect)
        ),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4) + 0.0


def _natural(value: str) -> tuple[Any, ...]:
    """raid=5 before raid=10, and "—" (tag missing) last."""
    if value == UNSET:
        return (2, 0, value)
    try:
        return (0, float(value), value)
    except ValueError:
        return (1, 0, value)


EMPTY_CELL_BAR = {"baseline": False, "status": "not_run", "n": 0}


def _multiple_bar(built: dict[str, Any], column: str, position: int, cell: dict[str, Any] | None) -> dict[str, Any]:
    """A cell's bar in its row's small chart: one colour per column, the same in every row; no bar for a
    cell without runs or without a measured mean."""
    bar: dict[str, Any] = {"label": f"{built['cols_key']}={column}", **charts.swatch(position)}
    if cell is None:
        return bar | dict.fromkeys(("configuration", "value", "error", "verdict")) | EMPTY_CELL_BAR
    measured = cell["status"] == "ok"
    return bar | {
        "configuration": cell["configuration"],
        "baseline": cell["baseline"],
        "value": cell["mean"] if measured else None,
        "error": cell["ci95"] if measured else None,
        "status": cell["status"],
        "verdict": None if cell["baseline"] else cell["verdict"],
        "n": cell["n"],
    }


def display(built: dict[str, Any]) -> dict[str, Any]:
    """What the page prints: one unit for every cell (MiB/s when a mean reaches it), each cell's mean
    and CI in it, its difference from the baseline cell, and the family summaries as ×ratios; and what its
    small charts draw (static/charts.js only draws): per row, per column, the bar."""
    means = [cell["mean"] for row in built["rows"] for cell in row["cells"] if cell]
    unit, divisor = display_unit(built["unit"], means)
    texts: dict[int, dict[str, str]] = {}
    for row in built["rows"]:
        for cell in row["cells"]:
            if not cell:
                continue
            ci = cell["ci95"]
            texts[cell["configuration"]] = {
                "mean": bonnie.TOO_FAST_MARK
                if cell["status"] == "too_fast"
                else format_in(cell["mean"], unit, divisor),
                "ci": f"{format_in(ci[0], unit, divisor)} to {format_in(ci[1], unit, divisor)}" if ci else "",
                "relative": ""
                if cell["baseline"] or cell["ratio"] is None
                else f"{percent(cell['ratio'])} {charts.VERDICT_MARK[cell['verdict']]}",
                "families": " · ".join(
                    f"{f['title'].split(' (')[0]} ×{f['ratio_geomean']:.2f}"
                    for f in cell["families"]
                    if f["ratio_geomean"] is not None
                ),
            }
    bars = [
        [
            _multiple_bar(built, column, i, cell)
            for i, (column, cell) in enumerate(zip(built["columns"], row["cells"], strict=True))
        ]
        for row in built["rows"]
    ]
    return {
        "unit": unit,
        "divisor": divisor,
        "texts": texts,
        "test_title": charts.TEST_TITLES[built["test"]],
        "bars": bars,
        "status_text": charts.STATUS_TEXT,
        "verdict_mark": charts.VERDICT_MARK,
        "too_fast_marks": charts.TOO_FAST_MARKS,
    }
