"""The matrix view (/matrix, /api/matrix) and the exports of a comparison (/api/compare.csv, and the
selected runs' own lines from /api/runs/export.csv?runs=...), on a real database."""

import csv
import io
import math

import pytest

from app.compare.figures import RunFigures
from app.compare.matrix import MAX_TABLE_COLUMNS, _table, matrix_keys
from app.compare.request import read_request
from tests.compare_data import sweep_line
from tests.helpers import CONTRACT_LINE, post_csv, with_field

# A 2 x 2 sweep (raid x fs), each cell 2 runs: put_block and getc in KiB/s.
SWEEP_2X2 = {
    ("5", "ext3"): [(100_000, 1000), (102_000, 1020)],
    ("5", "xfs"): [(150_000, 1100), (153_000, 1122)],
    ("6", "ext3"): [(80_000, 990), (81_600, 1010)],
    ("6", "xfs"): [(120_000, 1000), (122_400, 1020)],
}


@pytest.fixture
def sweep(client) -> list[int]:
    ids = []
    for (raid, fs), rows in SWEEP_2X2.items():
        lines = "".join(sweep_line(f"raid{raid}-{fs}", *row) + "\n" for row in rows)
        ids += post_csv(client, lines, tag=[f"raid={raid}", f"fs={fs}"]).json()["created"]
    post_csv(client, sweep_line("untagged", 1, 1))  # no tags: never in a matrix
    return ids


def test_matrix_cells_are_the_configurations_means_of_the_compare_api(client, sweep):
    runs = ",".join(map(str, sweep))
    matrix = client.get(f"/api/matrix?rows=raid&cols=fs&test=put_block&runs={runs}").json()
    compare = client.get(f"/api/compare?runs={runs}&group=raid,fs").json()
    assert matrix["columns"] == ["ext3", "xfs"] and [r["value"] for r in matrix["rows"]] == ["5", "6"]
    block = next(c for c in compare["charts"] if c["key"] == "block_io")
    index = block["tests"].index("put_block")
    means = {e["configuration"]: e["tests"][index] for e in block["configurations"]}
    for row in matrix["rows"]:
        for cell in row["cells"]:
            expected = means[cell["configuration"]]  # /api/compare leaves its null figures out
            assert (cell["mean"], cell["n"], cell["ci95"], cell["ratio"], cell["verdict"]) == (
                expected.get("mean"),
                expected["n"],
                expected.get("ci95"),
                expected.get("ratio"),
                expected.get("verdict"),
            )
    cells = {
        (row["value"], col): cell
        for row in matrix["rows"]
        for col, cell in zip(matrix["columns"], row["cells"], strict=True)
    }
    assert cells[("5", "ext3")]["baseline"] and cells[("5", "ext3")]["mean"] == 101_000  # (100000 + 102000) / 2
    assert cells[("5", "xfs")]["mean"] == 151_500 and cells[("5", "xfs")]["ratio"] == 1.5  # 151500 / 101000
    assert cells[("5", "xfs")]["verdict"] == "better"
    # Block I/O family: of putc, put_block, rewrite, getc, get_block the contract line measures putc, put_block
    # and getc (the others are +++++); putc is the same (×1), put_block ×1.5, getc 1111/1010 (means), so the
    # geometric mean of the ratios is (1 * 1.5 * 1111/1010) ** (1/3) = 1.65 ** (1/3) = 1.1817.
    # Families are over the tests every run of the view measured (rewrite and get_block are +++++ in these lines),
    # per-char apart from block I/O. Block I/O: put_block alone, geometric means √(150,000 × 153,000) /
    # √(100,000 × 102,000) = 1.5 exactly; per-char: putc the same (×1), getc √(1,100 × 1,122 / (1,000 × 1,020)) =
    # √1.21 = 1.1, so √(1 × 1.1) = 1.0488.
    family = next(f for f in cells[("5", "xfs")]["families"] if f["family"] == "block_io")
    assert (family["tests"], family["of"]) == (["put_block"], 3)
    assert family["ratio_geomean"] == pytest.approx(1.5, abs=1e-4) and family["verdict"] == "better"
    assert family["ratio_ci95"][0] < 1.5 < family["ratio_ci95"][1] and family["p_adjusted"] >= family["p_value"]
    per_char = next(f for f in cells[("5", "xfs")]["families"] if f["family"] == "per_char")
    assert per_char["tests"] == ["putc", "getc"] and per_char["ratio_geomean"] == pytest.approx(1.1**0.5, abs=1e-4)
    assert {f["family"] for f in cells[("5", "xfs")]["families"]} == {
        "block_io",
        "per_char",
        "seeks",
        "metadata",
    }  # never one score
    excluded = {f["family"]: f["excluded"] for f in matrix["families"]}
    assert excluded["block_io"] == [
        {"test": "rewrite", "reason": "+++++ in every cell"},
        {"test": "get_block", "reason": "+++++ in every cell"},
    ]
    # without runs=: the runs that have both tags
    assert client.get("/api/matrix?rows=raid&cols=fs").json()["runs"] == sweep
    # another baseline cell: the verdicts follow
    other = client.get(f"/api/matrix?rows=raid&cols=fs&runs={runs}&baseline={sweep[2]}").json()
    assert other["rows"][0]["cells"][1]["baseline"] and other["rows"][0]["cells"][0]["ratio"] == pytest.approx(
        101_000 / 151_500, abs=1e-4
    )


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("rows=raid&cols=raid", "two different tag keys"),
        ("rows=raid&cols=fs&test=nope", "test must be one of"),
        ("rows=raid,fs&cols=x", "rows must be one tag key"),
        ("rows=nothing&cols=none", "no runs have both tags"),
        ("rows=raid&cols=fs&runs=1,x", "is not an id"),
    ],
)
def test_matrix_refuses_bad_queries_naming_the_parameter(client, sweep, query, message):
    response = client.get(f"/api/matrix?{query}")
    assert response.status_code == 400 and message in response.json()["detail"]
    page = client.get(f"/matrix?{query}")
    assert page.status_code == 400 and message in page.text


def test_matrix_page_shows_the_cells_and_is_linked_from_the_compare_page(client, sweep):
    runs = ",".join(map(str, sweep))
    html = client.get(f"/compare?runs={runs}&group=raid,fs").text
    link = f"/matrix?rows=raid&amp;cols=fs&amp;test=put_block&amp;runs={runs}"
    assert link in html
    page = client.get(link.replace("&amp;", "&")).text
    assert 'class="matrix-table"' in page and page.count('class="matrix-cell') == 4
    assert 'data-mean="151500.0"' in page and "+50.0 % ▲" in page
    assert page.count("data-matrix-row=") == 2  # one small chart per row value
    # Families over the tests every run measured: block I/O over put_block alone (rewrite and block read are +++++
    # in every cell), per-char apart; seeks are +++++ everywhere: no Seeks summary, and a warning says why
    assert "<span>Block I/O ×1.50 ▲ (1/3 tests)</span> · <span>Per-char I/O ×1.05" in page
    assert (
        "Block I/O (block tests) over 1 of 3 tests (rewrite: +++++ in every cell; block read: +++++ in every cell)"
        in page
    )
    assert "Seeks over 0 of 1 tests (random seeks: +++++ in every cell)" in page
    assert client.get("/matrix").status_code == 200  # the form alone
    # the compare page names the two keys in a link of its own, and offers the runs' lines with bonnie++'s header
    assert "matrix view, raid × fs" in html
    assert f"/api/runs/export.csv?header=1&amp;runs={runs}" in html


def test_a_typed_matrix_leaves_the_sample_data_out_unless_a_tag_asks_for_it(client, sweep):
    """Without runs=, the newest runs with both tags: a board's own, never the sample runs beside them (their RAM
    would set the caveats); tag= narrows them, and source=sample_data asks for the samples."""
    sample = post_csv(client, sweep_line("sample", 90_000, 900), tag=["raid=5", "fs=ext3", "source=sample_data"])
    [sample_id] = sample.json()["created"]
    own = client.get("/api/matrix?rows=raid&cols=fs").json()
    assert own["runs"] == sweep
    narrowed = client.get("/api/matrix?rows=raid&cols=fs&tag=raid=6").json()
    assert narrowed["runs"] == [run for run in sweep if run in narrowed["runs"]] and len(narrowed["runs"]) == 4
    assert [row["value"] for row in narrowed["rows"]] == ["6"]
    assert client.get("/api/matrix?rows=raid&cols=fs&tag=source=sample_data").json()["runs"] == [sample_id]
    page = client.get("/matrix?rows=raid&cols=fs&tag=raid=6").text
    assert page.count('class="matrix-cell') == 2
    refused = client.get("/api/matrix?rows=raid&cols=fs&tag=raid=7")
    assert refused.status_code == 400 and "raid=7" in refused.json()["detail"]


# The display units of compare.csv and what each is in the stored unit (app.units.UNIT_STEPS).
DIVISORS = {"KiB/s": 1, "MiB/s": 1024, "GiB/s": 1024**2, "µs": 1, "ms": 1000, "s": 1_000_000}
DIVISORS |= {unit: 1 for unit in ("seeks/s", "files/s", "%CPU")}


def test_compare_csv_holds_the_numbers_of_the_api(client, sweep):
    runs = ",".join(map(str, sweep))
    api = client.get(f"/api/compare?runs={runs}&group=raid,fs&baseline={sweep[2]}").json()  # null figures left out
    response = client.get(f"/api/compare.csv?runs={runs}&group=raid,fs&baseline={sweep[2]}")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert len(rows) == sum(len(c["configurations"]) * len(c["tests"]) for c in api["charts"])
    by_key = {(r["chart"], r["test"], int(r["configuration"])): r for r in rows}
    for chart in api["charts"]:
        for entry in chart["configurations"]:
            for cell in entry["tests"]:
                row = by_key[(chart["key"], cell["test"], entry["configuration"])]
                assert row["n"] == str(cell["n"]) and row["verdict"] == (cell.get("verdict") or "")
                # Figures in the test's unit are in the unit the page's table shows; ratios are as they are.
                divisor = DIVISORS[row["unit"]]
                for name, expected in (
                    ("mean", cell.get("mean")),
                    ("sd", cell.get("sd")),
                    ("ci95_low", (cell.get("ci95") or [None])[0]),
                ):
                    if expected is None:
                        assert row[name] == ""
                    else:
                        assert float(row[name]) * divisor == pytest.approx(expected, rel=1e-12)
                assert (float(row["ratio"]) if row["ratio"] else None) == cell.get("ratio")
    put_block = by_key[("block_io", "put_block", 2)]
    # 151,500 KiB/s is 147.9 MiB/s on the page: the CSV says 147.94921875 MiB/s (exactly 151,500 / 1024).
    assert (put_block["name"], put_block["unit"], put_block["baseline"], put_block["mean"]) == (
        "raid=5 fs=xfs",
        "MiB/s",
        "1",
        "147.94921875",
    )
    assert by_key[("latency", "put_block", 2)]["unit"] in ("µs", "ms", "s")
    assert not math.isnan(float(by_key[("block_io", "put_block", 1)]["ratio"]))
    # the verdicts' new fields, each CI pair as two columns: CPU per unit of work in the %CPU rows
    cpu_chart = next(c for c in api["charts"] if c["key"] == "cpu")
    for entry in cpu_chart["configurations"]:
        for cell in entry["tests"]:
            row = by_key[("cpu", cell["test"], entry["configuration"])]
            assert row["work_unit"] == cell.get("work_unit") and row["verdict"] == ""
            assert row["cpu_per_work_verdict"] == (cell.get("cpu_per_work_verdict") or "")
            low = row["cpu_per_work_ratio_ci95_low"]
            assert (float(low) if low else None) == (
                cell.get("cpu_per_work_ratio_ci95")[0] if cell.get("cpu_per_work_ratio_ci95") else None
            )
    assert {"detectable_pct", "runs_needed", "p_value", "p_adjusted", "bound_ratio"} <= set(rows[0])
    assert client.get("/api/compare.csv?runs=").status_code == 400


def test_runs_export_keeps_the_selected_runs_original_lines(client, sweep):
    picked = [sweep[3], sweep[0]]
    response = client.get(f"/api/runs/export.csv?runs={picked[0]},{picked[1]}")
    assert response.status_code == 200
    lines = response.text.splitlines()
    # oldest first, each exactly as uploaded
    assert lines == [client.get(f"/api/runs/{run_id}").json()["raw_line"] for run_id in sorted(picked)]
    assert client.get("/api/runs/export.csv?runs=99999999999").text == ""  # no such run: nothing
    assert client.get("/api/runs/export.csv?runs=1;2").status_code == 400
    assert len(client.get("/api/runs/export.csv?runs=").text.splitlines()) == len(sweep) + 1  # empty: no filter


@pytest.mark.parametrize("start", ["\t", "\r"])
def test_a_name_starting_with_a_tab_or_carriage_return_never_gets_in(client, start):
    """The other two starts a spreadsheet reads as a formula are control characters, which no text field holds."""
    name = f'{start}HYPERLINK("http://evil.example/")'.replace(",", ";")
    response = post_csv(client, with_field(sweep_line("x", 100_000, 1000), 2, name))
    assert response.status_code == 422
    assert [(e["line"], e["field"]) for e in response.json()["errors"]] == [(1, "name")]


@pytest.mark.parametrize("start", ["=", "+", "-", "@"])
def test_compare_csv_names_are_never_formulas(client, start):
    """A machine name (or label, or tag) that a spreadsheet would run as a formula starts with ' in the CSV;
    the runs' own export keeps the uploaded line as it is."""
    name = f'{start}HYPERLINK("http://evil.example/")'.replace(",", ";")
    line = with_field(sweep_line("x", 100_000, 1000), 2, name)
    run_id = post_csv(client, line).json()["created"][0]
    other = post_csv(client, sweep_line("plain", 100_000, 1000)).json()["created"][0]
    rows = list(csv.DictReader(io.StringIO(client.get(f"/api/compare.csv?runs={run_id},{other}").text)))
    names = {row["name"] for row in rows}
    assert names == {"'" + name, "plain"}, names
    assert all(
        (row["unit"], float(row["mean"])) == ("MiB/s", 100_000 / 1024)
        for row in rows
        if (row["chart"], row["test"]) == ("block_io", "put_block")
    )
    assert client.get(f"/api/runs/export.csv?runs={run_id}").text == line + "\n"


def test_min_effect_on_the_matrix_through_the_http_api(client, sweep):
    # put_block raid=5: xfs 151,500 against ext3 101,000, ×1.5. At the default ×1.05 it is better, and so is the
    # block I/O family (put_block alone: ×1.5). With min_effect=1.6 neither reaches the minimum effect: within noise,
    # whatever the p-values; the answer and its /compare link carry the value asked for.
    runs = ",".join(map(str, sweep))
    query = f"/api/matrix?rows=raid&cols=fs&test=put_block&runs={runs}"

    def xfs_cell(body):
        row = next(r for r in body["rows"] if r["value"] == "5")
        return row["cells"][body["columns"].index("xfs")]

    default = client.get(query).json()
    cell = xfs_cell(default)
    block = next(f for f in cell["families"] if f["family"] == "block_io")
    assert default["min_effect"] == 1.05 and (cell["verdict"], block["verdict"]) == ("better", "better")
    strict_response = client.get(f"{query}&min_effect=1.6")
    assert strict_response.status_code == 200
    strict = strict_response.json()
    cell = xfs_cell(strict)
    block = next(f for f in cell["families"] if f["family"] == "block_io")
    assert strict["min_effect"] == 1.6 and (cell["verdict"], block["verdict"]) == ("within_noise", "within_noise")
    assert cell["p_adjusted"] == xfs_cell(default)["p_adjusted"]  # the same evidence, a larger bar to clear
    assert "min_effect=1.6" in strict["compare_url"]
    refused = client.get(f"{query}&min_effect=0.5")
    assert refused.status_code == 400 and "min_effect" in refused.json()["detail"]


def test_a_cell_decided_by_a_too_fast_bound_says_the_bound(client):
    """Async's seq_create is +++++ in every run (over 32,768 files/s), sync's measured: sync is worse by at least
    the bound, and its cell says so in words, not by its colour alone. Six runs a side: the bound decides once its
    rank test holds with the page's other verdicts counted (3 v 3 runs are separated by chance once in ten)."""
    ids = []
    for mode, created in (("async", ["+++++"] * 6), ("sync", ["954", "960", "950", "951", "955", "957"])):
        lines = ""
        for seed, value in enumerate(created):
            line = with_field(with_field(CONTRACT_LINE, 4, str(seed)), 26, value)
            lines += with_field(line, 27, "+++" if value == "+++++" else "94") + "\n"
        ids += post_csv(client, lines, tag=["fs=ext4", f"mode={mode}"]).json()["created"]
    query = f"rows=fs&cols=mode&test=seq_create&runs={','.join(map(str, ids))}&baseline={ids[0]}"
    data = client.get(f"/api/matrix?{query}").json()
    sync = data["rows"][0]["cells"][1]
    assert sync["verdict"] == "worse" and sync["ratio"] is None and sync["bound_ratio"] == round(960 / 32_768, 4)
    page = client.get(f"/matrix?{query}").text
    assert '<small class="rel">▼ at least ×34 slower</small>' in page


def figures_tagged(*tag_sets: dict[str, str]) -> list[RunFigures]:
    return [RunFigures(i + 1, "m", None, tags, "1.98", None, ()) for i, tags in enumerate(tag_sets)]


def test_the_compare_page_s_matrix_pivots_by_two_keys_that_make_a_grid():
    """The sample sweep's fs, dev and mode: dev follows from fs (tmpfs on ram, the others on loop), so the matrix is
    fs x mode, whatever the grouping; a study's config=ext4 beside fs=ext4 is one key, and one key is no matrix."""

    def keys(group, runs):
        return matrix_keys(read_request(runs=["1"], mode=None, baseline=None, group=group, min_effect=None), runs)

    sweep = figures_tagged(
        *(
            {"fs": fs, "dev": "ram" if fs == "tmpfs" else "loop", "mode": mode}
            for fs in ("ext4", "tmpfs", "xfs")
            for mode in ("async", "sync")
            for _ in range(3)
        )
    )
    assert keys("fs,dev,mode", sweep) == keys(None, sweep) == ["fs", "mode"]
    own = figures_tagged(*({"fs": fs, "dev": dev} for fs in ("ext4", "xfs") for dev in ("sda", "nvme")))
    assert keys(None, own) == ["dev", "fs"]
    assert keys(None, figures_tagged({"fs": "ext4", "config": "ext4"}, {"fs": "xfs", "config": "xfs"})) == []


def test_a_matrix_of_many_columns_and_few_rows_is_drawn_transposed():
    columns = [str(c) for c in range(MAX_TABLE_COLUMNS + 2)]
    built = {
        "rows_key": "fs",
        "cols_key": "chunk",
        "columns": columns,
        "rows": [{"value": fs, "cells": [{"c": (fs, c)} for c in columns]} for fs in ("ext4", "xfs")],
    }
    table = _table(built)
    assert table["transposed"] and table["columns"] == ["fs=ext4", "fs=xfs"]
    assert [row["heading"] for row in table["rows"]] == [f"chunk={c}" for c in columns]
    assert table["rows"][1]["cells"][1] == ("fs=xfs", {"c": ("xfs", "1")})
    built["columns"] = columns[:2]
    built["rows"] = [{"value": r["value"], "cells": r["cells"][:2]} for r in built["rows"]]
    assert not _table(built)["transposed"]


def test_a_label_edit_leaves_the_matrix_statistics_as_made_and_a_tag_edit_makes_them_again(client, sweep, monkeypatch):
    from app.compare import matrix

    made: list[int] = []

    def counted(*args, **kwargs):
        made.append(1)
        return compare(*args, **kwargs)

    compare = matrix.compare
    monkeypatch.setattr(matrix, "compare", counted)
    matrix._compared.cache_clear()  # another test's equal runs made one
    url = f"/api/matrix?rows=raid&cols=fs&test=put_block&runs={','.join(map(str, sweep))}"
    first = client.get(url).json()
    assert len(made) == 1
    client.patch(f"/api/runs/{sweep[0]}", json={"label": "renamed"}).raise_for_status()
    assert client.get(url).json() == first and len(made) == 1
    page = client.get(url.replace("/api/matrix", "/matrix"))
    assert page.status_code == 200 and len(made) == 1

    client.patch(f"/api/runs/{sweep[0]}", json={"tags": {"raid": "6", "fs": "ext3"}}).raise_for_status()
    moved = client.get(url).json()
    assert len(made) >= 2  # this read's, or the re-warm's after the write as well
    cells = {
        (row["value"], col): cell
        for row in moved["rows"]
        for col, cell in zip(moved["columns"], row["cells"], strict=True)
    }
    assert cells[("6", "ext3")]["n"] == 3 and cells[("5", "ext3")]["n"] == 1
