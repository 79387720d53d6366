"""app/history/detect.py is calibrated.

- False changes: series of one unchanged setup, simulated (bonnie++'s rounding, +++++, CV 1-30 %, log-normal and
  heavier tails) and real (tests/data/aa/, tests/data/aa_censored/) stay under one per 100 runs of a configuration,
  its 24 series together, at series_max_p(12, measure) and series_min_effect (rates and latencies two families),
  counting every change ever shown while the runs came one at a time. The 40-run real series of
  tests/data/history/ do not (NOT_MET): the machine's behaviour changed under them, and the checks say where.
- Found: a 10 % step of a rate with only 3 runs after it, within one run: at CV <= 2 % in >= 95 % of series (at
  CV 3 %, what is measured); and the real throttle halving of tests/data/history/throttle-step/ at its own run.

bench/history_replay.py measures the same at a larger scale (bench/RESULTS.md, "History: change points").
"""

from __future__ import annotations

import numpy as np
import pytest

from app.history import detect
from tests.history import simulated as sim

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
    # 12 runs, as many as a team's first week: the splits of runs 4-10, each at its looks. At CV 30 %, 60
    # configurations; the bench's 400 configurations a row give the figures of bench/RESULTS.md
    rng = np.random.default_rng([12, 30, False])
    assert sim.false_changes_per_100_runs(rng, sim.Noise(0.3), 12, 60) <= FALSE_PER_100_RUNS


@pytest.mark.slow
def test_replayed_run_by_run_an_unchanged_configuration_shows_what_its_last_analysis_does():
    # every change ever shown while the runs came one at a time is one of the final analysis: none is taken back,
    # none moves (a snapshot's count is the count users meet). 10 configurations of 50 runs at CV 30 %
    noise = sim.Noise(0.3)
    ever = sim.false_changes_ever_per_100_runs(np.random.default_rng([50, 30]), noise, 50, 10)
    final = sim.false_changes_per_100_runs(np.random.default_rng([50, 30]), noise, 50, 10)
    assert ever == final <= FALSE_PER_100_RUNS


# tmpfs: every test is CPU-bound and its rates follow the CPU share the runs got while the 1-minute load fell from
# 6.4 (run 13) to 2.2 (run 40): put_block from ~0.8 to ~2.2 GB/s, most tests stepping at runs 15-23 and 29-32
# together. The bound is not met there: the machine changed under the unchanged setup. Telling such a shift
# of the machine from one of the setup needs more than one series (the configuration's tests stepping together, or
# the load the runner records, as the history's labels do).
NOT_MET = {"history/tmpfs/lines.csv": "CPU-bound rates follow the machine's load, which fell from 6.4 to 2.2"}


def changes_in(series: list[sim.Series], setup_changes: tuple[int, ...] = ()) -> set[tuple[str, int]]:
    return {(one.name, change.index) for one in series for change in sim.analysed(one, None, setup_changes).changes}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(reason=NOT_MET[name], strict=True)) if name in NOT_MET else name
        for name in sorted(sim.real_sets())
    ],
)
def test_real_series_of_one_setup_rarely_change(name):
    # at most one change per 100 runs of the configuration, all its series together (12 or 40 runs here), counting
    # every change shown while the runs came one at a time. ext4-throttled's get_block rate, a mix of 16.3 and
    # 18-20 MB/s until run 15 (its first runs partly served from the page cache), then the throttle's 16.3, is no
    # change: the mix's own spread hides a x0.87 step; its latencies, a few hundred us or 4-8 ms from run to run,
    # are compared by rank and show none either
    series = sim.real_sets()[name]
    assert len(series) >= 10
    runs = len(series[0].values)
    ever = sum(sim.changes_ever_reported(one) for one in series)
    assert 100 * ever / runs <= FALSE_PER_100_RUNS, sorted(changes_in(series))


# The same device with its throttle halved from run 21 (tests/data/history/throttle-step/): the block tests' rates
# and the rewrite and read latencies step there; get_block's rate also stepped at run 5, from runs at 19 MB/s to a
# mix with the throttle's 16.3, as on ext4-throttled. Where the runner's documents say that the throttle moved at
# run 21 (a setup change), every change is at that run; from the data alone get_block's rate and latency are found
# a run early, at run 20, the 16.3 of the old throttle's mix, which the first look (runs 20-22) takes as a step.
THROTTLE_STEP_RATES = {(name, sim.STEP_INDEX) for name in ("put_block rate", "rewrite rate", "get_block rate")}
THROTTLE_STEP_LATENCIES = {("rewrite latency", sim.STEP_INDEX), ("get_block latency", sim.STEP_INDEX)}
THROTTLE_STEP_EARLIER = {("get_block rate", 4)}


@pytest.mark.parametrize("after", [3, 6, 20])
def test_a_real_throttle_halving_is_found_at_its_run(after):
    # the rates by the third run after it; the latencies, by rank, by the sixth
    series = sim.real_step()
    assert series is not None
    runs = sim.STEP_INDEX + after
    shown = [sim.Series(s.name, s.values[:runs], s.censored[:runs]) for s in series]
    expected = THROTTLE_STEP_RATES | THROTTLE_STEP_EARLIER | (THROTTLE_STEP_LATENCIES if after >= 6 else set())
    assert changes_in(shown, setup_changes=(sim.STEP_INDEX,)) == expected
    alone = changes_in(shown)
    assert len(alone) == len(expected)
    assert all(any(name == step and abs(run - at) <= 1 for step, at in expected) for name, run in alone)


# ==== Found: a 10 % step, 3 runs after it ====


@pytest.mark.slow
@pytest.mark.parametrize(("cv", "at_least"), [(0.01, 0.99), (0.02, 0.97), (0.03, 0.92)])
def test_a_ten_percent_step_is_found_by_the_third_run_after_it(cv, at_least):
    # 100 runs before it, 3 after, a rate's MAX_P: found within one run (the first 103 runs' analysis is what was
    # shown after run 103). At CV 3 % the 95 % is not reached reliably: this seed gives 95.0 %, the bench's
    # 2,000 series 92.6 % (bench/RESULTS.md, "Change points as the runs come"; 80.5 % with 20 runs before); the check
    # holds what every seed measured. Never the wrong way.
    result = sim.found(np.random.default_rng(int(cv * 1000)), sim.Noise(cv), 1.1, 100, 3, 400, MAX_P)
    assert result.share >= at_least, f"found in {result.share:.1%}"
    assert result.wrong_way == 0
