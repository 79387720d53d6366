"""A comparison as typed data: what app/compare/engine.py's compare() returns and every reader reads by attribute.

Each class's fields are the keys of GET /api/compare's JSON, in its order: orjson writes a dataclass as a map of
its fields in the order they are declared, and leaves out a field whose name starts with an underscore, so a
cell's scratch for the page's verdicts (`_power`, `_rank`) is never sent. The one form that differs from the
dataclasses themselves is the API's, whose cells leave their null figures out (`api_answer`); the page,
/api/matrix and compare.csv keep them (docs/decisions.md, "A compare answer without its nulls"). Why it is typed:
docs/decisions.md, "The comparison typed".

Hints and warnings stay {"code", "text"} maps, as app/compare/hints.py and app/compare/comparability.py make them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from app.compare import stats

Hint = dict[str, str]  # {"code", "text"} (app/compare/hints.py)
Note = dict[str, str]  # a warning: {"code", "text"} (app/compare/comparability.py)


@dataclass(frozen=True, slots=True)
class RunEntry:
    """A compared run as the legend names it: its label, else its machine."""

    id: int
    label: str


@dataclass(frozen=True, slots=True)
class ConfigurationEntry:
    """A configuration (app/compare/grouping.py): its runs' ids, and the tags every run of it has."""

    id: int
    name: str
    runs: list[int]
    tags: dict[str, str]


@dataclass(frozen=True, slots=True)
class Series:
    """One run's values on a chart, in the chart's tests' order (relative to the baseline run's, in relative mode),
    and the status of each (why a value is null)."""

    run: int
    values: list[Any]
    status: list[str]


@dataclass(slots=True)
class Cell:
    """One configuration's statistics for one test of a chart, and its verdict against the baseline configuration.

    Mutable: adjust_verdicts() fills p_adjusted, verdict, detectable_pct and runs_needed (and their per-work
    twins) once every p-value of the page is known, from `_power` and `_rank`, which it then clears."""

    test: str
    status: str
    n: int
    n_too_fast: int
    n_not_run: int
    mean: float | None
    median: float | None
    sd: float | None
    cv_pct: float | None
    geo_mean: float | None
    ci95: list[float] | None
    ratio: float | None
    ratio_ci95: list[float] | None
    geo_ratio: float | None
    p_value: float | None
    p_adjusted: float | None
    too_fast_above: float | None
    bound_ratio: float | None
    verdict: str | None
    detectable_pct: float | None
    runs_needed: int | None
    work_unit: str | None
    cpu_per_work: float | None
    cpu_per_work_ci95: list[float] | None
    cpu_per_work_ratio: float | None
    cpu_per_work_ratio_ci95: list[float] | None
    cpu_per_work_p_value: float | None
    cpu_per_work_p_adjusted: float | None
    cpu_per_work_verdict: str | None
    hints: list[Hint]
    # What the cell's power depends on, until adjust_verdicts() has used it: not part of the answer.
    _power: stats.Spreads | None = None
    # The cell's p is the +++++ rank test's (stats.censored_rank_p), until adjust_verdicts() has decided it.
    _rank: bool = False


# A cell's fields as the JSON names them, in its order: every field but the scratch ones.
CELL_FIELDS = tuple(name for name in Cell.__dataclass_fields__ if not name.startswith("_"))


def cell_without_nulls(c: Cell) -> dict[str, Any]:
    """A cell as GET /api/compare writes it: its fields in their order, those that are null left out. Spelt out
    field by field: a loop over CELL_FIELDS (getattr or attrgetter) costs twice as much, and a 50-run answer has
    1,800 cells (tests/compare/test_comparison.py holds it to CELL_FIELDS)."""
    d: dict[str, Any] = {
        "test": c.test,
        "status": c.status,
        "n": c.n,
        "n_too_fast": c.n_too_fast,
        "n_not_run": c.n_not_run,
    }
    v: object  # each figure in turn
    if (v := c.mean) is not None:
        d["mean"] = v
    if (v := c.median) is not None:
        d["median"] = v
    if (v := c.sd) is not None:
        d["sd"] = v
    if (v := c.cv_pct) is not None:
        d["cv_pct"] = v
    if (v := c.geo_mean) is not None:
        d["geo_mean"] = v
    if (v := c.ci95) is not None:
        d["ci95"] = v
    if (v := c.ratio) is not None:
        d["ratio"] = v
    if (v := c.ratio_ci95) is not None:
        d["ratio_ci95"] = v
    if (v := c.geo_ratio) is not None:
        d["geo_ratio"] = v
    if (v := c.p_value) is not None:
        d["p_value"] = v
    if (v := c.p_adjusted) is not None:
        d["p_adjusted"] = v
    if (v := c.too_fast_above) is not None:
        d["too_fast_above"] = v
    if (v := c.bound_ratio) is not None:
        d["bound_ratio"] = v
    if (v := c.verdict) is not None:
        d["verdict"] = v
    if (v := c.detectable_pct) is not None:
        d["detectable_pct"] = v
    if (v := c.runs_needed) is not None:
        d["runs_needed"] = v
    if (v := c.work_unit) is not None:
        d["work_unit"] = v
    if (v := c.cpu_per_work) is not None:
        d["cpu_per_work"] = v
    if (v := c.cpu_per_work_ci95) is not None:
        d["cpu_per_work_ci95"] = v
    if (v := c.cpu_per_work_ratio) is not None:
        d["cpu_per_work_ratio"] = v
    if (v := c.cpu_per_work_ratio_ci95) is not None:
        d["cpu_per_work_ratio_ci95"] = v
    if (v := c.cpu_per_work_p_value) is not None:
        d["cpu_per_work_p_value"] = v
    if (v := c.cpu_per_work_p_adjusted) is not None:
        d["cpu_per_work_p_adjusted"] = v
    if (v := c.cpu_per_work_verdict) is not None:
        d["cpu_per_work_verdict"] = v
    d["hints"] = c.hints
    return d


@dataclass(frozen=True, slots=True)
class ConfigurationCells:
    """A configuration's cells on one chart, one per test of the chart."""

    configuration: int
    tests: list[Cell]


@dataclass(frozen=True, slots=True)
class Chart:
    key: str
    unit: str  # "%" in relative mode
    higher_is_better: bool
    tests: list[str]
    series: list[Series]
    configurations: list[ConfigurationCells]
    hints: list[Hint]  # the chart's own (bonnie++'s latency is the worst operation's)


@dataclass(frozen=True, slots=True)
class SetupRow:
    """A compared run's setup, as the table heading the compare page lists it (comparability.setup_table)."""

    run: int
    configuration: int
    machine: str
    version: str
    file_size_mib: int | None
    file_test: str
    io_chunk_bytes: int | None
    seeks: str
    concurrency: int | None
    ram_mib: int | None
    tags: dict[str, str]


@dataclass(frozen=True, slots=True)
class Comparison:
    """The body of GET /api/compare (README, "Compare configurations")."""

    mode: str
    baseline: int | None
    runs: list[RunEntry]
    group: str
    configurations: list[ConfigurationEntry]
    baseline_configuration: int
    min_effect: float
    error_control: str
    charts: list[Chart]
    warnings: list[Note]
    setup: list[SetupRow]
    summary: str = ""  # written from the rest once the verdicts are in (app/compare/summary.py)


def api_answer(comparison: Comparison) -> dict[str, Any]:
    """GET /api/compare's body before orjson: the comparison with each cell's null figures left out (a cell holds
    the figures it has). Of a 50-run comparison's 31 figures per cell most are null (one run: no spread, no CI, no
    p; CPU per unit of work outside the %CPU chart), and their names alone made the answer 1.1 MB; without them it
    is 0.4 MB."""
    return {
        "mode": comparison.mode,
        "baseline": comparison.baseline,
        "runs": comparison.runs,
        "group": comparison.group,
        "configurations": comparison.configurations,
        "baseline_configuration": comparison.baseline_configuration,
        "min_effect": comparison.min_effect,
        "error_control": comparison.error_control,
        "charts": [
            {
                "key": chart.key,
                "unit": chart.unit,
                "higher_is_better": chart.higher_is_better,
                "tests": chart.tests,
                "series": chart.series,
                "configurations": [
                    {
                        "configuration": entry.configuration,
                        "tests": [cell_without_nulls(cell) for cell in entry.tests],
                    }
                    for entry in chart.configurations
                ],
                "hints": chart.hints,
            }
            for chart in comparison.charts
        ],
        "warnings": comparison.warnings,
        "setup": comparison.setup,
        "summary": comparison.summary,
    }


def json_default(value: object) -> dict[str, Any]:
    """A comparison's dataclass as the map orjson writes of it (its fields but the scratch ones, in their order),
    for an encoder that knows only maps and lists: Jinja's `tojson` (json.dumps) of a page that embeds one."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in fields(value) if not f.name.startswith("_")}
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
