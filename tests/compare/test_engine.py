"""The comparison numbers (app.compare.engine) on real bonnie++ lines: absolute and relative values,
rounding, nulls and their reasons, direction, units, legend names and the heat-map table.
Expected numbers are worked out by hand from the lines quoted here."""

import math

import pytest

from app import units
from app.compare import engine, heat
from app.compare import view as page_view
from app.compare.request import parse_group
from app.errors import BadRequest
from app.ingest.parsing import TESTS, Result, parse_line
from tests.compare_data import BOUND, drawn_reason, json_form, shown_ratio
from tests.helpers import LINE_103, LINE_197, LINE_198


def figures(line: str, run_id: int, *, label=None, tags=None) -> engine.RunFigures:
    parsed = parse_line(line, 1)
    return engine.RunFigures(
        id=run_id,
        machine=parsed.machine,
        label=label,
        tags=tags or {},
        format_version=parsed.format_version,
        bonnie_version=parsed.bonnie_version,
        results=parsed.results,
    )


def synthetic(run_id: int, tags: dict[str, str] | None = None, **values) -> engine.RunFigures:
    """A run whose tests all ran with the given values (others 1000 KiB/s, 50 %CPU, 100 µs)."""
    results = tuple(Result("ok", values.get(test, 1000), values.get(f"{test}_cpu", 50), 100) for test in TESTS)
    return engine.RunFigures(run_id, f"m{run_id}", None, tags or {}, "1.98", "2.00a", results)


def chart(data: dict, key: str) -> dict:
    """A chart of a comparison's JSON form."""
    return next(c for c in data["charts"] if c["key"] == key)


def series(data: dict, key: str, run_id: int) -> dict:
    return next(s for s in chart(data, key)["series"] if s["run"] == run_id)


V198, V197, V103 = figures(LINE_198, 1), figures(LINE_197, 2), figures(LINE_103, 3)


def test_absolute_values_are_the_lines_figures_in_stored_units():
    data = json_form(engine.compare([V198, V197, V103]))
    assert data["mode"] == "absolute" and data["baseline"] is None
    assert data["runs"] == [{"id": 1, "label": "vm"}, {"id": 2, "label": "wifo3-02"}, {"id": 3, "label": "mindpipe"}]
    assert [c["key"] for c in data["charts"]] == ["block_io", "seeks", "metadata", "metadata_stat", "latency", "cpu"]
    assert series(data, "block_io", 1) == {
        "run": 1,
        "values": [869, 420469, None, 1443, None],
        "status": ["ok", "ok", "too_fast", "ok", "too_fast"],
    }
    assert series(data, "block_io", 2)["values"] == [1842, 347029, 175829, 3404, 495890]
    assert series(data, "seeks", 2) == {"run": 2, "values": [447.9], "status": ["ok"]}
    assert series(data, "seeks", 1) == {"run": 1, "values": [None], "status": ["too_fast"]}
    assert chart(data, "metadata")["tests"] == ["seq_create", "seq_del", "ran_create", "ran_del"]
    assert series(data, "metadata", 3)["values"] == [94, 15510, 204, 906]
    assert chart(data, "metadata_stat")["tests"] == ["seq_stat", "ran_stat"]
    assert series(data, "metadata_stat", 2) == {"run": 2, "values": [None, None], "status": ["too_fast", "too_fast"]}


def test_latency_chart_has_every_latency_even_of_too_fast_tests_and_says_when_a_line_has_none():
    data = json_form(engine.compare([V198, V197, V103]))
    latency = chart(data, "latency")
    assert latency["tests"] == list(TESTS) and latency["unit"] == "µs" and latency["higher_is_better"] is False
    # rewrite was +++++ in the 1.98 line, but its latency (1098us) was measured.
    assert series(data, "latency", 1)["values"] == [
        18213,
        4307,
        1098,
        10287,
        117,
        7618,
        10730,
        5072,
        2346,
        12162,
        214,
        6909,
    ]
    assert series(data, "latency", 1)["status"] == ["ok"] * 12
    assert series(data, "latency", 2)["values"][5:8] == [228_000, 349_000, 127]  # 228ms, 349ms, 127us
    assert series(data, "latency", 3) == {"run": 3, "values": [None] * 12, "status": ["no_latency"] * 12}


def test_cpu_chart_is_the_tests_own_status():
    data = json_form(engine.compare([V198, V103]))
    cpu = chart(data, "cpu")
    assert cpu["unit"] == "%CPU" and cpu["higher_is_better"] is False
    assert series(data, "cpu", 1)["values"] == [96, 81, None, 98, None, None, 94, None, None, 95, None, None]
    assert series(data, "cpu", 1)["status"][2] == "too_fast"
    assert series(data, "cpu", 3)["values"][5] == 0  # mindpipe's seeks used 0 %CPU: a value, not a null


def test_units_and_direction_per_chart():
    absolute = json_form(engine.compare([V198, V197]))
    assert {c["key"]: (c["unit"], c["higher_is_better"]) for c in absolute["charts"]} == {
        "block_io": ("KiB/s", True),
        "seeks": ("seeks/s", True),
        "metadata": ("files/s", True),
        "metadata_stat": ("files/s", True),
        "latency": ("µs", False),
        "cpu": ("%CPU", False),
    }
    relative = json_form(engine.compare([V198, V197], mode="relative"))
    assert {c["unit"] for c in relative["charts"]} == {"%"}
    assert [c["higher_is_better"] for c in relative["charts"]] == [True, True, True, True, False, False]


def test_relative_values_rounded_to_one_decimal_and_the_baseline_has_no_series():
    data = json_form(engine.compare([V198, V197, V103], mode="relative"))
    assert data["baseline"] == 1  # the first run by default
    assert [s["run"] for s in chart(data, "block_io")["series"]] == [2, 3]
    # 1842/869 - 1 = 111.97 %, 347029/420469 - 1 = -17.47 %, 3404/1443 - 1 = 135.90 %
    assert series(data, "block_io", 2) == {
        "run": 2,
        "values": [112.0, -17.5, None, 135.9, None],
        "status": ["ok", "ok", "baseline_too_fast", "ok", "baseline_too_fast"],
    }
    # mindpipe: 3002/869 - 1 = 245.45 %, 31164/420469 - 1 = -92.59 %
    assert series(data, "block_io", 3)["values"][:2] == [245.5, -92.6]
    # latency 8735us vs 18213us = -52.04 %; 16764us vs 4307us = +289.23 %
    assert series(data, "latency", 2)["values"][:2] == [-52.0, 289.2]


def test_relative_nulls_say_why():
    data = json_form(engine.compare([V197, V198, V103], mode="relative", baseline=2))
    assert data["baseline"] == 2
    # the run's own status comes first: 1.98's rewrite and get_block are +++++
    assert series(data, "block_io", 1)["status"] == ["ok", "ok", "too_fast", "ok", "too_fast"]
    assert series(data, "latency", 3)["status"] == ["no_latency"] * 12
    data = json_form(engine.compare([V103, V197], mode="relative"))
    assert series(data, "latency", 2) == {"run": 2, "values": [None] * 12, "status": ["baseline_no_latency"] * 12}
    # mindpipe's seeks used 0 %CPU: wifo3-02's 11 % cannot be a percentage of it
    assert series(data, "cpu", 2)["status"][5] == "baseline_zero" and series(data, "cpu", 2)["values"][5] is None


def test_not_run_on_either_side():
    no_char = figures(
        "1.98,2.00a,vm,1,1795352069,512M,,8192,5,,,564124,74,955896,61,,,+++++,+++,+++++,+++,16,,,,,3411,97,+++++,+++,+++++,+++,2189,99,+++++,+++,+++++,+++,,5996us,9384us,,1514us,5243us,8781us,703us,7380us,10912us,144us,5710us",
        4,
    )
    data = json_form(engine.compare([V197, no_char], mode="relative"))
    assert series(data, "block_io", 4)["status"] == ["not_run", "ok", "ok", "not_run", "too_fast"]
    assert series(data, "block_io", 4)["values"][1:3] == [62.6, 443.7]  # 564124/347029, 955896/175829
    # -f: putc did not run, and its latency is missing for that reason, not because the line has none
    assert series(data, "latency", 4)["status"][0] == "not_run"
    assert series(data, "latency", 4)["status"][1] == "ok"
    reverse = json_form(engine.compare([no_char, V197], mode="relative"))
    assert series(reverse, "block_io", 2)["status"] == [
        "baseline_not_run",
        "ok",
        "ok",
        "baseline_not_run",
        "baseline_too_fast",
    ]


def test_baseline_zero_and_negative_zero():
    zero = synthetic(1, put_block=0, putc=1_000_000)
    data = json_form(engine.compare([zero, synthetic(2, put_block=500, putc=999_996)], mode="relative"))
    s = series(data, "block_io", 2)
    assert s["status"][1] == "baseline_zero" and s["values"][1] is None
    # -0.0004 % rounds to 0.0, never -0.0
    assert s["values"][0] == 0.0 and math.copysign(1, s["values"][0]) == 1.0
    assert s["values"][2] == 0.0


def test_absolute_mode_keeps_the_baseline_asked_for_and_checks_it():
    assert engine.compare([V198, V197], baseline=2).baseline == 2
    with pytest.raises(BadRequest, match="baseline 9 is not one of the runs"):
        engine.compare([V198, V197], mode="relative", baseline=9)
    with pytest.raises(BadRequest, match="mode must be"):
        engine.compare([V198], mode="sideways")
    with pytest.raises(BadRequest, match="no runs"):
        engine.compare([])


def test_label_falls_back_to_the_machine():
    data = json_form(engine.compare([figures(LINE_198, 1, label="ext3 on RAID-5"), V197]))
    assert data["runs"] == [{"id": 1, "label": "ext3 on RAID-5"}, {"id": 2, "label": "wifo3-02"}]


def test_legend_names_add_the_tags_that_differ_and_disambiguate():
    runs = [
        figures(LINE_198, 1, label="ext3 on RAID-5", tags={"raid": "5", "fs": "ext3", "host": "lab"}),
        figures(LINE_198, 2, tags={"raid": "5", "fs": "xfs", "host": "lab"}),
        figures(LINE_198, 3, tags={"raid": "6", "host": "lab"}),
    ]
    assert page_view.legend_names(runs) == {
        1: "ext3 on RAID-5 · fs=ext3 raid=5",
        2: "vm · fs=xfs raid=5",
        3: "vm · raid=6",
    }
    same = [figures(LINE_198, 7), figures(LINE_198, 8)]
    assert page_view.legend_names(same) == {7: "vm #7", 8: "vm #8"}
    nameless = engine.RunFigures(9, "", None, {}, "1.03", None, V103.results)
    assert page_view.legend_names([nameless]) == {9: "run 9"}


def test_display_units_follow_the_largest_value():
    assert units.display_unit("KiB/s", [869, 420469, None]) == ("MiB/s", 1024)
    assert units.display_unit("KiB/s", [500, None]) == ("KiB/s", 1)
    assert units.display_unit("KiB/s", [2 * 1024 * 1024]) == ("GiB/s", 1024 * 1024)
    assert units.display_unit("µs", [117, 18213]) == ("ms", 1000)
    assert units.display_unit("seeks/s", [447.9]) == ("seeks/s", 1)
    assert units.display_unit("KiB/s", []) == ("KiB/s", 1)


def test_view_titles_say_where_the_numbers_come_from_and_notes_say_why_bars_are_missing():
    runs = [V198, V197, V103]
    data = engine.compare(runs)
    view = page_view.compare_view(runs, data)
    block = view["charts"][0]
    assert block["source"] == "bonnie++ 2.00a (CSV 1.98), bonnie++ 1.97 (CSV 1.97), bonnie++ 1.0x (CSV 1.03)"
    assert (block["display_unit"], block["divisor"], block["scale"]) == ("MiB/s", 1024, "linear")
    assert block["axis_title"] == "Block I/O, MiB/s"
    assert block["better"] == "higher is better"
    assert block["notes"] == [
        {
            "status": "too_fast",
            "text": "+++++ too fast to measure",
            "where": ["vm: rewrite, get_block"],
            "explanation": "bonnie++ prints +++++ when a test took under 0.5 s: too fast to measure, not zero. "
            "A larger -s (file size) would measure it.",
        }
    ]
    assert block["hints"][0] == "a larger -s (file size)"
    latency = view["charts"][4]
    assert latency["scale"] == "logarithmic" and latency["better"] == "lower is better"
    assert latency["notes"] == [
        {
            "status": "no_latency",
            "text": "no latency in this line",
            "explanation": None,
            "where": ["mindpipe: " + ", ".join(TESTS)],
        }
    ]
    cpu_notes = view["charts"][5]["notes"]
    assert cpu_notes[0]["where"] == [
        "vm: rewrite, get_block, seeks, seq_stat, seq_del, ran_stat, ran_del",
        "wifo3-02: seq_stat, ran_stat",
        "mindpipe: seq_stat, ran_stat",
    ]
    assert cpu_notes[0]["explanation"].endswith(
        "not zero. A larger -s (file size) or a larger -n (number of files) would measure it."
    )
    assert view["charts"][3]["hints"] == ["a larger -n (number of files)"] * 2
    assert view["names"] == {"1": "vm", "2": "wifo3-02", "3": "mindpipe"}

    relative = engine.compare(runs, mode="relative", baseline=2)
    rview = page_view.compare_view(runs, relative)
    # relative: rates as a %, latency as a ratio on a log axis, %CPU in percentage points
    assert [(c["relative_kind"], c["scale"]) for c in rview["charts"]] == [("percent", "linear")] * 4 + [
        ("ratio", "logarithmic"),
        ("points", "linear"),
    ]
    assert rview["charts"][0]["axis_title"] == "% vs baseline"
    assert rview["charts"][4]["axis_title"] == "× baseline latency (log)"
    assert view["charts"][0]["relative_kind"] is None
    # these runs carry no file size: nothing says vm's +++++ is above the baseline's rate, so no mark at the top
    assert [(n["status"], n["where"]) for n in rview["charts"][0]["notes"]] == [
        ("too_fast_unjudged", ["vm: rewrite, get_block"])
    ]


def drawn_bars(data: dict, chart: dict) -> list[tuple]:
    """The reference for the view's bars: what static/charts.js would compute from /api/compare, per configuration
    (the baseline one left out in relative mode) its values, reasons, error bars, verdicts and N."""
    relative = data["mode"] == "relative"
    base_id = data["baseline_configuration"]
    base_cells = next(e["tests"] for e in chart["configurations"] if e["configuration"] == base_id)
    percent = lambda ratio: math.floor((ratio - 1) * 1000 + 0.5) / 10  # noqa: E731 - Math.round((r - 1) * 1000) / 10
    tenth = lambda x: math.floor(x * 10 + 0.5) / 10  # noqa: E731
    drawn = []
    for entry in chart["configurations"]:
        if relative and entry["configuration"] == base_id:
            continue
        values, statuses, errors = [], [], []
        rates = chart["key"] not in ("latency", "cpu")
        for cell, base in zip(entry["tests"], base_cells, strict=True):
            status = drawn_reason(cell, base, relative=relative, rates=rates)
            if status == BOUND:  # the +++++ bound its verdict rests on
                statuses.append("ok")
                values.append(percent(cell["bound_ratio"]))
                errors.append(None)
                continue
            statuses.append(status)
            shown = shown_ratio(cell) if status == "ok" and relative else None
            ci = cell["ratio_ci95"]
            if status != "ok":
                value, error = None, None
            elif relative and chart["key"] == "latency":
                value, error = shown, ci
            elif relative and chart["key"] == "cpu":
                value = tenth(cell["mean"] - base["mean"])
                error = ci and [tenth((r - 1) * base["mean"]) for r in ci]
            elif relative:
                value, error = percent(shown), ci and [percent(r) for r in ci]
            else:
                value, error = cell["mean"], cell["ci95"]
            values.append(value)
            errors.append(error)
        verdicts = [None if entry["configuration"] == base_id else cell["verdict"] for cell in entry["tests"]]
        drawn.append((entry["configuration"], values, statuses, errors, verdicts, [c["n"] for c in entry["tests"]]))
    return drawn


@pytest.mark.parametrize("mode", ["absolute", "relative"])
@pytest.mark.parametrize("group", ["none", "cfg"])
def test_the_view_ships_the_bars_the_page_draws(mode, group):
    runs = [
        V198,
        V197,
        V103,
        *(
            synthetic(i, {"cfg": "a"}, put_block=v, getc=g, put_block_cpu=c)
            for i, v, g, c in ((4, 100_000, 1000, 50), (5, 101_000, 1050, 51))
        ),
        *(
            synthetic(i, {"cfg": "b"}, put_block=v, getc=g, put_block_cpu=c)
            for i, v, g, c in ((6, 120_000, 1010, 40), (7, 121_200, 1060, 41))
        ),
    ]
    data = engine.compare(runs, mode=mode, baseline=4, grouping=parse_group(group))
    view = page_view.compare_view(runs, data)
    positions = {c.id: i for i, c in enumerate(data.configurations)}
    repeated = any(len(c.runs) > 1 for c in data.configurations)
    for chart, chart_view in zip(data.charts, view["charts"], strict=True):
        bars = chart_view["bars"]
        # the reference reads the JSON, as static/charts.js does
        assert [
            (b["configuration"], b["values"], b["status"], b["errors"], b["verdicts"], b["n"]) for b in bars
        ] == drawn_bars(json_form(data), json_form(chart)), chart.key
        for bar in bars:
            position = positions[bar["configuration"]]
            assert (bar["position"], bar["colour"], bar["pattern"]) == (position, position % 12, position // 12 % 3)
            name = view["configuration_names"][str(bar["configuration"])]
            runs_in = len(data.configurations[position].runs)
            assert bar["label"] == (f"{name} (N={runs_in})" if repeated else name)
            assert bar["baseline"] == (bar["configuration"] == data.baseline_configuration)


def test_bars_round_halves_up_as_the_browser_did():
    assert [page_view._js_round(x) for x in (2.5, -2.5, 0.49999999999999994, -0.5, 1.4999)] == [3, -2, 0, 0, 1]
    assert page_view._percent_bar(1.2) == 20.0 and page_view._percent_bar(0.9995) == 0.0  # never -0.0
    assert math.copysign(1, page_view._tenth(-0.04)) == 1


def heat_cells(table, configuration, test):
    """A configuration's rate, %CPU and latency cells for one test."""
    row = next(r for r in table["rows"] if r["configuration"] == configuration)
    width = len(table["measures"])
    at = TESTS.index(test) * width
    return row["cells"][at : at + width]


def test_heat_table_is_data_one_row_per_configuration_and_never_shades_single_runs():
    data = engine.compare([V198, V197, V103])
    table = heat.heat_table(data)
    assert table["has_latency"] is True and table["measures"] == ["value", "cpu", "latency"]
    assert [(r["configuration"], r["name"], r["runs"], r["baseline"]) for r in table["rows"]] == [
        (1, "vm", [1], True),
        (2, "wifo3-02", [2], False),
        (3, "mindpipe", [3], False),
    ]
    put_block = [heat_cells(table, i, "put_block") for i in (1, 2, 3)]
    # one unit per column, in its header: MiB/s for every put_block rate, ms for every latency
    assert [c[0]["text"] for c in put_block] == ["410.6", "338.9", "30.4"]
    assert [(c[1]["text"], c[2]["text"]) for c in put_block] == [("81", "4.3"), ("24", "16.8"), ("60", "")]
    columns = table["columns"][TESTS.index("put_block") * 3 :][:3]
    assert [(c["test"], c["measure"], c["unit"]) for c in columns] == [
        ("put_block", "value", "MiB/s"),
        ("put_block", "cpu", "%"),
        ("put_block", "latency", "ms"),
    ]
    assert [s["measure"] for s in table["sections"]] == ["value", "cpu", "latency"]
    assert [table["columns"][i]["test"] for i in table["sections"][0]["indexes"]] == list(TESTS)
    # the relative figures say what the relative charts say: %, points of %CPU, × for latency
    # (24 - 81 = -57 points; 16764 / 4307 µs = 3.89)
    # %CPU as it is, without a mark; single runs have no CPU-per-work verdict either
    assert [c["relative"] for c in put_block[1]] == ["−17.5 % ?", "−57 pts", "×3.89 ?"]
    # single runs: every verdict is unknown, so nothing is coloured; 347029/420469 - 1 = -17.5 %
    # (%CPU cells have no verdict: %CPU is shown as it is)
    assert {cell["verdict"] for row in table["rows"][1:] for cell in row["cells"] if cell["measure"] != "cpu"} == {
        "unknown"
    }
    assert {cell["verdict"] for row in table["rows"] for cell in row["cells"] if cell["measure"] == "cpu"} == {None}
    assert put_block[0][0]["relative"] == ""
    rewrite = heat_cells(table, 1, "rewrite")
    assert (rewrite[0]["text"], rewrite[0]["status"], rewrite[1]["text"]) == ("+++++", "too_fast", "+++++")
    assert rewrite[2]["text"] == "1.1"  # +++++ still has its latency (ms)
    assert heat_cells(table, 3, "seeks")[0]["text"] == "56.7"


def test_heat_table_without_latencies_and_not_run_cells():
    no_char = figures(
        "1.98,2.00a,vm,1,1795352069,512M,,8192,5,,,564124,74,955896,61,,,+++++,+++,+++++,+++,16,,,,,3411,97,+++++,+++,+++++,+++,2189,99,+++++,+++,+++++,+++,,5996us,9384us,,1514us,5243us,8781us,703us,7380us,10912us,144us,5710us",
        4,
    )
    table = heat.heat_table(engine.compare([V103, no_char]))
    assert [(c["text"], c["status"]) for c in heat_cells(table, 2, "putc")] == [
        ("", "not_run"),
        ("", "not_run"),
        ("", "not_run"),  # its latency too: the test did not run (a 1.03 line has none: no_latency)
    ]
    only_103 = heat.heat_table(engine.compare([V103]))
    assert only_103["has_latency"] is False and len(only_103["rows"][0]["cells"]) == 24


def test_heat_table_shades_only_cells_whose_verdict_is_better_or_worse():
    """Two configurations x 3 runs: put_block 20 % faster with 1 % spread (better), getc 1 % faster
    with 5 % spread (within noise), and %CPU lower: shown as it is, unshaded, with CPU per MiB judged beside it."""
    base = [
        synthetic(i, {"cfg": "a"}, put_block=v, getc=g, put_block_cpu=c)
        for i, v, g, c in ((1, 100_000, 1000, 50), (2, 101_000, 1050, 51), (3, 99_000, 950, 49))
    ]
    fast = [
        synthetic(i, {"cfg": "b"}, put_block=v, getc=g, put_block_cpu=c)
        for i, v, g, c in ((4, 120_000, 1010, 40), (5, 121_200, 1060, 41), (6, 118_800, 960, 39))
    ]
    runs = [*base, *fast]
    assert len(engine.compare(runs).configurations) == 6  # by machine and parameters: each machine differs
    data = engine.compare(runs, grouping=parse_group("cfg"))
    table = heat.heat_table(data)
    put_block = heat_cells(table, 2, "put_block")
    assert put_block[0]["verdict"] == "better" and put_block[0]["relative"] == "+20.0 % ▲"
    # 40 vs 50 %CPU (−10 points) for 120,000 vs 100,000 KiB/s: CPU per MiB ×(40 / 120,000) / (50 / 100,000) = ×0.667
    assert put_block[1]["verdict"] is None and put_block[1]["relative"] == "−10 pts · per MiB −33.3 % ▲"
    assert (
        heat_cells(table, 2, "getc")[0]["verdict"] == "within_noise"
        and heat_cells(table, 2, "getc")[0]["relative"] == "+1.0 % ~"
    )
    coloured = {
        (TESTS[i // 3], i % 3)
        for i, cell in enumerate(table["rows"][1]["cells"])
        if cell["verdict"] in ("better", "worse")
    }
    assert coloured == {("put_block", 0)}
    assert all(cell["verdict"] is None for cell in table["rows"][0]["cells"])  # the baseline itself


def test_the_single_run_shortcut_gives_the_same_answer_as_the_general_path(monkeypatch):
    """Every corpus line alone (group=none), absolute and relative, with each baseline: the answer
    with the shortcut for one-run configurations equals the one computed the general way."""
    from tests.corpus_expected import EXPECTED
    from tests.helpers import CORPUS_DIR

    # Every non-blank corpus line is a valid run (tests/ingest/test_parsing.py): one that fails to parse fails this test.
    lines = [
        line for path in sorted(CORPUS_DIR.glob("*.csv")) for line in path.read_text().splitlines() if line.strip()
    ]
    runs = []
    for line in lines:
        runs.append(figures(line, len(runs) + 1, tags={"ram_mib": "256"} if len(runs) % 3 == 0 else {}))
    assert len(runs) == len(EXPECTED) > 20
    none = parse_group("none")
    asked = [(mode, baseline) for mode in ("absolute", "relative") for baseline in (None, runs[0].id, runs[5].id)]
    fast = [engine.compare(runs, mode=mode, baseline=baseline, grouping=none) for mode, baseline in asked]
    monkeypatch.setattr(engine, "SINGLE_RUN_SHORTCUT", False)
    slow = [engine.compare(runs, mode=mode, baseline=baseline, grouping=none) for mode, baseline in asked]
    assert fast == slow


def test_a_relative_bar_is_the_ratio_its_verdict_and_interval_are_about():
    """The baseline's put_block runs 100,000 and 300,000 KiB/s (arithmetic mean 200,000, geometric 173,205), the
    other's 200,000 twice: the means are equal, the geometric ratio 1.155. The bar, its CI and the table say +15.5 %,
    as the verdict and the Answer do; the absolute bars stay the arithmetic means."""
    runs = [
        synthetic(1, {"cfg": "base"}, put_block=100_000),
        synthetic(2, {"cfg": "base"}, put_block=300_000),
        synthetic(3, {"cfg": "other"}, put_block=200_000),
        synthetic(4, {"cfg": "other"}, put_block=200_000),
    ]
    data = engine.compare(runs, mode="relative", baseline=1, grouping=parse_group("cfg"))
    block_io = next(c for c in data.charts if c.key == "block_io")
    cell = next(c for c in block_io.configurations[1].tests if c.test == "put_block")
    assert cell.ratio == 1.0 and cell.geo_ratio == round(200_000 / math.sqrt(100_000 * 300_000), 4)
    view = page_view.compare_view(runs, data)
    (bar,) = view["charts"][0]["bars"]
    put_block = block_io.tests.index("put_block")
    assert bar["values"][put_block] == 15.5
    low, high = bar["errors"][put_block]
    assert low < 15.5 < high
    table = heat.heat_table(data)
    column = next(i for i, c in enumerate(table["columns"]) if (c["test"], c["measure"]) == ("put_block", "value"))
    assert table["rows"][1]["cells"][column]["relative"] == "+15.5 % ~"
    absolute = page_view.compare_view(runs, engine.compare(runs, baseline=1, grouping=parse_group("cfg")))
    assert [b["values"][put_block] for b in absolute["charts"][0]["bars"]] == [200_000, 200_000]
