"""Where a series steps: change points found as the runs come, each split tested at a few fixed looks, by a
t-test on the logarithms of the values or by a rank test.

A series is one figure of one test on one machine and configuration, in run order (a rate, or a latency, each its
own series). `analyse()` gives its changes and the stretches between them, as they would have been found had the
runs arrived one at a time (`_Series.looks`):

- **Looks.** After each run, every split that now has LOOKS[j] runs after it (3, 6, 12, ... 96) is tested against the
  stretch since the last change, at look_p(max_p)[j], the largest look first; the first that passes is a change,
  placed at its split or a later one among the runs it saw, where the test passes with the smallest p
  (`_latest_start`), or at a run near it whose setup changed (`_at_setup_change`). A split is tested at most
  len(LOOKS) times and its thresholds add up to less than max_p, so however often a series is looked at, a series of
  one setup shows at most max_p false changes a run in expectation; and what is found after a run stays: a change,
  once shown on /changes or in the feed, neither moves nor goes (while the machine's series and their thresholds stay:
  see analyse()).
- **t-test** (a rate, over runs with no +++++): Student's t on the logs with the two stretches' variances pooled,
  so that three runs after a step suffice when the runs before it show the noise. Where the two variances clearly
  differ (F-test, VARIANCE_PRETEST_P) Welch's t decides instead: a pooled variance would let one wild run among the
  last three pass for a step. The runs after, their farthest run left out, must still differ by the minimum effect
  (`_large_without_extreme`): a step is in most of its runs, not carried by one.
- **rank** (a latency, or runs some of which are +++++): the exact rank test of the compare page
  (app/compare/stats.censored_rank_p), +++++ tied above every measured run, and medians for the ratio and the
  levels. bonnie++ says of a +++++ run only that it was faster than it could time, so no mean includes it; a
  latency is a test's slowest operation, whose logs no t-test fits (`series_by_rank`). A rank test needs more runs:
  with 20 runs before, about 6 after a clean step, 12 after most.
- A change has at least MIN_RUNS runs on each side (a spike of one or two runs is not a change) and a ratio at
  least `min_effect` away from 1 either way (for a rank change, its ratio of medians, or the bound on it).
- `max_p` is the per-series threshold: `series_max_p(n, measure)` for a machine of n series of a measure (rates
  and latencies are two families), with `series_min_effect` (at least LATENCY_MIN_EFFECT for a latency), keeps
  the machine's false changes under one per 100 runs of a configuration
  (docs/decisions.md, "Change points as the runs come").
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from app.compare.stats import EXACT_RANK_RUNS, censored_rank_p, incomplete_beta, rank_sum_z, t_975, t_sf
from app.config import DEFAULT_MIN_EFFECT
from app.history.series import LATENCY, RATE

MIN_RUNS = 3  # on each side of a change: one or two odd runs are a spike, not a step
# Each split is tested when LOOKS[j] runs follow it (and never again after the last): the first look gets
# FIRST_LOOK_SHARE of the series' threshold, each later look half what the one before it had of the rest (look_p).
# A split is so tested at most len(LOOKS) times, whatever the series' length: its thresholds add up to less than
# max_p, so a series of one setup shows at most max_p false changes a run in expectation (as far as the tests hold
# their levels), however often it is looked at.
LOOKS = (3, 6, 12, 24, 48, 96)
FIRST_LOOK_SHARE = 0.8
# _may_pass's screen lets through what is within float rounding of its bound; the test itself decides.
SCREEN_SLACK = 1 - 1e-9
# Below this p of the F-test of the two stretches' variances, Welch's t rather than the pooled Student's t: one run
# 30 % off among the last three at CV 2 % gives p ~ 1e-6; three ordinary runs after a step go below 1e-4 one time in
# 10,000 (at 1e-3, one 10 % step in 200 at CV 1 % went unseen by its third run).
VARIANCE_PRETEST_P = 1e-4
# series_max_p(n, measure) = FAMILY_P[measure] / n, Bonferroni over a machine's n series of that measure: the goal
# is a count (at most one false change per 100 runs of a configuration, its 24 series together), and expected counts
# add whatever the series' dependence, so nothing sharper than Bonferroni holds it. Each run brings each split to
# at most one look, so a configuration's expected false changes are at most the sum of FAMILY_P a run: 0.9 per 100
# runs, a tenth under the goal for what the tests' levels owe to approximation (bonnie++'s rounding, Welch's
# pretest). Rates and latencies are families of their own because they differ in kind: bonnie++'s latency is the
# single worst operation of a test, and a shift of it under LATENCY_MIN_EFFECT is not a storage change anyone acts
# on; the rates, where a 10 % step must be found by its third run after, get the larger share.
FAMILY_P = {RATE: 0.0075, LATENCY: 0.0015}
# The smallest change a latency series reports, whatever the minimum effect asked for rates (a ratio from 1 either
# way): a 16 % rise of a test's worst operation (ext4-throttled's rewrite, 182-190 ms to 211-219 ms) is noise of a
# maximum; the latency steps of a real storage change are x1.7-1.9 (tests/data/history/throttle-step).
LATENCY_MIN_EFFECT = 1.25
# A change this many runs or fewer from a run whose setup changed is tried at that run (_Series._at_setup_change).
NEAR_SETUP_CHANGE = 2
# Log differences below this are float rounding of equal values, not a difference.
LOG_EPSILON = 1e-12
T_TEST = "t-test"
RANK = "rank"


@dataclass(frozen=True, slots=True)
class Comparison:
    """What a test says of runs [start, split) against [split, stop)."""

    p_value: float
    large_enough: bool  # at least the minimum effect
    start: int
    stop: int


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


def look_p(max_p: float) -> tuple[float, ...]:
    """The threshold of each of LOOKS at a split, for a series whose threshold is `max_p`: together under max_p."""
    rest = max_p * (1 - FIRST_LOOK_SHARE)
    return (max_p * FIRST_LOOK_SHARE, *(rest / 2**look for look in range(1, len(LOOKS))))


def series_min_effect(min_effect: float, measure: str = RATE) -> float:
    """The minimum effect of a series of `measure`: `min_effect` (BONNIEBOARD_MIN_EFFECT) for a rate, at least
    LATENCY_MIN_EFFECT for a latency."""
    return max(min_effect, LATENCY_MIN_EFFECT) if measure == LATENCY else min_effect


def series_by_rank(measure: str) -> bool:
    """A latency series is compared by its ranks: bonnie++'s latency is a test's single slowest operation, a
    maximum, often of two kinds of run (a few hundred us, or a journal commit's 4-8 ms), whose logs no t-test fits."""
    return measure == LATENCY


def analyse(
    values: Sequence[float | None],
    censored: Sequence[bool],
    *,
    max_p: float,
    min_effect: float = DEFAULT_MIN_EFFECT,
    setup_changes: Sequence[int] = (),
    by_rank: bool = False,
) -> Analysis:
    """The changes of one series (in run order) and the stretches between them: a change where p < max_p (the
    family's share, series_max_p) with at least MIN_RUNS runs a side and a ratio at least `min_effect` from 1.
    values[i] > 0 (a rate, or a latency) unless censored[i] (+++++), where it is ignored and may be None.
    `setup_changes`: the indices of the runs whose setup differs from the run before (`_Series._at_setup_change`).
    A function of the runs given, and of the changes found after each of them: the changes of a series are those
    of its first n - 1 runs, and perhaps one more (`_Series.looks`), at the same runs with the same p; their ratios
    are the stretches' as they are now. With another max_p (a machine's new configuration or test changes every
    series' share) the series is another one."""
    measured, cens = _checked(values, censored)
    n = len(cens)
    if n == 0:
        return Analysis((), ())
    series = _Series(measured, cens, min_effect, by_rank=by_rank)
    tested = [] if series.flat else series.looks(max_p, sorted(set(setup_changes)))
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


class _Series:
    """One series' tests of [start, split) against [split, stop), and its changes as the runs came (`looks`)."""

    def __init__(
        self, measured: NDArray[np.float64], censored: NDArray[np.bool_], min_effect: float, *, by_rank: bool = False
    ) -> None:
        self.by_rank = by_rank
        self.censored = censored
        self.measured = measured
        self.logs = np.log(measured)
        self.min_log_effect = math.log(min_effect)
        self.censored_count = np.concatenate(([0], np.cumsum(censored))).tolist()
        # O(1) moments of any stretch: sums of the logs (less the first, for precision: not their mean, so that a
        # stretch's moments do not change with the runs after it) and of their squares, and how many times the
        # value changed, so that a stretch of equal runs has a variance of exactly 0
        self.centre = float(self.logs[0]) if len(self.logs) else 0.0
        centered = self.logs - self.centre
        self.sums = np.concatenate(([0.0], np.cumsum(centered)))
        self.squares = np.concatenate(([0.0], np.cumsum(centered * centered)))
        self.steps = np.concatenate(([0], np.cumsum(self.logs[1:] != self.logs[:-1])))
        # the same sums as floats, for the screen each look runs before its test (_may_pass)
        self.sum_list, self.square_list = self.sums.tolist(), self.squares.tolist()
        self.keyed = np.where(censored, np.inf, measured)  # +++++ tied above every measured run
        self.keyed_logs = np.where(censored, np.inf, self.logs)
        # runs all equal (or all +++++) differ nowhere: every test would give p = 1
        self.flat = not len(self.keyed) or not (self.keyed != self.keyed[0]).any()

    def ranked(self, start: int, stop: int) -> bool:
        """Runs [start, stop) are compared by their ranks: some are +++++, and no mean may include or leave them."""
        return self.by_rank or self.censored_count[stop] > self.censored_count[start]

    def compare(self, start: int, split: int, stop: int) -> Comparison:
        if split - start < MIN_RUNS or stop - split < MIN_RUNS:
            return Comparison(1.0, False, start, stop)
        if self.ranked(start, stop):
            return self._rank(start, split, stop)[0]
        return self._t_test(start, split, stop)[0]

    def looks(self, max_p: float, setup_changes: Sequence[int]) -> list[tuple[int, Comparison]]:
        """The changes as the runs came: after each run `stop`, each split that LOOKS[j] runs now follow is tested
        against the stretch since the last change found, at look_p(max_p)[j], the largest look first (it has seen
        the most runs of a step it finds, so `_latest_start` among them places it best); the first passing split
        is a change (moved to a run whose setup changed near it where the split there passes too,
        `_at_setup_change`). What is found after a run is never undone by a later one."""
        thresholds = look_p(max_p)
        screens = [-NormalDist().inv_cdf(p / 2) for p in thresholds]
        largest_first = list(reversed(list(enumerate(LOOKS))))
        found: list[tuple[int, Comparison]] = []
        last = 0
        # a change that passed a look one or two runs before a setup change, kept until the look of the same size at
        # the setup change has come: (its split, its test, the run that look comes after)
        waiting: tuple[int, Comparison, int] | None = None
        ties = _Ties(self.keyed)
        medians = _Medians(self.keyed_logs)
        for stop in range(2 * MIN_RUNS, len(self.logs) + 1):
            ties.cover(last, stop)
            for look, after in largest_first:
                split = stop - after
                if split - last < MIN_RUNS:
                    continue
                if not self._may_pass(last, split, stop, thresholds[look], screens[look], ties.total, medians):
                    continue
                test = self.compare(last, split, stop)
                if _passes(test, thresholds[look]):
                    split, test = self._latest_start(last, split, stop, test, thresholds[look])
                    later = [run for run in setup_changes if split < run <= split + NEAR_SETUP_CHANGE]
                    if later and stop - later[0] < after:
                        # the look of this size at the setup change just after the split decides instead
                        waiting = waiting or (split, test, later[0] + after)
                        break
                    found.append(self._at_setup_change(last, split, stop, test, thresholds[look], setup_changes))
                    last, waiting = found[-1][0], None
                    break
            if waiting is not None and stop >= waiting[2]:
                # the setup change's own look did not pass: the change is where the data put it
                found.append(waiting[:2])
                last, waiting = waiting[0], None
        return found

    def _may_pass(
        self, start: int, split: int, stop: int, max_p: float, screen_z: float, ties: int, medians: _Medians
    ) -> bool:
        """False where [start, split) against [split, stop) cannot pass at max_p: its change is under the minimum
        effect, or (t-test) its |t| under `screen_z`, the normal quantile of max_p, which no t quantile is below,
        whether the variances are pooled or Welch's; or (rank) its runs are too few for any order of them to pass
        (`_rank_can_pass`, `ties` the sum of t^3 - t over the tied groups of [start, stop)), or its ratio of
        `medians` is under the minimum effect, or its z under screen_z. Cheap, so that a look costs a test only where
        one can pass."""
        if self.ranked(start, stop):
            if not _rank_can_pass(stop - start, stop - split, ties, max_p, screen_z):
                return False
            before, after = medians.since(start, split), medians.window(split, stop)
            log_ratio, bound = self._ratio_of_medians(before, after, start, stop)
            if math.isnan(log_ratio) or not self._large_bounded(log_ratio, bound):
                return False
            return self._rank_z(start, split, stop, ties) >= screen_z * SCREEN_SLACK
        sums, squares = self.sum_list, self.square_list
        n1, n2 = split - start, stop - split
        total1, total2 = sums[split] - sums[start], sums[stop] - sums[split]
        difference = total2 / n2 - total1 / n1
        if not self._large(difference):
            return False
        var1 = max(0.0, squares[split] - squares[start] - total1 * total1 / n1) / (n1 - 1)
        var2 = max(0.0, squares[stop] - squares[split] - total2 * total2 / n2) / (n2 - 1)
        pooled = ((n1 - 1) * var1 + (n2 - 1) * var2) / (n1 + n2 - 2) * (1 / n1 + 1 / n2)
        se2 = min(pooled, var1 / n1 + var2 / n2)
        return difference * difference >= screen_z * screen_z * se2 * SCREEN_SLACK

    def _rank_z(self, start: int, split: int, stop: int, ties: int) -> float:
        """The z of censored_rank_p's normal approximation for [split, stop) against [start, split), which is that
        test's own beyond EXACT_RANK_RUNS runs (inf up to them: the exact test is then the cheaper one); the ranks in
        numpy, `ties` the sum of t^3 - t over [start, stop)'s tied groups."""
        runs = stop - start
        if runs <= EXACT_RANK_RUNS:
            return math.inf
        _, group, sizes = np.unique(self.keyed[start:stop], return_inverse=True, return_counts=True)
        doubled_ranks = 2 * (np.cumsum(sizes) - sizes) + sizes + 1
        after = stop - split
        distance = abs(float(doubled_ranks[group[split - start :]].sum()) - after * (runs + 1))
        return rank_sum_z(distance, after, runs - after, ties) or 0.0

    def _latest_start(
        self, start: int, split: int, stop: int, test: Comparison, max_p: float
    ) -> tuple[int, Comparison]:
        """Where the step that passed a look at `split` starts: the split among those up to MIN_RUNS runs from
        `stop` with the smallest p that passes too. A look's runs may begin with runs of the old level, when the
        step came between two looks; the split's own look will not come, as the change is found now."""
        best = (split, test)
        for later in range(split + 1, stop - MIN_RUNS + 1):
            moved = self.compare(start, later, stop)
            if _passes(moved, max_p) and moved.p_value < best[1].p_value:
                best = (later, moved)
        return best

    def _at_setup_change(
        self, start: int, split: int, stop: int, test: Comparison, max_p: float, setup_changes: Sequence[int]
    ) -> tuple[int, Comparison]:
        """The change at `split`, or at the run within NEAR_SETUP_CHANGE of it whose setup changed, where the split
        there passes too (the smallest p of those). The data alone can place a step a run or two off, when its
        first runs land between the two levels (a rewrite whose writeback goes partly past a new throttle); a
        setup change is where a step most likely starts, and the change is then tied to it."""
        best = (split, test)
        for run in setup_changes:
            if run == split or abs(run - split) > NEAR_SETUP_CHANGE:
                continue
            if run - start < MIN_RUNS or stop - run < MIN_RUNS:
                continue
            moved = self.compare(start, run, stop)
            if _passes(moved, max_p) and (best[0] == split or moved.p_value < best[1].p_value):
                best = (run, moved)
        return best

    def _large(self, log_ratio: float) -> bool:
        return abs(log_ratio) >= self.min_log_effect - LOG_EPSILON

    def _large_bounded(self, log_ratio: float, bound: str | None) -> bool:
        """At least the minimum effect, a bound ("above"/"below") only where it points away from no change."""
        return self._large(log_ratio) and (bound is None or (bound == "above") == (log_ratio > 0))

    def _moments(self, start: int, stop: int) -> tuple[float, float]:
        """The mean of a stretch's logs (less the first run's) and their sample variance."""
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
            return Comparison(1.0, False, start, stop), None
        se, df = log_standard_error(var1, split - start, var2, stop - split)
        large = self._large(difference) and self._large_without_extreme(mean1, split, stop, difference)
        if se == 0:
            return Comparison(0.0, large, start, stop), None
        p_value = min(1.0, 2 * t_sf(abs(difference) / se, df))
        half = t_975(df) * se
        return Comparison(p_value, large, start, stop), (math.exp(difference - half), math.exp(difference + half))

    def _large_without_extreme(self, mean_before: float, split: int, stop: int, difference: float) -> bool:
        """The stretch after, its run farthest in the change's direction left out, still differs from the one
        before by the minimum effect that way: a step is in most of its runs, not carried by one."""
        logs = self.logs[split:stop] - self.centre
        extreme = float(logs.max() if difference > 0 else logs.min())
        rest = (float(logs.sum()) - extreme) / (stop - split - 1) - mean_before
        return (rest > 0) == (difference > 0) and self._large(rest)

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
            return Comparison(1.0, False, start, stop), math.nan, None
        return Comparison(p_value, self._large_bounded(log_ratio, bound), start, stop), log_ratio, bound

    def _median_log(self, part: slice) -> float:
        """The log median of a stretch, +++++ runs above every measured one: inf when the median is +++++."""
        logs = np.sort(self.keyed_logs[part])
        middle = len(logs) // 2
        return float(logs[middle] if len(logs) % 2 else (logs[middle - 1] + logs[middle]) / 2)

    def _median_log_ratio(self, left: slice, right: slice) -> tuple[float, str | None]:
        return self._ratio_of_medians(self._median_log(left), self._median_log(right), left.start, right.stop)

    def _ratio_of_medians(self, before: float, after: float, start: int, stop: int) -> tuple[float, str | None]:
        """log(median after / median before) of [start, split) and [split, stop), given their log medians; a +++++
        median is above the top measured run of the two stretches, so the ratio is then a bound: "above" (the true
        ratio is higher) or "below". NaN when both medians are +++++. Only the two stretches' runs count, not the
        series' later ones: a change found stays as it was found."""
        if math.isinf(before) and math.isinf(after):
            return math.nan, None
        if not (math.isinf(before) or math.isinf(after)):
            return after - before, None
        both = self.keyed_logs[start:stop]
        top = float(both[np.isfinite(both)].max())
        return (top - before, "above") if math.isinf(after) else (after - top, "below")

    def change(self, start: int, split: int, stop: int, test: Comparison) -> Change:
        if self.ranked(start, stop):
            _, log_ratio, bound = self._rank(start, split, stop)
            if math.isnan(log_ratio):
                # both stretches' medians are +++++ now: the ratio is the one the look that found it saw
                _, log_ratio, bound = self._rank(test.start, split, test.stop)
            return Change(split, math.exp(log_ratio), None, test.p_value, RANK, bound)
        _, ci95 = self._t_test(start, split, stop)
        ratio = math.exp(self._moments(split, stop)[0] - self._moments(start, split)[0])
        return Change(split, ratio, ci95, test.p_value, T_TEST)

    def stretch(self, start: int, stop: int) -> Stretch:
        censored = int(self.censored[start:stop].sum())
        if censored or self.by_rank:
            level = self._median_log(slice(start, stop))
            return Stretch(start, stop, None if math.isinf(level) else math.exp(level), None, censored)
        logs = self.logs[start:stop]
        mean = float(logs.mean())
        if len(logs) < 2:
            return Stretch(start, stop, math.exp(mean), None, 0)
        half = t_975(len(logs) - 1) * float(logs.std(ddof=1))
        return Stretch(start, stop, math.exp(mean), (math.exp(mean - half), math.exp(mean + half)), 0)


class _Medians:
    """The log medians a rank look screens by (+++++ as inf, above every measured run): of every window of LOOKS[j]
    runs, in numpy once a series, and of the runs since the last change, kept as they grow (two heaps)."""

    CHUNK = 4096  # windows a numpy median takes at once: a window of 96 runs copies 96 values each

    def __init__(self, keyed_logs: NDArray[np.float64]) -> None:
        self.keyed_logs = keyed_logs
        self.windows: dict[int, list[float]] = {}
        self.start = -1
        self.known: list[float] = []  # medians of [start, start + 1 + i)
        self.low: list[float] = []  # the lower half, negated: a max-heap
        self.high: list[float] = []  # the upper half: a min-heap

    def window(self, split: int, stop: int) -> float:
        """The median of [split, stop)."""
        size = stop - split
        medians = self.windows.get(size)
        if medians is None:
            views = np.lib.stride_tricks.sliding_window_view(self.keyed_logs, size)
            medians = [
                value
                for first in range(0, len(views), self.CHUNK)
                for value in np.median(views[first : first + self.CHUNK], axis=1).tolist()
            ]
            self.windows[size] = medians
        return medians[split]

    def since(self, start: int, split: int) -> float:
        """The median of [start, split), split > start."""
        if start != self.start:
            self.start, self.known, self.low, self.high = start, [], [], []
        while len(self.known) < split - start:
            self._add(float(self.keyed_logs[start + len(self.known)]))
        return self.known[split - start - 1]

    def _add(self, value: float) -> None:
        if self.low and value <= -self.low[0]:
            heapq.heappush(self.low, -value)
        else:
            heapq.heappush(self.high, value)
        if len(self.low) > len(self.high) + 1:
            heapq.heappush(self.high, -heapq.heappop(self.low))
        elif len(self.high) > len(self.low):
            heapq.heappush(self.low, -heapq.heappop(self.high))
        middle = -self.low[0]
        self.known.append(middle if len(self.low) > len(self.high) else (middle + self.high[0]) / 2)


class _Ties:
    """The sum of t^3 - t over the groups of equal runs (+++++ one group) of a stretch [start, stop), kept as the
    stretch grows run by run: what censored_rank_p's variance takes off for ties."""

    def __init__(self, keyed: NDArray[np.float64]) -> None:
        self.keyed = keyed.tolist()
        self.start = self.stop = 0
        self.sizes: Counter[float] = Counter()
        self.total = 0

    def cover(self, start: int, stop: int) -> None:
        if start != self.start:
            self.start = self.stop = start
            self.sizes.clear()
            self.total = 0
        for value in self.keyed[self.stop : stop]:
            size = self.sizes[value]
            self.total += 3 * size * size + 3 * size  # (t + 1)^3 - (t + 1) - (t^3 - t)
            self.sizes[value] = size + 1
        self.stop = stop


def _rank_can_pass(runs: int, after: int, ties: int, max_p: float, screen_z: float) -> bool:
    """Whether any order of `runs` runs, `after` of them after the split, can pass censored_rank_p at max_p: up to
    EXACT_RANK_RUNS its p is at least 1 / C(runs, after) (the observed order is one of them); beyond, its z is at most
    that of every run after the split above every run before it."""
    if runs <= EXACT_RANK_RUNS:
        return 1 / math.comb(runs, after) < max_p
    # every run after above every run before: the doubled distance is n1 n2
    z = rank_sum_z(after * (runs - after), after, runs - after, ties)
    return z is not None and z >= screen_z * SCREEN_SLACK


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


def stretches(
    values: Sequence[float | None], censored: Sequence[bool], indices: Sequence[int], *, by_rank: bool = False
) -> tuple[Stretch, ...]:
    """The stretches between changes found before (their first runs' indices, ascending): what a page draws when
    the changes come from the store rather than from analyse()."""
    measured, cens = _checked(values, censored)
    series = _Series(measured, cens, DEFAULT_MIN_EFFECT, by_rank=by_rank)
    bounds = [0, *indices, len(cens)]
    return tuple(series.stretch(start, stop) for start, stop in zip(bounds, bounds[1:], strict=False) if stop > start)
