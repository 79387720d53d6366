"""The paragraph at the top of a comparison, written from its numbers.

For each configuration against the baseline configuration: the rate tests whose 95 % CI of the
ratio excludes 1 (better / worse, with the CI), those within noise, those that cannot be judged
(single runs), the tests CPU-bound on both sides (they measure the CPU, not the disk) and those
+++++ on both sides (raise -s / -n). Rates only: %CPU and latency are in the charts.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

from app.bonnie import TOO_FAST_MARK, UNITS, raise_option

MAX_CONFIGURATIONS = 6  # more would be a wall of text: the charts and table have the rest
TOO_FAST, OK = "too_fast", "ok"
SINGLE_RUN = "Single runs cannot tell a difference from noise: repeat them, e.g. bonnie++ -x 5."


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


def _cpu_bound(cell: dict[str, Any]) -> bool:
    return any(h["code"] == "cpu_bound" for h in cell["hints"])


def summarise(data: dict[str, Any], titles: dict[str, str], rate_charts: Collection[str]) -> str:
    configurations = data["configurations"]
    names = {c["id"]: c["name"] for c in configurations}
    base_id = data["baseline_configuration"]
    base_cells = _cells(data, base_id, rate_charts)
    base_cpu = _cpu(data, base_id)
    if len(configurations) == 1:
        runs = len(configurations[0]["runs"])
        return f"One configuration ({runs} run{'s' if runs != 1 else ''}): nothing to compare it with."
    sentences = []
    single = False
    others = [c for c in configurations if c["id"] != base_id]
    for config in others[:MAX_CONFIGURATIONS]:
        cpu = _cpu(data, config["id"])
        judged, noise, unknown, censored, cpu_bound, too_fast, missing = [], [], [], [], [], [], []
        for cell, base in zip(_cells(data, config["id"], rate_charts), base_cells, strict=True):
            title = titles[cell["test"]]
            if cell["status"] == TOO_FAST and base["status"] == TOO_FAST:
                too_fast.append((title, cell["test"]))
                continue
            if cell["bound_ratio"] is not None and cell["verdict"] in ("better", "worse"):
                judged.append(f"{title} {_bounded(cell, base)} ({_too_fast_count(cell, base)}, {cell['verdict']})")
                continue
            if cell["ratio"] is None and (
                _empty(cell) or _empty(base) or not (cell["n_too_fast"] or base["n_too_fast"])
            ):
                missing.append(title)
                continue
            both_cpu = _cpu_bound(cell) and _cpu_bound(base)
            if cell["verdict"] in ("better", "worse"):
                low, high = cell["ratio_ci95"]
                judged.append(
                    f"{title} {percent(_geo(cell))} (95 % CI {percent(low)} to {percent(high)}, {cell['verdict']})"
                )
            elif both_cpu and cell["verdict"] == "within_noise":
                cpu_bound.append((title, True))
                continue
            elif cell["verdict"] == "within_noise":
                noise.append(f"{title} {percent(_geo(cell))}")
            elif cell["n_too_fast"] or base["n_too_fast"]:
                measured = "" if cell["ratio"] is None else f" {percent(cell['ratio'])} of the measured runs"
                censored.append(f"{title}{measured} ({_too_fast_count(cell, base)})")
            else:
                single = single or cell["n"] < 2 or base["n"] < 2
                unknown.append(f"{title} {percent(cell['ratio'])}")
            if both_cpu:
                cpu_bound.append((title, False))
        parts = list(judged)
        if noise:
            parts.append(f"{'; '.join(noise)} (within noise)")
        if unknown:
            parts.append(f"{'; '.join(unknown)} (no verdict: too few runs)")
        if censored:
            parts.append(f"{'; '.join(censored)}: no verdict, whatever the {TOO_FAST_MARK} runs were could decide it")
        if cpu_bound:
            tests = [t for t, _ in cpu_bound]
            unchanged = "unchanged and " if all(u for _, u in cpu_bound) else ""
            both = [v for cell in ([cpu] + [base_cpu]) for t, v in cell.items() if titles[t] in tests and v is not None]
            level = f" ({max(both):.0f} % CPU)" if both else ""
            parts.append(f"{_join(tests)} {unchanged}CPU-bound in both{level}: they measure the CPU, not the disk")
        if too_fast:
            options = dict.fromkeys(raise_option(test).split(" ")[0] for _, test in too_fast)
            parts.append(f"{_join([t for t, _ in too_fast])} {TOO_FAST_MARK} in both: raise {' and '.join(options)}")
        if missing:
            parts.append(f"{_join(missing)} not comparable ({TOO_FAST_MARK} or not run on one side)")
        sentences.append(f"{names[config['id']]} vs {names[base_id]}: {'; '.join(parts) or 'nothing to compare'}.")
    if len(others) > MAX_CONFIGURATIONS:
        sentences.append(f"{len(others) - MAX_CONFIGURATIONS} more configurations are in the charts and the table.")
    if single:
        sentences.insert(0, SINGLE_RUN)
    return " ".join(sentences)


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


def _bounded(cell: dict[str, Any], base: dict[str, Any]) -> str:
    """ "at least ×17 slower": the bound_ratio's factor, rounded down (it is a bound)."""
    bound = cell["bound_ratio"]
    factor = bound if bound > 1 else 1 / bound
    shown = f"{math.floor(factor)}" if factor >= 10 else f"{math.floor(factor * 10) / 10:.1f}"
    return f"at least ×{shown} {'faster' if bound > 1 else 'slower'}"
