"""Where a series steps: change points by E-divisive means with a t-test (Otava's method, app/history/_edivisive.py),
on the logarithms of the values, or on their ranks when some runs are +++++.

A series is one figure of one test on one machine and configuration, in run order (a rate, or a latency, each its
own series). `analyse()` gives its changes and the stretches between them:

- **t-test** (no +++++ in the series): E-divisive on the logs, each split tested by Student's t on the logs with
  the two stretches' variances pooled, so that three runs after a step suffice when the runs before it show the
  noise. Where the two variances clearly differ (F-test, VARIANCE_PRETEST_P) Welch's t decides instead: a pooled
  variance would let one wild run among the last three pass for a step.
- **rank** (some runs +++++): bonnie++ says of a +++++ run only that it was faster than it could time, so no mean
  includes it. E-divisive on the mid-ranks (+++++ tied above every measured run), each split tested by the exact
  rank test of the compare page (app/compare/stats.censored_rank_p). A rank test needs more runs: with N runs
  before, about 10 after a step.
- A change has at least MIN_RUNS runs on each side (a spike of one or two runs is not a change) and a ratio at
  least `min_effect` away from 1 either way (for a rank change, its ratio of medians, or the bound on it).
- The newest runs: where the search leaves no change among the last NEWEST runs of a t-test series, the best split
  MIN_RUNS..NEWEST runs from the end is tested against the stretch since the last change (`_Series.newest`).
- `max_p` is the per-series threshold: `series_max_p(n, measure)` for a machine of n series of a measure (rates
  and latencies are two families), with `series_min_effect` (at least LATENCY_MIN_EFFECT for a latency), keeps
  the machine's false changes within one per 100 runs of a configuration
  (docs/decisions.md, "Change points: E-divisive with a t-test").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from app.compare.stats import censored_rank_p, incomplete_beta, t_975, t_sf
from app.config import DEFAULT_MIN_EFFECT
from app.history._edivisive import Comparison, first_pass_p, merge, split
from app.history.series import LATENCY, RATE

MIN_RUNS = 3  # on each side of a change: one or two odd runs are a spike, not a step
WINDOW = 50  # Otava's default: split() costs O(n·WINDOW)
# Below this p of the F-test of the two stretches' variances, Welch's t rather than the pooled Student's t: one run
# 30 % off among the last three at CV 2 % gives p ~ 1e-6; three ordinary runs after a step go below 1e-4 one time in
# 10,000 (at 1e-3, one 10 % step in 200 at CV 1 % went unseen by its third run).
VARIANCE_PRETEST_P = 1e-4
# series_max_p(n, measure) = FAMILY_P[measure] / n, Bonferroni over a machine's n series of that measure: the goal
# is a count (at most one false change per 100 runs of a configuration, its 24 series together), and expected counts
# add whatever the series' dependence, so nothing sharper than Bonferroni holds it. Rates and latencies are families
# of their own because they differ in kind: bonnie++'s latency is the single worst operation of a test, a maximum,
# and a shift of it under LATENCY_MIN_EFFECT is not a storage change anyone acts on; with that minimum effect the
# latencies' false changes come only from the noisiest series (CV 30 %), so they need less of the budget and the
# rates, where a 10 % step must be found by its third run after, get more (bench/RESULTS.md, "after").
FAMILY_P = {RATE: 0.008, LATENCY: 0.002}
# The smallest change a latency series reports, whatever the minimum effect asked for rates (a ratio from 1 either
# way): a 16 % rise of a test's worst operation (ext4-throttled's rewrite, 182-190 ms to 211-219 ms) is noise of a
# maximum; the latency steps of a real storage change are x1.7-1.9 (tests/data/history/throttle-step).
LATENCY_MIN_EFFECT = 1.25
# Among the newest runs, a step E-divisive left unseen is looked for directly (_Series.newest).
NEWEST = 5
# A change this many runs or fewer from a run whose setup changed is tried at that run (_Series.at_setup_changes).
NEAR_SETUP_CHANGE = 2
# Log differences below this are float rounding of equal values, not a difference.
LOG_EPSILON = 1e-12
T_TEST = "t-test"
RANK = "rank"


@dataclass(frozen=True, slots=True)
class Change:
    index: int  # first run of the new stretch
    ratio: float  # after over before: geometric means (t-test), medians (rank)
    ratio_ci95: tuple[float, float] | None  # None where it cannot be estimated honestly
    p_value: float  # of the test that decided it
    method: str  # T_TEST or RANK
    bound: str | None = None  # "above"/"below": the true ratio is above/below `ratio`, a +++++ median's bound


@dataclass(frozen=True, slots=True)
class Stretch:
    start: int
    stop: int  # runs [start, stop)
    level: float | None  # geometric mean; with +++++ runs the median, None when that median is +++++
    band95: tuple[float, float] | None  # exp(mean ± t·sd) of the logs; None with +++++ runs or fewer than 2 runs
    censored: int  # how many of its runs were +++++


@dataclass(frozen=True, slots=True)
class Analysis:
    changes: tuple[Change, ...]
    stretches: tuple[Stretch, ...]


def series_max_p(n_series: int, measure: str = RATE) -> float:
    """The per-series p threshold for a machine of `n_series` series of `measure` (RATE or LATENCY; tests x
    configurations)."""
    if n_series < 1:
        raise ValueError("n_series must be at least 1")
    return FAMILY_P[measure] / n_series


def series_min_effect(min_effect: float, measure: str = RATE) -> float:
    """The minimum effect of a series of `measure`: `min_effect` (BONNIEBOARD_MIN_EFFECT) for a rate, at least
    LATENCY_MIN_EFFECT for a latency."""
    return max(min_effect, LATENCY_MIN_EFFECT) if measure == LATENCY else min_effect


def analyse(
    values: Sequence[float | None],
    censored: Sequence[bool],
    *,
    max_p: float,
    min_effect: float = DEFAULT_MIN_EFFECT,
    setup_changes: Sequence[int] = (),
) -> Analysis:
    """The changes of one series (in run order) and the stretches between them: a change where p < max_p (the
    family's share, series_max_p) with at least MIN_RUNS runs a side and a ratio at least `min_effect` from 1.
    values[i] > 0 (a rate, or a latency) unless censored[i] (+++++), where it is ignored and may be None.
    `setup_changes`: the indices of the runs whose setup differs from the run before (`_Series.at_setup_changes`)."""
    measured, cens = _checked(values, censored)
    n = len(cens)
    if n == 0:
        return Analysis((), ())
    series = _Series(measured, cens, min_effect)
    tested: list[tuple[int, Comparison]] = []
    # Runs all equal (or all +++++) differ nowhere: every test would give p = 1, so the search is skipped.
    if not series.flat:
        tested = merge(split(series.z, WINDOW, first_pass_p(max_p), MIN_RUNS, series.compare), n, max_p, series.compare)
        if not series.ranked:
            tested = series.newest(tested, max_p)
        if setup_changes:
            tested = series.at_setup_changes(tested, sorted(set(setup_changes)), max_p)
    bounds = [0, *(index for index, _ in tested), n]
    changes = tuple(series.change(bounds[i], bounds[i + 1], bounds[i + 2], test) for i, (_, test) in enumerate(tested))
    stretches = tuple(series.stretch(start, stop) for start, stop in zip(bounds, bounds[1:], strict=False))
    return Analysis(changes, stretches)


def _checked(values: Sequence[float | None], censored: Sequence[bool]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    if len(values) != len(censored):
        raise ValueError("values and censored differ in length")
    cens = np.asarray(censored, dtype=bool)
    measured = np.array([1.0 if c else v for v, c in zip(values, cens, strict=True)], dtype=np.float64)
    if not np.all(np.isfinite(measured) & (measured > 0)):
        raise ValueError("a measured value is not a positive number")
    return measured, cens


def _mid_ranks(measured: NDArray[np.float64], censored: NDArray[np.bool_]) -> NDArray[np.float64]:
    """Mid-ranks of the runs, every +++++ run tied above every measured one."""
    keyed = np.where(censored, np.inf, measured)
    order = np.argsort(keyed, kind="stable")
    ordered = keyed[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    sizes = np.diff(starts, append=len(ordered))
    ranks = np.empty(len(keyed))
    ranks[order] = np.repeat(starts + (sizes + 1) / 2, sizes)
    return ranks


class _Series:
    """One series' tests: what `merge` and `split` ask of [start, split) against [split, stop)."""

    def __init__(self, measured: NDArray[np.float64], censored: NDArray[np.bool_], min_effect: float) -> None:
        self.censored = censored
        self.measured = measured
        self.logs = np.log(measured)
        self.min_log_effect = math.log(min_effect)
        self.ranked = bool(censored.any())
        self.z = _mid_ranks(measured, censored) if self.ranked else self.logs
        uncensored = measured[~censored]
        self.top_log = float(np.log(uncensored.max())) if len(uncensored) else math.nan
        # O(1) moments of any stretch: sums of the logs (less their mean, for precision) and of their squares, and
        # how many times the value changed, so that a stretch of equal runs has a variance of exactly 0
        centered = self.logs - (self.logs.mean() if len(self.logs) else 0.0)
        self.sums = np.concatenate(([0.0], np.cumsum(centered)))
        self.squares = np.concatenate(([0.0], np.cumsum(centered * centered)))
        self.steps = np.concatenate(([0], np.cumsum(self.logs[1:] != self.logs[:-1])))
        self.flat = not len(self.z) or not (self.z != self.z[0]).any()

    def compare(self, start: int, split: int, stop: int) -> Comparison:
        if split - start < MIN_RUNS or stop - split < MIN_RUNS:
            return Comparison(1.0, 0.0, False)
        if self.ranked:
            return self._rank(start, split, stop)[0]
        return self._t_test(start, split, stop)[0]

    def newest(self, tested: list[tuple[int, Comparison]], max_p: float) -> list[tuple[int, Comparison]]:
        """The changes, and one among the last NEWEST runs if the search left none there and the best split of the
        stretch since the last change at MIN_RUNS..NEWEST runs from the end passes: the 3 runs after a new step are
        the fewest E-divisive can see, and where it misses them the next runs would find the step late."""
        n = len(self.logs)
        last = tested[-1][0] if tested else 0
        if n - last <= NEWEST:
            return tested
        best: tuple[int, Comparison] | None = None
        for index in range(max(last + MIN_RUNS, n - NEWEST), n - MIN_RUNS + 1):
            test = self.compare(last, index, n)
            if _passes(test, max_p) and (best is None or test.p_value < best[1].p_value):
                best = (index, test)
        if best is None:
            return tested
        if tested:
            # the last change's stretch after it now ends where the new one starts: tested again, it must still pass
            index, _ = tested[-1]
            before = self.compare(tested[-2][0] if len(tested) > 1 else 0, index, best[0])
            if not _passes(before, max_p):
                return tested
            tested = [*tested[:-1], (index, before)]
        return [*tested, best]

    def at_setup_changes(
        self, tested: list[tuple[int, Comparison]], setup_changes: list[int], max_p: float
    ) -> list[tuple[int, Comparison]]:
        """The changes, each within NEAR_SETUP_CHANGE runs of a run whose setup changed moved to that run where the
        split there passes too (and its neighbours still pass against it). The data alone can place a step a run or
        two late, when its first runs land between the two levels (a rewrite whose writeback goes partly past a
        new throttle); a setup change is where a step most likely starts, and the change is then tied to it."""
        result = list(tested)
        n = len(self.logs)
        for i, (index, _) in enumerate(result):
            if index in setup_changes:
                continue
            start = result[i - 1][0] if i > 0 else 0
            stop = result[i + 1][0] if i + 1 < len(result) else n
            best: tuple[int, Comparison] | None = None
            for run in setup_changes:
                if run == index or abs(run - index) > NEAR_SETUP_CHANGE:
                    continue
                test = self.compare(start, run, stop)
                if _passes(test, max_p) and (best is None or test.p_value < best[1].p_value):
                    best = (run, test)
            if best is None:
                continue
            before = self.compare(result[i - 2][0] if i > 1 else 0, start, best[0]) if i > 0 else None
            after = self.compare(best[0], stop, result[i + 2][0] if i + 2 < len(result) else n) if stop < n else None
            if any(test is not None and not _passes(test, max_p) for test in (before, after)):
                continue
            if before is not None:
                result[i - 1] = (start, before)
            if after is not None:
                result[i + 1] = (stop, after)
            result[i] = best
        return result

    def _large(self, log_ratio: float) -> bool:
        return abs(log_ratio) >= self.min_log_effect - LOG_EPSILON

    def _moments(self, start: int, stop: int) -> tuple[float, float]:
        """The mean of a stretch's logs (less the series' mean) and their sample variance."""
        n = stop - start
        total = float(self.sums[stop] - self.sums[start])
        if self.steps[stop - 1] == self.steps[start]:
            return total / n, 0.0
        return total / n, max(0.0, float(self.squares[stop] - self.squares[start]) - total * total / n) / (n - 1)

    def _t_test(self, start: int, split: int, stop: int) -> tuple[Comparison, tuple[float, float] | None]:
        mean1, var1 = self._moments(start, split)
        mean2, var2 = self._moments(split, stop)
        difference = mean2 - mean1
        if abs(difference) <= LOG_EPSILON:
            return Comparison(1.0, 0.0, False), None
        se, df = log_standard_error(var1, split - start, var2, stop - split)
        large = self._large(difference)
        if se == 0:
            return Comparison(0.0, abs(difference), large), None
        p_value = min(1.0, 2 * t_sf(abs(difference) / se, df))
        half = t_975(df) * se
        return Comparison(p_value, abs(difference), large), (math.exp(difference - half), math.exp(difference + half))

    def _rank(self, start: int, split: int, stop: int) -> tuple[Comparison, float, str | None]:
        left, right = slice(start, split), slice(split, stop)
        p_value = censored_rank_p(
            self.measured[right][~self.censored[right]].tolist(),
            int(self.censored[right].sum()),
            self.measured[left][~self.censored[left]].tolist(),
            int(self.censored[left].sum()),
        )
        log_ratio, bound = self._median_log_ratio(left, right)
        if p_value is None or math.isnan(log_ratio):
            return Comparison(1.0, 0.0, False), math.nan, None
        large = self._large(log_ratio) and (bound is None or (bound == "above") == (log_ratio > 0))
        return Comparison(p_value, abs(log_ratio), large), log_ratio, bound

    def _median_log(self, part: slice) -> float:
        """The log median of a stretch, +++++ runs above every measured one: inf when the median is +++++."""
        logs = np.sort(np.where(self.censored[part], np.inf, self.logs[part]))
        middle = len(logs) // 2
        return float(logs[middle] if len(logs) % 2 else (logs[middle - 1] + logs[middle]) / 2)

    def _median_log_ratio(self, left: slice, right: slice) -> tuple[float, str | None]:
        """log(median after / median before); a +++++ median is above the series' top measured run, so the ratio
        is then a bound: "above" (the true ratio is higher) or "below". NaN when both medians are +++++."""
        before, after = self._median_log(left), self._median_log(right)
        if math.isinf(before) and math.isinf(after):
            return math.nan, None
        if math.isinf(after):
            return self.top_log - before, "above"
        if math.isinf(before):
            return after - self.top_log, "below"
        return after - before, None

    def change(self, start: int, split: int, stop: int, test: Comparison) -> Change:
        if self.ranked:
            _, log_ratio, bound = self._rank(start, split, stop)
            return Change(split, math.exp(log_ratio), None, test.p_value, RANK, bound)
        _, ci95 = self._t_test(start, split, stop)
        ratio = math.exp(self._moments(split, stop)[0] - self._moments(start, split)[0])
        return Change(split, ratio, ci95, test.p_value, T_TEST)

    def stretch(self, start: int, stop: int) -> Stretch:
        censored = int(self.censored[start:stop].sum())
        if censored:
            level = self._median_log(slice(start, stop))
            return Stretch(start, stop, None if math.isinf(level) else math.exp(level), None, censored)
        logs = self.logs[start:stop]
        mean = float(logs.mean())
        if len(logs) < 2:
            return Stretch(start, stop, math.exp(mean), None, 0)
        half = t_975(len(logs) - 1) * float(logs.std(ddof=1))
        return Stretch(start, stop, math.exp(mean), (math.exp(mean - half), math.exp(mean + half)), 0)


def _passes(test: Comparison, max_p: float) -> bool:
    """A change: significant at the series' threshold and at least the minimum effect."""
    return test.large_enough and test.p_value < max_p


def log_standard_error(var1: float, n1: int, var2: float, n2: int) -> tuple[float, float]:
    """The standard error of the difference of two means of logs (variances var1, var2 of n1, n2 runs) and its
    degrees of freedom: Student's pooled variance, or Welch's when the F-test says the two variances differ
    (p < VARIANCE_PRETEST_P)."""
    if _variances_differ(var1, n1, var2, n2):
        share1, share2 = var1 / n1, var2 / n2
        se2 = share1 + share2
        df = se2 * se2 / (share1 * share1 / (n1 - 1) + share2 * share2 / (n2 - 1))
        return math.sqrt(se2), df
    pooled = ((n1 - 1) * var1 + (n2 - 1) * var2) / (n1 + n2 - 2)
    return math.sqrt(pooled * (1 / n1 + 1 / n2)), float(n1 + n2 - 2)


def _variances_differ(var1: float, n1: int, var2: float, n2: int) -> bool:
    """Two-sided F-test of equal variances at VARIANCE_PRETEST_P; one variance zero and not the other differs."""
    if var1 == 0 or var2 == 0:
        return var1 != var2
    ratio = var2 / var1
    below = incomplete_beta((n2 - 1) / 2, (n1 - 1) / 2, (n2 - 1) * ratio / ((n2 - 1) * ratio + (n1 - 1)))
    return 2 * min(below, 1 - below) < VARIANCE_PRETEST_P


def stretches(values: Sequence[float | None], censored: Sequence[bool], indices: Sequence[int]) -> tuple[Stretch, ...]:
    """The stretches between changes found before (their first runs' indices, ascending): what a page draws when
    the changes come from the store rather than from analyse()."""
    measured, cens = _checked(values, censored)
    series = _Series(measured, cens, DEFAULT_MIN_EFFECT)
    bounds = [0, *indices, len(cens)]
    return tuple(series.stretch(start, stop) for start, stop in zip(bounds, bounds[1:], strict=False) if stop > start)
