"""GET /api/compare against a real SQLite file: the contract's shape, numbers from stored real lines,
errors as JSON with a string detail."""

import re

import pytest

from tests.compare_data import SWEEP, as_embedded, embedded_data, sweep_csv
from tests.helpers import (
    CONTRACT_LINE,
    CORPUS_DIR,
    LINE_103,
    LINE_197,
    post_csv,
    set_setting,
    with_field,
)


@pytest.fixture
def three_runs(client):
    """The contract's example line (ext3 on RAID-5), a 1.97 line and a 1.03 line, stored in that order."""
    first = post_csv(client, CONTRACT_LINE, tag=["raid=5", "fs=ext3"], label="ext3 on RAID-5").json()["created"][0]
    second = post_csv(client, LINE_197, tag=["raid=5", "fs=xfs"]).json()["created"][0]
    third = post_csv(client, LINE_103).json()["created"][0]
    return first, second, third


def test_absolute_is_the_contracts_shape(client, three_runs):
    a, b, c = three_runs
    response = client.get("/api/compare", params={"runs": f"{a},{b},{c}"})
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    body = response.json()
    # the contract's keys, with configurations, statistics and verdicts
    assert set(body) == {
        "mode",
        "baseline",
        "runs",
        "charts",
        "group",
        "configurations",
        "baseline_configuration",
        "min_effect",  # issue #21: the smallest change a verdict names, and how the page's errors are shared
        "error_control",
        "warnings",
        "setup",
        "summary",
    }
    assert body["mode"] == "absolute" and body["baseline"] is None
    assert body["runs"] == [
        {"id": a, "label": "ext3 on RAID-5"},
        {"id": b, "label": "wifo3-02"},
        {"id": c, "label": "mindpipe"},
    ]
    assert [chart["key"] for chart in body["charts"]] == [
        "block_io",
        "seeks",
        "metadata",
        "metadata_stat",
        "latency",
        "cpu",
    ]
    for chart in body["charts"]:
        assert set(chart) == {"key", "unit", "higher_is_better", "tests", "series", "configurations", "hints"}
        assert [s["run"] for s in chart["series"]] == [a, b, c]
        for s in chart["series"]:
            assert set(s) == {"run", "values", "status"}
            assert len(s["values"]) == len(s["status"]) == len(chart["tests"])
            assert all((v is None) == (st != "ok") for v, st in zip(s["values"], s["status"], strict=True))
    block = body["charts"][0]
    assert block["tests"] == ["putc", "put_block", "rewrite", "getc", "get_block"] and block["unit"] == "KiB/s"
    assert block["series"][0] == {
        "run": a,
        "values": [869, 420469, None, 1443, None],
        "status": ["ok", "ok", "too_fast", "ok", "too_fast"],
    }
    assert body["charts"][1]["series"][1]["values"] == [447.9]
    latency = body["charts"][4]
    assert latency["unit"] == "µs" and latency["higher_is_better"] is False
    assert latency["series"][0]["values"][:3] == [18213, 4307, 1098]
    assert latency["series"][2]["status"] == ["no_latency"] * 12


def test_relative_defaults_to_the_first_run_and_rounds(client, three_runs):
    a, b, c = three_runs
    body = client.get("/api/compare", params={"runs": f"{a},{b},{c}", "mode": "relative"}).json()
    assert body["mode"] == "relative" and body["baseline"] == a
    assert len(body["runs"]) == 3  # the baseline is listed, but has no series
    block = body["charts"][0]
    assert block["unit"] == "%" and [s["run"] for s in block["series"]] == [b, c]
    # wifo3-02 vs the contract line: 1842/869, 347029/420469, 3404/1443
    assert block["series"][0] == {
        "run": b,
        "values": [112.0, -17.5, None, 135.9, None],
        "status": ["ok", "ok", "baseline_too_fast", "ok", "baseline_too_fast"],
    }
    assert body["charts"][4]["series"][1]["status"] == ["no_latency"] * 12


def test_relative_with_a_chosen_baseline(client, three_runs):
    a, b, c = three_runs
    body = client.get("/api/compare", params={"runs": f"{a},{b},{c}", "mode": "relative", "baseline": c}).json()
    assert body["baseline"] == c
    assert [s["run"] for s in body["charts"][0]["series"]] == [a, b]
    # the 1.03 line has no latencies: nothing to compare with
    assert body["charts"][4]["series"][0]["status"] == ["baseline_no_latency"] * 12
    # mindpipe's seeks: 0 %CPU
    assert body["charts"][5]["series"][1]["status"][5] == "baseline_zero"


def test_absolute_keeps_a_baseline_asked_for(client, three_runs):
    a, b, _ = three_runs
    assert client.get("/api/compare", params={"runs": f"{b},{a}", "baseline": a}).json()["baseline"] == a


def test_runs_keep_the_order_asked_and_repeats_count_once(client, three_runs):
    a, b, c = three_runs
    body = client.get("/api/compare", params={"runs": f"{c},{a},{c}"}).json()
    assert [r["id"] for r in body["runs"]] == [c, a]


def test_every_corpus_line_at_once(client):
    ids = []
    for name in ("public-sample.csv", "bonnie200-sample.csv", "seed-lines.csv"):
        ids += client.post("/api/runs", files={"file": (name, (CORPUS_DIR / name).read_bytes())}).json()["created"]
    assert len(ids) == 39
    body = client.get("/api/compare", params={"runs": ",".join(map(str, ids)), "mode": "relative"}).json()
    assert all(len(chart["series"]) == 38 for chart in body["charts"])


@pytest.mark.parametrize(
    ("params", "status", "words"),
    [
        ({"runs": "1,x"}, 400, "run ids"),
        ({"runs": ""}, 400, "no runs"),
        ({}, 400, "no runs"),
        ({"runs": "RUN", "mode": "sideways"}, 400, "mode must be"),
        ({"runs": "RUN", "baseline": "x"}, 400, "baseline must be a run id"),
        ({"runs": "RUN", "group": "a=b"}, 400, "group must be"),
        ({"runs": "RUN", "min_effect": "0.9"}, 400, "min_effect must be a ratio from 1 to 10"),
        ({"runs": "RUN", "min_effect": "nan"}, 400, "min_effect must be"),
        ({"runs": "RUN", "min_effect": "x1.1"}, 400, "min_effect must be"),
        ({"runs": "RUN", "baseline": 999}, 400, "baseline 999 is not one of the runs"),
        ({"runs": "RUN,999"}, 404, "run 999 does not exist"),
    ],
)
def test_errors_are_json_with_a_string_detail(client, params, status, words):
    run_id = post_csv(client, LINE_197).json()["created"][0]
    params = {k: v.replace("RUN", str(run_id)) if isinstance(v, str) else v for k, v in params.items()}
    response = client.get("/api/compare", params=params)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert isinstance(response.json()["detail"], str) and words in response.json()["detail"]


def test_compare_is_in_the_openapi_description(client):
    spec = client.get("/openapi.json").json()
    operation = spec["paths"]["/api/compare"]["get"]
    assert {p["name"] for p in operation["parameters"]} == {"runs", "run", "baseline", "mode", "group", "min_effect"}
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/CompareOut"
    }
    cell = spec["components"]["schemas"]["CellStatsOut"]["properties"]
    for name in (
        "n",
        "n_too_fast",
        "n_not_run",
        "mean",
        "median",
        "sd",
        "cv_pct",
        "ci95",
        "ratio",
        "ratio_ci95",
        "verdict",
        "hints",
    ):
        assert name in cell, name
    assert set(spec["components"]["schemas"]["CompareOut"]["properties"]) >= {
        "group",
        "configurations",
        "warnings",
        "summary",
        "setup",
    }


def test_the_page_and_the_api_accept_the_same_urls(client, three_runs):
    """One reading of the query (app/compare/request.py): the runs list's run=&run=, runs=, group=."""
    a, b, c = three_runs
    for query in (
        f"run={a}&run={b}&mode=relative",
        f"runs={a},{b}&group=fs,raid&baseline={b}",
        f"runs={a} {b},{c}&group=none",
    ):
        api = client.get(f"/api/compare?{query}")
        assert api.status_code == 200, (query, api.text)
        page = client.get(f"/compare?{query}")  # redirected to the permalink
        assert page.status_code == 200
        assert embedded_data(page.text)["compare"] == as_embedded(api.json()), query


def test_the_1_03_line_alone(client):
    run_id = post_csv(client, LINE_103).json()["created"][0]
    body = client.get("/api/compare", params={"runs": str(run_id), "mode": "relative"}).json()
    assert body["baseline"] == run_id and all(chart["series"] == [] for chart in body["charts"])


# ==== Configurations, statistics and verdicts ====


@pytest.fixture
def sweep(client):
    ids = {}
    for fs in SWEEP:
        ids[fs] = post_csv(client, sweep_csv(fs), tag=[f"fs={fs}", "raid=5"]).json()["created"]
    return ids


def cell(body, chart_key, configuration, test):
    chart = next(c for c in body["charts"] if c["key"] == chart_key)
    entry = next(e for e in chart["configurations"] if e["configuration"] == configuration)
    return next(c for c in entry["tests"] if c["test"] == test)


def test_a_20_percent_difference_with_low_spread_is_better(client, sweep):
    runs = ",".join(map(str, sweep["ext4"] + sweep["xfs"]))
    body = client.get("/api/compare", params={"runs": runs}).json()  # default: group=params
    assert body["group"] == "params" and body["baseline_configuration"] == 1
    assert [(c["id"], c["name"], c["runs"]) for c in body["configurations"]] == [
        (1, "ext4-box · fs=ext4", sweep["ext4"]),
        (2, "xfs-box · fs=xfs", sweep["xfs"]),
    ]
    base, xfs = cell(body, "block_io", 1, "put_block"), cell(body, "block_io", 2, "put_block")
    # 100000, 101000, 99000: mean 100000, SD 1000, CV 1 %; geometric mean 99996.67, its CI on the logs
    # (SD of the logs 0.0100005, SE 0.0057738 with rounding, × t 4.3027 = ±0.024843): ×/÷ 1.02515
    assert (base["n"], base["mean"], base["median"], base["sd"], base["cv_pct"]) == (3, 100000.0, 100000.0, 1000.0, 1.0)
    assert base["geo_mean"] == pytest.approx(99996.667, abs=1e-3)
    assert base["ci95"] == pytest.approx([97543.1, 102511.9], abs=0.1)
    # the baseline itself has no ratio and no verdict: null figures are left out of the answer
    assert not {"ratio", "ratio_ci95", "verdict", "cpu_per_work"} & base.keys()
    assert xfs["ratio"] == 1.2 and xfs["verdict"] == "better"
    low, high = xfs["ratio_ci95"]
    assert low < 1.2 < high and low > 1.15 and high < 1.25
    getc = cell(body, "block_io", 2, "getc")
    assert (
        getc["ratio"] == 1.01
        and getc["verdict"] == "within_noise"
        and getc["ratio_ci95"][0] < 1 < getc["ratio_ci95"][1]
    )
    assert getc["cv_pct"] == 4.95 and cell(body, "block_io", 1, "getc")["cv_pct"] == 5.0
    # rewrite is +++++ in every run: counted, never averaged
    rewrite = cell(body, "block_io", 2, "rewrite")
    assert (rewrite["n"], rewrite["n_too_fast"], rewrite.get("mean"), rewrite["status"], rewrite["verdict"]) == (
        0,
        3,
        None,
        "too_fast",
        "unknown",
    )
    assert {h["code"] for h in rewrite["hints"]} == {"too_fast"} and "all runs +++++" in rewrite["hints"][0]["text"]
    assert "block write +20.0 % (95 % CI +" in body["summary"] and "better)" in body["summary"]
    # getc +1.0 % is within noise, CPU-bound on both sides (98 %CPU in the line), but its CI (±~12 %) is not
    # inside ×1.05: not "unchanged"; 3 runs a side at CV 5 % could not have seen a 10 % change, so it says so, with
    # what it could have seen; the identical tests are unchanged
    assert re.search(
        r"per-char read \+1\.0 % \(cannot tell with 3 runs a side: could have seen ±\d+ % either way, "
        r"a 10 % change needs \d+ runs a side\)",
        body["summary"],
    ), body["summary"]
    assert (
        "per-char write, per-char read, seq. create and random create CPU-bound in both (98 % CPU): they measure the "
        "CPU, not the disk (per-char write, seq. create and random create unchanged)" in body["summary"]
    )
    assert "seq. stat and random stat +++++ in both: raise -s and -n." in body["summary"]


def test_min_effect_in_the_url_changes_the_verdict_the_cache_key_and_the_permalink(client, sweep):
    # put_block +20 %: better at the default ×1.05, within noise when only ×1.25 or more counts
    runs = ",".join(map(str, sweep["ext4"] + sweep["xfs"]))
    default = client.get("/api/compare", params={"runs": runs}).json()
    strict = client.get("/api/compare", params={"runs": runs, "min_effect": "1.25"}).json()
    assert (default["min_effect"], strict["min_effect"]) == (1.05, 1.25)
    assert cell(default, "block_io", 2, "put_block")["verdict"] == "better"
    assert cell(strict, "block_io", 2, "put_block")["verdict"] == "within_noise"  # not the default's cached answer
    csv_text = client.get("/api/compare.csv", params={"runs": runs, "min_effect": "1.25"}).text
    assert "within_noise" in csv_text
    # the page's permalink keeps a min_effect other than the setting's and drops the setting's own
    page = client.get(f"/compare?runs={runs}&min_effect=1.250", follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"].endswith("&min_effect=1.25")
    page = client.get(f"/compare?runs={runs}&min_effect=1.05", follow_redirects=False)
    assert page.status_code == 303 and "min_effect" not in page.headers["location"]
    assert "at least ×1.25" in client.get(f"/compare?runs={runs}&min_effect=1.25").text


def test_min_effect_defaults_to_the_setting(client, sweep, monkeypatch):
    from app.config import get_settings

    monkeypatch.setattr(get_settings(), "min_effect", 1.25)
    runs = ",".join(map(str, sweep["ext4"] + sweep["xfs"]))
    body = client.get("/api/compare", params={"runs": runs}).json()
    assert body["min_effect"] == 1.25 and cell(body, "block_io", 2, "put_block")["verdict"] == "within_noise"


def test_the_page_words_the_minimum_effect_the_setting_gives(client, sweep, monkeypatch):
    set_setting(monkeypatch, "MIN_EFFECT", "1.2")
    runs = ",".join(map(str, sweep["ext4"] + sweep["xfs"]))
    page = client.get(f"/compare?runs={runs}").text
    assert "are at least ×1.2 (<code>min_effect=</code>)" in page  # the charts' legend
    assert "an estimate at least ×1.2 either way" in page  # the answer's legend
    assert "minimum effect (×1.2 on this page;" in embedded_data(page)["view"]["verdict_text"]["better"]  # the tooltips
    assert "1.05" not in page


def test_group_by_tags_and_ungrouped(client, sweep):
    runs = ",".join(map(str, sweep["ext4"] + sweep["xfs"]))
    by_raid = client.get("/api/compare", params={"runs": runs, "group": "raid"}).json()
    assert by_raid["group"] == "raid" and [(c["name"], len(c["runs"])) for c in by_raid["configurations"]] == [
        ("raid=5", 6)
    ]
    assert by_raid["summary"] == "One configuration (6 runs): nothing to compare it with."
    # 6 runs, CV 9.8 %: a spread warning
    assert [w["code"] for w in by_raid["warnings"]] == ["high_spread"]
    by_fs = client.get(
        "/api/compare", params={"runs": runs, "group": "fs,raid", "baseline": sweep["xfs"][1], "mode": "relative"}
    ).json()
    assert [c["name"] for c in by_fs["configurations"]] == ["fs=ext4 raid=5", "fs=xfs raid=5"]
    assert by_fs["baseline_configuration"] == 2 and cell(by_fs, "block_io", 1, "put_block")["verdict"] == "worse"
    alone = client.get("/api/compare", params={"runs": runs, "group": "none"}).json()
    assert len(alone["configurations"]) == 6 and cell(alone, "block_io", 4, "put_block")["verdict"] == "unknown"
    assert alone["summary"].startswith("Single runs cannot tell a difference from noise: repeat each configuration")


def test_warnings_name_what_differs(client):
    small = post_csv(client, CONTRACT_LINE).json()["created"][0]
    large = post_csv(client, with_field(CONTRACT_LINE, 5, "1G")).json()["created"][0]
    old = post_csv(client, LINE_103).json()["created"][0]
    body = client.get("/api/compare", params={"runs": f"{small},{large}"}).json()
    assert [w["code"] for w in body["warnings"]] == ["file_size_differs"]
    assert f"512 MiB (#{small}); 1024 MiB (#{large})" in body["warnings"][0]["text"]
    assert [row["file_size_mib"] for row in body["setup"]] == [512, 1024]
    mixed = client.get("/api/compare", params={"runs": f"{small},{old}"}).json()
    codes = [w["code"] for w in mixed["warnings"]]
    assert "family_differs" in codes and "stdio" in mixed["warnings"][codes.index("family_differs")]["text"]


def test_ram_from_a_tag_makes_the_cached_hint(client):
    run_id = post_csv(client, CONTRACT_LINE, tag="ram_mib=4096").json()["created"][0]
    body = client.get("/api/compare", params={"runs": str(run_id)}).json()
    assert body["setup"][0]["ram_mib"] == 4096
    hints = cell(body, "block_io", 1, "put_block")["hints"]
    assert {
        "code": "cached",
        "text": "probably cached: the file size (512 MiB) is under twice the RAM (4096 MiB); use -s 8192M or more",
    } in hints


def test_the_runners_limiter_evidence_comes_before_the_line_only_guess(client):
    """The runner's limiter for this line (document["runs"][i]["tests"][test]["limiter"], the entry whose csv is
    the line) replaces the guess with the same code; another repeat's evidence is not this line's."""
    limiter = {
        "code": "cpu_bound",
        "text": "runner: bonnie++ was on CPU 99 % of the test, 85 % in user mode",
        "evidence": {"user_pct": 85},
    }
    other = {"code": "device_bound", "text": "another repeat's evidence", "evidence": {}}
    document = {
        "runs": [
            {"index": 0, "csv": "1.98,other line", "tests": {"putc": {"limiter": other}}},
            {
                "index": 1,
                "csv": CONTRACT_LINE,
                "tests": {"putc": {"limiter": limiter}, "seeks": {"limiter": "not an object"}},
            },
        ]
    }
    run_id = client.post("/api/runs", json={"csv": CONTRACT_LINE, "document": document}).json()["created"][0]
    body = client.get("/api/compare", params={"runs": str(run_id)}).json()
    hints = cell(body, "block_io", 1, "putc")["hints"]
    # the line alone would say "CPU-bound (96 % CPU)": the runner's text stands instead, first
    assert hints[0] == {"code": "cpu_bound", "text": limiter["text"]}
    assert [h["code"] for h in hints] == ["cpu_bound", "per_char"]
    assert [h["code"] for h in cell(body, "seeks", 1, "seeks")["hints"]] == ["too_fast"]


def test_a_runner_line_next_to_a_bonnie_line_warns_that_seek_cpu_differs(client):
    """The runner's seek %CPU is the seekers' own; bonnie++'s is the whole process's per thread."""
    bonnie = post_csv(client, CONTRACT_LINE).json()["created"][0]
    runner = post_csv(client, with_field(CONTRACT_LINE, 1, "bonnieboard-0.1.0")).json()["created"][0]
    body = client.get("/api/compare", params={"runs": f"{bonnie},{runner}"}).json()
    codes = [w["code"] for w in body["warnings"]]
    assert codes == ["seek_cpu_differs"], codes
    assert f"bonnie++ (#{bonnie}); bonnieboard-runner (#{runner})" in body["warnings"][0]["text"]
    alone = client.get("/api/compare", params={"runs": f"{runner}"}).json()
    assert alone["warnings"] == []


def test_the_matrix_reads_min_effect_as_compare_does():
    from app.compare import matrix
    from app.errors import BadRequest

    asked = matrix.read_request(rows="raid", cols="fs", test=None, runs=[""], baseline=None, min_effect="1.10")
    assert matrix.permalink(asked) == "/matrix?rows=raid&cols=fs&test=put_block&min_effect=1.1"
    with pytest.raises(BadRequest, match="min_effect must be"):
        matrix.read_request(rows="raid", cols="fs", test=None, runs=[""], baseline=None, min_effect="11")


def test_a_test_that_never_ran_has_no_hints(client):
    """bonnie++ -f skips putc and getc: no result there for the cached or per-char hint to explain."""
    line = CONTRACT_LINE
    for index in (9, 10, 15, 16, 38, 41):  # putc, getc: value, %CPU, latency
        line = with_field(line, index, "")
    run_id = post_csv(client, line, tag="ram_mib=4096").json()["created"][0]
    repeat = post_csv(client, with_field(line, 4, "7"), tag="ram_mib=4096").json()["created"][0]
    for runs, group in ((str(run_id), "params"), (f"{run_id},{repeat}", "none"), (f"{run_id},{repeat}", "params")):
        body = client.get("/api/compare", params={"runs": runs, "group": group}).json()
        for index in range(len(body["configurations"])):
            for test in ("putc", "getc"):
                assert cell(body, "block_io", index + 1, test)["status"] == "not_run"
                assert cell(body, "block_io", index + 1, test)["hints"] == []
            assert "cached" in [h["code"] for h in cell(body, "block_io", index + 1, "put_block")["hints"]]


def test_fifty_configurations_answer_in_at_most_600_kb_with_every_figure_they_have(client):
    """bench/compare_weight.py's 50 runs (1.9x corpus lines, a machine each: 50 configurations of one run): 1.1 MB
    when every cell listed its 31 figures, most of them null; each non-null figure is still there."""
    corpus = [
        line
        for path in sorted(CORPUS_DIR.glob("*.csv"))
        for line in path.read_text().splitlines()
        if line.startswith("1.9")
    ]
    lines = []
    for i in range(50):
        fields = corpus[i % len(corpus)].split(",")
        fields[2] = f"weight-host-{i:03d}"
        lines.append(",".join(fields))
    ids = post_csv(client, "\n".join(lines) + "\n", tag=["fs=ext4"]).json()["created"]
    assert len(ids) == 50
    for mode in ("absolute", "relative"):
        response = client.get("/api/compare", params={"runs": ",".join(map(str, ids)), "mode": mode})
        assert len(response.content) <= 600_000, (mode, len(response.content))
        body = response.json()
        assert len(body["configurations"]) == 50
        cells = [cell for chart in body["charts"] for entry in chart["configurations"] for cell in entry["tests"]]
        assert all(None not in cell.values() for cell in cells)
        cpu = next(chart for chart in body["charts"] if chart["key"] == "cpu")
        assert any("cpu_per_work" in cell for entry in cpu["configurations"] for cell in entry["tests"])
        others = [chart for chart in body["charts"] if chart["key"] != "cpu"]
        assert not any(
            key.startswith("cpu_per_work")
            for chart in others
            for entry in chart["configurations"]
            for cell in entry["tests"]
            for key in cell
        )
