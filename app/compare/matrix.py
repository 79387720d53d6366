"""The matrix view: configurations pivoted by two tag keys.

`/matrix?rows=raid&cols=fs&test=put_block` (and its JSON twin `/api/matrix`) answers "which cell of a
sweep is best for this test, and by how much": the runs are grouped by the two tags (app/compare/grouping.py,
exactly as `/compare?group=raid,fs`), each cell is that configuration's mean of `test` with its N,
95 % CI and verdict against the baseline cell (the configuration of `baseline=RUN`, else the first),
and per family of tests (block I/O, per-char I/O, seeks, metadata: FAMILIES) a summary against the
baseline cell — never one score mixing families, whose units and meaning differ. A family summary is over
the family's tests that every run of every cell of the view measured (`families()`: a test +++++, not run
or 0 somewhere is left out, named with the reason, in the view's `families` and a warning), so every cell
averages the same tests: each run's geometric mean over them, then per cell the geometric mean of its runs
with its 95 % CI, and against the baseline cell the ratio, its CI (Welch's t on the logs, as every ratio)
and a verdict, Holm's adjustment taken over every family verdict of the view. The per-test numbers are those
of app/compare/engine.compare(): the matrix only re-arranges them, so a cell equals the configuration's mean
in /api/compare?group=ROWS,COLS.

Without `runs=`, the matrix takes the newest runs (at most MAX_RUNS) that have both tags and every `tag=KEY=VALUE`
asked; the sample data (source=sample_data) only when no other runs have them or a tag= asks for it, so a board's
own sweep never gets the sample runs (and their RAM) mixed in.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from app import bonnie
from app.bonnie import STATUS_OK, STATUS_TOO_FAST, TESTS
from app.compare import stats
from app.compare.answer import cells_by_test, factor_words
from app.compare.comparison import Comparison, ConfigurationEntry, RunEntry
from app.compare.engine import CELL_FIGURES, RATE_CHART_KEYS, STATUS_TEXT, TEST_TITLES, compare
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
from app.compare.view import TOO_FAST_MARKS, VERDICT_MARK, shown_ratio_of, swatch
from app.errors import BadRequest
from app.tags import parse_tag_filters, split_tag_terms
from app.units import display_unit, format_in


def _families() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Families whose ratios may be averaged together: same kind of work, same unit; the per-char tests apart from
    block I/O (they measure the C library or the system-call path, hints.per_char)."""
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for family in bonnie.FAMILIES:
        tests = bonnie.family_tests(family)
        per_char = tuple(t for t in tests if t in bonnie.PER_CHAR_TESTS)
        # A family without its per-char tests is another set of tests, so it gets a title of its own.
        title = f"{family.title} (block tests)" if per_char else family.title
        found[family.key] = (title, tuple(t for t in tests if t not in per_char))
        if per_char:
            found[PER_CHAR] = ("Per-char I/O", per_char)
    return found


PER_CHAR = "per_char"
FAMILIES = _families()
MAX_NAMED = 3  # cells named in an exclusion's reason; more are counted
DEFAULT_TEST = "put_block"


@dataclass(frozen=True, slots=True)
class MatrixRequest:
    rows: str
    cols: str
    test: str = DEFAULT_TEST
    run_ids: tuple[int, ...] = ()
    baseline: int | None = None
    min_effect: float | None = None  # None: the setting's (app/compare/request.py)
    tags: tuple[tuple[str, str], ...] = ()  # without run_ids: only runs with each of these KEY=VALUE


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
    tags: Sequence[str] = (),
) -> MatrixRequest:
    """The query of /matrix and /api/matrix, checked (400 naming the parameter)."""
    row_key, col_key = _key(rows, "rows"), _key(cols, "cols")
    if row_key == col_key:
        raise BadRequest("rows and cols must be two different tag keys")
    test = test or DEFAULT_TEST
    if test not in TESTS:
        raise BadRequest(f"test must be one of {', '.join(TESTS)}, not {test[:30]!r}")
    filters = parse_tag_filters([term for value in tags for term in split_tag_terms(value)])
    return MatrixRequest(
        row_key,
        col_key,
        test,
        tuple(parse_run_ids(runs)),
        parse_baseline(baseline),
        parse_min_effect(min_effect),
        tuple(sorted(filters.items())),
    )


def permalink(request: MatrixRequest, path: str = "/matrix") -> str:
    params = [("rows", request.rows), ("cols", request.cols), ("test", request.test)]
    if request.run_ids:
        params.append(("runs", ",".join(map(str, request.run_ids))))
    params += [("tag", f"{key}={value}") for key, value in request.tags]
    if request.baseline is not None:
        params.append(("baseline", str(request.baseline)))
    if request.min_effect is not None:
        params.append(("min_effect", f"{request.min_effect:g}"))
    return f"{path}?{urlencode(params, safe=',=')}"


def matrix_keys(request: ComparisonRequest, figures: Sequence[RunFigures]) -> list[str]:
    """The two tag keys a comparison's matrix pivots by: its grouping's tag keys, then the keys that vary among its
    runs, those with the fewest values first (a sweep's factors before a per-run round or seed); of two keys one of
    which decides the other (config=ext4 beside fs=ext4, fs=tmpfs giving dev=ram) only the finer is kept: their
    matrix would be a diagonal, not a grid. Fewer than two: none."""
    unset = [None] * len(figures)
    values = {k: [f.tags.get(k) for f in figures] for f in figures for k in f.tags}
    varying = [k for k, seen in values.items() if len(set(seen)) > 1]
    # a key with a value per run (a round, a seed) only when nothing else varies
    varying.sort(key=lambda k: (len(set(values[k])) == len(figures), len(set(values[k])), k))
    keys: list[str] = []
    for key in dict.fromkeys([*request.grouping.keys, *varying]):
        seen = values.get(key, unset)
        if len(set(seen)) < 2 or any(_decides(values[k], seen) for k in keys):
            continue
        # a finer key takes the place of the one it decides (fs=tmpfs says dev=ram; a grouping's keys stay)
        coarser = next((i for i, k in enumerate(keys) if _decides(seen, values[k])), None)
        if coarser is None:
            keys.append(key)
        elif keys[coarser] not in request.grouping.keys and len(set(seen)) < len(figures):
            keys[coarser] = key
    return keys[:2] if len(keys) >= 2 else []


def _decides(first: Sequence[str | None], second: Sequence[str | None]) -> bool:
    """Whether runs with the same `first` value always have the same `second` value."""
    seen: dict[str | None, str | None] = {}
    return all(seen.setdefault(a, b) == b for a, b in zip(first, second, strict=True))


def link_for(request: ComparisonRequest, figures: Sequence[RunFigures]) -> str | None:
    """The matrix of a comparison's runs, by matrix_keys(); None without two."""
    keys = matrix_keys(request, figures)
    if not keys:
        return None
    ids = tuple(f.id for f in figures)  # these runs only: never others that carry the two tags
    return permalink(
        MatrixRequest(keys[0], keys[1], run_ids=ids, baseline=request.baseline, min_effect=request.min_effect)
    )


def _why_left_out(test: str, runs: Sequence[RunFigures], names_of: dict[int, str]) -> str | None:
    """Why `test` cannot be in a family summary of the view: where a run printed +++++, did not run it or measured
    0 (a log needs a positive rate); None when every run measured it."""
    index = TESTS.index(test)
    where: dict[str, list[str]] = {}
    for run in runs:
        status, value = run.results[index][0], run.results[index][1]
        if status == STATUS_OK and value:
            continue
        why = (
            bonnie.TOO_FAST_MARK
            if status == STATUS_TOO_FAST
            else "0"
            if status == STATUS_OK and value is not None
            else "not run"
        )
        cells = where.setdefault(why, [])
        if names_of[run.id] not in cells:
            cells.append(names_of[run.id])
    if not where:
        return None
    parts = []
    every = len(set(names_of.values()))
    for why, cells in where.items():
        named = ", ".join(cells[:MAX_NAMED]) + (f" and {len(cells) - MAX_NAMED} more" if len(cells) > MAX_NAMED else "")
        named = "every cell" if len(cells) == every > 1 else named
        parts.append(f"{why} in {named}")
    return "; ".join(parts)


def families(runs: Sequence[RunFigures], names_of: dict[int, str]) -> list[dict[str, Any]]:
    """Per family: the tests every run of the view measured, and those left out with the reason."""
    found = []
    for key, (title, tests) in FAMILIES.items():
        reasons = {test: _why_left_out(test, runs, names_of) for test in tests}
        found.append(
            {
                "family": key,
                "title": title,
                "tests": [t for t in tests if reasons[t] is None],
                "of": len(tests),
                "excluded": [{"test": t, "reason": r} for t, r in reasons.items() if r is not None],
            }
        )
    return found


def _family_moments(runs: Sequence[RunFigures], tests: Sequence[str]) -> tuple[stats.Description, stats.Moments | None]:
    """A cell's family figure: each run's geometric mean over `tests` (all measured, > 0), then their geometric
    mean and its CI, with the rounding variance of the whole-number rates (a run's: the mean of its tests' over
    the number of tests, as a mean of logs)."""
    indexes = [TESTS.index(t) for t in tests]
    scores: list[float] = []
    rounding = 0.0
    for run in runs:
        values = [float(run.results[i][1] or 0) for i in indexes]  # families() kept tests measured above 0
        scores.append(math.exp(sum(math.log(v) for v in values) / len(values)))
        rounding += stats.rounding_log_var(values, stats.whole_number) / len(values)
    return stats.describe_with_moments(scores, None, rounding / len(scores))


def _family_cells(
    runs: Sequence[RunFigures], data: Comparison, view_families: list[dict[str, Any]], min_effect: float
) -> dict[int, list[dict[str, Any]]]:
    """configuration id -> its family summaries (in FAMILIES order), verdicts adjusted by Holm over every family
    verdict of the view."""
    by_id = {run.id: run for run in runs}
    base_id = data.baseline_configuration
    runs_of = {c.id: [by_id[r] for r in c.runs] for c in data.configurations}
    moments = {
        (cid, f["family"]): _family_moments(config_runs, f["tests"]) if f["tests"] else (stats.NOTHING, None)
        for cid, config_runs in runs_of.items()
        for f in view_families
    }
    out: dict[int, list[dict[str, Any]]] = {}
    pending = []
    for cid in runs_of:
        cells = []
        for f in view_families:
            described, side = moments[(cid, f["family"])]
            ci = described.ci95
            cell: dict[str, Any] = {
                "family": f["family"],
                "title": f["title"],
                "tests": f["tests"],
                "of": f["of"],
                "geomean": _round(described.geo_mean),
                "ci95": None if ci is None else [_round(ci[0]), _round(ci[1])],
                "ratio_geomean": None,
                "ratio_ci95": None,
                "p_value": None,
                "p_adjusted": None,
                "verdict": None,
            }
            if cid != base_id and f["tests"]:
                compared = stats.ratio_between(side, moments[(base_id, f["family"])][1])
                cell["ratio_geomean"] = _round(compared.geo_ratio if compared.geo_ratio is not None else compared.ratio)
                cell["verdict"] = stats.UNKNOWN
                if compared.ci95 is not None:
                    cell["ratio_ci95"] = [_round(compared.ci95[0]), _round(compared.ci95[1])]
                    cell["verdict"] = stats.WITHIN_NOISE
                if compared.p_value is not None:
                    cell["p_value"] = float(f"{compared.p_value:.4g}")
                    pending.append(cell)
            cells.append(cell)
        out[cid] = cells
    for cell, p_adjusted in zip(pending, stats.holm([c["p_value"] for c in pending]), strict=True):
        cell["p_adjusted"] = float(f"{p_adjusted:.4g}")
        cell["verdict"] = stats.decide(cell["ratio_geomean"], p_adjusted, True, min_effect)
    return out


def _family_warning(view_families: list[dict[str, Any]]) -> list[dict[str, str]]:
    """One warning naming every test a family summary leaves out, and why."""
    left = [
        f"{f['title']} over {len(f['tests'])} of {f['of']} tests ("
        + "; ".join(f"{TEST_TITLES[e['test']]}: {e['reason']}" for e in f["excluded"])
        + ")"
        for f in view_families
        if f["excluded"]
    ]
    if not left:
        return []
    return [
        {
            "code": "family_tests_left_out",
            "text": "Family summaries are over the tests every run of the view measured: " + "; ".join(left) + ".",
        }
    ]


def build(runs: Sequence[RunFigures], request: MatrixRequest) -> dict[str, Any]:
    """The matrix of `runs` (pure: the body of GET /api/matrix)."""
    return build_from(runs, request, comparison(runs, request))


def comparison(runs: Sequence[RunFigures], request: MatrixRequest) -> Comparison:
    """What a matrix re-arranges: `runs` compared by configurations of its two tag keys, as
    /compare?group=ROWS,COLS compares them (the page's answer rows read it too).

    Kept by what it is computed from (_compared): a run's label names nothing in a comparison grouped by tags but
    the run in its `runs` list, so after a label is edited the next matrix (whose cached answer the edit's new
    stamp has made stale) reads its runs again but computes no statistic again."""
    baseline = request.baseline if request.baseline in {run.id for run in runs} else None
    data = _compared(_Asked(runs, request.rows, request.cols, baseline, effective_min_effect(request.min_effect)))
    return replace(data, runs=[RunEntry(run.id, run.label or run.machine) for run in runs])


class _Asked:
    """A matrix's comparison to make, equal to another by what it is computed from: everything of each run a
    comparison grouped by tags reads but its label, the two keys, the baseline and the minimum effect."""

    __slots__ = ("runs", "rows", "cols", "baseline", "min_effect", "key")

    def __init__(
        self, runs: Sequence[RunFigures], rows: str, cols: str, baseline: int | None, min_effect: float
    ) -> None:
        self.runs, self.rows, self.cols, self.baseline, self.min_effect = runs, rows, cols, baseline, min_effect
        self.key = (rows, cols, baseline, min_effect, tuple(_unlabelled(run) for run in runs))

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Asked) and self.key == other.key


def _unlabelled(run: RunFigures) -> Hashable:
    limiters = tuple(sorted((test, tuple(sorted(found.items()))) for test, found in run.limiters.items()))
    tags = tuple(sorted(run.tags.items()))
    return (run.id, run.machine, tags, run.format_version, run.bonnie_version, run.results, run.setup, limiters)


# A few views' comparisons (a matrix of MAX_RUNS runs keeps ~1 MB of statistics), shared between requests:
# nothing that reads a comparison writes to it.
@functools.lru_cache(maxsize=8)
def _compared(asked: _Asked) -> Comparison:
    grouping = Grouping(keys=(asked.rows, asked.cols), kind="tags")
    return compare(asked.runs, baseline=asked.baseline, grouping=grouping, min_effect=asked.min_effect)


def build_from(runs: Sequence[RunFigures], request: MatrixRequest, data: Comparison) -> dict[str, Any]:
    """The matrix of `runs` from their comparison(): build() with the comparison made once for the page."""
    grouping = Grouping(keys=(request.rows, request.cols), kind="tags")
    base_id = data.baseline_configuration
    cells = cells_by_test(data, RATE_CHART_KEYS)  # the statistics of compare()
    run_tags = {run.id: run.tags for run in runs}

    def value_of(config: ConfigurationEntry, key: str) -> str:
        return run_tags[config.runs[0]].get(key, UNSET)

    row_values = sorted({value_of(c, request.rows) for c in data.configurations}, key=_natural)
    col_values = sorted({value_of(c, request.cols) for c in data.configurations}, key=_natural)
    by_position = {(value_of(c, request.rows), value_of(c, request.cols)): c for c in data.configurations}
    names_of = {run_id: c.name for c in data.configurations for run_id in c.runs}
    view_families = families(runs, names_of)
    family_cells = _family_cells(runs, data, view_families, data.min_effect)
    matrix_rows = []
    for row_value in row_values:
        row_cells: list[dict[str, Any] | None] = []
        for col_value in col_values:
            config = by_position.get((row_value, col_value))
            if config is None:
                row_cells.append(None)
                continue
            cell = cells[config.id][request.test]
            row_cells.append(
                {
                    "configuration": config.id,
                    "name": config.name,
                    "runs": config.runs,
                    "baseline": config.id == base_id,
                    **{k: getattr(cell, k) for k in CELL_FIGURES},
                    "families": family_cells[config.id],
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
        "baseline": data.baseline,
        "baseline_configuration": base_id,
        "min_effect": data.min_effect,
        "columns": col_values,
        "rows": matrix_rows,
        "configurations": data.configurations,
        "families": view_families,
        "warnings": data.warnings + _family_warning(view_families),
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
# Columns of the matrix's table beyond which it is drawn transposed (when it has fewer rows than columns): each cell
# wraps to about 11 rem, so 6 of them and the rows' heading fit 1366 px without a sideways scroll.
MAX_TABLE_COLUMNS = 6


def _table(built: dict[str, Any]) -> dict[str, Any]:
    """The table's layout: the rows key down and the columns key across, or transposed when there are more than
    MAX_TABLE_COLUMNS columns and fewer rows. Each row: its heading and its cells, each with the heading of its
    column (a phone shows every cell as a card, labelled with it)."""
    rows_key, cols_key = built["rows_key"], built["cols_key"]
    grid = [row["cells"] for row in built["rows"]]
    down = [f"{rows_key}={row['value']}" for row in built["rows"]]
    across = [f"{cols_key}={col}" for col in built["columns"]]
    transposed = len(across) > MAX_TABLE_COLUMNS and len(down) < len(across)
    if transposed:
        grid = [list(column) for column in zip(*grid, strict=True)]
        down, across = across, down
        rows_key, cols_key = cols_key, rows_key
    return {
        "corner": f"{rows_key} \\ {cols_key}",
        "transposed": transposed,
        "columns": across,
        "rows": [
            {"heading": heading, "cells": list(zip(across, cells, strict=True))}
            for heading, cells in zip(down, grid, strict=True)
        ],
    }


def _multiple_bar(built: dict[str, Any], column: str, position: int, cell: dict[str, Any] | None) -> dict[str, Any]:
    """A cell's bar in its row's small chart: one colour per column, the same in every row; no bar for a
    cell without runs or without a measured mean."""
    bar: dict[str, Any] = {"label": f"{built['cols_key']}={column}", **swatch(position)}
    if cell is None:
        return bar | dict.fromkeys(("configuration", "value", "error", "verdict", "too_fast_above")) | EMPTY_CELL_BAR
    measured = cell["status"] == "ok"
    return bar | {
        "configuration": cell["configuration"],
        "baseline": cell["baseline"],
        "value": cell["mean"] if measured else None,
        "error": cell["ci95"] if measured else None,
        "status": cell["status"],
        "verdict": None if cell["baseline"] else cell["verdict"],
        "n": cell["n"],
        "too_fast_above": cell["too_fast_above"] if cell["n_too_fast"] else None,
    }


def _relative_text(cell: dict[str, Any]) -> str:
    """A cell's difference from the baseline cell with its verdict's mark; where +++++ runs decided the verdict,
    the bound that decided it (there is no ratio of means to show)."""
    if cell["baseline"]:
        return ""
    mark = VERDICT_MARK[cell["verdict"]]
    if cell["bound_ratio"] is not None and cell["verdict"] in (stats.BETTER, stats.WORSE):
        return f"{mark} {factor_words(cell['bound_ratio'], cell['geo_ratio'], cell['ratio'], cell['ratio_ci95'])}"
    return "" if cell["ratio"] is None else f"{percent(shown_ratio_of(cell['geo_ratio'], cell['ratio']))} {mark}"


def display(built: dict[str, Any]) -> dict[str, Any]:
    """What the page prints: one unit for every cell (MiB/s when a mean reaches it), each cell's mean
    and CI in it, its difference from the baseline cell, and the family summaries as ×ratios; and what its
    small charts draw (static/charts.js only draws): per row, per column, the bar."""
    means = [cell["mean"] for row in built["rows"] for cell in row["cells"] if cell]
    unit, divisor = display_unit(built["unit"], means)
    texts: dict[int, dict[str, str | list[str]]] = {}
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
                "relative": _relative_text(cell),
                # one short item per family, each kept whole when the cell wraps
                "families": [
                    f"{f['title'].split(' (')[0]} ×{f['ratio_geomean']:.2f} {VERDICT_MARK[f['verdict']]}"
                    f" ({len(f['tests'])}/{f['of']} tests)"
                    for f in cell["families"]
                    if f["ratio_geomean"] is not None
                ],
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
        "table": _table(built),
        "test_title": TEST_TITLES[built["test"]],
        "bars": bars,
        "status_text": STATUS_TEXT,
        "verdict_mark": VERDICT_MARK,
        "too_fast_marks": TOO_FAST_MARKS,
    }
