"""app/history/detect.py is Otava's method and is calibrated.

- Oracle: on uncensored series (steps, noise, no change; seeded), app/history/_edivisive.py with Otava's own test
  and min_runs=1 finds the same weak change points as Otava 0.8.0's split() (tests/history/otava_oracle/) and the
  same change points as its split() then merge() (with both neighbours re-tested, README.md there).
- False changes: series of one unchanged setup, simulated (bonnie++'s rounding, +++++, CV 1-30 %, log-normal and
  heavier tails) and real (tests/data/aa/, tests/data/aa_censored/) stay under one per 100 runs of a configuration,
  its 24 series together, at series_max_p(12, measure) and series_min_effect (rates and latencies two families). The
  40-run real series of tests/data/history/ do not (NOT_MET): the machine's behaviour changed under them, and the
  checks say where.
- Found: a 10 % step of a rate with only 3 runs after it, within one run: at CV <= 2 % in >= 95 % of series (at
  CV 3 %, what is measured); and the real throttle halving of tests/data/history/throttle-step/ at its own run.

bench/history_replay.py measures the same at a larger scale (bench/RESULTS.md, "History: change points").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from app.history import _edivisive, detect
from tests.history import simulated as sim
from tests.history.otava_oracle import analysis as otava
from tests.history.otava_oracle.calculator import PairDistanceCalculator

# ==== The oracle: Otava 0.8.0 ====


def otava_compare(series: np.ndarray, min_magnitude: float = 0.0) -> _edivisive.Compare:
    """Otava's TTestSignificanceTester.compare and change_magnitude() as a _edivisive test."""
    as_list = series.tolist()

    def compare(start: int, split: int, stop: int) -> _edivisive.Comparison:
        stats = otava.TTestSignificanceTester(1.0).compare(as_list[start:split], as_list[split:stop])
        magnitude = stats.change_magnitude()
        return _edivisive.Comparison(float(stats.pvalue), magnitude, magnitude > min_magnitude)

    return compare


# The points otava.analysis.merge re-tests after dropping the one at i: i and i + 1 of what is left, the point after
# the dropped one and the one after that, though the point before it (i - 1) is the one whose stretch grew.
RELEASED_RETESTS = (0, 1)
BOTH_NEIGHBOURS = (-1, 0)


def otava_merge(
    change_points: list[Any], series: list[float], max_pvalue: float, retested: tuple[int, int]
) -> list[Any]:
    """otava.analysis.merge (min_magnitude 0), re-testing the points at these offsets from the one dropped."""
    change_points = list(change_points)
    tester = otava.TTestSignificanceTester(max_pvalue)
    while change_points:
        weakest_cp = max(change_points, key=lambda c: c.stats.pvalue)
        if weakest_cp.stats.pvalue < max_pvalue:
            weakest_cp = min(change_points, key=lambda c: c.stats.change_magnitude())
            if weakest_cp.stats.change_magnitude() > 0.0:
                return change_points
        weakest_cp_index = change_points.index(weakest_cp)
        del change_points[weakest_cp_index]
        intervals = tester.get_intervals(change_points)
        for index in (weakest_cp_index + retested[0], weakest_cp_index + retested[1]):
            if 0 <= index < len(change_points):
                cp = change_points[index]
                change_points[index] = tester.change_point(cp.to_candidate(), series, intervals)
    return change_points


def oracle_series(seed: int) -> np.ndarray:
    """Noise around 100 with 0-3 steps of 2-40 % at random places, 12-160 runs; Otava sees the values."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(12, 161))
    level = np.full(n, 100.0)
    for _ in range(int(rng.integers(0, 4))):
        level[int(rng.integers(1, n)) :] *= 1 + rng.choice([-1, 1]) * rng.uniform(0.02, 0.4)
    noise = rng.standard_t(4, n) if seed % 3 == 0 else rng.normal(size=n)
    return level * (1 + rng.uniform(0.005, 0.1) * noise)


@pytest.mark.parametrize("seed", range(40))
def test_the_energy_statistic_picks_otavas_split(seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=int(rng.integers(2, 60)))
    prefix = _edivisive._prefix(z)
    start = int(rng.integers(0, len(z) - 1))
    stop = int(rng.integers(start + 2, len(z) + 1))
    expected = PairDistanceCalculator(z).get_candidate_change_point(slice(start, stop))
    tau, q = _edivisive.best_split(prefix, start, stop, 1)
    assert tau == expected.index
    assert q == pytest.approx(expected.qhat, rel=1e-9, abs=1e-12)


ORACLE_SERIES = 300


@pytest.mark.slow  # 300 series each through both implementations: 1-3 s
@pytest.mark.parametrize(("window", "max_p"), [(50, 0.001), (30, 0.01), (20, 1e-4)])
def test_otavas_change_points_on_uncensored_series(window, max_p):
    differ = with_changes = 0
    for seed in range(ORACLE_SERIES):
        series = oracle_series(seed)
        values = series.tolist()
        compare = otava_compare(series)
        weak = _edivisive.split(series, window, _edivisive.first_pass_p(max_p), 1, compare)
        expected_weak = otava.split(values, window, _edivisive.first_pass_p(max_p))
        assert weak == indices(expected_weak), f"seed {seed}"
        found = [index for index, _ in _edivisive.merge(weak, len(series), max_p, compare)]
        assert found == indices(otava_merge(expected_weak, values, max_p, BOTH_NEIGHBOURS)), f"seed {seed}"
        # the copy of merge() is Otava's but for the neighbours it re-tests
        released, _ = otava.compute_change_points(values, window_len=window, max_pvalue=max_p)
        assert indices(otava_merge(expected_weak, values, max_p, RELEASED_RETESTS)) == indices(released)
        differ += found != indices(released)
        with_changes += bool(found)
    assert with_changes >= 0.5 * ORACLE_SERIES  # most series have changes to find
    # measured (window, p, series that differ from Otava's release of 300): (50, 0.001, 7), (30, 0.01, 81), (20, 1e-4, 3)
    assert differ < 0.5 * ORACLE_SERIES


def indices(change_points: list[Any]) -> list[int]:
    return [int(cp.index) for cp in change_points]


# ==== False changes: one unchanged setup ====

MAX_P = detect.series_max_p(sim.PER_MEASURE)  # a rate's, on a machine of one configuration
# The bound: at most one false change per 100 runs of a configuration, its 24 series together.
FALSE_PER_100_RUNS = 1.0

# (CV, heavy tails, +++++ share): the worst rows of bench/RESULTS.md (CV 10-30 %), one with +++++, one at low CV
FALSE_CASES = [(0.30, False, 0.0), (0.10, False, 0.0), (0.10, True, 0.3), (0.03, False, 0.0)]


@pytest.mark.slow
@pytest.mark.parametrize(("cv", "heavy", "share"), FALSE_CASES)
def test_simulated_unchanged_configurations_rarely_change(cv, heavy, share):
    # 60 configurations of 100 runs (24 series each, ~1 s)
    noise = sim.Noise(cv, heavy=heavy, censored_share=share)
    rng = np.random.default_rng([int(cv * 100), heavy, int(share * 100)])
    rate = sim.false_changes_per_100_runs(rng, noise, 100, 60)
    assert rate <= FALSE_PER_100_RUNS, f"{rate:.2f} false changes per 100 runs"


def test_short_unchanged_series_rarely_change():
    # 12 runs, as many as a team's first week: a change there needs p < 7e-4 (a rate; a latency 2e-4 and x1.25) with
    # at least 3 runs a side. At CV 30 %, 60 configurations: 0.42 per 100 runs (3 changes in 720 runs); the bench's
    # 166 configurations a row give the figures of bench/RESULTS.md
    rng = np.random.default_rng([12, 30, False])
    assert sim.false_changes_per_100_runs(rng, sim.Noise(0.3), 12, 60) <= FALSE_PER_100_RUNS


# Where a real series of one setup did step: ext4-throttled's get_block rate, a mix of 16.3 and 18-20 MB/s until
# run 15 (the first runs partly served from the page cache, beating the 16 MiB/s throttle), sits at the
# throttle's 16.3 after (x0.87): the device's behaviour changed under an unchanged setup. Its rewrite latency also
# went from 182-190 ms to 211-219 ms at run 19 and stayed, x1.16: under a latency's minimum effect
# (detect.LATENCY_MIN_EFFECT), no change.
EXT4_THROTTLED = "history/ext4-throttled/lines.csv"
EXT4_THROTTLED_STEPS = {("get_block rate", 14)}
# The bound is not met on these: the system changed under the unchanged setup. ext4-throttled, above: 1
# change in 40 runs. tmpfs: every test is CPU-bound and its rates follow the CPU share the runs got while the
# 1-minute load fell from 6.4 (run 13) to 2.2 (run 40): put_block from ~0.8 to ~2.2 GB/s, most tests stepping at
# runs 15-23 and 29-32 together; 17 changes in 40 runs. Telling such a shift of the machine from one of the setup
# needs more than one series (the configuration's tests stepping together, or the load the runner records).
NOT_MET = {
    EXT4_THROTTLED: "the throttled device's get_block rate stepped at run 15 (EXT4_THROTTLED_STEPS)",
    "history/tmpfs/lines.csv": "CPU-bound rates follow the machine's load, which fell from 6.4 to 2.2",
}


def changes_in(series: list[sim.Series]) -> set[tuple[str, int]]:
    return {(s.name, change.index) for s in series for change in sim.analysed(s).changes}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(reason=NOT_MET[name], strict=True)) if name in NOT_MET else name
        for name in sorted(sim.real_sets())
    ],
)
def test_real_series_of_one_setup_rarely_change(name):
    # at most one change per 100 runs of the configuration, all its series together (12 or 40 runs here)
    series = sim.real_sets()[name]
    assert len(series) >= 10
    runs = len(series[0].values)
    found = changes_in(series)
    assert 100 * len(found) / runs <= FALSE_PER_100_RUNS, sorted(found)


def test_the_throttled_device_changes_where_its_runs_stepped():
    assert changes_in(sim.real_sets()[EXT4_THROTTLED]) == EXT4_THROTTLED_STEPS


# The same device with its throttle halved from run 21 (tests/data/history/throttle-step/): the block tests' rates
# and the rewrite and read latencies step there; get_block's rate also stepped at run 5, from runs at 19 MB/s to a
# mix with the throttle's 16.3, as on ext4-throttled.
THROTTLE_STEP_CHANGES = {(name, sim.STEP_INDEX) for name in ("put_block rate", "rewrite rate", "get_block rate")}
THROTTLE_STEP_CHANGES |= {
    ("rewrite latency", sim.STEP_INDEX),
    ("get_block latency", sim.STEP_INDEX),
    ("get_block rate", 4),
}


@pytest.mark.parametrize("after", [3, 20])
def test_a_real_throttle_halving_is_found_at_its_run_by_the_third_run_after_it(after):
    series = sim.real_step()
    assert series is not None
    runs = sim.STEP_INDEX + after
    shown = [sim.Series(s.name, s.values[:runs], s.censored[:runs]) for s in series]
    assert changes_in(shown) == THROTTLE_STEP_CHANGES


# ==== Found: a 10 % step, 3 runs after it ====


@pytest.mark.slow
@pytest.mark.parametrize(("cv", "at_least"), [(0.01, 0.99), (0.02, 0.95), (0.03, 0.90)])
def test_a_ten_percent_step_is_found_by_the_third_run_after_it(cv, at_least):
    # 100 runs before it, 3 after, a rate's MAX_P: found within one run. At CV 3 % the 95 % is not reached
    # reliably: this seed gives 96.5 %, the bench's 92.5 % (bench/RESULTS.md, "after"; 86 % with 20 runs before, 92 %
    # by the fourth run); the check holds what every seed measured. Never the wrong way.
    result = sim.found(np.random.default_rng(int(cv * 1000)), sim.Noise(cv), 1.1, 100, 3, 400, MAX_P)
    assert result.share >= at_least, f"found in {result.share:.1%}"
    assert result.wrong_way == 0
