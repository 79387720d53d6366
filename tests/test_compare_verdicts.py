"""The issue's wrong statements (#21), each with its numbers by hand, through engine.compare()."""

from __future__ import annotations

from app.compare import engine
from app.compare.figures import RunFigures
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
    assert "3 of 5 runs +++++ here, 0 of 5 in the baseline" in data["summary"]
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
