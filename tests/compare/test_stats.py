"""app.compare.stats against numbers worked out by hand (the arithmetic is written beside each), against scipy
(a test-only dependency), and as properties (Hypothesis): a verdict never claims a difference between
a group and itself, a large shift always gives one, and fewer than two values never give one."""

import itertools
import math

import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from app.compare import stats


def test_describe_by_hand():
    # values 10, 12, 14: mean 12, median 12; squared deviations 4 + 0 + 4 = 8, variance 8 / 2 = 4, SD 2;
    # CV 2 / 12 = 16.67 %. The CI is of the geometric mean, on the logs: ln 10, ln 12, ln 14 have mean 2.475516
    # (geometric mean 11.8878) and variance 0.0283695, plus the rounding variance (1/100 + 1/144 + 1/196) / 36 =
    # 0.00061239; SE sqrt(0.0289819 / 3) = 0.098288; t(0.975, 2) = 4.302653: exp(2.475516 ± 0.422898) = 7.7882 to 18.145
    d = stats.describe([10, 12, 14])
    assert (d.n, d.mean, d.median, d.sd) == (3, 12, 12, 2)
    assert d.cv_pct == pytest.approx(100 * 2 / 12)
    assert d.geo_mean == pytest.approx(11.8878, abs=1e-4)
    assert d.ci95 == pytest.approx((7.7882, 18.145), abs=1e-3)
    # even N: the median is the mean of the middle two (2 and 3); one value has no spread
    assert stats.describe([4, 1, 3, 2]).median == 2.5
    one = stats.describe([7])
    assert (one.n, one.mean, one.sd, one.cv_pct, one.ci95, one.geo_mean) == (1, 7, None, None, None, 7)
    assert stats.describe([]) == stats.NOTHING


def test_ratio_of_means_by_hand():
    # 120, 121, 119 vs 100, 101, 99: ratio of means 120 / 100 = 1.2.
    # Logs: means 4.787474, 4.605137 (differing by 0.182337); sample variances of the logs 6.945e-05 and 1.0003e-04,
    # squared SEs 2.3149e-05 and 3.3343e-05, sum 5.6492e-05 (SE 0.0075161); Welch df =
    # 5.6492e-05^2 / (2.3149e-05^2 / 2 + 3.3343e-05^2 / 2) = 3.8716; t(0.975, 3.8716) = 2.8110;
    # CI exp(0.182337 ± 2.8110 * 0.0075161) = exp(0.161209), exp(0.203465) = 1.17492, 1.22565.
    r = stats.ratio_of_means([120, 121, 119], [100, 101, 99], quantum=None)  # Welch alone
    assert r.ratio == pytest.approx(1.2)
    assert r.ci95 == pytest.approx((1.17492, 1.22565), abs=5e-5)
    assert stats.verdict(r.ci95, higher_is_better=True) == stats.BETTER
    assert stats.verdict(r.ci95, higher_is_better=False) == stats.WORSE  # latency, %CPU: lower is better
    # identical repeats without rounding variance: the ratio is exact, and there is nothing to test
    exact = stats.ratio_of_means([5, 5], [4, 4], quantum=None)
    assert exact.ci95 == (1.25, 1.25) and exact.p_value is None


def test_ratio_without_enough_values_or_with_zero():
    assert stats.ratio_of_means([3], [1, 2]) == stats.Ratio(2.0, None)  # 3 / mean(1, 2) = 3 / 1.5 = 2; N = 1: no CI
    assert stats.ratio_of_means([1, 2], []) == stats.Ratio(None, None)
    assert stats.ratio_of_means([1, 2], [0, 0]) == stats.Ratio(None, None)  # the baseline's mean is 0
    assert stats.ratio_of_means([0, 2], [1, 1]).ci95 is None  # a log needs positive values
    assert stats.verdict(None, True) == stats.UNKNOWN


def test_welch_matches_scipy_on_the_logs():
    a, b = [51.2, 53.9, 49.8, 52.0], [40.1, 44.7, 41.9]
    r = stats.ratio_of_means(a, b, quantum=None)
    result = scipy.stats.ttest_ind([math.log(x) for x in a], [math.log(x) for x in b], equal_var=False)
    low, high = result.confidence_interval(0.95)
    assert r.ci95 == pytest.approx((math.exp(low), math.exp(high)), rel=1e-9)
    assert r.p_value == pytest.approx(result.pvalue, rel=1e-9)


@pytest.mark.parametrize("df", [1, 1.5, 2, 2.5, 3, 3.8716, 4, 5, 7.3, 10, 29, 30, 31, 100, 1e3, 1e4])
def test_t_quantiles_match_scipy(df):
    # (a comparison of at most 100 runs has df < 200; at a million, lgamma's large terms cancel to ~1e-9)
    assert stats.t_quantile(0.975, df) == pytest.approx(scipy.stats.t.ppf(0.975, df), rel=1e-9)
    assert stats.t_975(df) == pytest.approx(scipy.stats.t.ppf(0.975, df), rel=1e-9)
    assert stats.t_quantile(0.9, df) == pytest.approx(scipy.stats.t.ppf(0.9, df), rel=1e-9)


def test_t_975_by_hand_at_known_points():
    # df = 1 is the Cauchy distribution: tan(pi * 0.475) = 12.7062; df = 2: 0.95 / sqrt(2 * 0.975 * 0.025) = 4.3027
    assert stats.t_975(1) == pytest.approx(math.tan(math.pi * 0.475), rel=1e-9)
    assert stats.t_975(2) == pytest.approx(0.95 / math.sqrt(2 * 0.975 * 0.025), rel=1e-9)
    assert stats.t_975(1e12) == pytest.approx(1.959963984540054, rel=1e-9)  # the normal quantile
    with pytest.raises(ValueError):
        stats.t_975(0.5)


def test_incomplete_beta_by_hand():
    # I_x(1, 1) = x; I_x(2, 1) = x^2; I_x(1, 2) = 1 - (1 - x)^2
    assert stats.incomplete_beta(1, 1, 0.3) == pytest.approx(0.3)
    assert stats.incomplete_beta(2, 1, 0.3) == pytest.approx(0.09)
    assert stats.incomplete_beta(1, 2, 0.3) == pytest.approx(1 - 0.49)


positive = st.floats(min_value=1.0, max_value=1e7, allow_nan=False, allow_infinity=False)
samples = st.lists(positive, min_size=2, max_size=8)


@settings(max_examples=200, deadline=None)
@given(samples, st.booleans())
def test_a_group_against_itself_is_never_better_or_worse(values, higher_is_better):
    r = stats.ratio_of_means(values, list(values))
    assert stats.verdict(r.ci95, higher_is_better) == stats.WITHIN_NOISE


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(min_value=100.0, max_value=110.0), min_size=2, max_size=8),
    st.lists(st.floats(min_value=100.0, max_value=110.0), min_size=2, max_size=8),
)
def test_a_large_shift_flips_the_verdict(base, other):
    # values within ±5 % of each other: a factor of 10 is far outside any CI of their ratio
    up = stats.ratio_of_means([10 * v for v in other], base)
    down = stats.ratio_of_means([v / 10 for v in other], base)
    assert stats.verdict(up.ci95, True) == stats.BETTER and stats.verdict(down.ci95, True) == stats.WORSE
    assert stats.verdict(up.ci95, False) == stats.WORSE and stats.verdict(down.ci95, False) == stats.BETTER


@given(st.lists(positive, min_size=0, max_size=1), samples, st.booleans())
def test_fewer_than_two_values_on_a_side_is_unknown(few, many, higher_is_better):
    for values, baseline in ((few, many), (many, few)):
        assert stats.verdict(stats.ratio_of_means(values, baseline).ci95, higher_is_better) == stats.UNKNOWN


@given(samples)
def test_the_ci_of_the_geometric_mean_holds_it_and_is_positive(values):
    d = stats.describe(values)
    assert 0 <= d.ci95[0] <= d.geo_mean * (1 + 1e-12) and d.geo_mean <= d.ci95[1] * (1 + 1e-12)
    assert min(values) <= d.median <= max(values)


@given(st.lists(st.floats(min_value=-1e6, max_value=1e7, allow_nan=False), max_size=8))
def test_describe_with_moments_is_describe_and_moments(values):
    assert stats.describe_with_moments(values) == (stats.describe(values), stats.moments(values))


def test_identical_whole_number_repeats_keep_their_rounding_variance():
    # seeks 200, 200, 200 vs 202, 202, 202: printed as whole numbers, each value is known to ±0.5, a variance of
    # 1/12; on the log scale 1 / (12 * 202²) = 2.0423e-6 and 1 / (12 * 200²) = 2.0833e-6, each / 3: SE² of the
    # difference 1.3752e-6, SE 0.0011727. ln(202 / 200) = 0.0099503; df = 1.3752e-6² / ((6.8076e-7² + 6.9444e-7²) / 2)
    # = 3.9999; t = 8.485, two-sided p = 0.00106; CI exp(0.0099503 ± 2.7765 * 0.0011727) = ×1.00672 to ×1.01329.
    r = stats.ratio_of_means([202, 202, 202], [200, 200, 200])
    assert r.ci95 == pytest.approx((1.00672, 1.01329), abs=2e-5)
    assert r.p_value == pytest.approx(0.00106, rel=0.01)
    # +1.0 % is under the minimum effect (×1.05): never better, however small its p
    assert stats.decide(r.geo_ratio, r.p_value, True, stats.DEFAULT_MIN_EFFECT) == stats.WITHIN_NOISE
    # %CPU 99, 99, 99 vs 98, 98, 98: also within noise, a CI of non-zero width
    cpu = stats.ratio_of_means([98, 98, 98], [99, 99, 99])
    assert cpu.ci95[0] < cpu.ci95[1] and stats.decide(cpu.geo_ratio, cpu.p_value, False, 1.05) == stats.WITHIN_NOISE


def test_latency_steps_follow_bonnies_printing():
    # us below 0.1 s, ms below 100 s, s beyond (docs/bonnie-csv-format.md §1.3)
    assert [stats.latency_step_us(v) for v in (99_999, 100_000, 99_999_999, 100_000_000)] == [1, 1_000, 1_000, 1e6]
    assert stats.whole_number(12) == 1 and stats.whole_number(200.5) == 0.1


def test_a_spread_out_configuration_has_a_positive_interval():
    # put_block 5,000, 60,000 and 120,000 KiB/s: Student's t gave 61,667 ± 4.3027 × 57,510 / sqrt(3) = −81,200 to
    # 204,500, a negative rate. On the logs: geometric mean 33,019, CI 33,019 ×/÷ exp(4.3027 × SE) — above zero.
    d = stats.describe([5_000, 60_000, 120_000])
    assert d.ci95[0] > 0 and d.ci95[0] < d.geo_mean < d.ci95[1]
    assert d.geo_mean == pytest.approx((5_000 * 60_000 * 120_000) ** (1 / 3))


def test_holm_by_hand():
    # p = 0.01, 0.04, 0.03, 0.005 (m = 4): sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04,
    # made non-decreasing: 0.02, 0.03, 0.06, 0.06; back in the order given:
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.5, 0.9]) == [1.0, 1.0] and stats.holm([]) == []


@pytest.mark.parametrize(
    ("geo_ratio", "p", "higher_is_better", "expected"),
    [
        (1.20, 0.001, True, stats.BETTER),
        (1.20, 0.001, False, stats.WORSE),
        (1 / 1.2, 0.001, True, stats.WORSE),
        (1.049, 1e-9, True, stats.WITHIN_NOISE),  # below the minimum effect
        (1 / 1.049, 1e-9, False, stats.WITHIN_NOISE),
        (1.20, 0.05, True, stats.WITHIN_NOISE),  # adjusted p not under 0.05
    ],
)
def test_decide_needs_both_the_page_wide_p_and_the_minimum_effect(geo_ratio, p, higher_is_better, expected):
    assert stats.decide(geo_ratio, p, higher_is_better, 1.05) == expected


# ==== +++++ inside the page's error control: the rank test ====


def test_separated_plus_runs_are_as_likely_as_chance_makes_them():
    # every +++++ run above every measured one: 2 of C(2n, n) orderings are that separated, either way
    # (1/3 at N = 2, 1/10 at N = 3, 1/35 at N = 4, 2/924 at N = 6)
    for n, expected in ((2, 1 / 3), (3, 1 / 10), (4, 1 / 35), (6, 2 / 924)):
        assert stats.censored_rank_p([float(v) for v in range(1, n + 1)], 0, [], n) == pytest.approx(expected)
    # every run +++++, or a side of one run: nothing to rank
    assert stats.censored_rank_p([], 3, [], 3) is None and stats.censored_rank_p([5.0], 0, [], 3) is None


def test_the_rank_test_is_scipys_mann_whitney_with_plus_runs_tied_above_everything():
    scipy_stats = pytest.importorskip("scipy.stats")
    big = 1e12  # a stand-in above every measured rate, tied among the +++++ runs
    cases = [
        ([120.0, 130.0, 125.0], 0, [100.0, 110.0, 140.0], 0),  # no +++++, no ties: scipy's exact
        ([120.0, 130.0], 2, [100.0, 110.0, 140.0], 1),
        ([50.0, 50.0, 60.0], 3, [55.0, 70.0, 70.0, 80.0], 0),  # ties among the measured too
    ]
    for side, side_plus, base, base_plus in cases:
        got = stats.censored_rank_p(side, side_plus, base, base_plus)
        x, y = side + [big] * side_plus, base + [big] * base_plus
        if side_plus or base_plus or len(set(x + y)) < len(x + y):
            # ties: every way of dealing the pooled runs' mid-ranks, a rank sum as far from its mean as the one seen
            ranks = scipy_stats.rankdata(x + y)
            centre = len(x) * (len(x + y) + 1) / 2
            seen = abs(ranks[: len(x)].sum() - centre)
            deals = list(itertools.combinations(ranks, len(x)))
            expected = sum(abs(sum(deal) - centre) >= seen - 1e-9 for deal in deals) / len(deals)
        else:
            expected = scipy_stats.mannwhitneyu(x, y, method="exact").pvalue
        assert got == pytest.approx(expected, rel=1e-9), (side, side_plus, base, base_plus)
    # beyond EXACT_RANK_RUNS: the normal approximation with the ties' correction, as scipy's asymptotic one
    side = [float(v) for v in range(100, 116)]
    base = [float(v) + 0.5 for v in range(104, 116)]
    got = stats.censored_rank_p(side, 2, base, 4)
    x, y = side + [big] * 2, base + [big] * 4
    expected = scipy_stats.mannwhitneyu(x, y, method="asymptotic", use_continuity=False).pvalue
    assert len(x + y) > stats.EXACT_RANK_RUNS and got == pytest.approx(expected, rel=1e-6)
