"""The issue's wrong statements (#21), each with its numbers by hand, through engine.compare()."""

from __future__ import annotations

import dataclasses

from app.compare import engine
from app.compare.figures import NO_SETUP, RunFigures
from app.compare.grouping import Grouping
from app.ingest.parsing import OK, TESTS, TOO_FAST, Result

CFG = Grouping(keys=("cfg",))
OTHER = Result(OK, 1000, 50, 100)  # every other test: equal everywhere


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


def cell(data: dict, test: str, measure_chart: str | None = None) -> dict:
    for chart in data["charts"]:
        if (measure_chart is None and test in chart["tests"] and chart["key"] in engine.RATE_CHART_KEYS) or (
            chart["key"] == measure_chart
        ):
            entry = next(e for e in chart["configurations"] if e["configuration"] != data["baseline_configuration"])
            return entry["tests"][chart["tests"].index(test)]
    raise KeyError(test)


def ok(value: float, cpu: float = 50) -> Result:
    return Result(OK, value, cpu, 100)


def test_plus_runs_do_not_invert_a_verdict():
    # 3 of the candidate's 5 seq_create runs +++++ (faster than measurable), 2 measured at 38,600 and 38,900; the
    # baseline 39,500–40,800. The measured mean alone, 38,750 vs 40,160, is −3.5 %: it called that "worse".
    too_fast = Result(TOO_FAST, None, None, 100)
    base = [ok(v) for v in (39_500, 40_100, 40_800, 40_200, 40_200)]
    data = engine.compare(page({"seq_create": (base, [too_fast] * 3 + [ok(38_600), ok(38_900)])}), grouping=CFG)
    got = cell(data, "seq_create")
    assert got["verdict"] == "unknown" and got["p_value"] is None
    assert "3 of 5 runs faster than measurable here, 0 of 5 in the baseline" in data["summary"]
    assert got["bound_ratio"] is None and got["too_fast_above"] is None  # the line's size is not known here
    assert "worse" not in data["summary"]


def test_identical_integer_repeats_are_not_certain():
    # seeks 200, 200, 200 vs 202, 202, 202: +1.0 %, below ×1.05 and with a CI of non-zero width
    data = engine.compare(page({"seeks": ([ok(200)] * 3, [ok(202)] * 3)}), grouping=CFG)
    got = cell(data, "seeks")
    assert got["verdict"] == "within_noise"
    assert got["ratio_ci95"][0] < 1.01 < got["ratio_ci95"][1]
    # %CPU 99, 99, 99 vs 98, 98, 98 was "better"
    data = engine.compare(page({"put_block": ([ok(1000, 99)] * 3, [ok(1000, 98)] * 3)}), grouping=CFG)
    assert cell(data, "put_block", "cpu")["verdict"] == "within_noise"


def test_a_clear_change_is_still_better():
    # put_block 100,000 ± 1 % vs 130,000 ± 1 % at N = 5: +30 %, p ≈ 1e-9 raw, still far under 0.05 after Holm
    base = [ok(v) for v in (99_000, 100_000, 101_000, 100_500, 99_500)]
    cand = [ok(v) for v in (129_000, 130_000, 131_000, 130_500, 129_500)]
    data = engine.compare(page({"put_block": (base, cand)}), grouping=CFG)
    got = cell(data, "put_block")
    assert got["verdict"] == "better" and got["p_adjusted"] < 0.05 and got["geo_ratio"] > 1.29
    assert data["min_effect"] == 1.05 and data["error_control"] == "holm"


def sized(runs: list[RunFigures], num_files: int) -> list[RunFigures]:
    """`runs` with bonnie++ -n num_files (and a 1 GiB file) in their setup."""
    setup = dataclasses.replace(NO_SETUP, file_size_mib=1024, file_test=(num_files, 0, 0, 0, None))
    return [dataclasses.replace(run, setup=setup) for run in runs]


def test_plus_runs_against_measured_ones_give_a_bounded_verdict():
    # The numbers: -n 8, so a +++++ seq_create created 8 × 1024 files in under 0.5 s: above 16,384 files/s.
    # The baseline's 954 files/s (3 runs) against 3 runs all +++++ is at least ×17 either way.
    too_fast = Result(TOO_FAST, None, None, 100)
    measured = [ok(v) for v in (950, 954, 958)]
    data = engine.compare(sized(page({"seq_create": (measured, [too_fast] * 3)}), 8), grouping=CFG)
    got = cell(data, "seq_create")
    assert got["too_fast_above"] == 16_384 and got["bound_ratio"] == round(16_384 / 958, 4)
    assert got["verdict"] == "better"
    assert (
        "seq. create at least ×17 faster (3 of 3 runs faster than measurable (> 16,384 files/s) here" in data["summary"]
    )
    data = engine.compare(sized(page({"seq_create": ([too_fast] * 3, measured)}), 8), grouping=CFG)
    got = cell(data, "seq_create")
    assert got["verdict"] == "worse" and got["bound_ratio"] == round(958 / 16_384, 4)
    assert "seq. create at least ×17 slower" in data["summary"]


def test_plus_runs_decide_only_when_every_run_clears_the_other_side():
    # -n 16: +++++ is above 32,768 files/s. 3 of 5 +++++ and 38,600, 38,900 measured against 39,500–40,800: the
    # +++++ runs could be 33,000 or 90,000: unknown, and the summary says where the +++++ runs are.
    too_fast = Result(TOO_FAST, None, None, 100)
    base = [ok(v) for v in (39_500, 40_100, 40_800, 40_200, 40_200)]
    cand = [too_fast] * 3 + [ok(38_600), ok(38_900)]
    data = engine.compare(sized(page({"seq_create": (base, cand)}), 16), grouping=CFG)
    got = cell(data, "seq_create")
    assert (got["verdict"], got["bound_ratio"], got["too_fast_above"]) == ("unknown", None, 32_768)
    assert "3 of 5 runs faster than measurable (> 32,768 files/s) here, 0 of 5 in the baseline" in data["summary"]
    # measured runs at ×1.03 of the baseline's highest: separated, but under the minimum effect
    cand = [too_fast] * 3 + [ok(42_100), ok(42_500)]
    got = cell(engine.compare(sized(page({"seq_create": (base, cand)}), 64), grouping=CFG), "seq_create")
    assert got["verdict"] == "unknown" and 1 < got["bound_ratio"] < 1.05
    # and beyond it (×1.10): at least ×1.1 faster whatever the +++++ runs were
    cand = [too_fast] * 3 + [ok(45_000), ok(46_000)]
    got = cell(engine.compare(sized(page({"seq_create": (base, cand)}), 64), grouping=CFG), "seq_create")
    assert got["verdict"] == "better" and got["bound_ratio"] == round(45_000 / 40_800, 4)
