"""The paragraph at the top of a comparison, written from its numbers.

For each configuration against the baseline configuration: the rate tests judged better or worse (with
the CI, or the bound a +++++ side gives), then each of the others with what it can say: "unchanged" only
when the ratio's 95 % CI lies inside the minimum effect either way; "within noise" with the smallest
change the comparison could have seen and the runs a side a 10 % change needs at this spread; no verdict
with its reason (one measured run, a value of 0, +++++ runs); the tests CPU-bound on both sides (they
measure the CPU, not the disk) and those +++++ on both (raise -s / -n); then CPU per unit of work where
it is judged better or worse. Every qualifier belongs to its item, never to a list. Latency is in the charts.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from app.bonnie import STATUS_TOO_FAST, TOO_FAST_MARK, UNITS, raise_option
from app.compare.answer import change_text as _change
from app.compare.answer import could_have_seen, factor_text
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


def _cells(data: dict[str, Any], config_id: int, rate_charts: Collection[str]) -> list[dict[str, Any]]:
    """The configuration's rate cells (those of the charts `rate_charts` names), in the charts' order."""
    cells = []
    for chart in data["charts"]:
        if chart["key"] in rate_charts:
            entry = next(e for e in chart["configurations"] if e["configuration"] == config_id)
            cells += entry["tests"]
    return cells


def _cpu(data: dict[str, Any], config_id: int) -> dict[str, float | None]:
    chart = next(c for c in data["charts"] if c["key"] == "cpu")
    entry = next(e for e in chart["configurations"] if e["configuration"] == config_id)
    return {cell["test"]: cell["mean"] for cell in entry["tests"]}


def _cpu_cells(data: dict[str, Any], config_id: int) -> list[dict[str, Any]]:
    chart = next(c for c in data["charts"] if c["key"] == "cpu")
    return next(e for e in chart["configurations"] if e["configuration"] == config_id)["tests"]


def _cpu_bound(cell: dict[str, Any]) -> bool:
    return any(h["code"] == "cpu_bound" for h in cell["hints"])


def summarise(data: dict[str, Any], titles: dict[str, str], rate_charts: Collection[str]) -> str:
    configurations = data["configurations"]
    names = {c["id"]: c["name"] for c in configurations}
    base_id = data["baseline_configuration"]
    if len(configurations) == 1:
        runs = len(configurations[0]["runs"])
        return f"One configuration ({runs} run{'s' if runs != 1 else ''}): nothing to compare it with."
    others = [c for c in configurations if c["id"] != base_id]
    sentences = [
        f"{names[config['id']]} vs {names[base_id]}: "
        f"{'; '.join(_parts(data, config['id'], titles, rate_charts)) or 'nothing to compare'}."
        for config in others[:MAX_CONFIGURATIONS]
    ]
    if len(others) > MAX_CONFIGURATIONS:
        sentences.append(f"{len(others) - MAX_CONFIGURATIONS} more configurations are in the charts and the table.")
    # only a configuration of single runs makes the whole page unable to judge: say so first
    if any(len(c["runs"]) == 1 for c in configurations):
        sentences.insert(0, SINGLE_RUN)
    return " ".join(sentences)


@dataclass(slots=True)
class _Sorted:
    """A configuration's rate cells against the baseline's, by what its sentence says of them."""

    judged: list[str] = field(default_factory=list)  # better or worse
    other: list[str] = field(default_factory=list)  # within noise, or no verdict and why
    cpu_bound: list[tuple[str, bool]] = field(default_factory=list)  # (title, unchanged) CPU-bound on both sides
    too_fast: list[tuple[str, str]] = field(default_factory=list)  # (title, test) +++++ on both sides
    missing: list[str] = field(default_factory=list)  # not comparable


def _parts(data: dict[str, Any], config_id: int, titles: dict[str, str], rate_charts: Collection[str]) -> list[str]:
    """The parts of one configuration's sentence against the baseline: verdicts first, then the rest, CPU per unit
    of work, the CPU-bound tests, the +++++ ones and those not comparable."""
    base_id = data["baseline_configuration"]
    found = _sort(data, config_id, titles, rate_charts)
    parts = found.judged + found.other
    per_work = [
        f"{titles[c['test']]} {percent(c['cpu_per_work_ratio'])} {c['work_unit']} "
        f"(95 % CI {percent(c['cpu_per_work_ratio_ci95'][0])} to {percent(c['cpu_per_work_ratio_ci95'][1])}, "
        f"{c['cpu_per_work_verdict']})"
        for c in _cpu_cells(data, config_id)
        if c["cpu_per_work_verdict"] in ("better", "worse")
    ]
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


def _sort(data: dict[str, Any], config_id: int, titles: dict[str, str], rate_charts: Collection[str]) -> _Sorted:
    min_effect = data["min_effect"]
    base_cells = _cells(data, data["baseline_configuration"], rate_charts)
    found = _Sorted()
    for cell, base in zip(_cells(data, config_id, rate_charts), base_cells, strict=True):
        title = titles[cell["test"]]
        if cell["status"] == STATUS_TOO_FAST and base["status"] == STATUS_TOO_FAST:
            found.too_fast.append((title, cell["test"]))
            continue
        if cell["bound_ratio"] is not None and cell["verdict"] in ("better", "worse"):
            found.judged.append(f"{title} {factor_text(cell)} ({_too_fast_count(cell, base)}, {cell['verdict']})")
            continue
        if cell["ratio"] is None and (_empty(cell) or _empty(base) or not (cell["n_too_fast"] or base["n_too_fast"])):
            found.missing.append(title)
            continue
        both_cpu = _cpu_bound(cell) and _cpu_bound(base)
        if cell["verdict"] in ("better", "worse"):
            low, high = cell["ratio_ci95"]
            found.judged.append(
                f"{title} {percent(_geo(cell))} (95 % CI {percent(low)} to {percent(high)}, {cell['verdict']})"
            )
        elif cell["verdict"] == "within_noise":
            if both_cpu and unchanged(cell, min_effect):
                found.cpu_bound.append((title, True))
                continue
            found.other.append(f"{title} {percent(_geo(cell))} ({_noise_words(cell, min_effect)})")
        elif cell["bound_ratio"] is not None:
            # separated, but no more than chance separates runs this few: the rank test did not hold on the page
            found.other.append(f"{title} cannot tell ({_runs_a_side(cell, base)}; {factor_text(cell)} in these runs)")
        elif cell["n_too_fast"] or base["n_too_fast"]:
            measured = "" if cell["ratio"] is None else f" {percent(cell['ratio'])} of the measured runs"
            found.other.append(
                f"{title}{measured} (no verdict: {_too_fast_count(cell, base)}; "
                f"whatever the {TOO_FAST_MARK} runs were could decide it)"
            )
        else:
            found.other.append(f"{title} {percent(cell['ratio'])} (no verdict: {_why_unknown(cell, base)})")
        if both_cpu:
            found.cpu_bound.append((title, False))
    return found


def unchanged(cell: dict[str, Any], min_effect: float) -> bool:
    """The ratio's 95 % CI lies inside ÷min_effect .. ×min_effect (stats.unchanged)."""
    ci = cell["ratio_ci95"]
    return ci is not None and ci[0] >= 1 / min_effect and ci[1] <= min_effect


def _noise_words(cell: dict[str, Any], min_effect: float) -> str:
    """What a within-noise item says of itself: "unchanged" when its CI lies inside the minimum effect; else how
    large a change it could have seen and the runs a side a 10 % change needs at this spread."""
    low, high = cell["ratio_ci95"]
    if unchanged(cell, min_effect):
        return f"unchanged: 95 % CI {percent(low)} to {percent(high)}, inside ×{min_effect:g} either way"
    cared = cared_effect_pct(min_effect)
    detectable = cell["detectable_pct"]
    words = "within noise"
    if detectable is not None:
        if detectable > cared:
            words = f"cannot tell with {cell['n']} runs a side: {could_have_seen(detectable, cell['n'])}"
        else:
            words += f": could have seen {_change(detectable)} either way"
    if cell["runs_needed"] is not None:
        words += f", a {cared:g} % change needs {cell['runs_needed']:,} runs a side"
    return words


def _why_unknown(cell: dict[str, Any], base: dict[str, Any]) -> str:
    """Why a measured test with no +++++ has no verdict: one measured run on a side, or a value of 0 (no log)."""
    one_here, one_there = cell["n"] < 2, base["n"] < 2
    if one_here or one_there:
        side = "on each side" if one_here and one_there else "here" if one_here else "in the baseline"
        return f"one measured run {side}"
    zero_here, zero_there = cell["geo_mean"] is None, base["geo_mean"] is None
    side = "on both sides" if zero_here and zero_there else "here" if zero_here else "in the baseline"
    return f"a run measured 0 {side}, and a ratio of rates needs them above 0"


def _runs_a_side(cell: dict[str, Any], base: dict[str, Any]) -> str:
    """ "3 v 3 runs": the runs of each side that measured or printed +++++."""
    return f"{cell['n'] + cell['n_too_fast']} v {base['n'] + base['n_too_fast']} runs"


def _too_fast_count(cell: dict[str, Any], base: dict[str, Any]) -> str:
    """ "2 of 5 runs faster than measurable (> 16,384 files/s) here, 0 of 3 in the baseline": how many runs of
    each side printed +++++, and the rate they are above."""
    unit = UNITS[cell["test"]]

    def runs(c: dict[str, Any]) -> str:
        text = f"{c['n_too_fast']} of {c['n'] + c['n_too_fast'] + c['n_not_run']}"
        if c["n_too_fast"]:
            above = "" if c["too_fast_above"] is None else f" (> {c['too_fast_above']:,.0f} {unit})"
            text += f" runs faster than measurable{above}"
        return text

    return f"{runs(cell)} here, {runs(base)} in the baseline"


def _geo(cell: dict[str, Any]) -> float:
    """The ratio a verdict quotes: of geometric means, the centre of its CI (of arithmetic means without one)."""
    return cell["geo_ratio"] if cell["geo_ratio"] is not None else cell["ratio"]


def _empty(cell: dict[str, Any]) -> bool:
    """Neither measured nor +++++: the test did not run."""
    return not (cell["n"] or cell["n_too_fast"])
