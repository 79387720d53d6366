"""app/history/detect.py on series made by hand: what a change is, what is never one, and what an answer says."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from app.compare.stats import DEFAULT_MIN_EFFECT
from app.history import detect
from app.history.detect import Analysis, analyse, series_max_p
from app.history.series import LATENCY, RATE

MAX_P = series_max_p(24)


def noisy(level: float, n: int, cv: float = 0.02, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    return (level * np.exp(cv * rng.standard_normal(n))).round().tolist()


def plain(values: list[float], **kwargs: float) -> Analysis:
    return analyse(values, [False] * len(values), max_p=kwargs.pop("max_p", MAX_P), **kwargs)


def test_a_step_is_a_change_with_its_ratio_p_value_and_stretches():
    values = noisy(1_000, 30, seed=1) + noisy(1_200, 30, seed=2)
    result = plain(values)
    assert [c.index for c in result.changes] == [30]
    change = result.changes[0]
    assert change.method == detect.T_TEST and change.bound is None
    assert change.ratio == pytest.approx(1.2, rel=0.02)
    assert change.ratio_ci95 is not None and change.ratio_ci95[0] < change.ratio < change.ratio_ci95[1]
    assert change.p_value < MAX_P
    assert [(s.start, s.stop, s.censored) for s in result.stretches] == [(0, 30, 0), (30, 60, 0)]
    before, after = result.stretches
    assert before.level == pytest.approx(math.exp(np.mean(np.log(values[:30]))))
    assert after.level is not None and change.ratio == pytest.approx(after.level / before.level)
    assert before.band95 is not None and before.band95[0] < 1_000 < before.band95[1]


def test_the_p_value_is_the_deciding_looks_and_the_interval_the_stretches_students_t_on_the_logs():
    values = noisy(1_000, 20, cv=0.03, seed=3) + noisy(1_100, 10, cv=0.03, seed=4)
    change = plain(values).changes[0]
    # the look that found it: the first run after which the series has the change
    seen = next(k for k in range(len(values) + 1) if plain(values[:k]).changes)
    logs = np.log(values)
    decided = scipy_stats.ttest_ind(logs[20:seen], logs[:20])  # pooled variances
    assert change.index == 20 and change.p_value == pytest.approx(decided.pvalue, rel=1e-6)
    low, high = scipy_stats.ttest_ind(logs[20:], logs[:20]).confidence_interval(0.95)
    assert change.ratio_ci95 == pytest.approx((math.exp(low), math.exp(high)), rel=1e-9)


def test_three_runs_after_a_step_are_enough():
    values = noisy(1_000, 40, cv=0.01, seed=5) + noisy(1_100, 3, cv=0.01, seed=6)
    assert [c.index for c in plain(values).changes] == [40]
    assert plain(values[:-1]).changes == ()  # two runs after it are not


@pytest.mark.parametrize("n", range(0, 6))
def test_fewer_than_six_runs_never_change(n):
    values = [100.0, 100.0, 100.0, 1_000.0, 1_000.0][:n]
    result = plain(values)
    assert result.changes == ()
    assert [(s.start, s.stop) for s in result.stretches] == ([(0, n)] if n else [])


def test_stretches_of_no_runs_are_none():
    # detect.stretches() draws the stretches of changes read from the store; a series may have no runs left
    assert detect.stretches([], [], []) == ()


def test_six_runs_can_change():
    assert [c.index for c in plain([100.0, 101.0, 99.0, 200.0, 202.0, 198.0]).changes] == [3]


@pytest.mark.parametrize("width", [1, 2])
@pytest.mark.parametrize("where", ["middle", "start"])
def test_a_spike_of_one_or_two_runs_is_not_a_change(width, where):
    values = noisy(1_000, 40, seed=7)
    at = 20 if where == "middle" else 0
    for i in range(at, at + width):
        values[i] *= 3
    assert plain(values).changes == ()


@pytest.mark.parametrize("width", [1, 2])
def test_a_spike_in_the_last_runs_is_not_a_change(width):
    # the last three runs hold the spike and one or two ordinary runs: their variance, far above the others',
    # gives Welch's t the decision (detect.VARIANCE_PRETEST_P), which a pooled variance would hide
    values = noisy(1_000, 40, seed=8)
    for i in range(40 - width, 40):
        values[i] *= 2
    assert plain(values).changes == ()


def test_one_run_thirty_percent_off_among_the_last_three_is_not_a_change():
    values = noisy(1_000, 40, seed=26)
    values[-1] *= 1.3
    assert plain(values).changes == ()


def test_a_constant_series_has_no_change_and_one_exact_stretch():
    result = plain([4_000.0] * 30)
    assert result.changes == ()
    assert result.stretches == (detect.Stretch(0, 30, pytest.approx(4_000.0), pytest.approx((4_000.0, 4_000.0)), 0),)


@pytest.mark.parametrize(
    ("values", "censored"), [([4_000.0] * 60, [False] * 60), ([None] * 60, [True] * 60), ([7.0] * 9, [False] * 9)]
)
def test_the_looks_a_flat_series_skips_find_nothing_either(values, censored):
    # analyse() skips the looks where every run is equal or +++++ (_Series.flat): the looks themselves, run on
    # such a series, find no change and test every split at p = 1
    series = detect._Series(*detect._checked(values, censored), DEFAULT_MIN_EFFECT)
    assert series.flat
    assert series.looks(0.5, [3, 5]) == []
    tests = [series.compare(0, split, len(values)) for split in range(detect.MIN_RUNS, len(values) - 2)]
    assert tests and all(test.p_value == 1.0 and not test.large_enough for test in tests)
    assert analyse(values, censored, max_p=0.5, setup_changes=[3, 5]).changes == ()


def test_zero_variance_stretches_that_differ_are_a_change_with_no_interval():
    result = plain([200.0] * 10 + [230.0] * 10)
    assert [c.index for c in result.changes] == [10]
    change = result.changes[0]
    assert change.ratio == pytest.approx(1.15)
    assert change.p_value == 0.0 and change.ratio_ci95 is None


def test_equal_values_with_float_rounding_are_no_change():
    # 0.1 three times does not average to 0.1 in floats: still no change at min_effect 1
    assert plain([0.1] * 7 + [0.1 * 3 / 3] * 7, min_effect=1.0).changes == ()


def test_a_step_under_the_minimum_effect_is_never_a_change():
    values = [1_000.0 + (i % 2) for i in range(30)] + [1_040.0 + (i % 2) for i in range(30)]
    assert plain(values).changes == ()
    assert [c.index for c in plain(values, min_effect=1.03).changes] == [30]


def test_the_default_minimum_effect_is_the_boards():
    assert analyse.__kwdefaults__["min_effect"] == DEFAULT_MIN_EFFECT


def test_the_first_runs_of_a_look_at_the_old_level_do_not_take_the_change():
    # the 3 runs after run 40 are two of the old level (high, +3 %) and the step's first: their mean is 5.4 % up,
    # far past the noise (CV 0.5 %), but without the step's run the other two are not the minimum effect up
    values = noisy(1_000, 40, cv=0.005, seed=27) + [1_030.0, 1_030.0] + [1_100.0] * 3
    assert not plain(values[:43]).changes
    assert [c.index for c in plain(values).changes] == [42]


def test_a_step_between_two_looks_starts_at_its_own_run():
    # a rank series (+++++ in some runs) first passes a look 12 runs after a split; the step came two runs after
    # that split, so its first 2 runs are of the old level: the change starts where the step does
    measured = noisy(50_000, 30, cv=0.03, seed=18) + noisy(30_000, 30, cv=0.03, seed=19)
    values, flags = censored_series(measured, [2, 7, 13], 60)
    found = next(k for k in range(60) if analyse(values[:k], flags[:k], max_p=MAX_P).changes)
    assert found - 28 in detect.LOOKS  # the look that passed began at run 28
    assert [c.index for c in analyse(values[:found], flags[:found], max_p=MAX_P).changes] == [30]


def test_each_look_has_its_share_and_together_they_stay_under_the_series_threshold():
    shares = detect.look_p(1.0)
    assert len(shares) == len(detect.LOOKS) and shares[0] == detect.FIRST_LOOK_SHARE
    assert all(later < earlier for earlier, later in zip(shares, shares[1:], strict=False))
    assert sum(shares) < 1.0
    assert detect.look_p(0.001) == pytest.approx(tuple(0.001 * share for share in shares))


@dataclass(frozen=True)
class Drawn:
    values: list[float | None]
    censored: list[bool]
    by_rank: bool
    setup_changes: list[int]
    max_p: float

    def analysed(self, runs: int | None = None) -> Analysis:
        runs = len(self.values) if runs is None else runs
        setup = [index for index in self.setup_changes if index < runs]
        return analyse(
            self.values[:runs], self.censored[:runs], max_p=self.max_p, by_rank=self.by_rank, setup_changes=setup
        )


@st.composite
def stepped_series(draw: st.DrawFn, longest: int = 80) -> Drawn:
    """A series of 6 to `longest` runs with a step somewhere: +++++ at random, or above a bound (so that a
    stretch's median can be +++++ and its ratio a bound); coarse rounding for ties and stretches of equal runs;
    setup changes, and thresholds from strict to loose."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(6, longest))
    values = np.exp(draw(st.sampled_from([0.01, 0.05, 0.3])) * rng.standard_normal(n)) * 1_000
    values[int(rng.integers(0, n)) :] *= draw(st.floats(0.5, 2.0))
    step = draw(st.sampled_from([1, 50]))
    values = (values / step).round() * step
    too_fast_above = draw(st.one_of(st.none(), st.floats(0.8, 1.6)))
    censored = (rng.random(n) < draw(st.floats(0.0, 0.4))) | (values > (too_fast_above or math.inf) * 1_000)
    shown = [None if c else float(max(v, 1.0)) for v, c in zip(values, censored, strict=True)]
    setup = sorted(set(draw(st.lists(st.integers(1, n - 1), max_size=2))))
    max_p = draw(st.sampled_from([1e-4, 1e-3, 0.01, 0.1]))
    return Drawn(shown, censored.tolist(), draw(st.booleans()), setup, max_p)


@settings(max_examples=80, deadline=None)
@given(stepped_series())
def test_what_is_found_after_a_run_is_never_undone(drawn):
    # the changes of a series' first k runs are those of its first k - 1 and at most one more after them: a change
    # once shown (on /changes, in the feed) neither moves nor goes, nor does the p that decided it
    before: tuple[detect.Change, ...] = ()
    for k in range(len(drawn.values) + 1):
        now = drawn.analysed(k).changes
        assert [(c.index, c.p_value) for c in now[: len(before)]] == [(c.index, c.p_value) for c in before]
        assert len(now) - len(before) in (0, 1)
        assert all(math.isfinite(c.ratio) and c.ratio > 0 for c in now)  # a ratio, or a bound, always
        assert all(c.index > before[-1].index for c in now[len(before) :]) if before else True
        before = now


@settings(max_examples=60, deadline=None)
@given(stepped_series(longest=90))
def test_the_screen_before_each_look_only_skips_tests_that_cannot_pass(drawn):
    # _may_pass is a necessary condition: wherever it skips a look, the look's own test does not pass; and every
    # look tested instead finds the same changes
    screen = detect._Series._may_pass

    def checked(series, start, split, stop, max_p, *rest):
        may = screen(series, start, split, stop, max_p, *rest)
        assert may or not detect._passes(series.compare(start, split, stop), max_p), (start, split, stop, max_p)
        return may

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(detect._Series, "_may_pass", checked)
        screened = drawn.analysed().changes
        patch.setattr(detect._Series, "_may_pass", lambda *args: True)
        unscreened = drawn.analysed().changes
    assert screened == unscreened


def test_the_screen_lets_through_a_step_only_welchs_t_sees():
    # three close runs after thirty noisy ones (CV 30 %): the variances differ, Welch's t decides (9.7, where the
    # pooled t is 3.0), and the screen, which takes the smaller of the two standard errors, lets the look be tested
    rng = np.random.default_rng(5)
    before = (1_000 * np.exp(0.3 * rng.standard_normal(30))).round().tolist()
    series = detect._Series(*detect._checked([*before, 1_500.0, 1_501.0, 1_499.0], [False] * 33), DEFAULT_MIN_EFFECT)
    max_p = 1e-4
    assert detect._passes(series.compare(0, 30, 33), max_p)
    screen_z = -NormalDist().inv_cdf(max_p / 2)
    assert series._may_pass(0, 30, 33, max_p, screen_z, 0, detect._Medians(series.keyed_logs))


def test_a_step_down_has_a_ratio_below_one():
    values = noisy(1_000, 20, seed=9) + noisy(700, 20, seed=10)
    change = plain(values).changes[0]
    assert change.index == 20 and change.ratio == pytest.approx(0.7, rel=0.02)


def test_two_steps_are_two_changes():
    values = noisy(1_000, 30, seed=11) + noisy(1_300, 30, seed=12) + noisy(900, 30, seed=13)
    assert [c.index for c in plain(values).changes] == [30, 60]


def test_a_long_series_finds_its_steps_where_they_are():
    values = noisy(1_000, 400, seed=14) + noisy(1_150, 400, seed=15) + noisy(1_000, 200, seed=16)
    assert [c.index for c in plain(values).changes] == [400, 800]


# ==== +++++ ====


def censored_series(measured: list[float], plus: list[int], n: int) -> tuple[list[float | None], list[bool]]:
    values: list[float | None] = list(measured)
    flags = [False] * n
    for i in plus:
        values[i], flags[i] = None, True
    return values, flags


def test_every_run_censored_is_no_change_and_no_level():
    result = analyse([None] * 20, [True] * 20, max_p=MAX_P)
    assert result.changes == ()
    assert result.stretches == (detect.Stretch(0, 20, None, None, 20),)


def test_a_censored_series_is_ranked_and_its_level_is_a_median():
    measured = noisy(50_000, 40, cv=0.05, seed=17)
    values, flags = censored_series(measured, [3, 11, 25], 40)
    result = analyse(values, flags, max_p=MAX_P)
    assert result.changes == ()
    (stretch,) = result.stretches
    assert stretch.censored == 3 and stretch.band95 is None
    # the median with the three +++++ runs above every measured one
    ordered = sorted(v for v in values if v is not None)
    assert stretch.level == pytest.approx(math.exp((math.log(ordered[19]) + math.log(ordered[20])) / 2))


def test_a_step_in_a_censored_series_is_found_by_the_rank_test():
    measured = noisy(50_000, 30, cv=0.03, seed=18) + noisy(30_000, 30, cv=0.03, seed=19)
    values, flags = censored_series(measured, [2, 7, 13], 60)
    result = analyse(values, flags, max_p=MAX_P)
    assert [c.index for c in result.changes] == [30]
    change = result.changes[0]
    assert change.method == detect.RANK and change.ratio_ci95 is None
    # the median before is measured (3 of 30 +++++), so the ratio of medians is exact, no bound
    assert change.bound is None and change.ratio == pytest.approx(0.6, rel=0.05)
    assert change.p_value < MAX_P


def test_a_median_of_censored_runs_makes_the_ratio_a_bound():
    # after the step most runs are +++++: their median is above every measured run, so the ratio is "above"
    measured = noisy(20_000, 30, cv=0.03, seed=20) + noisy(60_000, 30, cv=0.03, seed=21)
    values, flags = censored_series(measured, list(range(31, 60, 2)) + list(range(32, 60, 4)), 60)
    result = analyse(values, flags, max_p=MAX_P)
    assert [c.index for c in result.changes] == [30]
    change = result.changes[0]
    assert change.bound == "above"
    top = max(v for v in values if v is not None)
    assert change.ratio == pytest.approx(top / math.exp(np.median(np.log(measured[:30]))), rel=1e-9)


def test_no_change_when_both_medians_are_censored():
    # 60 % +++++, then every run +++++: the runs did get faster, but by how much nothing says, so no ratio can
    # reach the minimum effect
    measured = noisy(50_000, 60, cv=0.03, seed=23)
    values, flags = censored_series(measured, [i for i in range(30) if i % 5 in (0, 2, 4)] + list(range(30, 60)), 60)
    result = analyse(values, flags, max_p=MAX_P)
    assert result.changes == ()
    assert result.stretches[0].level is None and result.stretches[0].censored == 48


def test_a_censored_median_before_makes_the_ratio_a_bound_below():
    # most runs +++++, then the test slows to a measured rate every run: the ratio is at most top / median after
    measured = noisy(60_000, 30, cv=0.03, seed=24) + noisy(20_000, 30, cv=0.03, seed=25)
    values, flags = censored_series(measured, [i for i in range(30) if i % 3], 60)
    change = analyse(values, flags, max_p=MAX_P).changes[0]
    assert change.index == 30 and change.bound == "below" and change.method == detect.RANK
    top = max(v for v in values if v is not None)
    assert change.ratio == pytest.approx(math.exp(np.median(np.log(measured[30:]))) / top, rel=1e-9)


def test_a_censored_series_never_takes_a_mean_of_its_measured_runs():
    # +++++ in the later runs only, the measured ones unchanged: a mean of the measured runs would see nothing;
    # the rank test sees the +++++ runs above, as they are
    measured = noisy(50_000, 60, cv=0.03, seed=22)
    values, flags = censored_series(measured, list(range(30, 60, 2)), 60)
    result = analyse(values, flags, max_p=MAX_P)
    assert all(c.method == detect.RANK for c in result.changes)
    assert all(s.band95 is None for s in result.stretches if s.censored)


# ==== Input and the family threshold ====


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, None])
def test_a_measured_value_must_be_a_positive_number(bad):
    with pytest.raises(ValueError):
        analyse([100.0, bad, 100.0], [False, False, False], max_p=MAX_P)


def test_values_and_flags_must_match():
    with pytest.raises(ValueError):
        analyse([100.0, 100.0], [False], max_p=MAX_P)


def test_series_max_p_shares_each_measures_family_among_its_series():
    assert series_max_p(1) == detect.FAMILY_P[RATE]
    assert series_max_p(12, LATENCY) == pytest.approx(detect.FAMILY_P[LATENCY] / 12)
    assert series_max_p(24) == pytest.approx(detect.FAMILY_P[RATE] / 24)
    assert series_max_p(48) < series_max_p(24)
    with pytest.raises(ValueError):
        series_max_p(0)


def test_a_latency_needs_a_larger_change_than_a_rate():
    assert detect.series_min_effect(1.05, RATE) == 1.05
    assert detect.series_min_effect(1.05, LATENCY) == detect.LATENCY_MIN_EFFECT
    assert detect.series_min_effect(2.0, LATENCY) == 2.0
    # a clear 16 % rise of a latency (as ext4-throttled's rewrite, 182-190 ms to 211-219 ms) is no change
    values = [185.0 + (i % 5) for i in range(20)] + [214.0 + (i % 5) for i in range(10)]
    assert plain(values, min_effect=detect.series_min_effect(1.05, RATE)).changes
    assert not plain(values, min_effect=detect.series_min_effect(1.05, LATENCY)).changes


def test_three_new_runs_are_tested_against_the_stretch_before():
    # the first look at the step: the t-test of its 3 runs against the 100 before passes (p 2e-4), so the step is
    # reported at its own run
    rng = np.random.default_rng(86)
    values = list(100 * np.exp(0.03 * rng.standard_normal(103)))
    values[100:] = [v * 1.1 for v in values[100:]]
    changes = plain(values).changes
    assert [c.index for c in changes] == [100]


def test_the_newest_runs_are_not_tested_where_a_change_is_already_there():
    values = [100.0, 101.0, 99.0, 100.0] * 5 + [120.0, 121.0, 119.0, 120.0]
    assert [c.index for c in plain(values).changes] == [20]


# The rewrite rates of a real throttle halving (a CI run of tests/history/test_kernel_step_real.py, a machine of 4
# rate series): the throttle moved at the 6th run, and its first two runs wrote back partly past it.
THROTTLED_REWRITE = [11321, 10670, 10732, 10653, 13270, 7817, 7811, 5388, 5395, 5512]
FOUR_RATES_P = series_max_p(4)


def geometric_mean(values: list[int]) -> float:
    return math.exp(np.mean(np.log(values)))


def test_a_change_near_a_setup_change_moves_to_it_when_the_split_there_passes():
    alone = plain(THROTTLED_REWRITE, max_p=FOUR_RATES_P)
    assert [c.index for c in alone.changes] == [7]  # where the lower level starts
    moved = plain(THROTTLED_REWRITE, max_p=FOUR_RATES_P, setup_changes=[5])
    assert [c.index for c in moved.changes] == [5] and moved.changes[0].p_value < FOUR_RATES_P
    ratio = geometric_mean(THROTTLED_REWRITE[5:]) / geometric_mean(THROTTLED_REWRITE[:5])
    assert moved.changes[0].ratio == pytest.approx(ratio)
    assert [(s.start, s.stop) for s in moved.stretches] == [(0, 5), (5, 10)]


@pytest.mark.parametrize("setup_change", [9, 10])
def test_a_step_a_setup_change_just_after_cannot_claim_is_found_where_it_is(setup_change):
    # the step is at run 9 (index 8); a setup change one or two runs later makes its look wait for the look of the
    # same size at the setup change, whose runs before already hold the new level: that look fails, and the change
    # is reported at its own run as soon as it has
    values = [1_000.0, 1_010, 990, 1_005, 995, 1_000, 1_008, 992] + [1_200.0, 1_210, 1_190, 1_205, 1_195, 1_200] * 20
    alone = plain(values)
    waited = plain(values, setup_changes=[setup_change])
    assert [c.index for c in alone.changes] == [8]
    assert [(c.index, c.p_value) for c in waited.changes] == [(c.index, c.p_value) for c in alone.changes]
    # shown once the setup change's first look (3 runs after it) has come and gone
    found = next(k for k in range(len(values)) if plain(values[:k], setup_changes=[setup_change]).changes)
    assert found == setup_change + detect.LOOKS[0]


def test_a_setup_change_far_from_a_change_or_without_a_step_of_its_own_moves_nothing():
    values = noisy(1_000, 20, seed=1) + noisy(1_200, 20, seed=2)
    assert [c.index for c in plain(values, setup_changes=[17]).changes] == [20]  # three runs away
    assert [c.index for c in plain(values, setup_changes=[5, 35]).changes] == [20]
    # two runs early, where the split puts two runs of the old level after it: it does not pass, and nothing moves
    flat_then_step = [1_000.0] * 8 + [1_200.0] * 6
    assert [c.index for c in plain(flat_then_step, setup_changes=[6]).changes] == [8]
    assert [c.index for c in plain(flat_then_step, setup_changes=[8]).changes] == [8]
