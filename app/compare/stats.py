"""Statistics of repeated runs: is a difference real or noise?

Pure: numbers in, numbers out; no database, no HTTP, no numpy or scipy (the formulas are small and a
request computes a few hundred of them, faster in plain Python than through array set-up).

- `describe(values)`: N, mean, median, sample SD, CV % and the 95 % confidence interval of the mean
  (Student t with N - 1 degrees of freedom).
- `ratio_of_means(config, baseline)`: mean(config) / mean(baseline) and its 95 % CI, by **Welch's t on
  the logarithms** of the values. Why Welch on logs rather than a bootstrap: bonnie++ figures are
  rates and times, whose spread grows with their size, so they compare multiplicatively and their logs
  are close to symmetric; the ratio's interval is then exp(difference of log means ± t·SE), which
  never goes below zero and is symmetric in log space (×1.2 and ÷1.2 are equally far from 1). Welch
  does not assume equal variances (a slower disk often spreads more). A bootstrap needs far more than
  the 3 to 5 repeats a team runs to say anything (with N = 3 it has only 10 distinct resamples), costs
  thousands of resamples per cell, and its answer depends on a seed. The point estimate is the ratio
  of the arithmetic means (what a reader computes from the bars); the interval is that of the ratio
  of geometric means, which for the small spreads a verdict needs are within a fraction of a percent.
- Quantisation: bonnie++ prints whole numbers (rates, %CPU) or truncated ones (latency in us, ms or s),
  so repeats of a small figure are often identical. Each side's variance of the logs gains the rounding
  variance of its printed values, q²/12 per value (q the printing step; on the log scale q²/(12·x²)):
  zero spread then never claims certainty (200, 200, 200 vs 202, 202, 202 is not "+1.0 %, better").
- `ratio_between` also gives the raw two-sided p of Welch's t on the logs (H0: equal geometric means)
  and the geometric-mean ratio the CI is built on.
- `verdict(...)`: the page decides, not one cell: `holm()` adjusts the p-values of every verdict of a
  kind the page shows (app/compare/engine.py), and `decide()` says better / worse only when the
  adjusted p is under 0.05 *and* the geometric-mean ratio is at least the minimum effect away from 1
  (BONNIEBOARD_MIN_EFFECT, or the URL's min_effect): a tiny difference is never better or worse, however tight its CI. within_noise
  otherwise; unknown when either side has fewer than two measured values or a value ≤ 0 (a log ratio
  needs positive numbers). `unchanged()` holds only when the ratio's CI lies inside the minimum effect.
- +++++ (censored at bonnie++'s bound) inside the same error control: `censored_rank_p()`, an exact rank test
  (Mann–Whitney, Gehan's for one bound) with every +++++ run tied above every measured value, whose p joins the
  page's Holm family; the bound's ratio stays the effect condition (`decide_bounded`). Runs separated by chance
  (1 page in 3 at N = 2, 1 in 10 at N = 3) are no verdict then
  (docs/decisions.md, "+++++ inside the page's error control").
- What a within-noise verdict could have seen: `detectable_pct()`, the smallest change the page finds 80 % of
  the time at these runs and spreads were it the only one, and `runs_needed()`, the fewest runs a side at which a
  10 % change is found 80 % of the time; both from `welch_power()`, the power of the page's own test: Welch's t at
  the degrees of freedom the runs happen to show, Holm's first step (`page_t`), the minimum effect on the estimate
  (docs/decisions.md, "Power as the page's own test").

t quantiles come from `t_quantile`, an exact inverse of Student's t distribution function (the
regularized incomplete beta function by its continued fraction, inverted by Newton's method),
checked against scipy in the tests.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

# The smallest change a verdict names when the caller gives none: a smaller one is never better or worse (a
# bonnie++ rerun on one machine typically stays within 5 %, app.compare.hints.HIGH_SPREAD_CV_PCT).
from app.config import DEFAULT_MIN_EFFECT

Verdict = Literal["better", "worse", "within_noise", "unknown"]
BETTER: Verdict = "better"
WORSE: Verdict = "worse"
WITHIN_NOISE: Verdict = "within_noise"
UNKNOWN: Verdict = "unknown"
CONFIDENCE = 0.95


@dataclass(slots=True)  # read-only by convention: frozen=True makes building one 4x dearer
class Description:
    n: int
    mean: float | None
    median: float | None
    sd: float | None  # sample SD (N - 1); None below N = 2
    cv_pct: float | None  # 100 * SD / mean; None below N = 2 or when the mean is 0
    # 95 % CI of the geometric mean: geo_mean ×/÷ exp(t·SE of the logs), rounding variance included, so never
    # below zero (a Student t CI of the arithmetic mean of 3 spread-out rates can be); None below N = 2
    ci95: tuple[float, float] | None
    geo_mean: float | None = None  # exp(mean of the logs): what ci95 and the ratios' CIs are built on


NOTHING = Description(0, None, None, None, None, None)


def _log_ci(n: int, log_mean: float, log_var: float) -> tuple[float, float]:
    """The 95 % CI of the geometric mean from the logs' mean and variance (rounding included)."""
    half = _t_975_whole(n - 1) * math.sqrt(log_var / n)
    # a value under its own printing step has a huge rounding variance: the CI is then (0, huge), not an error
    return math.exp(max(log_mean - half, -745.0)), math.exp(min(log_mean + half, 709.0))


def _student_ci(n: int, mean: float, sd: float) -> tuple[float, float]:
    """A value ≤ 0 has no log (a %CPU of 0): Student's t of the arithmetic mean, cut at 0, as nothing bonnie++
    measures is negative."""
    half = _t_975_whole(n - 1) * sd / math.sqrt(n)
    return max(0.0, mean - half), mean + half


def describe(values: Sequence[float], quantum: Quantum | None = None) -> Description:
    """N, mean, median, SD, CV %, the geometric mean and its 95 % CI of measured values (no +++++, no gaps)."""
    return describe_with_moments(values, quantum if quantum is not None else whole_number)[0]


@dataclass(slots=True)  # read-only by convention: frozen=True makes building one 4x dearer
class Moments:
    """What a ratio needs of one side, computed once per side: N, the mean, and of the logarithms
    their mean and squared standard error (None when N < 2 or a value is ≤ 0)."""

    n: int
    mean: float
    log_mean: float | None
    log_se2: float | None  # (variance of the logs + rounding variance) / N


Quantum = Callable[[float], float]  # the printing step of a value as bonnie++ prints it


def whole_number(value: float) -> float:
    """Rates and %CPU: whole numbers (a value with a fraction, as 1.9x seeks can have, one decimal)."""
    return 1.0 if float(value).is_integer() else 0.1


def latency_step_us(value_us: float) -> float:
    """bonnie++'s latency in µs, printed truncated in us below 0.1 s, in ms below 100 s, else in s
    (docs/bonnie-csv-format.md §1.3)."""
    return 1.0 if value_us < 100_000 else 1_000.0 if value_us < 100_000_000 else 1_000_000.0


def rounding_log_var(values: Sequence[float], quantum: Quantum | None) -> float:
    """The mean rounding variance of the values' logs: q²/12 per value, q²/(12·x²) on the log scale."""
    if quantum is None:
        return 0.0
    relative = [quantum(v) / v for v in values]  # * rather than **: a tiny value gives inf, not OverflowError
    return sum([r * r for r in relative]) / (12 * len(values))


def moments(values: Sequence[float], quantum: Quantum | None = whole_number) -> Moments | None:
    """None without values."""
    n = len(values)
    if n == 0:
        return None
    mean = sum(values) / n
    if n < 2 or min(values) <= 0:
        return Moments(n, mean, None, None)
    logs = [math.log(v) for v in values]
    log_mean = sum(logs) / n
    log_deviations = [x - log_mean for x in logs]
    log_var = sum([d * d for d in log_deviations]) / (n - 1) + rounding_log_var(values, quantum)
    return Moments(n, mean, log_mean, log_var / n)


def describe_with_moments(
    values: Sequence[float], quantum: Quantum | None = whole_number, rounding_var: float | None = None
) -> tuple[Description, Moments | None]:
    """describe() and moments() of the same values in one pass over them (a comparison needs both
    for every configuration, test and measure: a few hundred times per request). `rounding_var`, when given,
    is the rounding variance of the logs to use instead of the quantum's (a figure worked out of two printed
    ones, as CPU per unit of work, carries the rounding of both)."""
    n = len(values)
    if n == 0:
        return NOTHING, None
    mean = sum(values) / n
    if n == 1:
        return Description(1, mean, mean, None, None, None, mean if mean > 0 else None), Moments(1, mean, None, None)
    ordered = sorted(values)
    middle = n // 2
    median = ordered[middle] if n % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    deviations = [v - mean for v in values]
    sd = math.sqrt(sum([d * d for d in deviations]) / (n - 1))
    cv_pct = 100 * sd / abs(mean) if mean else None
    if ordered[0] <= 0:
        return Description(n, mean, median, sd, cv_pct, _student_ci(n, mean, sd)), Moments(n, mean, None, None)
    logs = list(map(math.log, values))
    log_mean = sum(logs) / n
    log_deviations = [x - log_mean for x in logs]
    rounding = rounding_log_var(values, quantum) if rounding_var is None else rounding_var
    log_var = sum([d * d for d in log_deviations]) / (n - 1) + rounding
    described = Description(n, mean, median, sd, cv_pct, _log_ci(n, log_mean, log_var), math.exp(log_mean))
    return described, Moments(n, mean, log_mean, log_var / n)


def _t_975_whole(df: int) -> float:
    known = _T_975_WHOLE.get(df)
    return known if known is not None else t_975(df)


@dataclass(slots=True)  # read-only by convention: frozen=True makes building one 4x dearer
class Ratio:
    ratio: float | None  # mean(config) / mean(baseline)
    ci95: tuple[float, float] | None  # Welch's t on log values; None when it cannot be computed
    geo_ratio: float | None = None  # the ratio of geometric means: the CI's centre
    p_value: float | None = None  # two-sided, Welch's t on the logs, not adjusted for the page
    log_se: float | None = None  # SE of the difference of the log means (rounding included)
    df: float | None = None  # Welch–Satterthwaite degrees of freedom


NO_RATIO = Ratio(None, None)


def ratio_between(side: Moments | None, base: Moments | None) -> Ratio:
    """The ratio of the means and its 95 % CI (Welch's t on the logarithms; see the module's docstring)."""
    if side is None or base is None or base.mean <= 0:
        return NO_RATIO
    ratio = side.mean / base.mean
    if side.log_se2 is None or base.log_se2 is None or side.log_mean is None or base.log_mean is None:
        return Ratio(ratio, None)
    difference = side.log_mean - base.log_mean
    se2 = side.log_se2 + base.log_se2
    if se2 == 0:  # identical repeats without rounding variance (quantum=None): nothing to test
        exact = math.exp(difference)
        return Ratio(ratio, (exact, exact), exact, None, 0.0, None)
    # Welch–Satterthwaite degrees of freedom
    df = se2 * se2 / (side.log_se2 * side.log_se2 / (side.n - 1) + base.log_se2 * base.log_se2 / (base.n - 1))
    se = math.sqrt(se2)
    half = t_975(df) * se
    p_value = min(1.0, 2 * t_sf(abs(difference) / se, df))
    return Ratio(
        ratio, (math.exp(difference - half), math.exp(difference + half)), math.exp(difference), p_value, se, df
    )


def ratio_of_means(values: Sequence[float], baseline: Sequence[float], quantum: Quantum | None = whole_number) -> Ratio:
    """ratio_between() of two lists of measured values."""
    return ratio_between(moments(values, quantum), moments(baseline, quantum))


# ==== The page's error control ====

ALPHA = 0.05  # 1 - CONFIDENCE, written exactly (1 - 0.95 is 0.050000000000000044)
# Holm rather than Benjamini–Hochberg: the promise is about the whole page ("a page of unchanged runs
# shows no ▲/▼" on at least 95 % of such pages: the family-wise error), which Holm keeps whatever the
# tests' dependence; BH bounds only the expected share of false marks among the marks, and the
# configurations of a page share their baseline, so their tests are correlated.
ERROR_CONTROL = "holm"


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (each ≤ 1, never below its raw p)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def decide(geo_ratio: float, p_adjusted: float, higher_is_better: bool, min_effect: float) -> Verdict:
    """better / worse when the page-adjusted p is under ALPHA and the geometric-mean ratio is at least
    `min_effect` away from 1 (either way); within_noise otherwise."""
    if p_adjusted >= ALPHA or not (geo_ratio >= min_effect or geo_ratio <= 1 / min_effect):
        return WITHIN_NOISE
    if geo_ratio > 1:
        return BETTER if higher_is_better else WORSE
    return WORSE if higher_is_better else BETTER


def decide_bounded(bound_ratio: float, higher_is_better: bool, min_effect: float) -> Verdict:
    """A test with +++++ runs on one side: better / worse when every run of one side is at least `min_effect`
    times every run of the other (bound_ratio, app/compare/engine.py); unknown otherwise, as the +++++ runs
    could have been anything above their bound."""
    if bound_ratio >= min_effect:
        return BETTER if higher_is_better else WORSE
    if bound_ratio <= 1 / min_effect:
        return WORSE if higher_is_better else BETTER
    return UNKNOWN


def unchanged(ci95: Sequence[float] | None, min_effect: float) -> bool:
    """The ratio's 95 % CI lies inside ÷min_effect .. ×min_effect: "unchanged" is then a claim the data hold
    (a CI only overlapping 1 says nothing of the sort: −57 % with a CI of ×0.07 to ×2.26 is not unchanged)."""
    return ci95 is not None and ci95[0] >= 1 / min_effect and ci95[1] <= min_effect


# ==== +++++ inside the page's error control ====


def censored_rank_p(
    side: Sequence[float], side_censored: int, base: Sequence[float], base_censored: int
) -> float | None:
    """Two-sided p of an exact rank test (Mann–Whitney, or Gehan's for a common censoring bound) between two sides
    whose +++++ runs are tied above every measured value of either side: what bonnie++ says of them is only that
    they were faster than it could time. Exact (every way of dealing the pooled scores to the sides, tie-aware) up
    to EXACT_RANK_RUNS runs in all; beyond, the normal approximation with the ties' correction. None when a side has
    fewer than two runs or nothing tells the runs apart (every run +++++)."""
    n1, n2 = len(side) + side_censored, len(base) + base_censored
    if n1 < 2 or n2 < 2:
        return None
    pooled = sorted([(v, 0) for v in side] + [(v, 1) for v in base])
    groups: list[tuple[int, int]] = []  # (runs of the side, runs in all) per tied value, from the lowest
    i = 0
    while i < len(pooled):
        j = i
        while j < len(pooled) and pooled[j][0] == pooled[i][0]:
            j += 1
        groups.append((sum(1 for _, b in pooled[i:j] if b == 0), j - i))
        i = j
    if side_censored or base_censored:
        groups.append((side_censored, side_censored + base_censored))
    if len(groups) < 2:
        return None
    sizes = tuple(size for _, size in groups)
    # twice the mid-ranks: whole numbers
    doubled, start = [], 0
    for size in sizes:
        doubled.append(2 * start + size + 1)
        start += size
    observed = sum(k * r for (k, _), r in zip(groups, doubled, strict=True))
    total = n1 + n2
    centre = n1 * (total + 1)  # twice the expected rank sum
    distance = abs(observed - centre)
    if total <= EXACT_RANK_RUNS:
        counts = _rank_sum_counts(sizes, n1)
        ways = math.comb(total, n1)
        extreme = sum(c for s, c in counts.items() if abs(s - centre) >= distance - 1e-9)
        return min(1.0, extreme / ways)
    z = rank_sum_z(distance, n1, n2, sum(size**3 - size for size in sizes))
    return None if z is None else min(1.0, 2 * NormalDist().cdf(-z))


def rank_sum_z(doubled_distance: float, n1: int, n2: int, ties: float) -> float | None:
    """The z of a rank sum in the normal approximation: `doubled_distance` = |twice the side's rank sum - n1 (N + 1)|,
    `ties` = the sum of t^3 - t over the tied groups of the N = n1 + n2 runs. None where nothing tells them apart."""
    total = n1 + n2
    variance = n1 * n2 / 12 * ((total + 1) - ties / (total * (total - 1)))
    return (doubled_distance / 2) / math.sqrt(variance) if variance > 0 else None


EXACT_RANK_RUNS = 30  # beyond, a first shape would cost tens of ms to count out; the normal tail is close by then
_RANK_COUNTS: dict[tuple[tuple[int, ...], int], dict[int, int]] = {}


def _rank_sum_counts(sizes: tuple[int, ...], n1: int) -> dict[int, int]:
    """How many ways of picking n1 of the pooled runs give each (doubled) rank sum, the runs in tied groups of
    `sizes` from the lowest: a group of size g gives k of its runs in comb(g, k) ways, each at the group's mid-rank.
    Remembered: a page's +++++ cells share few shapes."""
    key = (sizes, n1)
    known = _RANK_COUNTS.get(key)
    if known is not None:
        return known
    counts: list[dict[int, int]] = [{} for _ in range(n1 + 1)]  # picked -> rank sum -> ways
    counts[0][0] = 1
    start = 0
    for size in sizes:
        rank = 2 * start + size + 1
        start += size
        for picked in range(n1, -1, -1):
            here = counts[picked]
            for k in range(1, min(size, n1 - picked) + 1):
                ways_k = math.comb(size, k)
                target = counts[picked + k]
                for total_rank, ways in here.items():
                    key_sum = total_rank + k * rank
                    target[key_sum] = target.get(key_sum, 0) + ways * ways_k
    if len(_RANK_COUNTS) > 1_000:
        _RANK_COUNTS.clear()
    _RANK_COUNTS[key] = counts[n1]
    return counts[n1]


# ==== What a within-noise verdict could have seen ====

POWER = 0.8
Z_POWER = 0.8416212335729143  # the standard normal's 80 % quantile: power 80 %
CARED_EFFECT_PCT = 10.0  # the change the advice sizes N for, when nobody says otherwise
_PAGE_T: dict[tuple[int, float], float] = {}


def cared_effect_pct(min_effect: float) -> float:
    """The change the advice sizes N for: 10 %, or twice the minimum effect where that is larger (a change the size
    of the minimum effect is called only half the time, however many runs)."""
    return max(CARED_EFFECT_PCT, round(200 * (min_effect - 1), 1))


def page_t(df: float, m: int) -> float:
    """The two-sided critical t a lone real change must pass on a page of `m` verdicts of its kind: Holm's first
    step, t at 1 − ALPHA/(2m). A figure of power, where a thousandth moves nothing shown: below 30 degrees of
    freedom the exact quantile at df rounded to 0.1, remembered (t_quantile takes ~70 µs and a page has few
    distinct ones); from 30 on, the Cornish–Fisher expansion of t around the normal quantile (within 0.3 % of
    the exact value at 30, closer beyond)."""
    m = max(m, 1)
    if df >= 30:
        z = _page_z(m)
        z2 = z * z
        return z * (
            1
            + (z2 + 1) / (4 * df)
            + ((5 * z2 + 16) * z2 + 3) / (96 * df * df)
            + (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * df**3)
        )
    key = (m, max(1.0, round(df, 1)))
    known = _PAGE_T.get(key)
    if known is None:
        if len(_PAGE_T) > 10_000:
            _PAGE_T.clear()
        known = _PAGE_T[key] = t_975(key[1]) if m == 1 else t_quantile(1 - ALPHA / (2 * m), key[1])
    return known


_PAGE_Z: dict[int, float] = {}


def _page_z(m: int) -> float:
    known = _PAGE_Z.get(m)
    if known is None:
        if len(_PAGE_Z) > 10_000:
            _PAGE_Z.clear()
        known = _PAGE_Z[m] = NormalDist().inv_cdf(1 - ALPHA / (2 * m))
    return known


def _power_df(df: float) -> float:
    """The degrees of freedom a power figure is worked out at: to 0.1 below 30, whole below 1,000, 1,000 beyond
    (remembered figures; the power moves by less than a point between neighbours)."""
    df = max(1.0, df)
    return round(df, 1) if df < 30 else float(min(round(df), 1_000))


_GRID = 128
_GRIDS: dict[float, tuple[tuple[float, float], ...]] = {}


def _grid(df: float) -> tuple[tuple[float, float], ...]:
    """The quadrature of SE-hat / SE = sqrt(χ²_df / df) for power(): (weight, value) pairs, the weights summing to
    1, over y = ln(χ²_df / df) (trapezoids on a grid of ±12 SD: its density is smooth and falls off fast either
    way). Remembered per df."""
    known = _GRIDS.get(df)
    if known is not None:
        return known
    half = df / 2
    spread = math.sqrt(1 / half + 1 / (2 * half * half))  # ≈ the SD of ln(χ²_df / df) (its trigamma)
    low, high = -12 * spread - 0.5, 6 * spread + 0.5
    step = (high - low) / _GRID
    front = half * math.log(half) - math.lgamma(half)
    points = []
    for i in range(_GRID + 1):
        y = low + i * step
        weight = math.exp(front + half * y - half * math.exp(y))
        points.append((weight / 2 if i in (0, _GRID) else weight, math.exp(y / 2)))
    total = math.fsum(w for w, _ in points)
    grid = tuple((w / total, v) for w, v in points if w / total > 1e-9)
    if len(_GRIDS) > 10_000:
        _GRIDS.clear()
    _GRIDS[df] = grid
    return grid


def power(delta: float, df: float, m: int, floor: float = 0.0) -> float:
    """The chance a lone true change is called when the test's degrees of freedom are known: |T| > page_t(df, m)
    and the estimate beyond `floor`, the change and the floor in units of the true SE of the log difference.
    T = d / SE-hat with d ~ N(delta, 1) and SE-hat² ~ χ²_df / df: the noncentral t's tails with the minimum effect's
    cut, integrated over SE-hat (_grid)."""
    df = _power_df(df)
    return _tails(delta, page_t(df, m), _grid(df), floor)


def _tails(delta: float, crit: float, grid: tuple[tuple[float, float], ...], floor: float) -> float:
    erfc, root2 = math.erfc, math.sqrt(2)
    found = 0.0
    for weight, scale in grid:
        cut = crit * scale
        if cut < floor:
            cut = floor
        found += weight * (erfc((cut - delta) / root2) + erfc((cut + delta) / root2))
    return found / 2


_SHARES = 8  # nodes of the split of SE-hat² between the two sides (welch_power)
_WELCH_NODES: dict[tuple[int, int, float], tuple[tuple[float, float], ...]] = {}


def _welch_nodes(k1: int, k2: int, share: float) -> tuple[tuple[float, float], ...]:
    """(weight, Welch's df) over the split of SE-hat² between the sides: Z = χ²_k1 / (χ²_k1 + χ²_k2) is Beta(k1/2,
    k2/2), taken at the midpoints of θ with Z = sin²θ, where its density is sin^(k1−1)θ·cos^(k2−1)θ (smooth, also
    at k = 1). `share` is the first side's share of the true SE². Remembered."""
    key = (k1, k2, share)
    known = _WELCH_NODES.get(key)
    if known is not None:
        return known
    a, b = share / k1, (1 - share) / k2
    nodes = []
    for g in range(_SHARES):
        theta = (g + 0.5) * math.pi / (2 * _SHARES)
        sin, cos = math.sin(theta), math.cos(theta)
        log_weight = (k1 - 1) * math.log(sin) + (k2 - 1) * math.log(cos)
        z = sin * sin
        w1, w2 = a * z, b * (1 - z)  # the two sides' parts of SE-hat², up to a common factor
        df = (w1 + w2) ** 2 / (w1 * w1 / k1 + w2 * w2 / k2)
        nodes.append((log_weight, df))
    top = max(w for w, _ in nodes)
    weights = [math.exp(w - top) for w, _ in nodes]
    total = math.fsum(weights)
    found = tuple((w / total, df) for w, (_, df) in zip(weights, nodes, strict=True))
    if len(_WELCH_NODES) > 10_000:
        _WELCH_NODES.clear()
    _WELCH_NODES[key] = found
    return found


@dataclass(frozen=True, slots=True)
class Spreads:
    """What the power of a comparison depends on: each side's variance of one run's log (rounding included) and
    its runs."""

    side_var: float
    side_n: int
    base_var: float
    base_n: int


def spreads(side: Moments | None, base: Moments | None) -> Spreads | None:
    """None without a spread on both sides."""
    if side is None or base is None or side.log_se2 is None or base.log_se2 is None or side.n < 2 or base.n < 2:
        return None
    return Spreads(side.log_se2 * side.n, side.n, base.log_se2 * base.n, base.n)


def _welch_shape(spread: Spreads) -> tuple[float, int, int, float]:
    """The true SE of the log difference, each side's degrees of freedom, and the first side's share of SE² (_share)."""
    a, b = spread.side_var / spread.side_n, spread.base_var / spread.base_n
    return math.sqrt(a + b), spread.side_n - 1, spread.base_n - 1, _share(a / (a + b))


def _share(x: float) -> float:
    """A side's share of SE², to 0.05 and inside 0.05–0.95: a remembered shape (power moves by less than a point
    between neighbours)."""
    return min(0.95, max(0.05, round(x * 20) / 20))


def welch_power(delta: float, k1: int, k2: int, share: float, m: int, floor: float = 0.0) -> float:
    """The chance a lone true change is called on a page of `m` verdicts of its kind, as the page calls it: Welch's
    t on the logs passes Holm's first step at its own degrees of freedom, which vary with the spreads the runs
    happen to show (at N = 2 anywhere from 1 to 2), and the estimate is beyond the minimum effect. `delta` and
    `floor` in units of the true SE of the log difference; k1, k2 the sides' runs − 1; `share` the first side's
    share of the true SE². SE-hat² is taken as χ² at Welch's df of the true spreads, apart from its split between
    the sides (_welch_nodes), which sets the test's df: exact for equal spreads and runs, an approximation else."""
    overall = 1 / (share * share / k1 + (1 - share) ** 2 / k2)
    grid = _grid(_power_df(overall))
    found = 0.0
    for weight, df in _welch_nodes(k1, k2, share):
        found += weight * _tails(delta, page_t(df, m), grid, floor)
    return found


def _floor_binds(k1: int, k2: int, share: float, m: int, floor: float) -> bool:
    """Whether the minimum effect's cut on the estimate can move welch_power by a ten-thousandth: only where the
    test's own cut (t·SE-hat) can fall below it, on SE-hat's grid at the smallest t of the nodes."""
    overall = 1 / (share * share / k1 + (1 - share) ** 2 / k2)
    crit = min(page_t(df, m) for _, df in _welch_nodes(k1, k2, share))
    return sum(weight for weight, scale in _grid(_power_df(overall)) if crit * scale < floor) > 1e-4


_DETECTABLE: dict[tuple[int, int, int, float, float], float] = {}


def detectable_shift(k1: int, k2: int, share: float, m: int, floor: float = 0.0) -> float:
    """The true change (in units of the SE of the log difference) called with probability POWER (welch_power)
    inverted by bisection, to 0.1 %. Remembered per shape and floor to 0.1 SE: a page's cells share few of them."""
    key = (max(m, 1), k1, k2, share, round(max(floor, 0.0), 1))
    known = _DETECTABLE.get(key)
    if known is not None:
        return known
    m, floor = key[0], key[4]
    low = floor
    high = max(floor, page_t(k1 + k2, m)) + Z_POWER + 1
    while welch_power(high, k1, k2, share, m, floor) < POWER:
        low, high = high, 2 * high
        if high > 1e12:
            return math.inf
    while high - low > 1e-3 * high:
        middle = (low + high) / 2
        if welch_power(middle, k1, k2, share, m, floor) < POWER:
            low = middle
        else:
            high = middle
    if len(_DETECTABLE) > 10_000:
        _DETECTABLE.clear()
    _DETECTABLE[key] = high
    return high


def detectable_pct(spread: Spreads | None, m: int, min_effect: float) -> float | None:
    """The smallest change (in %, either way) the page finds 80 % of the time when it is the only one, at the
    spreads and runs seen (welch_power: Holm's first step, Welch's df as the runs would show it, the minimum effect
    on the estimate); never below the minimum effect (a smaller change is never called). None without a spread."""
    if spread is None:
        return None
    se, k1, k2, share = _welch_shape(spread)
    if se <= 0:
        return None
    effect = math.log(min_effect)
    shift = detectable_shift(k1, k2, share, m)
    if shift * se < 4 * effect:  # near the minimum effect its cut on the estimate costs power: count it
        shift = detectable_shift(k1, k2, share, m, effect / se)
    return 100 * max(math.expm1(min(shift * se, 700.0)), min_effect - 1)


MAX_RUNS_NEEDED = 1_000_000


def runs_needed(
    spread: Spreads | None,
    m: int,
    effect_pct: float = CARED_EFFECT_PCT,
    min_effect: float = DEFAULT_MIN_EFFECT,
) -> int | None:
    """The smallest n (runs a side, at least 2) at which a change of `effect_pct` % is called 80 % of the time on a
    page of `m` verdicts of its kind (welch_power: Holm's first step, Welch's df as n runs a side would show it, the
    minimum effect on the estimate), at the two sides' spreads seen. At most MAX_RUNS_NEEDED."""
    if spread is None:
        return None
    v1, v2 = spread.side_var, spread.base_var
    total = v1 + v2
    if total <= 0:
        return None
    effect = math.log1p(effect_pct / 100)
    floor = math.log(min_effect)
    if effect <= floor:
        return None
    share = _share(v1 / total)

    def enough(n: int, with_floor: bool) -> bool:
        se = math.sqrt(total / n)
        if with_floor:
            # (the search below found n enough without the cut; the cut costs at most P(d < floor), and nothing
            # where the test's own cut is always above it)
            if effect - floor > 5 * se or not _floor_binds(n - 1, n - 1, share, m, floor / se):
                return True
            return welch_power(effect / se, n - 1, n - 1, share, m, floor / se) >= POWER
        # one power figure: inverting it per n (detectable_shift's bisection) costs ~20 of them for each n the
        # search meets, more than the page's cells ever share
        return welch_power(effect / se, n - 1, n - 1, share, m) >= POWER

    # the smallest n without the minimum effect's cut (a monotone condition), from the normal approximation's n,
    # which never asks more than the t does: steps doubling from there, then halving the gap; then the cut
    # counted, which can only ask for more
    low = max(1, math.ceil((_page_z(max(m, 1)) + Z_POWER) ** 2 * total / (effect * effect)) - 1)
    if low >= MAX_RUNS_NEEDED:
        return MAX_RUNS_NEEDED
    # Each n asked costs a power figure, the bulk of a compare's time. The first asked is the t's own approximation
    # (_t_guess); one Newton step from the power found there (_newton_n) is most often the answer or next to it,
    # and its neighbour settles it. Where they did not, steps double and then halve the gap.
    guess = min(max(low + 1, _t_guess(total / (effect * effect), m, low)), MAX_RUNS_NEEDED - 1)
    delta = effect / math.sqrt(total / guess)
    found = welch_power(delta, guess - 1, guess - 1, share, m)
    without_cut, first = functools.partial(enough, with_floor=False), _newton_n(guess, found, delta)
    high = _smallest(without_cut, low, guess, first) if found >= POWER else _smallest(without_cut, guess, None, first)
    if high >= MAX_RUNS_NEEDED:
        return MAX_RUNS_NEEDED
    while not enough(high, True):
        high += 1 if high < 100 else high // 50
        if high >= MAX_RUNS_NEEDED:
            return MAX_RUNS_NEEDED
    return high


def _smallest(enough: Callable[[int], bool], low: int, high: int | None, n: int) -> int:
    """The smallest n in (low, high] that is `enough` (a monotone condition; high None: unbounded, up to
    MAX_RUNS_NEEDED), asking `n` first and then its neighbour on the side not yet settled, then doubling steps
    and halving the gap."""
    for _ in range(2):
        if low < n and (high is None or n < high):
            if enough(n):
                high, n = n, n - 1
            else:
                low, n = n, n + 1
    if high is None:
        step = 1
        high = low + step
        while not enough(high):
            low, step = high, step * 2
            high = low + step
            if high >= MAX_RUNS_NEEDED:
                return MAX_RUNS_NEEDED
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


def _t_guess(scale: float, m: int, low: int) -> int:
    """runs_needed's first n to ask: the normal approximation's n with each quantile taken as Student's t at the
    degrees of freedom of equal spreads (2n − 2), twice over. `scale` = (var1 + var2) / effect²; `low` the normal
    approximation's n less one."""
    n = low + 1.0
    for _ in range(2):
        df = max(1.0, 2 * math.ceil(n) - 2)
        n = (page_t(df, m) + _t_power(df)) ** 2 * scale
    return math.ceil(n)


def _newton_n(n: int, found: float, delta: float) -> int:
    """The n at which the power found at n (with a true shift of `delta` SEs) would be POWER, if the power were
    Φ(δ − c) and δ grew as √n: one Newton step on the probit scale, for runs_needed to ask next."""
    probit = NormalDist().inv_cdf(min(max(found, 1e-9), 1 - 1e-9))
    wanted = delta + Z_POWER - probit
    if delta <= 0 or wanted <= 0:
        return n
    return min(MAX_RUNS_NEEDED - 1, max(2, math.ceil(n * (wanted / delta) ** 2)))


def _t_power(df: float) -> float:
    """Student's t at the POWER quantile (Cornish–Fisher around Z_POWER): a first guess, never a figure shown."""
    z = Z_POWER
    z2 = z * z
    return z * (1 + (z2 + 1) / (4 * df) + ((5 * z2 + 16) * z2 + 3) / (96 * df * df))


def verdict(ci95: tuple[float, float] | None, higher_is_better: bool) -> Verdict:
    """better / worse when the CI of the ratio excludes 1 in that direction, else within_noise;
    unknown without a CI (fewer than two measured values on a side)."""
    if ci95 is None:
        return UNKNOWN
    low, high = ci95
    if low > 1:
        return BETTER if higher_is_better else WORSE
    if high < 1:
        return WORSE if higher_is_better else BETTER
    return WITHIN_NOISE


# ==== Student's t distribution ====


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        m2 = 2 * m
        step = m * (b - m) * x / ((a + m2 - 1) * (a + m2))
        d = 1.0 + step * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + step / c
        c = c if abs(c) > tiny else tiny
        result *= d * c
        step = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))
        d = 1.0 + step * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + step / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        result *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return result


def incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), for a, b > 0 and 0 ≤ x ≤ 1."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - _log_beta(a, b))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom."""
    tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1 - tail


def t_pdf(t: float, df: float) -> float:
    return math.exp(-(df + 1) / 2 * math.log1p(t * t / df) - 0.5 * math.log(df) - _log_beta(df / 2, 0.5))


def t_quantile(p: float, df: float) -> float:
    """The t with P(T ≤ t) = p, for 0.5 ≤ p < 1 and df ≥ 1 (exact to about 1e-12)."""
    if not 0.5 <= p < 1 or not df >= 1:
        raise ValueError("t_quantile needs 0.5 <= p < 1 and df >= 1")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    tail = 1 - p
    # From t = 0: the survival function is convex for t > 0, so Newton's steps from the left of the
    # root stay left of it and converge monotonically, without a bracket.
    t = 0.0
    for _ in range(100):
        step = (t_sf(t, df) - tail) / t_pdf(t, df)
        t += step
        if abs(step) < 1e-13 * max(1.0, t):
            break
    return t


# t_975 is needed a few hundred times per comparison (one per configuration and test, and Welch's df
# is not an integer), and t_quantile takes ~70 µs. log t_975 is a smooth function of u = 1/df on
# (0, 1] (df = 1 .. infinity), so a Chebyshev series fitted once at import (24 exact quantiles,
# ~1.5 ms) gives it in ~3 µs to within 1e-9 relative of t_quantile (tests/compare/test_stats.py checks).
_CHEBYSHEV_NODES = 24
_TERMS_KEPT = 16


def _fit_log_t_975() -> list[float]:
    n = _CHEBYSHEV_NODES
    nodes = [(math.cos(math.pi * (k + 0.5) / n) + 1) / 2 for k in range(n)]
    logs = [math.log(t_quantile(1 - (1 - CONFIDENCE) / 2, 1 / u)) for u in nodes]
    coefficients = [
        2 / n * math.fsum(logs[k] * math.cos(math.pi * j * (k + 0.5) / n) for k in range(n)) for j in range(n)
    ]
    coefficients[0] /= 2
    # Terms beyond the 16th are below 5e-11: dropping them keeps 1e-9 and saves a third of the time.
    return coefficients[:_TERMS_KEPT]


_LOG_T_975 = _fit_log_t_975()
_REVERSED_TAIL = tuple(reversed(_LOG_T_975[1:]))
_T_975_WHOLE: dict[float, float] = {}  # N - 1 of describe(): filled below, looked up first


def t_975(df: float) -> float:
    """The two-sided 95 % critical value t_quantile(0.975, df), for df ≥ 1 (Clenshaw's recurrence)."""
    known = _T_975_WHOLE.get(df)
    if known is not None:
        return known
    if not df >= 1:
        raise ValueError("t_975 needs df >= 1")
    x = 2 / df - 1  # u = 1/df in [0, 1] mapped to [-1, 1]
    x2 = 2 * x
    b1 = b2 = 0.0
    for c in _REVERSED_TAIL:
        b1, b2 = x2 * b1 - b2 + c, b1
    return math.exp(x * b1 - b2 + _LOG_T_975[0])


_T_975_WHOLE.update({df: t_975(df) for df in range(1, 101)})
