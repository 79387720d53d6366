"""The paragraph at the top of a comparison, written from its numbers.

For each configuration against the baseline configuration: the rate tests judged better or worse (with
the CI, or the bound a +++++ side gives), then each of the others with what it can say: "unchanged" only
when the ratio's 95 % CI lies inside the minimum effect either way; "within noise" with the smallest
change the comparison could have seen and the runs a side a 10 % change needs at this spread; no verdict
with its reason (one measured run, a value of 0, +++++ runs); the tests CPU-bound on both sides (they
measure the CPU, not the disk) and those +++++ on both (raise -s / -n); then CPU per unit of work where
it is judged better or worse. Every qualifier belongs to its item, never to a list. Latency is in the charts.

The API gives it as one paragraph, its ratios as percentages to a tenth (`summarise`). The page folds it per family
of the catalog (`fold`): a few open sentences, then one <details> per family whose one-line summary counts its
verdicts, its ratios said as the answer above the charts says them (×1.20 faster, app/compare/answer.py), so that
no two rules round one figure on one page and a big comparison does not open as a wall of words.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from app.bonnie import FAMILIES, STATUS_TOO_FAST, TOO_FAST_MARK, UNITS, Family, family_tests, raise_option
from app.compare.answer import change_text as _change
from app.compare.answer import could_have_seen, factor_text, interval_text, times
from app.compare.comparison import Cell, Comparison, ConfigurationEntry
from app.compare.stats import cared_effect_pct

MAX_CONFIGURATIONS = 6  # more would be a wall of text: the charts and table have the rest
SINGLE_RUN = (
    "Single runs cannot tell a difference from noise: repeat each configuration (bonnie++ -x 5 or more, more on a "
    "page of many configurations); "
    "the page then says, from the spread the runs show, how many runs a 10 % change needs."
)


def percent(ratio: float) -> str:
    """A ratio as a signed percentage with a real minus sign: 1.116 -> +11.6 %, 0.97 -> −3.0 %."""
    value = (ratio - 1) * 100
    return f"{'+' if value >= 0 else '−'}{abs(value):.1f} %"


def _join(titles: list[str]) -> str:
    return titles[0] if len(titles) == 1 else ", ".join(titles[:-1]) + " and " + titles[-1]


def _cells(data: Comparison, config_id: int, rate_charts: Collection[str]) -> list[Cell]:
    """The configuration's rate cells (those of the charts `rate_charts` names), in the charts' order."""
    cells: list[Cell] = []
    for chart in data.charts:
        if chart.key in rate_charts:
            entry = next(e for e in chart.configurations if e.configuration == config_id)
            cells += entry.tests
    return cells


def _cpu(data: Comparison, config_id: int) -> dict[str, float | None]:
    chart = next(c for c in data.charts if c.key == "cpu")
    entry = next(e for e in chart.configurations if e.configuration == config_id)
    return {cell.test: cell.mean for cell in entry.tests}


def _cpu_cells(data: Comparison, config_id: int) -> list[Cell]:
    chart = next(c for c in data.charts if c.key == "cpu")
    return next(e for e in chart.configurations if e.configuration == config_id).tests


def _cpu_bound(cell: Cell) -> bool:
    return any(h["code"] == "cpu_bound" for h in cell.hints)


def summarise(data: Comparison, titles: dict[str, str], rate_charts: Collection[str]) -> str:
    configurations = data.configurations
    names = {c.id: c.name for c in configurations}
    base_id = data.baseline_configuration
    if len(configurations) == 1:
        runs = len(configurations[0].runs)
        return f"One configuration ({runs} run{'s' if runs != 1 else ''}): nothing to compare it with."
    sentences = [
        f"{names[config.id]} vs {names[base_id]}: "
        f"{'; '.join(_parts(data, config.id, titles, rate_charts)) or 'nothing to compare'}."
        for config in _shown(data)
    ]
    return " ".join(_framed(data, sentences))


def _shown(data: Comparison) -> list[ConfigurationEntry]:
    """The configurations the words are about: the first MAX_CONFIGURATIONS but the baseline."""
    return [c for c in data.configurations if c.id != data.baseline_configuration][:MAX_CONFIGURATIONS]


def _framed(data: Comparison, sentences: list[str]) -> list[str]:
    """`sentences` with what frames them: the single-run warning first (only a configuration of single runs makes
    the whole page unable to judge), and how many configurations the words leave to the charts last."""
    left = len(data.configurations) - 1 - MAX_CONFIGURATIONS
    framed = [SINGLE_RUN] if any(len(c.runs) == 1 for c in data.configurations) else []
    framed += sentences
    if left > 0:
        framed.append(f"{left} more configurations are in the charts and the table.")
    return framed


@dataclass(frozen=True, slots=True)
class Fold:
    """One family's words on the page: a line that says what they hold, and a sentence per configuration."""

    key: str  # the family's
    line: str
    sentences: list[str]


@dataclass(frozen=True, slots=True)
class Folded:
    """The comparison in words as the page shows it: a few open sentences, then a fold per family."""

    lead: list[str]
    folds: list[Fold]


def fold(data: Comparison, titles: dict[str, str], family_charts: Mapping[str, Collection[str]]) -> Folded:
    """What `summarise` says, folded per family of the catalog (`family_charts`: a family's key -> its rate
    charts' keys), its ratios said as the answer says them."""
    if len(data.configurations) == 1:
        return Folded([summarise(data, titles, ())], [])
    names = {c.id: c.name for c in data.configurations}
    base = names[data.baseline_configuration]
    folds, said = [], set()
    for family in FAMILIES:
        charts = family_charts.get(family.key, ())
        sentences = []
        for config in _shown(data):
            if parts := _parts(data, config.id, titles, charts, as_answer=True):
                sentences.append(f"{names[config.id]} vs {base}: {'; '.join(parts)}.")
                said.add(config.id)
        if sentences:
            folds.append(Fold(family.key, _fold_line(data, family, charts), sentences))
    silent = [f"{names[c.id]} vs {base}: nothing to compare." for c in _shown(data) if c.id not in said]
    # the baseline's name, often long, is in each fold's sentences and the legend below: not here again
    opening = ["Family by family, each configuration against the baseline:"] if folds else []
    return Folded(_framed(data, silent) + opening, folds)


def _fold_line(data: Comparison, family: Family, charts: Collection[str]) -> str:
    """A fold's one line: how many of its results are better, worse or neither, and CPU per unit of work's."""
    counts = {"better": 0, "worse": 0, "": 0}
    work = {"better": 0, "worse": 0}
    tests = family_tests(family)
    for config in _shown(data):
        for cell in _cells(data, config.id, charts):
            counts[cell.verdict if cell.verdict in work else ""] += 1
        for cell in _cpu_cells(data, config.id):
            if cell.test in tests and cell.cpu_per_work_verdict in work:
                work[cell.cpu_per_work_verdict] += 1
    line = f"{family.title}: {counts['better']} better, {counts['worse']} worse, {counts['']} within noise or unknown"
    if work["better"] or work["worse"]:
        line += f"; CPU per unit of work {work['better']} better, {work['worse']} worse"
    return line


@dataclass(slots=True)
class _Sorted:
    """A configuration's rate cells against the baseline's, by what its sentence says of them."""

    judged: list[str] = field(default_factory=list)  # better or worse
    other: list[str] = field(default_factory=list)  # within noise, or no verdict and why
    cpu_bound: list[tuple[str, bool]] = field(default_factory=list)  # (title, unchanged) CPU-bound on both sides
    too_fast: list[tuple[str, str]] = field(default_factory=list)  # (title, test) +++++ on both sides
    missing: list[str] = field(default_factory=list)  # not comparable


def _ratio(ratio: float, as_answer: bool, words: tuple[str, str] = ("faster", "slower")) -> str:
    """A ratio to the baseline: "+11.6 %" in the API's words, "×1.12 faster" as the answer says it."""
    if not as_answer:
        return percent(ratio)
    return f"{times(ratio)} {words[0]}" if ratio >= 1 else f"{times(1 / ratio)} {words[1]}"


def _interval(ratio: float, ci: Sequence[float] | None, as_answer: bool) -> str:
    """A ratio's 95 % CI, in the direction `_ratio` says the ratio: of a judged cell, which has one."""
    if ci is None:
        raise ValueError("a judged cell has the 95 % CI of its ratio")
    return interval_text(ci, ratio >= 1) if as_answer else f"95 % CI {percent(ci[0])} to {percent(ci[1])}"


def _per_work(
    data: Comparison, config_id: int, titles: dict[str, str], tests: Collection[str], as_answer: bool
) -> list[str]:
    """CPU per unit of work of `tests` where it is judged better or worse: "block write +30.0 % CPU-s/MiB (...)"."""
    return [
        f"{titles[c.test]} {_ratio(_given(c.cpu_per_work_ratio), as_answer, ('more', 'less'))} {c.work_unit} "
        f"({_interval(_given(c.cpu_per_work_ratio), c.cpu_per_work_ratio_ci95, as_answer)}, "
        f"{c.cpu_per_work_verdict})"
        for c in _cpu_cells(data, config_id)
        if c.cpu_per_work_verdict in ("better", "worse") and c.test in tests
    ]


def _parts(
    data: Comparison,
    config_id: int,
    titles: dict[str, str],
    rate_charts: Collection[str],
    as_answer: bool = False,
) -> list[str]:
    """The parts of one configuration's sentence against the baseline: verdicts first, then the rest, CPU per unit
    of work, the CPU-bound tests, the +++++ ones and those not comparable; of the tests `rate_charts` draw."""
    base_id = data.baseline_configuration
    found = _sort(data, config_id, titles, rate_charts, as_answer)
    parts = found.judged + found.other
    charted = {c.test for c in _cells(data, config_id, rate_charts)}
    per_work = _per_work(data, config_id, titles, charted, as_answer)
    if per_work:
        parts.append(f"CPU per unit of work: {'; '.join(per_work)}")
    if found.cpu_bound:
        tests = [t for t, _ in found.cpu_bound]
        # "unchanged" only for those whose CI lies inside the minimum effect
        steady = [t for t, u in found.cpu_bound if u]
        unchanged_words = "unchanged and " if len(steady) == len(tests) else ""
        also = f" ({_join(steady)} unchanged)" if steady and not unchanged_words else ""
        sides = (_cpu(data, config_id), _cpu(data, base_id))
        both = [v for cpu in sides for t, v in cpu.items() if titles[t] in tests and v is not None]
        level = f" ({max(both):.0f} % CPU)" if both else ""
        parts.append(
            f"{_join(tests)} {unchanged_words}CPU-bound in both{level}: they measure the CPU, not the disk{also}"
        )
    if found.too_fast:
        options = dict.fromkeys(raise_option(test).split(" ")[0] for _, test in found.too_fast)
        parts.append(f"{_join([t for t, _ in found.too_fast])} {TOO_FAST_MARK} in both: raise {' and '.join(options)}")
    if found.missing:
        parts.append(f"{_join(found.missing)} not comparable ({TOO_FAST_MARK} or not run on one side)")
    return parts


def _sort(
    data: Comparison, config_id: int, titles: dict[str, str], rate_charts: Collection[str], as_answer: bool
) -> _Sorted:
    min_effect = data.min_effect
    base_cells = _cells(data, data.baseline_configuration, rate_charts)
    found = _Sorted()
    for cell, base in zip(_cells(data, config_id, rate_charts), base_cells, strict=True):
        title = titles[cell.test]
        if cell.status == STATUS_TOO_FAST and base.status == STATUS_TOO_FAST:
            found.too_fast.append((title, cell.test))
            continue
        if cell.bound_ratio is not None and cell.verdict in ("better", "worse"):
            found.judged.append(f"{title} {factor_text(cell)} ({_too_fast_count(cell, base)}, {cell.verdict})")
            continue
        if cell.ratio is None and (_empty(cell) or _empty(base) or not (cell.n_too_fast or base.n_too_fast)):
            found.missing.append(title)
            continue
        both_cpu = _cpu_bound(cell) and _cpu_bound(base)
        if cell.verdict in ("better", "worse"):
            interval = _interval(_geo(cell), cell.ratio_ci95, as_answer)
            found.judged.append(f"{title} {_ratio(_geo(cell), as_answer)} ({interval}, {cell.verdict})")
        elif cell.verdict == "within_noise":
            if both_cpu and unchanged(cell, min_effect):
                found.cpu_bound.append((title, True))
                continue
            found.other.append(f"{title} {_ratio(_geo(cell), as_answer)} ({_noise_words(cell, min_effect, as_answer)})")
        elif cell.bound_ratio is not None:
            # separated, but no more than chance separates runs this few: the rank test did not hold on the page
            found.other.append(f"{title} cannot tell ({_runs_a_side(cell, base)}; {factor_text(cell)} in these runs)")
        elif cell.n_too_fast or base.n_too_fast:
            measured = "" if cell.ratio is None else f" {_ratio(cell.ratio, as_answer)} of the measured runs"
            found.other.append(
                f"{title}{measured} (no verdict: {_too_fast_count(cell, base)}; "
                f"whatever the {TOO_FAST_MARK} runs were could decide it)"
            )
        else:
            found.other.append(
                f"{title} {_ratio(_given(cell.ratio), as_answer)} (no verdict: {_why_unknown(cell, base)})"
            )
        if both_cpu:
            found.cpu_bound.append((title, False))
    return found


def unchanged(cell: Cell, min_effect: float) -> bool:
    """The ratio's 95 % CI lies inside ÷min_effect .. ×min_effect (stats.unchanged)."""
    ci = cell.ratio_ci95
    return ci is not None and ci[0] >= 1 / min_effect and ci[1] <= min_effect


def _noise_words(cell: Cell, min_effect: float, as_answer: bool) -> str:
    """What a within-noise item says of itself: "unchanged" when its CI lies inside the minimum effect; else how
    large a change it could have seen and the runs a side a 10 % change needs at this spread."""
    if unchanged(cell, min_effect):
        return f"unchanged: {_interval(_geo(cell), cell.ratio_ci95, as_answer)}, inside ×{min_effect:g} either way"
    cared = cared_effect_pct(min_effect)
    detectable = cell.detectable_pct
    words = "within noise"
    if detectable is not None:
        if detectable > cared:
            words = f"cannot tell with {cell.n} runs a side: {could_have_seen(detectable, cell.n)}"
        else:
            words += f": could have seen {_change(detectable)} either way"
    if cell.runs_needed is not None:
        words += f", a {cared:g} % change needs {cell.runs_needed:,} runs a side"
    return words


def _why_unknown(cell: Cell, base: Cell) -> str:
    """Why a measured test with no +++++ has no verdict: one measured run on a side, or a value of 0 (no log)."""
    one_here, one_there = cell.n < 2, base.n < 2
    if one_here or one_there:
        side = "on each side" if one_here and one_there else "here" if one_here else "in the baseline"
        return f"one measured run {side}"
    zero_here, zero_there = cell.geo_mean is None, base.geo_mean is None
    side = "on both sides" if zero_here and zero_there else "here" if zero_here else "in the baseline"
    return f"a run measured 0 {side}, and a ratio of rates needs them above 0"


def _runs_a_side(cell: Cell, base: Cell) -> str:
    """ "3 v 3 runs": the runs of each side that measured or printed +++++."""
    return f"{cell.n + cell.n_too_fast} v {base.n + base.n_too_fast} runs"


def _too_fast_count(cell: Cell, base: Cell) -> str:
    """ "2 of 5 runs faster than measurable (> 16,384 files/s) here, 0 of 3 in the baseline": how many runs of
    each side printed +++++, and the rate they are above."""
    unit = UNITS[cell.test]

    def runs(c: Cell) -> str:
        text = f"{c.n_too_fast} of {c.n + c.n_too_fast + c.n_not_run}"
        if c.n_too_fast:
            above = "" if c.too_fast_above is None else f" (> {c.too_fast_above:,.0f} {unit})"
            text += f" runs faster than measurable{above}"
        return text

    return f"{runs(cell)} here, {runs(base)} in the baseline"


def _geo(cell: Cell) -> float:
    """The ratio a verdict quotes: of geometric means, the centre of its CI (of arithmetic means without one)."""
    return _given(cell.geo_ratio if cell.geo_ratio is not None else cell.ratio)


def _given(ratio: float | None) -> float:
    """A ratio the sentence quotes: only of a cell compared with the baseline, which has one."""
    if ratio is None:
        raise ValueError("a cell said against the baseline has a ratio")
    return ratio


def _empty(cell: Cell) -> bool:
    """Neither measured nor +++++: the test did not run."""
    return not (cell.n or cell.n_too_fast)
