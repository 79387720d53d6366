"""Comparison charts: runs -> the numbers every chart draws, absolute or relative to a baseline.

Pure: no database, no HTTP, no CSS. `compare()` is the body of GET /api/compare (README, "Compare
configurations"): per chart the runs' own figures (`series`, the original contract) and, per
configuration (app/compare/grouping.py) and test, the statistics of its runs and the verdict against the
baseline configuration (app/compare/stats.py), with hints (app/compare/hints.py), warnings (app/compare/comparability.py)
and a summary (app/compare/summary.py). The /compare page draws exactly that: app/compare/view.py adds what a
person needs to read it and app/compare/heat.py the tables under the charts; this module only computes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from app import bonnie
from app.bonnie import STATUS_NOT_RUN, STATUS_OK, STATUS_TOO_FAST, TESTS, Result
from app.compare import comparability, stats, summary
from app.compare.comparison import (
    CELL_FIELDS,
    Cell,
    Chart,
    Comparison,
    ConfigurationCells,
    ConfigurationEntry,
    Hint,
    Note,
    RunEntry,
    Series,
)
from app.compare.figures import RunFigures
from app.compare.grouping import DEFAULT, Configuration, Grouping, group_runs
from app.compare.hints import (
    CPU_BOUND_PCT,
    HIGH_SPREAD_CV_PCT,
    PER_CHAR_TESTS,
    WORST_LATENCY,
    result_hints,
)
from app.compare.request import ABSOLUTE, MODES, RELATIVE, baseline_of, parse_mode

__all__ = ["ABSOLUTE", "MODES", "RELATIVE", "RunFigures", "compare"]

NO_LATENCY = "no_latency"
BASELINE_ZERO = "baseline_zero"
BASELINE_PREFIX = "baseline_"
# Relative mode: +++++ here, and the baseline +++++ too or its mean above the rate the +++++ runs are known to
# exceed: a mark at the top of a % axis would read as "far better".
TOO_FAST_UNJUDGED = "too_fast_unjudged"

VALUE, CPU, LATENCY = "value", "cpu", "latency"
# CPU per unit of work: the %CPU chart's judged figure (a %CPU alone says nothing of the work done for it)
WORK = "work"


@dataclass(frozen=True, slots=True)
class ChartSpec:
    key: str
    title: str
    tests: tuple[str, ...]
    unit: str  # the unit of the absolute values
    higher_is_better: bool
    measure: str  # VALUE, CPU or LATENCY: which figure of each result the chart shows
    family: bonnie.Family | None = None  # a rate chart's: its tests are all of that family


def _rate_chart(key: str, title: str, family: bonnie.Family, *, stat: bool | None = None) -> ChartSpec:
    """A chart of the rates of `family`'s tests (only the stat tests, or all but them, when `stat` is given)."""
    tests = tuple(
        test.name
        for test in bonnie.CATALOG
        if test.family == family and (stat is None or (test.operation == bonnie.STAT) == stat)
    )
    return ChartSpec(key, title, tests, family.unit, True, VALUE, family)


# One rate chart per family, but the file tests' stat on a chart of its own: it is +++++ in nine lines of ten, and
# measured it runs several times the rate of create and delete, whose bars it would flatten.
CHARTS = (
    _rate_chart("block_io", "Block I/O", bonnie.BLOCK_IO),
    _rate_chart("seeks", "Random seeks", bonnie.SEEKS),
    _rate_chart("metadata", "File create and delete", bonnie.METADATA, stat=False),
    _rate_chart("metadata_stat", "File stat", bonnie.METADATA, stat=True),
    ChartSpec("latency", "Latency", TESTS, "µs", False, LATENCY),
    ChartSpec("cpu", "%CPU", TESTS, "%CPU", False, CPU),
)
CHART_KEYS = tuple(spec.key for spec in CHARTS)
RATE_CHART_KEYS = tuple(spec.key for spec in CHARTS if spec.measure == VALUE)
# A family's key -> its rate charts' keys (the file tests' stat has a chart of its own).
FAMILY_RATE_CHARTS = {
    family.key: tuple(spec.key for spec in CHARTS if spec.measure == VALUE and spec.family == family)
    for family in bonnie.FAMILIES
}

# What /api/compare gives per test of a configuration (CompareOut's cell, besides its `test` and `hints`),
# in the order the matrix and the CSV export copy them: Cell's own.
CELL_FIGURES = tuple(name for name in CELL_FIELDS if name not in ("test", "hints"))


def _work_scale(test: str) -> tuple[float, str]:
    """%CPU × scale / rate = CPU-seconds per unit of work, and that unit: per MiB for the I/O tests (rates in
    KiB/s), per 1,000 seeks, per 1,000 files."""
    unit = bonnie.UNITS[test]
    if unit == "KiB/s":
        return 1024 / 100, "CPU-s/MiB"
    return 1000 / 100, f"CPU-s/1,000 {unit.split('/')[0]}"


WORK_SCALES = [_work_scale(test) for test in TESTS]

TEST_TITLES = bonnie.TITLES

# Why a cell has no value; the page says these in tooltips and under each chart.
STATUS_TEXT = {
    STATUS_TOO_FAST: bonnie.TOO_FAST_STATUS,
    STATUS_NOT_RUN: "not run",
    NO_LATENCY: "no latency in this line",
    BASELINE_PREFIX
    + STATUS_TOO_FAST: f"no comparison: the baseline's result is {bonnie.TOO_FAST_MARK} ({bonnie.TOO_FAST})",
    BASELINE_PREFIX + STATUS_NOT_RUN: "no comparison: the baseline did not run this test",
    BASELINE_PREFIX + NO_LATENCY: "no comparison: the baseline's line has no latency",
    BASELINE_ZERO: "no comparison: the baseline's value is 0",
    TOO_FAST_UNJUDGED: f"no comparison: {bonnie.TOO_FAST_MARK} here, not known to be faster than the baseline",
}
TOO_FAST_EXPLANATION = bonnie.TOO_FAST_EXPLANATION
TOO_FAST_HINT = {test.name: f"a larger {test.raise_option}" for test in bonnie.CATALOG}

# ==== The numbers (GET /api/compare) ====


def chart_cells(results: tuple[Result, ...], indexes: list[int], measure: str) -> tuple[list[str], list[Any]]:
    """One run's (statuses, values) for the tests at `indexes` of a chart, in absolute units."""
    picked = [results[i] for i in indexes]
    if measure == LATENCY:
        # bonnie++ prints a latency even for a +++++ result; 1.03 lines have none.
        values = [r[3] for r in picked]
        return [
            STATUS_OK if v is not None else _no_latency(r[0] == STATUS_NOT_RUN)
            for r, v in zip(picked, values, strict=True)
        ], values
    field = 1 if measure == VALUE else 2  # Result: status, value, cpu_pct, latency_us
    return [r[0] for r in picked], [r[field] if r[0] == STATUS_OK else None for r in picked]


def _no_latency(test_not_run: bool) -> str:
    """Why a latency is missing: the test never ran (its latency with it), or the line has none (1.03)."""
    return STATUS_NOT_RUN if test_not_run else NO_LATENCY


TEST_INDEXES = {spec.key: [TESTS.index(test) for test in spec.tests] for spec in CHARTS}
ALL_TESTS = list(range(len(TESTS)))
MEASURES = (VALUE, CPU, LATENCY)


def _series(runs: Sequence[RunFigures], base_run: RunFigures | None) -> dict[str, list[Series]]:
    """Per chart, one series per run: its values and statuses (relative to base_run's when given,
    which then has no series). Each run's 36 cells are worked out once, then cut per chart."""
    if base_run is not None:
        base_cells = {measure: chart_cells(base_run.results, ALL_TESTS, measure) for measure in MEASURES}
        reasons = {m: [baseline_reason(s, v) for s, v in zip(*base_cells[m], strict=True)] for m in MEASURES}
    by_chart: dict[str, list[Series]] = {spec.key: [] for spec in CHARTS}
    for run in runs:
        if run is base_run:
            continue
        cells = {}
        for measure in MEASURES:
            statuses, values = chart_cells(run.results, ALL_TESTS, measure)
            if base_run is not None:
                why, base_values = reasons[measure], base_cells[measure][1]
                # (run / baseline - 1) * 100 rounded to one decimal (+ 0.0 turns a rounded -0.0 into 0.0),
                # null with the reason when either side has no value or the baseline's is 0.
                values = [
                    round((v / b - 1) * 100, 1) + 0.0 if s == STATUS_OK and v is not None and reason is None else None
                    for s, v, b, reason in zip(statuses, values, base_values, why, strict=True)
                ]
                statuses = [
                    s if s != STATUS_OK else reason or STATUS_OK for s, reason in zip(statuses, why, strict=True)
                ]
            cells[measure] = (statuses, values)
        for spec in CHARTS:
            statuses, values = cells[spec.measure]
            if spec.measure != VALUE:  # the latency and %CPU charts hold all twelve tests
                by_chart[spec.key].append(Series(run.id, values, statuses))
            else:
                indexes = TEST_INDEXES[spec.key]
                by_chart[spec.key].append(Series(run.id, [values[i] for i in indexes], [statuses[i] for i in indexes]))
    return by_chart


def baseline_reason(status: str, value: Any) -> str | None:
    """Why a run cannot be compared with this baseline cell, or None when it can."""
    if status != STATUS_OK or value is None:
        return BASELINE_PREFIX + status
    return BASELINE_ZERO if value == 0 else None


def compare(
    runs: Sequence[RunFigures],
    *,
    mode: str = ABSOLUTE,
    baseline: int | None = None,
    grouping: Grouping = DEFAULT,
    min_effect: float = stats.DEFAULT_MIN_EFFECT,
    power_figures: bool = True,
) -> Comparison:
    """The body of GET /api/compare for `runs` (in the order asked). Without `power_figures` no within-noise cell
    states the change it could have seen or the runs a side a change needs (detectable_pct, runs_needed): most of a
    comparison's CPU, which a reader of verdicts alone (the verdicts' calibration) need not pay; every verdict is
    the same."""
    baseline = baseline_of([run.id for run in runs], parse_mode(mode), baseline, strict=True)
    base_run = next((run for run in runs if run.id == baseline), None)
    relative = mode == RELATIVE
    configurations = group_runs(runs, grouping)
    base_config = next((c for c in configurations if base_run in c.runs), configurations[0])
    charts = _charts(runs, configurations, base_config, base_run if relative else None, relative=relative)
    data = Comparison(
        mode=mode,
        baseline=baseline,
        runs=[RunEntry(run.id, run.label or run.machine) for run in runs],
        group=grouping.spelling,
        configurations=[ConfigurationEntry(c.id, c.name, [run.id for run in c.runs], c.tags) for c in configurations],
        baseline_configuration=base_config.id,
        min_effect=min_effect,
        error_control=stats.ERROR_CONTROL,
        charts=charts,
        warnings=comparability.warnings(runs) + _spread_warnings(charts, configurations),
        setup=comparability.setup_table(runs, source_of, {run.id: c.id for c in configurations for run in c.runs}),
    )
    adjust_verdicts(charts, base_config.id, min_effect, power_figures=power_figures)
    return replace(data, summary=summary.summarise(data, TEST_TITLES, RATE_CHART_KEYS))


def _charts(
    runs: Sequence[RunFigures],
    configurations: Sequence[Configuration],
    base_config: Configuration,
    base_run: RunFigures | None,
    *,
    relative: bool,
) -> list[Chart]:
    """Each chart of CHARTS: its runs' series and every configuration's cells, before the page's verdicts."""
    samples = {config.id: _samples(config) for config in configurations}
    facts = {config.id: _facts(config) for config in configurations}
    base_samples = samples[base_config.id]
    all_series = _series(runs, base_run)
    charts = []
    for spec in CHARTS:
        indexes = TEST_INDEXES[spec.key]
        series = all_series[spec.key]
        charts.append(
            Chart(
                key=spec.key,
                unit="%" if relative else spec.unit,
                higher_is_better=spec.higher_is_better,
                tests=list(spec.tests),
                series=series,
                configurations=[
                    ConfigurationCells(
                        config.id,
                        [
                            _cell(
                                spec,
                                index,
                                config,
                                facts[config.id],
                                samples[config.id][index],
                                None if config is base_config else base_samples[index],
                            )
                            for index in indexes
                        ],
                    )
                    for config in configurations
                ],
                hints=[WORST_LATENCY] if spec.measure == LATENCY else [],
            )
        )
    return charts


# The kinds of verdict whose errors are controlled together: every rate cell of the page (all rate charts,
# every configuration against the baseline), and apart from them latency, and CPU per unit of work (the %CPU
# chart's judged figure: %CPU itself has no verdict). Each kind: its charts and the cell's fields
# (raw p, geometric-mean ratio, adjusted p, verdict).
VERDICT_KINDS = {
    VALUE: (RATE_CHART_KEYS, ("p_value", "geo_ratio", "p_adjusted", "verdict")),
    LATENCY: (("latency",), ("p_value", "geo_ratio", "p_adjusted", "verdict")),
    WORK: (
        ("cpu",),
        ("cpu_per_work_p_value", "cpu_per_work_ratio", "cpu_per_work_p_adjusted", "cpu_per_work_verdict"),
    ),
}


def adjust_verdicts(charts: list[Chart], base_id: int, min_effect: float, *, power_figures: bool = True) -> None:
    """Give every compared cell of `charts` its page-wide verdict: Holm's adjustment of the raw p-values of
    all the page's verdicts of one kind (VERDICT_KINDS), then stats.decide() with `min_effect`. A rate test with
    +++++ runs takes part with its rank test's p (stats.censored_rank_p) and is decided by its bound: better or
    worse only when its adjusted p is under 0.05 and the bound is at least `min_effect` from 1, else unknown. Each
    within-noise cell then gets the smallest change the page could have seen there (detectable_pct) and the runs
    a side the change a reader cares about needs at its spreads (runs_needed), both at the page's level: Holm's
    first step over the verdicts of its kind (unless not `power_figures`). The cells' scratch (`_rank`, `_power`)
    is cleared as it is used."""
    by_key = {chart.key: chart for chart in charts}
    sizes = {}
    for kind, (keys, (p_key, ratio_key, adjusted_key, verdict_key)) in VERDICT_KINDS.items():
        # the kind's fields are named: the rates' and latency's own, or CPU per unit of work's
        cells = [
            (by_key[key].higher_is_better, cell, p_value)
            for key in keys
            for entry in by_key[key].configurations
            if entry.configuration != base_id
            for cell in entry.tests
            if (p_value := getattr(cell, p_key)) is not None
        ]
        adjusted = stats.holm([p_value for _, _, p_value in cells])
        sizes[kind] = len(cells)
        for (higher_is_better, cell, _), p_adjusted in zip(cells, adjusted, strict=True):
            setattr(cell, adjusted_key, _significant(p_adjusted))
            if cell._rank:
                cell._rank = False
                bound = cell.bound_ratio
                if bound is not None and p_adjusted < stats.ALPHA:
                    verdict = stats.decide_bounded(bound, higher_is_better, min_effect)
                else:
                    verdict = stats.UNKNOWN
            else:
                verdict = stats.decide(getattr(cell, ratio_key), p_adjusted, higher_is_better, min_effect)
            setattr(cell, verdict_key, verdict)
    cared = stats.cared_effect_pct(min_effect)
    for chart in charts:
        m = sizes[LATENCY if chart.key == "latency" else VALUE]
        for entry in chart.configurations:
            for cell in entry.tests:
                power, cell._power = cell._power, None
                if power_figures and power is not None and cell.verdict == stats.WITHIN_NOISE:
                    detectable = stats.detectable_pct(power, m, min_effect)
                    cell.detectable_pct = None if detectable is None else _significant_2(detectable)
                    cell.runs_needed = stats.runs_needed(power, m, cared, min_effect)


def _significant_2(pct: float) -> float:
    """A detectable change in % to two significant figures (a figure of power: 23 %, 140 %, 9,400 %)."""
    return float(f"{pct:.2g}") + 0.0


def _significant(p: float) -> float:
    """A p-value to 4 significant figures (they span decades)."""
    return float(f"{p:.4g}")


@dataclass(slots=True)  # read-only by convention: frozen=True makes building one 4x dearer
class Sample:
    """One configuration's figures for one test: per measure (VALUE, CPU, LATENCY) the description
    and moments of the measured values (no +++++, no gaps), computed once; and the counts."""

    stats: dict[str, tuple[stats.Description, stats.Moments | None]]
    n_runs: int
    n_too_fast: int
    n_not_run: int
    too_fast_above: float | None = None  # the rate every +++++ run of the test is above (None without +++++)
    value_range: tuple[float, float] | None = None  # the lowest and highest measured rate
    rates: tuple[float, ...] = ()  # the measured rates (the +++++ rank test ranks them)


def _samples(config: Configuration) -> list[Sample]:
    """Per test (TESTS order), what the runs of `config` measured: one pass over their results."""
    n_runs = len(config.runs)
    if n_runs == 1 and SINGLE_RUN_SHORTCUT:
        return [_single_sample(result, config.runs[0], index) for index, result in enumerate(config.runs[0].results)]
    describe = stats.describe_with_moments
    samples = []
    for index, results in enumerate(zip(*[run.results for run in config.runs], strict=True)):
        values: list[float] = []
        cpu: list[float] = []
        latency: list[float] = []
        work: list[float] = []
        work_rounding = 0.0
        scale = WORK_SCALES[index][0]
        too_fast = not_run = 0
        for status, value, cpu_pct, latency_us in results:
            if status == STATUS_OK:
                if value is not None:
                    values.append(value)
                if cpu_pct is not None:
                    cpu.append(cpu_pct)
                    if value:
                        work.append(cpu_pct * scale / value)
                        work_rounding += _ratio_rounding(cpu_pct, value)
            elif status == STATUS_TOO_FAST:
                too_fast += 1
            else:
                not_run += 1
            if latency_us is not None:  # bonnie++ prints a latency even for a +++++ result
                latency.append(latency_us)
        samples.append(
            Sample(
                {
                    VALUE: describe(values),
                    CPU: describe(cpu),
                    LATENCY: describe(latency, stats.latency_step_us),
                    WORK: describe(work, None, work_rounding / len(work) if work else None),
                },
                n_runs,
                too_fast,
                not_run,
                _too_fast_above(config.runs, index) if too_fast else None,
                (min(values), max(values)) if values else None,
                tuple(values),
            )
        )
    return samples


def _ratio_rounding(cpu_pct: float, value: float) -> float:
    """The rounding variance of log(cpu_pct / value): both are printed, each to its step (stats.whole_number)."""
    if cpu_pct <= 0:
        return 0.0
    cpu_step, value_step = stats.whole_number(cpu_pct) / cpu_pct, stats.whole_number(value) / value
    return (cpu_step * cpu_step + value_step * value_step) / 12


def _too_fast_above(runs: Sequence[RunFigures], index: int) -> float | None:
    """The rate the +++++ runs of test `index` are all above: the lowest of the runs' bounds (runs grouped by
    tags may differ in size), None when a run's size is unknown."""
    test = TESTS[index]
    bounds = [
        bonnie.too_fast_above(test, run.setup.file_size_mib, run.setup.file_test[0] if run.setup.file_test else None)
        for run in runs
    ]
    return None if any(b is None for b in bounds) else min(bounds)  # type: ignore[type-var]


# A configuration of one run (every one of an ungrouped comparison) takes a shortcut through
# _single_sample and _single_cell: the same answer (tests/compare/test_engine.py turns this off to check)
# for about half the work of the general path.
SINGLE_RUN_SHORTCUT = True
_NOTHING = (stats.NOTHING, None)


def _one(value: float | None) -> tuple[stats.Description, stats.Moments | None]:
    """describe_with_moments([value]) (or of [] for None), without building the list."""
    if value is None:
        return _NOTHING
    mean = value / 1
    return stats.Description(1, mean, mean, None, None, None, mean if mean > 0 else None), stats.Moments(
        1, mean, None, None
    )


def _single_sample(result: Result, run: RunFigures, index: int) -> Sample:
    """_samples() of one run's result: what an ungrouped comparison builds 36 times per run."""
    status, value, cpu_pct, latency_us = result
    latency = _one(latency_us)
    if status == STATUS_OK:
        work = None if cpu_pct is None or not value else cpu_pct * WORK_SCALES[index][0] / value
        return Sample(
            {VALUE: _one(value), CPU: _one(cpu_pct), LATENCY: latency, WORK: _one(work)},
            1,
            0,
            0,
            None,
            None if value is None else (value, value),
            () if value is None else (value,),
        )
    too_fast = status == STATUS_TOO_FAST
    return Sample(
        {VALUE: _NOTHING, CPU: _NOTHING, LATENCY: latency, WORK: _NOTHING},
        1,
        int(too_fast),
        int(not too_fast),
        _too_fast_above((run,), index) if too_fast else None,
    )


@dataclass(frozen=True, slots=True)
class ConfigFacts:
    """What every hint of a configuration reads, gathered once per configuration."""

    file_size_mib: int | None
    ram_mib: int | None
    format_versions: set[str]
    has_evidence: bool
    seek_cpu_of_process: bool = False  # a run's seek %CPU is bonnie++ 1.9x's whole-process figure


def _facts(config: Configuration) -> ConfigFacts:
    first = config.runs[0]
    return ConfigFacts(
        first.setup.file_size_mib,
        first.setup.ram_mib,
        {run.format_version for run in config.runs},
        any(run.limiters for run in config.runs),
        any(comparability.seek_cpu_source(run) == comparability.BONNIE_SEEK_CPU for run in config.runs),
    )


class _Against(NamedTuple):
    """A cell's figures against the baseline's: the ratios, the raw p, the +++++ bound and the verdict before the
    page's adjustment (adjust_verdicts()), with what that adjustment needs (`power`, `rank`)."""

    ratio: float | None = None
    ratio_ci95: list[float] | None = None
    geo_ratio: float | None = None
    p_value: float | None = None
    bound_ratio: float | None = None
    verdict: str | None = None
    power: stats.Spreads | None = None
    rank: bool = False


NOT_AGAINST = _Against()  # the baseline's own cell


def _cell(
    spec: ChartSpec, index: int, config: Configuration, facts: ConfigFacts, sample: Sample, base: Sample | None
) -> Cell:
    """One configuration's statistics for one test of a chart, and its verdict against the
    baseline's (base is None for the baseline configuration itself)."""
    measure = spec.measure
    described = sample.stats[measure][0]
    n = described.n
    if sample.n_runs == 1 and not facts.has_evidence and SINGLE_RUN_SHORTCUT:
        return _single_cell(spec, index, facts, sample, base)
    if measure == LATENCY:
        n_too_fast, n_not_run = 0, sample.n_runs - n  # a +++++ test still has its latency
        status = STATUS_OK if n else _no_latency(sample.n_not_run == sample.n_runs)
    else:
        n_too_fast, n_not_run = sample.n_too_fast, sample.n_not_run
        status = STATUS_OK if n else STATUS_TOO_FAST if n_too_fast else STATUS_NOT_RUN
    against = NOT_AGAINST if base is None else _against(spec, sample, base)
    if measure == CPU:
        # %CPU is shown as it is: a higher %CPU for more work done is no loss; CPU per unit of work is judged
        against = against._replace(verdict=None, p_value=None, power=None)
    test = TESTS[index]
    cv_pct = described.cv_pct
    # A test that never ran has no hint: there is no result for a hint to explain.
    hints = _cell_hints(spec, config, facts, sample, test, status, n_too_fast) if status != STATUS_NOT_RUN else []
    ci95 = described.ci95
    bound_ratio = against.bound_ratio
    # Positional, in Cell's order: a 50-run page builds ~2,000 cells, and keywords cost nearly four times as much.
    return Cell(
        test,
        status,
        n,
        n_too_fast,
        n_not_run,
        None if described.mean is None else _round3(described.mean),  # mean
        None if described.median is None else _round3(described.median),  # median
        None if described.sd is None else round(described.sd, 3) + 0.0,  # sd
        None if cv_pct is None else round(cv_pct, 2) + 0.0,  # cv_pct
        None if described.geo_mean is None else round(described.geo_mean, 3) + 0.0,  # geo_mean
        None if ci95 is None else [round(ci95[0], 3) + 0.0, round(ci95[1], 3) + 0.0],  # ci95
        against.ratio,
        against.ratio_ci95,
        against.geo_ratio,
        against.p_value,
        None,  # p_adjusted
        _too_fast_figure(sample) if n_too_fast else None,  # too_fast_above
        None if bound_ratio is None else round(bound_ratio, 4) + 0.0,  # bound_ratio
        against.verdict,
        None,  # detectable_pct
        None,  # runs_needed
        *(_per_work(index, sample, base) if measure == CPU else NO_PER_WORK),
        hints,
        against.power,
        against.rank,
    )


def _against(spec: ChartSpec, sample: Sample, base: Sample) -> _Against:
    """A cell's figures against the baseline's (_Against)."""
    measure = spec.measure
    side, base_side = sample.stats[measure][1], base.stats[measure][1]
    ratio = ratio_ci95 = geo_ratio = p_value = bound_ratio = power = None
    rank = False
    compared = stats.ratio_between(side, base_side)
    if compared.ratio is not None:
        ratio = round(compared.ratio, 4) + 0.0
        # adjust_verdicts() replaces this with the page's verdict once every p-value is known
        verdict: str | None = stats.verdict(compared.ci95, spec.higher_is_better)
        if compared.ci95 is not None:
            ratio_ci95 = [round(compared.ci95[0], 4) + 0.0, round(compared.ci95[1], 4) + 0.0]
        if compared.geo_ratio is not None:
            geo_ratio = round(compared.geo_ratio, 4) + 0.0
        if measure != LATENCY and (sample.n_too_fast or base.n_too_fast):
            # +++++ is a value above the measurable, not a missing one: the mean of the measured runs alone
            # is biased low, so such a side gets no verdict from it (a rate gets the rank test's, below)
            verdict = stats.UNKNOWN
        elif compared.p_value is not None:
            p_value = _significant(compared.p_value)
            # what a within-noise verdict could have seen: adjust_verdicts() works it out, the page's size known
            power = stats.spreads(side, base_side)
        elif verdict != stats.UNKNOWN:  # an exact ratio (no rounding variance): nothing to test
            verdict = stats.WITHIN_NOISE
    else:
        verdict = stats.UNKNOWN
    if measure == VALUE and (sample.n_too_fast or base.n_too_fast):
        # adjust_verdicts() decides from this bound, whatever values the +++++ runs had, once the rank test's p
        # (+++++ tied above every measured rate) holds with the page's other verdicts counted
        bound_ratio = _bound_ratio(sample, base)
        rank_p = stats.censored_rank_p(sample.rates, sample.n_too_fast, base.rates, base.n_too_fast)
        if rank_p is not None:
            p_value, rank = _significant(rank_p), True
            verdict = stats.UNKNOWN
    return _Against(ratio, ratio_ci95, geo_ratio, p_value, bound_ratio, verdict, power, rank)


def _cell_hints(
    spec: ChartSpec, config: Configuration, facts: ConfigFacts, sample: Sample, test: str, status: str, n_too_fast: int
) -> list[Hint]:
    """The limiter hints of a cell that has a result (hints.result_hints)."""
    rate = spec.measure == VALUE
    cpu_pct = sample.stats[CPU][0].mean if rate else None
    cv_pct = sample.stats[spec.measure][0].cv_pct
    # Most results have no hint: ask the rules only when one of them can apply.
    if not (
        n_too_fast
        or (cv_pct is not None and cv_pct > HIGH_SPREAD_CV_PCT)
        or (
            rate
            and (
                (cpu_pct is not None and cpu_pct >= CPU_BOUND_PCT)
                or facts.ram_mib
                or test in PER_CHAR_TESTS
                or facts.has_evidence
            )
        )
    ):
        return []
    return result_hints(
        test,
        measures_rate=rate,
        n_runs=sample.n_runs,
        n_too_fast=n_too_fast,
        cv_pct=cv_pct,
        cpu_pct=cpu_pct,
        file_size_mib=facts.file_size_mib,
        ram_mib=facts.ram_mib,
        format_versions=facts.format_versions,
        seek_cpu_of_process=facts.seek_cpu_of_process,
        evidence=_evidence(config, test) if rate and facts.has_evidence else None,
    )


class PerWork(NamedTuple):
    """A cell's per-work figures, in Cell's order (work_unit .. cpu_per_work_verdict): all None outside the %CPU
    chart."""

    work_unit: str | None = None
    cpu_per_work: float | None = None
    cpu_per_work_ci95: list[float] | None = None
    cpu_per_work_ratio: float | None = None
    cpu_per_work_ratio_ci95: list[float] | None = None
    cpu_per_work_p_value: float | None = None
    cpu_per_work_p_adjusted: float | None = None
    cpu_per_work_verdict: str | None = None


NO_PER_WORK = PerWork()


def _per_work(index: int, sample: Sample, base: Sample | None) -> PerWork:
    """A %CPU cell's CPU per unit of work (WORK_SCALES): its mean and the 95 % CI of its geometric mean, and
    against the baseline the geometric-mean ratio, its CI and raw p (adjust_verdicts() gives the verdict). A
    test with +++++ runs on a side has no CPU figure for them: no verdict, as for its rate."""
    described, side = sample.stats[WORK]
    ci95 = described.ci95
    own = PerWork(
        WORK_SCALES[index][1],
        None if described.mean is None else _round_sig(described.mean),
        None if ci95 is None else [_round_sig(ci95[0]), _round_sig(ci95[1])],
    )
    if base is None:
        return own
    compared = stats.ratio_between(side, base.stats[WORK][1])
    if compared.geo_ratio is None or compared.ci95 is None or sample.n_too_fast or base.n_too_fast:
        return own._replace(cpu_per_work_verdict=stats.UNKNOWN)
    return own._replace(
        cpu_per_work_ratio=round(compared.geo_ratio, 4) + 0.0,
        cpu_per_work_ratio_ci95=[round(compared.ci95[0], 4) + 0.0, round(compared.ci95[1], 4) + 0.0],
        cpu_per_work_p_value=None if compared.p_value is None else _significant(compared.p_value),
        cpu_per_work_verdict=stats.WITHIN_NOISE,  # adjust_verdicts() decides from the p-value
    )


def _round_sig(x: float) -> float:
    """CPU-seconds per unit of work span decades (0.0004 CPU-s/MiB on tmpfs, 2 CPU-s/1,000 seeks): 4 significant
    figures."""
    return float(f"{x:.4g}")


def _too_fast_figure(sample: Sample) -> float | None:
    return None if sample.too_fast_above is None else _round3(sample.too_fast_above)


def _bound_ratio(side: Sample, base: Sample) -> float | None:
    """What a test with +++++ runs on one side only can still say: every run of the +++++ side (its measured
    runs, and the +++++ ones above its too_fast_above) against every measured run of the other. With the
    +++++ on this side, the lowest of this side over the highest of the baseline, when above 1: this side is at
    least that many times faster. With the +++++ on the baseline's, the highest here over the lowest there, when
    under 1. None otherwise (nothing holds whatever the +++++ runs were), or with fewer than two runs on a side."""
    if side.n_runs - side.n_not_run < 2 or base.n_runs - base.n_not_run < 2:
        return None
    if side.n_too_fast and not base.n_too_fast:
        fast, measured, sign = side, base, 1
    elif base.n_too_fast and not side.n_too_fast:
        fast, measured, sign = base, side, -1
    else:
        return None
    if fast.too_fast_above is None or measured.value_range is None:
        return None
    floor = fast.too_fast_above if fast.value_range is None else min(fast.too_fast_above, fast.value_range[0])
    if floor <= 0 or measured.value_range[1] <= 0:
        return None  # a run that measured 0 bounds nothing, as it gets no verdict of its own
    if sign > 0:
        ratio = floor / measured.value_range[1]
        return ratio if ratio > 1 else None
    ratio = measured.value_range[1] / floor
    return ratio if ratio < 1 else None


def _round3(x: float) -> float:
    """round(x, 3) + 0.0 (the + 0.0 turns -0.0 into 0.0), skipping round() for whole numbers — most of
    bonnie++'s figures — where it is the costliest step of a cell."""
    return x + 0.0 if type(x) is int or x.is_integer() else round(x, 3) + 0.0


def _single_cell(spec: ChartSpec, index: int, facts: ConfigFacts, sample: Sample, base: Sample | None) -> Cell:
    """_cell() for a configuration of one run, the common case of an ungrouped comparison: no spread,
    no interval, a verdict that can only be unknown — the same answer with a fraction of the work."""
    measure = spec.measure
    described = sample.stats[measure][0]
    mean = described.mean
    test = TESTS[index]
    if measure == LATENCY:
        n_too_fast, n_not_run = 0, 1 - described.n
        status = STATUS_OK if mean is not None else _no_latency(sample.n_not_run == 1)
    else:
        n_too_fast, n_not_run = sample.n_too_fast, sample.n_not_run
        status = STATUS_OK if mean is not None else STATUS_TOO_FAST if n_too_fast else STATUS_NOT_RUN
    ratio = verdict = None
    if base is not None:
        verdict = None if measure == CPU else stats.UNKNOWN  # %CPU is shown as it is, never judged
        base_mean = base.stats[measure][0].mean
        if mean is not None and base_mean is not None and base_mean > 0:
            ratio = round(mean / base_mean, 4) + 0.0
    hints = _single_hints(test, measure, status, n_too_fast, sample, facts)
    value = None if mean is None else _round3(mean)
    # Positional, in Cell's order, as _cell() builds one.
    return Cell(
        test,
        status,
        described.n,
        n_too_fast,
        n_not_run,
        value,  # mean
        value,  # median
        None,  # sd
        None,  # cv_pct
        value if value is not None and value > 0 else None,  # geo_mean
        None,  # ci95
        ratio,
        None,  # ratio_ci95
        None,  # geo_ratio
        None,  # p_value
        None,  # p_adjusted
        _too_fast_figure(sample) if n_too_fast else None,  # too_fast_above
        None,  # bound_ratio
        verdict,
        None,  # detectable_pct
        None,  # runs_needed
        *(_per_work(index, sample, base) if measure == CPU else NO_PER_WORK),
        hints,
    )


def _single_hints(
    test: str, measure: str, status: str, n_too_fast: int, sample: Sample, facts: ConfigFacts
) -> list[Hint]:
    """A single run's hints, only where one can apply: most cells have none, and result_hints costs a call each."""
    measures_rate = measure == VALUE
    cpu_pct = sample.stats[CPU][0].mean if measures_rate else None
    if status == STATUS_NOT_RUN:
        return []
    cpu_bound = cpu_pct is not None and cpu_pct >= CPU_BOUND_PCT
    if not (n_too_fast or (measures_rate and (cpu_bound or facts.ram_mib or test in PER_CHAR_TESTS))):
        return []
    return result_hints(
        test,
        measures_rate=measures_rate,
        n_runs=1,
        n_too_fast=n_too_fast,
        cv_pct=None,
        cpu_pct=cpu_pct,
        file_size_mib=facts.file_size_mib,
        ram_mib=facts.ram_mib,
        format_versions=facts.format_versions,
        seek_cpu_of_process=facts.seek_cpu_of_process,
        evidence=None,
    )


def _evidence(config: Configuration, test: str) -> list[dict[str, str]] | None:
    """The runner's limiters for `test` in the configuration's runs, each code once."""
    found: dict[str, dict[str, str]] = {}
    for run in config.runs:
        limiter = run.limiters.get(test)
        if limiter is not None:
            found.setdefault(limiter["code"], {"code": limiter["code"], "text": limiter["text"]})
    return list(found.values()) or None


def _spread_warnings(charts: list[Chart], configurations: list[Configuration]) -> list[Note]:
    """One warning naming every configuration whose runs disagree (CV above 5 %) on a rate."""
    names = {c.id: c.name for c in configurations}
    where: dict[int, list[str]] = {}
    for chart, spec in zip(charts, CHARTS, strict=True):
        if spec.measure != VALUE:
            continue
        for entry in chart.configurations:
            for cell in entry.tests:
                if cell.cv_pct is not None and cell.cv_pct > HIGH_SPREAD_CV_PCT:
                    where.setdefault(entry.configuration, []).append(f"{TEST_TITLES[cell.test]} {cell.cv_pct:.1f} %")
    if not where:
        return []
    listed = "; ".join(f"{names[cid]}: {', '.join(items)}" for cid, items in where.items())
    return [
        {
            "code": "high_spread",
            "text": f"Runs of a configuration disagree (CV above {HIGH_SPREAD_CV_PCT:g} %): {listed}. Run more, or find the noise.",
        }
    ]


def source_of(run: RunFigures) -> str:
    """Where a run's numbers come from: the bonnie++ version and CSV format of its line."""
    if run.format_version == "1.03":
        return "bonnie++ 1.0x (CSV 1.03)"
    version = run.bonnie_version or "?"
    writer = f"bonnie++ {version}" if version[:1].isdigit() else version
    return f"{writer} (CSV {run.format_version})"
