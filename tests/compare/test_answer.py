"""The answer rows (app/compare/answer.py) on comparisons built by hand: every figure below is worked out
from the cells' numbers in the comment beside it."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from app import bonnie
from app.compare import answer
from app.compare.comparison import Cell, Chart, Comparison, ConfigurationCells, ConfigurationEntry, SetupRow
from app.compare.engine import CHARTS, RATE_CHART_KEYS, RunFigures, compare
from app.compare.request import parse_group
from app.config import DEFAULT_MIN_EFFECT
from app.ingest.parsing import parse_line
from tests.compare_data import SWEEP, cell_of, embedded_data, sweep_csv, sweep_line
from tests.helpers import post_csv

BASE, OTHER, THIRD = 1, 2, 3
NAMES = {BASE: "fs=ext4", OTHER: "fs=xfs", THIRD: "fs=btrfs"}
CACHED = {"code": "cached", "text": "probably cached: …"}
CPU = {"code": "cpu_bound", "text": "CPU-bound (95 % CPU): …"}
TOO_FAST = {"code": "too_fast", "text": "all runs +++++ …"}


def cell(test: str, verdict: str | None = None, **figures: Any) -> Cell:
    """A measured cell of 3 runs with the figures given, every other figure null."""
    return cell_of(
        test,
        status=figures.pop("status", "ok"),
        n=figures.pop("n", 3),
        n_too_fast=figures.pop("n_too_fast", 0),
        geo_ratio=figures.pop("geo", None),
        ratio=figures.pop("ratio", None),
        ratio_ci95=figures.pop("ci", None),
        bound_ratio=figures.pop("bound", None),
        verdict=verdict,
        detectable_pct=figures.pop("detectable_pct", None),
        hints=list(figures.pop("hints", ())),
    )


def comparison(cells: dict[int, dict[str, Cell]], *, size_mib=3072, ram_mib=24105) -> Comparison:
    """A compare() result holding `cells` (configuration -> test -> cell); every other rate cell is a
    measured one within noise of ×1.00, without hints."""
    charts = []
    for spec in CHARTS:
        if spec.key not in RATE_CHART_KEYS:
            continue
        tests = [t.name for t in bonnie.CATALOG if _chart_of(t.name) == spec.key]
        entries = []
        for cid in cells:
            default = None if cid == BASE else "within_noise"
            entries.append(
                ConfigurationCells(
                    cid, [cells[cid].get(t) or cell(t, default, geo=None if cid == BASE else 1.0) for t in tests]
                )
            )
        charts.append(Chart(spec.key, spec.unit, spec.higher_is_better, tests, [], entries, []))
    return Comparison(
        mode="absolute",
        baseline=None,
        runs=[],
        group="fs",
        configurations=[
            ConfigurationEntry(cid, NAMES[cid], [cid * 10, cid * 10 + 1, cid * 10 + 2], {}) for cid in cells
        ],
        baseline_configuration=BASE,
        min_effect=DEFAULT_MIN_EFFECT,
        error_control="holm",
        charts=charts,
        warnings=[],
        setup=[SetupRow(cid * 10, cid, "m", "", size_mib, "", None, "", None, ram_mib, {}) for cid in cells],
    )


def _chart_of(test: str) -> str:
    spec = bonnie.BY_NAME[test]
    if spec.family == bonnie.SEEKS:
        return "seeks"
    if spec.family == bonnie.BLOCK_IO:
        return "block_io"
    return "metadata_stat" if spec.operation == bonnie.STAT else "metadata"


def row(data: Comparison, family: str) -> dict[str, Any]:
    return next(r for r in answer.rows(data, RATE_CHART_KEYS) if r["family"] == family)


def test_a_storage_win_names_the_configuration_and_its_factor_with_the_interval():
    data = comparison(
        {BASE: {}, OTHER: {"put_block": cell("put_block", "better", geo=1.2, ci=[1.1, 1.31])}}, ram_mib=None
    )
    block_write = row(data, "block_write")
    assert block_write["outcome"] == "better" and block_write["mark"] == "▲"
    assert block_write["who"] == "fs=xfs" and block_write["configuration"] == OTHER and block_write["named"] == [OTHER]
    assert block_write["factor"] == "×1.20 faster (95 % CI ×1.10 to ×1.31)"
    assert block_write["chart"] == "block_io"
    # no run's RAM is known and 3 GiB fits a common machine's page cache twice over: nothing says it was the disk
    assert block_write["caveat_code"] == "ram_unknown"
    assert block_write["caveat"] == (
        "RAM unknown: may be the page cache (file 3 GiB) — tag the runs ram_mib=<the machine's RAM in MiB>"
    )
    assert block_write["outcome"] == "better"  # a caution, not a finding: the verdict stands
    # the RAM known (a runner's document or a ram_mib tag) and no counter saying "cached": no caveat
    data = replace(data, setup=[replace(r, ram_mib=24105) for r in data.setup])
    assert row(data, "block_write")["caveat"] is None
    # and the file tests' working set is their files, not -s: no RAM caveat on them
    assert row(comparison({BASE: {}, OTHER: {}}, ram_mib=None), "files")["caveat"] is None


def test_a_cached_win_is_not_a_storage_win_and_says_what_to_rerun_with():
    data = comparison({BASE: {}, OTHER: {"put_block": cell("put_block", "better", geo=3.06, hints=[CACHED])}})
    block_write = row(data, "block_write")
    assert block_write["outcome"] == "not_disk" and block_write["mark"] == "⚠"
    # 3072 MiB = 3 GiB; 2 × 24,105 MiB = 48,210 MiB = 47.08 GiB: -s 48G is the first whole GiB above
    assert block_write["caveat"] == "page cache (file 3 GiB < 2 × RAM): not a disk result — rerun with -s 48G"
    assert block_write["factor"] == "×3.06 faster"


def test_cached_file_tests_ask_for_more_files_not_a_bigger_file():
    """The runner's `cached` on a stat test (no device reads): -s does not size the file tests' working set."""
    data = comparison({BASE: {}, OTHER: {"seq_stat": cell("seq_stat", "better", geo=1.3, hints=[CACHED])}})
    files = row(data, "files")
    assert files["outcome"] == "not_disk"
    assert files["caveat"] == "page cache held the files: not a disk result — raise -n"


def test_a_cpu_bound_baseline_makes_a_win_not_a_disk_result():
    data = comparison(
        {
            BASE: {"get_block": cell("get_block", hints=[CPU])},
            OTHER: {"get_block": cell("get_block", "better", geo=1.5)},
        },
        ram_mib=None,
    )
    block_read = row(data, "block_read")
    assert block_read["outcome"] == "not_disk"
    assert block_read["caveat"] == "CPU-bound: measures the CPU, not the disk"


def test_a_slower_configuration_is_said_as_a_slow_down_never_as_a_fraction():
    # ×0.5 (CI ×0.4 to ×0.625) is ×2 slower (CI 1/0.625 = ×1.6 to 1/0.4 = ×2.5)
    data = comparison({BASE: {}, OTHER: {"rewrite": cell("rewrite", "worse", geo=0.5, ci=[0.4, 0.625])}}, ram_mib=None)
    rewrite = row(data, "rewrite")
    assert rewrite["outcome"] == "worse" and rewrite["mark"] == "▼"
    assert rewrite["who"] == "fs=xfs slower"
    assert rewrite["factor"] == "×2.00 slower (95 % CI ×1.60 to ×2.50)"


def test_too_fast_bounds_are_rounded_down_and_the_baseline_caveat_says_raise_n():
    # bounds 0.0681 and 0.2239: 1/0.0681 = 14.68 -> at least ×14; 1/0.2239 = 4.466 -> at least ×4.46
    base = {t: cell(t, status="too_fast", n_too_fast=3, hints=[TOO_FAST]) for t in ("seq_create", "seq_del")}
    data = comparison(
        {
            BASE: base,
            OTHER: {
                "seq_create": cell("seq_create", "worse", bound=0.0681),
                "seq_del": cell("seq_del", "worse", bound=0.2239),
            },
        }
    )
    files = row(data, "files")
    assert files["outcome"] == "worse" and files["chart"] == "metadata"
    assert files["factor"] == "at least ×4.46 to ×14 slower"
    assert files["caveat"] == "+++++ in the baseline: raise -n"


def test_a_single_bound_is_said_alone():
    data = comparison({BASE: {}, OTHER: {"ran_create": cell("ran_create", "better", bound=2.5)}})
    assert row(data, "files")["factor"] == "at least ×2.50 faster in 1 of 6 tests"


def test_a_within_noise_row_s_caveat_is_of_the_results_it_sums_up():
    """The create and delete tests within noise (other load competed), the stat tests +++++ and cached, unknown: the
    row says what held the create/delete figures, not that the page cache held the files."""
    noisy = {"code": "noisy", "text": "other load competed …"}
    stat = {
        t: cell(t, "unknown", status="too_fast", n_too_fast=3, hints=[CACHED, TOO_FAST])
        for t in ("seq_stat", "ran_stat")
    }
    base_stat = {
        t: cell(t, status="too_fast", n_too_fast=3, hints=[CACHED, TOO_FAST]) for t in ("seq_stat", "ran_stat")
    }
    moved = ("seq_create", "seq_del", "ran_create", "ran_del")
    data = comparison(
        {
            BASE: base_stat | {t: cell(t, hints=[noisy]) for t in moved},
            OTHER: stat
            | {t: cell(t, "within_noise", geo=1.27 if t == "seq_create" else 1.1, hints=[noisy]) for t in moved},
        }
    )
    files = row(data, "files")
    assert files["outcome"] == "within_noise" and files["factor"] == "largest seen ×1.27 faster (fs=xfs), within noise"
    assert files["caveat"] == "other load competed (the runner's counters): rerun on a quiet machine"


def test_within_noise_everywhere_says_so_with_the_largest_difference_seen():
    # |ln 0.8| = 0.223 > ln 1.1 = 0.095: the ×0.8 one is the largest, i.e. 1/0.8 = ×1.25 slower
    data = comparison(
        {
            BASE: {},
            OTHER: {"seeks": cell("seeks", "within_noise", geo=1.1)},
            THIRD: {"seeks": cell("seeks", "within_noise", geo=0.8)},
        },
        ram_mib=None,
    )
    seeks = row(data, "seeks")
    assert seeks["outcome"] == "within_noise" and seeks["mark"] == "~"
    assert seeks["who"] == "no difference beyond noise"
    assert seeks["factor"] == "largest seen ×1.25 slower (fs=btrfs), within noise"
    assert seeks["caveat"] is None and seeks["named"] == [THIRD] and seeks["configuration"] is None


def test_no_change_at_all_is_said_so():
    # every other rate cell of comparison() is within noise at ×1.00 (×0.999 too rounds to it)
    data = comparison({BASE: {}, OTHER: {"seeks": cell("seeks", "within_noise", geo=0.999)}}, ram_mib=None)
    assert row(data, "seeks")["factor"] == "×1.00: no change seen"


def test_noise_under_the_cache_still_carries_the_caveat():
    data = comparison({BASE: {"put_block": cell("put_block", hints=[CACHED])}, OTHER: {}}, size_mib=1536, ram_mib=1024)
    block_write = row(data, "block_write")
    assert block_write["outcome"] == "within_noise"
    # 1,536 MiB = 1.5 GiB; 2 × 1,024 MiB = 2 GiB
    assert block_write["caveat"] == "page cache (file 1.5 GiB < 2 × RAM): not a disk result — rerun with -s 2G"


def test_the_best_of_several_better_configurations_leads():
    data = comparison(
        {
            BASE: {},
            OTHER: {"put_block": cell("put_block", "better", geo=1.3)},
            THIRD: {"put_block": cell("put_block", "better", geo=1.6)},
        },
        ram_mib=None,
    )
    block_write = row(data, "block_write")
    assert block_write["who"] == "fs=btrfs (and 1 more)" and block_write["factor"] == "×1.60 faster"


def test_unknown_verdicts_cannot_tell_and_ask_for_repeats():
    data = comparison({BASE: {}, OTHER: {"put_block": cell("put_block", "unknown", ratio=1.4)}}, ram_mib=None)
    block_write = row(data, "block_write")
    assert block_write["outcome"] == "unknown" and block_write["who"] == "cannot tell"
    assert block_write["factor"] == "too few runs: repeat them, e.g. bonnie++ -x 5"


def test_a_family_no_configuration_ran_has_no_row_and_one_configuration_has_no_answer():
    not_run = {t: cell(t, status="not_run") for t in answer.QUESTIONS[-1].tests}
    data = comparison({BASE: dict(not_run), OTHER: dict(not_run)})
    assert [r["family"] for r in answer.rows(data, RATE_CHART_KEYS)] == [
        "block_write",
        "block_read",
        "rewrite",
        "seeks",
    ]
    single = comparison({BASE: {}})
    assert answer.rows(single, RATE_CHART_KEYS) == []


def test_the_lead_sentence_is_short_and_counts_the_rows_that_are_not_disk_results():
    data = comparison({BASE: {}, OTHER: {"put_block": cell("put_block", "better", geo=3.06, hints=[CACHED])}})
    rows = answer.rows(data, RATE_CHART_KEYS)
    text = answer.lead(data, rows)
    assert text == (
        "Each row against fs=ext4 (2 configurations, N = 3 each). 1 of 5 rows is not a disk result: read its caveat."
    )
    assert len(text.split()) <= 30
    assert answer.lead_chart(rows) == "block_io"


def test_on_the_engine_s_own_comparison_a_real_speed_up_leads():
    """tests/compare_data.py's sweep: put_block ×1.2 with 1 % spread on xfs (3 runs each), no RAM known."""
    runs = []
    for fs, rows in SWEEP.items():
        for put_block, getc in rows:
            parsed = parse_line(sweep_line(f"{fs}-box", put_block, getc), 1)
            runs.append(
                RunFigures(
                    len(runs) + 1, parsed.machine, None, {"fs": fs}, parsed.format_version, "2.00a", parsed.results
                )
            )
    data = compare(runs, grouping=parse_group("fs"))
    block_write = row(data, "block_write")
    assert block_write["outcome"] == "better" and block_write["who"] == "fs=xfs"
    # 120,000 / 100,000 exactly on each pair of runs: the geometric means' ratio is ×1.20
    assert block_write["factor"].startswith("×1.20 faster (95 % CI ×1.1")


def test_the_compare_and_matrix_pages_open_with_the_answer_and_the_summary_follows_the_charts(client):
    ids = []
    for fs in SWEEP:
        ids += post_csv(client, sweep_csv(fs), tag=[f"fs={fs}", "dev=loop"]).json()["created"]
    runs = ",".join(map(str, ids))
    html = client.get(f"/compare?runs={runs}&group=fs").text
    block_write = re.search(r'<tr class="answer-better" data-family="block_write"[^>]*>(.*?)</tr>', html, re.DOTALL)
    assert block_write, "no block-write row that names a faster configuration"
    assert "▲</span> fs=xfs" in block_write.group(1) and "×1.20 faster (95 % CI ×1.1" in block_write.group(1)
    # the answer, then the charts (the block I/O one first: its row leads), then the paragraph and the setup
    answer, first_chart = html.index('class="answer"'), html.index("<figure")
    assert answer < first_chart < html.index('<p id="summary">') < html.index('<details class="setup"')
    assert html.index('<figure class="chart chart-block_io"') == first_chart
    assert embedded_data(html)["answer"][0]["named"] == [2]  # fs=xfs, the second configuration
    # grouped: the baseline select offers the two configurations, not the six runs
    select = re.search(r'<select class="auto" name="baseline">(.*?)</select>', html, re.DOTALL).group(1)
    assert re.findall(r"<option value=\"(\d*)\"[^>]*>([^<]*)</option>", select) == [
        ("", "default: the first run"),
        (str(ids[0]), "fs=ext4 (N=3)"),
        (str(ids[3]), "fs=xfs (N=3)"),
    ]
    matrix = client.get(f"/matrix?rows=fs&cols=dev&runs={runs}").text
    assert matrix.index('class="answer"') < matrix.index('class="matrix-table"')
    assert 'data-family="block_write" data-outcome="better"' in matrix


# ==== Low power, bounds that chance gives, a caveat every row has ====


def test_a_row_the_page_could_not_have_seen_says_it_cannot_tell_with_its_runs():
    # the seeks row: ×8.77 slower, all three runs of one side below all three of the other, within noise on
    # a page whose 3 runs a side could have seen only changes past ×100: not "no difference beyond noise"
    data = comparison(
        {BASE: {}, OTHER: {"seeks": cell("seeks", "within_noise", geo=1 / 8.77, detectable_pct=12_000.0)}},
        ram_mib=None,
    )
    seeks = row(data, "seeks")
    assert seeks["outcome"] == "within_noise" and seeks["mark"] == "~"
    assert seeks["who"] == "cannot tell with 3 runs a side"
    assert seeks["factor"] == "×8.77 slower (fs=xfs) in these runs; N = 3 cannot tell changes smaller than ×100 here"
    # two significant figures below ×100; and "no difference" where a 10 % change could have been seen
    data.charts[1].configurations[1].tests[0].detectable_pct = 140.0
    assert row(data, "seeks")["factor"].endswith("in these runs; could have seen ×2.4 either way")
    data.charts[1].configurations[1].tests[0].detectable_pct = 9.7
    assert row(data, "seeks")["who"] == "no difference beyond noise"


def test_a_bound_its_rank_test_does_not_hold_is_said_not_claimed():
    # 3 v 3 runs, every +++++ run above every measured one: at least ×1.76 slower in these runs, as chance separates
    # them once in 10 pages; the cell is unknown, and the row says what the runs show without a mark
    slow = cell("seq_create", "unknown", bound=1 / 1.7612, n_too_fast=0, n=3)
    base = cell("seq_create", n_too_fast=3, n=0)
    others = {t: cell(t, "unknown", n_too_fast=3, n=0) for t in answer.QUESTIONS[-1].tests if t != "seq_create"}
    data = comparison({BASE: {"seq_create": base}, OTHER: {"seq_create": slow} | others})
    files = row(data, "files")
    assert files["outcome"] == "unknown" and files["mark"] == "?"
    assert files["who"] == "cannot tell"
    assert files["factor"] == "3 v 3 runs; at least ×1.76 slower in these runs (fs=xfs)"
    # beside file tests within noise, the row says it of that test too
    data = comparison({BASE: {"seq_create": base}, OTHER: {"seq_create": slow}})
    files = row(data, "files")
    assert files["outcome"] == "within_noise"
    assert files["factor"].endswith(
        "; seq. create cannot tell (3 v 3 runs; at least ×1.76 slower in these runs, fs=xfs)"
    )


def test_a_caveat_every_row_has_is_said_once_above_them():
    noisy = {"code": "noisy", "text": "other load competed …"}
    moved = {t: cell(t, "within_noise", geo=1.0, hints=[noisy]) for f in answer.QUESTIONS for t in f.tests}
    moved["rewrite"] = cell("rewrite", "better", geo=2.27, ci=[1.72, 2.99], hints=[noisy])
    data = comparison({BASE: {}, OTHER: moved})
    rows = answer.rows(data, RATE_CHART_KEYS)
    said = "other load competed (the runner's counters): rerun on a quiet machine"
    assert answer.shared_caveat(rows) == said
    assert all(r["caveat_shared"] and r["caveat"] == said for r in rows)  # kept for the charts' PNG
    # one row without it: each row keeps its own, none is said above
    moved["seeks"] = cell("seeks", "within_noise", geo=1.0)
    rows = answer.rows(comparison({BASE: {}, OTHER: moved}), RATE_CHART_KEYS)
    assert answer.shared_caveat(rows) is None and not any(r["caveat_shared"] for r in rows)


def test_the_legend_says_the_minimum_effect_is_of_the_estimate_and_the_page_is_controlled_together():
    text = answer.legend(replace(comparison({BASE: {}, OTHER: {}}), min_effect=1.1))
    assert "×1.1 either way" in text and "of the estimate, not its interval" in text
    assert "counted together (more configurations, larger changes needed)" in text


def test_an_upload_without_the_ram_gets_the_caveat_and_a_ram_mib_tag_clears_it(client):
    # bonnie++ -s 256M lines with no runner document: a 256 MiB file fits any machine's page cache twice over,
    # and nothing says how much RAM this one had
    ids = post_csv(client, sweep_csv("ext4") + sweep_csv("xfs")).json()["created"]
    html = client.get("/compare", params={"runs": ",".join(map(str, ids))}).text
    assert "RAM unknown: may be the page cache" in html and "ram_mib=" in html
    tagged = post_csv(client, (sweep_csv("ext4") + sweep_csv("xfs")).replace("-box", "-tagged"), tag=["ram_mib=512"])
    tagged = tagged.json()["created"]
    html = client.get("/compare", params={"runs": ",".join(map(str, tagged))}).text
    assert "RAM unknown" not in html
