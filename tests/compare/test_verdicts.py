"""The issue's wrong statements (#21), each with its numbers by hand, through engine.compare()."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest

from app.bonnie import STATUS_NOT_RUN, STATUS_OK, STATUS_TOO_FAST, TESTS, Result
from app.compare import engine, heat, stats
from app.compare.comparison import Cell, Comparison
from app.compare.figures import NO_SETUP, RunFigures
from app.compare.grouping import Grouping
from tests.aa_splits import CONFIG_TAG, Noise, simulated_page

CFG = Grouping(keys=("cfg",))
OTHER = Result(STATUS_OK, 1000, 50, 100)  # every other test: equal everywhere


def page(tests: dict[str, tuple[list[Result], list[Result]]]) -> list[RunFigures]:
    """A baseline and a candidate; `tests` gives a test's runs on each side (both sides the same number of runs)."""
    base_n = len(next(iter(tests.values()))[0])
    cand_n = len(next(iter(tests.values()))[1])
    runs = []
    for cfg, n, side in (("base", base_n, 0), ("cand", cand_n, 1)):
        for i in range(n):
            results = tuple(tests[t][side][i] if t in tests else OTHER for t in TESTS)
            runs.append(RunFigures(len(runs) + 1, "m", None, {"cfg": cfg}, "1.98", "2.00a", results))
    return runs


def cell(data: Comparison, test: str, measure_chart: str | None = None) -> Cell:
    for chart in data.charts:
        if (measure_chart is None and test in chart.tests and chart.key in engine.RATE_CHART_KEYS) or (
            chart.key == measure_chart
        ):
            entry = next(e for e in chart.configurations if e.configuration != data.baseline_configuration)
            return entry.tests[chart.tests.index(test)]
    raise KeyError(test)


def ok(value: float, cpu: float = 50) -> Result:
    return Result(STATUS_OK, value, cpu, 100)


def test_plus_runs_do_not_invert_a_verdict():
    # 3 of the candidate's 5 seq_create runs +++++ (faster than measurable), 2 measured at 38,600 and 38,900; the
    # baseline 39,500–40,800. The measured mean alone, 38,750 vs 40,160, is −3.5 %: it called that "worse".
    too_fast = Result(STATUS_TOO_FAST, None, None, 100)
    base = [ok(v) for v in (39_500, 40_100, 40_800, 40_200, 40_200)]
    data = engine.compare(page({"seq_create": (base, [too_fast] * 3 + [ok(38_600), ok(38_900)])}), grouping=CFG)
    got = cell(data, "seq_create")
    # the rank test (+++++ above every measured rate) has a p, and it joins the page's Holm family; the
    # measured runs' mean decides nothing
    assert got.verdict == "unknown"
    assert got.p_value == round(
        stats.censored_rank_p([38_600, 38_900], 3, [39_500, 40_100, 40_800, 40_200, 40_200], 0), 4
    )
    assert "3 of 5 runs faster than measurable here, 0 of 5 in the baseline" in data.summary
    assert got.bound_ratio is None and got.too_fast_above is None  # the line's size is not known here
    assert "worse" not in data.summary


def test_identical_integer_repeats_are_not_certain():
    # seeks 200, 200, 200 vs 202, 202, 202: +1.0 %, below ×1.05 and with a CI of non-zero width
    data = engine.compare(page({"seeks": ([ok(200)] * 3, [ok(202)] * 3)}), grouping=CFG)
    got = cell(data, "seeks")
    assert got.verdict == "within_noise"
    assert got.ratio_ci95[0] < 1.01 < got.ratio_ci95[1]
    # %CPU 99, 99, 99 vs 98, 98, 98 was "better"
    data = engine.compare(page({"put_block": ([ok(1000, 99)] * 3, [ok(1000, 98)] * 3)}), grouping=CFG)
    # (%CPU has no verdict of its own now; CPU per MiB, 99 vs 98 % for the same 1,000 KiB/s, is within noise)
    got = cell(data, "put_block", "cpu")
    assert got.verdict is None and got.cpu_per_work_verdict == "within_noise"


def test_a_clear_change_is_still_better():
    # put_block 100,000 ± 1 % vs 130,000 ± 1 % at N = 5: +30 %, p ≈ 1e-9 raw, still far under 0.05 after Holm
    base = [ok(v) for v in (99_000, 100_000, 101_000, 100_500, 99_500)]
    cand = [ok(v) for v in (129_000, 130_000, 131_000, 130_500, 129_500)]
    data = engine.compare(page({"put_block": (base, cand)}), grouping=CFG)
    got = cell(data, "put_block")
    assert got.verdict == "better" and got.p_adjusted < 0.05 and got.geo_ratio > 1.29
    assert data.min_effect == 1.05 and data.error_control == "holm"


def sized(runs: list[RunFigures], num_files: int) -> list[RunFigures]:
    """`runs` with bonnie++ -n num_files (and a 1 GiB file) in their setup."""
    setup = dataclasses.replace(NO_SETUP, file_size_mib=1024, file_test=(num_files, 0, 0, 0, None))
    return [dataclasses.replace(run, setup=setup) for run in runs]


def test_plus_runs_against_measured_ones_give_a_bounded_verdict():
    # The numbers: -n 8, so a +++++ seq_create created 8 × 1024 files in under 0.5 s: above 16,384 files/s.
    # The baseline's 954 files/s against runs all +++++ is at least ×17 either way. With 6 runs a side the rank test
    # (every +++++ run above every measured one) gives p = 2 / C(12, 6) = 0.00216, 0.026 with the page's 12 rate
    # verdicts counted (Holm's first step): a verdict.
    too_fast = Result(STATUS_TOO_FAST, None, None, 100)
    measured = [ok(v) for v in (950, 954, 958, 951, 955, 953)]
    data = engine.compare(sized(page({"seq_create": (measured, [too_fast] * 6)}), 8), grouping=CFG)
    got = cell(data, "seq_create")
    assert got.too_fast_above == 16_384 and got.bound_ratio == round(16_384 / 958, 4)
    assert got.p_value == pytest.approx(2 / math.comb(12, 6), rel=1e-3)
    assert got.p_adjusted == pytest.approx(12 * 2 / math.comb(12, 6), rel=1e-3)
    assert got.verdict == "better"
    assert "seq. create at least ×17 faster (6 of 6 runs faster than measurable (> 16,384 files/s) here" in data.summary
    data = engine.compare(sized(page({"seq_create": ([too_fast] * 6, measured)}), 8), grouping=CFG)
    got = cell(data, "seq_create")
    assert got.verdict == "worse" and got.bound_ratio == round(958 / 16_384, 4)
    assert "seq. create at least ×17 slower" in data.summary


@pytest.mark.parametrize("zero", ["a measured run of the +++++ side", "every run of the measured side"])
def test_a_run_that_measured_0_beside_plus_runs_bounds_nothing(zero):
    # A bound over or under 0 says nothing (it divided by zero, and the page answered 500).
    too_fast = Result(STATUS_TOO_FAST, None, None, 100)
    if zero == "a measured run of the +++++ side":
        sides = ([too_fast] * 4 + [ok(0), ok(1000)], [ok(v) for v in (950, 954, 958, 951, 955, 953)])
    else:
        sides = ([ok(0)] * 6, [too_fast] * 6)
    data = engine.compare(sized(page({"seq_create": sides}), 8), grouping=CFG)
    assert cell(data, "seq_create").bound_ratio is None


def test_plus_runs_separated_by_chance_are_no_verdict():
    # 3 v 3 with every run of one side beyond every run of the other happens by chance once in C(6, 3) / 2 = 10 pages
    # of unchanged runs: the rank test's p is 0.1 before the page's other verdicts are counted, so the bound alone
    # says nothing; the page says it cannot tell, with the bound these runs show.
    too_fast = Result(STATUS_TOO_FAST, None, None, 100)
    measured = [ok(v) for v in (950, 954, 958)]
    data = engine.compare(sized(page({"seq_create": (measured, [too_fast] * 3)}), 8), grouping=CFG)
    got = cell(data, "seq_create")
    assert got.bound_ratio == round(16_384 / 958, 4) and got.p_value == 0.1 and got.p_adjusted == 1.0
    assert got.verdict == "unknown"
    assert "seq. create cannot tell (3 v 3 runs; at least ×17 faster in these runs)" in data.summary


def test_plus_runs_decide_only_when_every_run_clears_the_other_side():
    # -n 16: +++++ is above 32,768 files/s. 3 of 5 +++++ and 38,600, 38,900 measured against 39,500–40,800: the
    # +++++ runs could be 33,000 or 90,000: unknown, and the summary says where the +++++ runs are.
    too_fast = Result(STATUS_TOO_FAST, None, None, 100)
    base = [ok(v) for v in (39_500, 40_100, 40_800, 40_200, 40_200)]
    cand = [too_fast] * 3 + [ok(38_600), ok(38_900)]
    data = engine.compare(sized(page({"seq_create": (base, cand)}), 16), grouping=CFG)
    got = cell(data, "seq_create")
    assert (got.verdict, got.bound_ratio, got.too_fast_above) == ("unknown", None, 32_768)
    assert "3 of 5 runs faster than measurable (> 32,768 files/s) here, 0 of 5 in the baseline" in data.summary
    # measured runs at ×1.03 of the baseline's highest: separated, but under the minimum effect
    cand = [too_fast] * 3 + [ok(42_100), ok(42_500)]
    got = cell(engine.compare(sized(page({"seq_create": (base, cand)}), 64), grouping=CFG), "seq_create")
    assert got.verdict == "unknown" and 1 < got.bound_ratio < 1.05
    # and beyond it (×1.10): at least ×1.1 faster whatever the +++++ runs were, once the rank test holds on the
    # page: with 6 runs a side (5 v 5 separated is p = 2 / 252 = 0.0079, 0.095 with the page's 12 verdicts)
    cand = [too_fast] * 3 + [ok(45_000), ok(46_000)]
    got = cell(engine.compare(sized(page({"seq_create": (base, cand)}), 64), grouping=CFG), "seq_create")
    assert got.verdict == "unknown" and got.bound_ratio == round(45_000 / 40_800, 4)
    base6, cand6 = base + [ok(40_000)], cand + [ok(45_500)]
    got = cell(engine.compare(sized(page({"seq_create": (base6, cand6)}), 64), grouping=CFG), "seq_create")
    assert got.verdict == "better" and got.bound_ratio == round(45_000 / 40_800, 4)


# ==== %CPU judged per unit of work ====


def test_more_throughput_at_the_same_cpu_per_kib_is_not_worse():
    # put_block +20 % (99,000/100,000/101,000 -> 118,800/120,000/121,200) at 50 -> 60 %CPU: CPU per MiB is
    # 50 × 1024 / 100 / 100,000 = 0.00512 CPU-s/MiB on both sides (60 / 120,000 = 50 / 100,000): the same work per
    # CPU-second. %CPU +10 points was a %CPU "worse"; now %CPU has no verdict, and CPU per MiB is ×1.0000.
    base = [ok(v, 50) for v in (99_000, 100_000, 101_000)]
    cand = [ok(v, 60) for v in (118_800, 120_000, 121_200)]
    data = engine.compare(page({"put_block": (base, cand)}), grouping=CFG)
    cpu = cell(data, "put_block", "cpu")
    assert cpu.verdict is None and cpu.p_value is None and cpu.mean == 60
    assert cpu.work_unit == "CPU-s/MiB" and cpu.cpu_per_work == pytest.approx(0.00512, rel=2e-3)
    assert cpu.cpu_per_work_ratio == 1.0 and cpu.cpu_per_work_verdict == "within_noise"
    assert cell(data, "put_block").verdict == "better"
    assert "worse" not in data.summary and "CPU per unit of work" not in data.summary


def test_cpu_per_seek_is_judged_not_the_lower_cpu_of_a_slower_run():
    # ext4 sync vs async seeks: 10,000/10,100/9,900 seeks/s at 50 %CPU against 1,150/1,160/1,140 at 10 %CPU. %CPU
    # fell 40 points (it was "better") while seeks fell 88.5 %. CPU per 1,000 seeks: 50 × 10 / 10,000 = 0.05
    # against 10 × 10 / 1,150 = 0.08696: the geometric means' ratio is (10 / 50) × 9,999.67 / 1,149.97 = 1.7391,
    # +73.9 %, worse.
    base = [ok(v, 50) for v in (10_000, 10_100, 9_900)]
    cand = [ok(v, 10) for v in (1_150, 1_160, 1_140)]
    data = engine.compare(page({"seeks": (base, cand)}), grouping=CFG)
    cpu = cell(data, "seeks", "cpu")
    assert cpu.verdict is None and cpu.work_unit == "CPU-s/1,000 seeks"
    assert cpu.cpu_per_work_ratio == pytest.approx(1.7391, abs=1e-4)
    assert cpu.cpu_per_work_verdict == "worse" and cpu.cpu_per_work_p_adjusted < 0.05
    assert cell(data, "seeks").verdict == "worse"
    assert "CPU per unit of work: random seeks +73.9 % CPU-s/1,000 seeks (95 % CI +" in data.summary
    # the heat table shows %CPU as it is, then CPU per unit of work with its mark
    table = heat.heat_table(data)
    seeks_cpu = next(i for i, c in enumerate(table["columns"]) if (c["test"], c["measure"]) == ("seeks", engine.CPU))
    assert table["rows"][1]["cells"][seeks_cpu]["relative"] == "−40 pts · per 1,000 seeks +73.9 % ▼"


def with_versions(runs: list[RunFigures], format_version: str, bonnie_version: str | None) -> list[RunFigures]:
    return [dataclasses.replace(run, format_version=format_version, bonnie_version=bonnie_version) for run in runs]


def hint_codes(data: dict, test: str) -> list[str]:
    return [h["code"] for h in cell(data, test).hints]


def test_bonnie_19x_seek_cpu_is_no_cpu_bound_hint_unless_the_runner_says_so():
    # bonnie++ 2.00a prints each seeker thread's view of the whole process: 375 %CPU on a 2-core VM says nothing of
    # a limit. The same figure from bonnie++ 1.03 (one process, no threads) is a cpu_bound hint, and so is the
    # runner's own evidence.
    sides = ([ok(v, 375) for v in (200, 202, 198)], [ok(v, 370) for v in (201, 199, 203)])
    assert "cpu_bound" not in hint_codes(engine.compare(page({"seeks": sides}), grouping=CFG), "seeks")
    old = with_versions(page({"seeks": sides}), "1.03", None)
    assert "cpu_bound" in hint_codes(engine.compare(old, grouping=CFG), "seeks")
    evidence = {"seeks": {"code": "cpu_bound", "text": "the seekers used 1.9 of 2 cores"}}
    runner = [dataclasses.replace(run, limiters=evidence) for run in page({"seeks": sides})]
    assert hint_codes(engine.compare(runner, grouping=CFG), "seeks")[0] == "cpu_bound"
    # and the summary no longer calls 1.9x seeks "CPU-bound in both"
    assert "CPU-bound" not in engine.compare(page({"seeks": sides}), grouping=CFG).summary


# ==== Words that overstate ====


def test_a_wide_interval_is_not_unchanged():
    # random seeks, bonnie++ 1.03 (its seek %CPU is the process's own: CPU-bound at 99 %), 1,000/2,000/3,000 against
    # 400/860/1,320: the means fall 57.0 % (860 / 2,000), the geometric means 57.7 %: (400 × 860 × 1,320)^(1/3) =
    # 768.6 over (1,000 × 2,000 × 3,000)^(1/3) = 1,817.1, ×0.423, with a CI from about ×0.1 to ×1.8: within noise,
    # CPU-bound in both, and not "unchanged".
    base = [ok(v, 99) for v in (1_000, 2_000, 3_000)]
    cand = [ok(v, 99) for v in (400, 860, 1_320)]
    data = engine.compare(with_versions(page({"seeks": (base, cand)}), "1.03", None), grouping=CFG)
    got = cell(data, "seeks")
    assert got.ratio == 0.43 and got.geo_ratio == pytest.approx(0.423, abs=1e-3)
    assert got.verdict == "within_noise" and got.ratio_ci95[0] < 0.2 and got.ratio_ci95[1] > 1.5
    assert "random seeks unchanged" not in data.summary
    # far past the 10 % a reader cares about: said as low power, not as "within noise"
    assert "random seeks −57.7 % (cannot tell with 3 runs a side: N = 3 cannot tell changes smaller than ×100 here" in (
        data.summary
    )
    assert "random seeks CPU-bound in both (99 % CPU)" in data.summary
    assert got.detectable_pct > 100 and got.runs_needed > 50


def test_unchanged_is_said_only_when_the_interval_lies_inside_the_minimum_effect():
    # put_block 100,000 ± 0.1 % against 100,500 ± 0.1 %, N = 5: +0.5 %, 95 % CI about ±0.15 %: inside ×1.05 either way
    base = [ok(v) for v in (99_900, 100_000, 100_100, 99_950, 100_050)]
    cand = [ok(v) for v in (100_400, 100_500, 100_600, 100_450, 100_550)]
    data = engine.compare(page({"put_block": (base, cand)}), grouping=CFG)
    assert "block write +0.5 % (unchanged: 95 % CI +0.4 % to +0.6 %, inside ×1.05 either way)" in data.summary


def not_run() -> Result:
    return Result(STATUS_NOT_RUN, None, None, None)


def test_one_test_with_one_measured_run_does_not_lead_with_single_runs():
    # Every configuration has N = 3; the candidate's put_block ran once (two lines without it): that item says so,
    # and the paragraph does not open with "Single runs cannot tell ..."
    base = [ok(v) for v in (99_000, 100_000, 101_000)]
    cand = [ok(110_000), not_run(), not_run()]
    data = engine.compare(page({"put_block": (base, cand)}), grouping=CFG)
    assert cell(data, "put_block").verdict == "unknown"
    assert not data.summary.startswith("Single runs")
    assert "block write +10.0 % (no verdict: one measured run here)" in data.summary


def test_a_value_of_0_is_not_too_few_runs():
    # put_block 0, 1,000, 1,010 against 990, 1,000, 1,010: three measured runs each, but a log ratio needs rates
    # above 0; the mean ratio is (2,010 / 3) / 1,000 = 0.67, −33.0 %
    base = [ok(v) for v in (990, 1_000, 1_010)]
    cand = [ok(v) for v in (0, 1_000, 1_010)]
    data = engine.compare(page({"put_block": (base, cand)}), grouping=CFG)
    assert cell(data, "put_block").verdict == "unknown"
    assert "too few runs" not in data.summary
    assert "block write −33.0 % (no verdict: a run measured 0 here, and a ratio of rates needs them above 0)" in (
        data.summary
    )


# ==== What a within-noise cell could have seen ====


def test_within_noise_cells_say_what_they_could_have_seen_and_how_many_runs_a_10_percent_change_needs():
    # put_block at CV ≈ 5 %, N = 3, +2 %: within noise. The page holds 12 rate verdicts with a p-value (every test
    # of the candidate), so a lone real change must pass Holm's first step, t at 1 − 0.05 / 24, at the Welch df the
    # runs happen to show. From the sides' variances of the logs plus rounding: the SE of the log difference and the
    # first side's share of SE²; the change found 80 % of the time is the shift δ·SE where stats.welch_power is 0.8
    # (tests/compare/test_power.py holds that to simulation), and never less than the noncentral t at the df seen gives.
    scipy_optimize = pytest.importorskip("scipy.optimize")
    base_values, cand_values = (95_000, 100_000, 105_000), (97_000, 102_000, 107_100)
    data = engine.compare(
        page({"put_block": ([ok(v) for v in base_values], [ok(v) for v in cand_values])}), grouping=CFG
    )
    got = cell(data, "put_block")
    assert got.verdict == "within_noise"

    def log_var(values):
        logs = [math.log(v) for v in values]
        mean = sum(logs) / 3
        return sum((x - mean) ** 2 for x in logs) / 2 + sum(1 / (12 * v * v) for v in values) / 3

    var_b, var_c = log_var(base_values), log_var(cand_values)
    se = math.sqrt(var_b / 3 + var_c / 3)
    share = stats._share(var_c / (var_b + var_c))
    m = 12  # put_block and the 11 identical tests: each has a p-value
    delta = scipy_optimize.brentq(lambda d: stats.welch_power(d, 2, 2, share, m) - 0.8, 1, 1_000)
    assert got.detectable_pct == pytest.approx(100 * math.expm1(delta * se), rel=0.01)
    df = (var_b / 3 + var_c / 3) ** 2 / ((var_b / 3) ** 2 / 2 + (var_c / 3) ** 2 / 2)
    nct_delta = scipy_optimize.brentq(lambda d: stats.power(d, df, m) - 0.8, 1, 1_000)  # scipy's nct: test_power.py
    assert delta >= nct_delta
    # the runs a side: the smallest n at which a 10 % change is called 80 % of the time, found by counting up
    n = 2
    while (
        stats.welch_power(
            math.log(1.1) / math.sqrt((var_b + var_c) / n),
            n - 1,
            n - 1,
            share,
            m,
            math.log(1.05) / math.sqrt((var_b + var_c) / n),
        )
        < 0.8
    ):
        n += 1
    assert got.runs_needed == n
    assert f"a 10 % change needs {got.runs_needed} runs a side" in data.summary
    # a cell judged better or worse carries neither
    clear = engine.compare(
        page({"put_block": ([ok(v) for v in base_values], [ok(v * 2) for v in base_values])}), grouping=CFG
    )
    assert cell(clear, "put_block").verdict == "better"
    assert cell(clear, "put_block").detectable_pct is None and cell(clear, "put_block").runs_needed is None


def test_the_pages_critical_t_is_scipys_to_within_its_stated_accuracy():
    # exact (df rounded to 0.1) below 30 degrees of freedom, Cornish–Fisher from 30 on: within 0.3 % of scipy
    scipy_stats = pytest.importorskip("scipy.stats")
    for m in (1, 2, 12, 60, 600):
        for df in (2.0, 4.3, 29.9, 30.0, 31.7, 200.0, 1e5):
            expected = scipy_stats.t.ppf(1 - 0.05 / (2 * m), round(df, 1))
            assert stats.page_t(df, m) == pytest.approx(expected, rel=3e-3), (m, df)


def test_verdicts_are_the_same_without_power_figures():
    # engine.compare(power_figures=False) is what the verdicts' calibration pays for: every verdict and adjusted p
    # must be the page's own, with only detectable_pct and runs_needed left out (and the words that state them)
    rng = random.Random("power figures")
    stated = 0
    for configurations, n, cv, effect in [(2, 3, 0.05, None), (2, 5, 0.05, 1.2), (6, 2, 0.3, 1.5), (3, 4, 0.02, 1.06)]:
        for _ in range(10):
            noise = Noise(cv, rounded=True, censored=rng.random() < 0.5)
            page = simulated_page(rng, noise, configurations, n, None if effect is None else (1, 0, effect))
            kept = engine.compare(page, baseline=page[0].id, grouping=Grouping(keys=(CONFIG_TAG,)))
            bare = engine.compare(page, baseline=page[0].id, grouping=Grouping(keys=(CONFIG_TAG,)), power_figures=False)
            for chart, bare_chart in zip(kept.charts, bare.charts, strict=True):
                for entry, bare_entry in zip(chart.configurations, bare_chart.configurations, strict=True):
                    for cell, bare_cell in zip(entry.tests, bare_entry.tests, strict=True):
                        stated += cell.runs_needed is not None
                        assert bare_cell.detectable_pct is None and bare_cell.runs_needed is None
                        figureless = dataclasses.replace(cell, detectable_pct=None, runs_needed=None)
                        assert dataclasses.replace(bare_cell) == figureless
    assert stated > 100  # the pages had within-noise cells whose figures the option leaves out
