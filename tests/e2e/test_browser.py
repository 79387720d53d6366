"""The compare page, the runs list and the run page in Debian's Chromium (Playwright), against a real
server on a temporary database loaded with real bonnie++ lines. Charts are checked through Chart.js's
own data (Chart.getChart(canvas).data), not pixels. Screenshots go to test-output/ for a person."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect, sync_playwright

from app.compare.engine import CHART_KEYS
from app.ingest.parsing import TESTS
from tests.browser_support import CHROMIUM, CHROMIUM_ARGS, ROOT, running_server, upload
from tests.compare_data import BOUND, SWEEP, drawn_reason, shown_ratio, sweep_csv, sweep_line, with_null_figures
from tests.helpers import CORPUS_DIR, HOSTILE, with_field
from tests.live_server import CLIENT_SSL

pytestmark = pytest.mark.slow  # a real browser, server, runner or bonnie++: pytest -m 'not slow' skips it

HOSTILE_TAG = "<script>alert(2)</script>"
OUTPUT_DIR = ROOT / "test-output"

# Every chart as [key, whether it is a part of that key's chart (the per-char tests on their own axis), what it draws].
READ_CHARTS = """() => [...document.querySelectorAll('canvas[data-chart], canvas[data-part-of]')].map(canvas => {
    const chart = Chart.getChart(canvas);
    return [canvas.dataset.chart || canvas.dataset.partOf, Boolean(canvas.dataset.partOf), {
        labels: chart.data.labels,
        scale: chart.options.scales.y.type,
        datasets: chart.data.datasets.map(d => ({configuration: d.bbConfiguration, label: d.label, data: d.data, status: d.bbStatus,
                                                  errors: d.bbErrors, verdicts: d.bbVerdicts})),
    }];
})"""
PER_TEST = ("data", "status", "errors", "verdicts")


def merge_parts(drawn: list) -> dict:
    """Per chart key what it draws, the part drawn on a canvas of its own (absolute mode's per-char tests)
    merged back in bonnie++'s order of the tests, as one chart of the API."""
    charts: dict = {}
    for key, _part, chart in drawn:
        if key not in charts:
            charts[key] = chart
            continue
        whole = charts[key]
        labels = sorted(whole["labels"] + chart["labels"], key=TESTS.index)
        for mine, theirs in zip(whole["datasets"], chart["datasets"], strict=True):
            assert mine["configuration"] == theirs["configuration"]
            for field in PER_TEST:
                by_test = dict(zip(whole["labels"], mine[field], strict=True)) | dict(
                    zip(chart["labels"], theirs[field], strict=True)
                )
                mine[field] = [by_test[test] for test in labels]
        whole["labels"] = labels
    return charts


def screenshot(target, name: str, *, full_page: bool = False) -> Path:
    """test-output/NAME of a page or element, checked by the test that takes it: written now (an old file is
    removed first), and a real picture (a full page is larger than a blank one)."""
    OUTPUT_DIR.mkdir(exist_ok=True)
    path = OUTPUT_DIR / name
    path.unlink(missing_ok=True)
    target.screenshot(path=path, **({"full_page": True} if full_page else {}))
    assert path.stat().st_size > (10_000 if full_page else 1_000), name
    return path


def corpus_line(name: str, prefix: str) -> str:
    return next(line for line in (CORPUS_DIR / name).read_text().splitlines() if line.startswith(prefix))


def with_machine(line: str, machine: str) -> str:
    fields = line.split(",")
    fields[2] = machine
    return ",".join(fields)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A server with five real runs: ext4 (1.98, with +++++ results), xfs (1.97), btrfs (1.96), a 1.98
    run with -f (no per-char tests) on a machine named like an HTML injection, and a 1.03 run (no latencies)."""
    folder = tmp_path_factory.mktemp("browser")
    with running_server(folder / "bonnieboard.db") as base_url:
        ids = {
            "ext4": upload(
                base_url,
                [corpus_line("bonnie200-sample.csv", "1.98,2.00a,vm,1,1795352513,")],
                tags={"fs": "ext4", "raid": "5"},
                label="ext4 on RAID-5",
            )[0],
            "xfs": upload(
                base_url,
                [corpus_line("public-sample.csv", "1.97,1.97,wifo3-02,1,1438369124,")],
                tags={"fs": "xfs", "raid": "5"},
            )[0],
            "btrfs": upload(
                base_url, [corpus_line("public-sample.csv", "1.96,1.96,host1,")], tags={"fs": "btrfs", "raid": "5"}
            )[0],
            "hostile": upload(
                base_url,
                [with_machine(corpus_line("bonnie200-sample.csv", "1.98,2.00a,vm,1,1795352069,"), HOSTILE)],
                tags={"fs": HOSTILE_TAG, "raid": "6"},
            )[0],
            "old": upload(base_url, [corpus_line("public-sample.csv", "mindpipe,")])[0],
        }
        yield base_url, ids


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, site):
    """A 1280x800 page that records dialogs (there must be none) and script errors (there must be none)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.dialogs = []
    page.errors = []

    def on_dialog(dialog):
        page.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            message.type == "error"
            and "favicon" not in (message.location or {}).get("url", "")
            and page.errors.append(message.text)
        ),
    )
    yield page
    context.close()
    assert page.dialogs == [], "a dialog opened: something ran that should have been text"
    assert page.errors == [], page.errors


def runs_param(site, *names):
    return ",".join(str(site[1][name]) for name in names)


def api_compare(site, query: str) -> dict:
    return with_null_figures(httpx.get(f"{site[0]}/api/compare?{query}", verify=CLIENT_SSL).json())


def read_charts(page: Page) -> dict:
    page.wait_for_function(
        "() => document.querySelectorAll('canvas[data-chart]').length && [...document.querySelectorAll('canvas[data-chart], canvas[data-part-of]')].every(c => Chart.getChart(c))"
    )
    return merge_parts(page.evaluate(READ_CHARTS))


def open_every_figure(page: Page) -> None:
    """The tables of every figure are folded and fetched when opened (htmx, GET /compare/figures): open the fold
    and wait for them."""
    page.locator("details.heat-fold > summary").click()
    expect(page.locator(".heat-table").first).to_be_visible()


def open_setup(page: Page) -> None:
    """The setup table, folded and fetched when opened (GET /compare/setup)."""
    page.locator("details.setup > summary").click()
    expect(page.locator(".setup-table")).to_be_visible()


def expected_datasets(api: dict, chart: dict) -> list[tuple]:
    """What the page must draw for one chart of /api/compare: per configuration (the baseline one
    left out in relative mode) its means, or against the baseline its ratios as a % rounded to 0.1
    (rates), the ratios themselves (latency: a log axis) or the difference in points (%CPU), the
    reason of every missing bar, the 95 % CIs (error bars) and the verdicts."""
    relative = api["mode"] == "relative"
    base_id = api["baseline_configuration"]
    base_cells = next(e["tests"] for e in chart["configurations"] if e["configuration"] == base_id)
    expected = []
    for entry in chart["configurations"]:
        if relative and entry["configuration"] == base_id:
            continue
        data, status, errors = [], [], []
        rates = chart["key"] not in ("latency", "cpu")
        for cell, base in zip(entry["tests"], base_cells, strict=True):
            reason = drawn_reason(cell, base, relative=relative, rates=rates)
            if reason == BOUND:  # the +++++ bound its verdict rests on
                status.append("ok")
                data.append(pytest.approx((cell["bound_ratio"] - 1) * 100, abs=0.051))
                errors.append(None)
                continue
            status.append(reason)
            shown = shown_ratio(cell) if reason == "ok" and relative else None
            if reason != "ok":
                data.append(None)
                errors.append(None)
            elif relative and chart["key"] == "latency":  # a ratio, on a log axis
                data.append(shown)
                errors.append(cell["ratio_ci95"])
            elif relative and chart["key"] == "cpu":  # percentage points
                data.append(pytest.approx(cell["mean"] - base["mean"], abs=0.051))
                errors.append(
                    None
                    if cell["ratio_ci95"] is None
                    else pytest.approx([(r - 1) * base["mean"] for r in cell["ratio_ci95"]], abs=0.051)
                )
            elif relative:
                data.append(pytest.approx((shown - 1) * 100, abs=0.051))
                errors.append(
                    None
                    if cell["ratio_ci95"] is None
                    else pytest.approx([(r - 1) * 100 for r in cell["ratio_ci95"]], abs=0.051)
                )
            else:
                data.append(cell["mean"])
                errors.append(cell["ci95"])
        verdicts = [None if entry["configuration"] == base_id else cell["verdict"] for cell in entry["tests"]]
        expected.append((entry["configuration"], data, status, errors, verdicts))
    return expected


def assert_charts_hold_the_api_numbers(charts: dict, api: dict) -> None:
    assert sorted(charts) == sorted(CHART_KEYS)  # the answer's chart comes first
    for chart in api["charts"]:
        drawn = charts[chart["key"]]
        assert drawn["labels"] == chart["tests"], chart["key"]
        assert [
            (d["configuration"], d["data"], d["status"], d["errors"], d["verdicts"]) for d in drawn["datasets"]
        ] == expected_datasets(api, chart), chart["key"]


def test_every_chart_family_draws_the_datasets_the_api_returns(page, site):
    query = f"runs={runs_param(site, 'ext4', 'xfs', 'btrfs', 'hostile', 'old')}"
    page.goto(f"{site[0]}/compare?{query}")
    charts = read_charts(page)
    api = api_compare(site, query)
    assert_charts_hold_the_api_numbers(charts, api)
    assert charts["latency"]["scale"] == "logarithmic" and charts["block_io"]["scale"] == "linear"
    # legends: label or machine, plus the tags that differ between the runs
    assert [d["label"] for d in charts["block_io"]["datasets"]] == [
        "ext4 on RAID-5 · fs=ext4 raid=5",
        "wifo3-02 · fs=xfs raid=5",
        "host1 · fs=btrfs raid=5",
        f"{HOSTILE} · fs={HOSTILE_TAG} raid=6",
        "mindpipe",
    ]
    # some values are really there (not all null)
    assert charts["block_io"]["datasets"][1]["data"] == [1842, 347029, 175829, 3404, 495890]
    assert "bonnie++ 2.00a (CSV 1.98)" in page.locator("#figure-block_io .source").inner_text()
    expect(page.locator("#figure-latency .chart-notes")).to_contain_text("no latency in this line")
    expect(page.locator("#figure-block_io .chart-notes")).to_contain_text("not run")
    open_every_figure(page)
    expect(page.locator(".heat-value tbody tr")).to_have_count(5)

    OUTPUT_DIR.mkdir(exist_ok=True)
    screenshot(page, "compare.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(300)
    screenshot(page, "compare-phone.png", full_page=True)
    # phone width: nothing but the wide tables and charts scrolls sideways
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_switching_to_relative_through_the_page_changes_the_url_and_a_cold_load_draws_the_same(page, browser, site):
    runs = runs_param(site, "ext4", "xfs", "btrfs", "old")
    page.goto(f"{site[0]}/compare?runs={runs}")
    page.evaluate("window.notReloaded = true")
    page.get_by_role("radio", name="% vs baseline").check()
    page.wait_for_url(re.compile(r"mode=relative"))
    page.wait_for_function("() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]'))?.$bb.relative")
    assert page.evaluate("window.notReloaded") is True  # updated in place, not reloaded
    url = page.url
    assert url.endswith(f"/compare?runs={runs}&baseline={site[1]['ext4']}&mode=relative")
    relative = read_charts(page)
    assert_charts_hold_the_api_numbers(relative, api_compare(site, f"runs={runs}&mode=relative"))
    assert relative["latency"]["scale"] == "logarithmic"  # a log-ratio axis: ×0.5 and ×2 equally far from ×1
    ticks = page.evaluate(
        "() => Chart.getChart(document.querySelector('canvas[data-chart=latency]')).scales.y.ticks.map(t => t.value)"
    )
    assert 1 in ticks and set(ticks) <= {0.01, 0.1, 0.5, 1, 2, 10, 100}
    labels = page.evaluate(
        "() => { const s = Chart.getChart(document.querySelector('canvas[data-chart=latency]')).scales.y; return s.ticks.map((t, i) => s.options.ticks.callback(t.value, i, s.ticks)); }"
    )
    assert "×1" in labels
    OUTPUT_DIR.mkdir(exist_ok=True)
    screenshot(page, "compare-relative.png", full_page=True)

    cold = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        cold.goto(url)
        assert read_charts(cold) == relative
        expect(cold.get_by_role("radio", name="% vs baseline")).to_be_checked()
    finally:
        cold.close()

    # another baseline, then Back: the address bar and the charts follow
    page.get_by_role("combobox", name="Baseline").select_option(str(site[1]["xfs"]))
    page.wait_for_url(re.compile(rf"baseline={site[1]['xfs']}&"))
    # one configuration per run here (each has its own machine), numbered in the order asked: xfs is the second
    page.wait_for_function(
        "() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]'))?.data.datasets.every(d => d.bbConfiguration !== 2)"
    )
    assert_charts_hold_the_api_numbers(
        read_charts(page), api_compare(site, f"runs={runs}&mode=relative&baseline={site[1]['xfs']}")
    )
    page.go_back()
    page.wait_for_url(url)
    page.wait_for_function(
        "() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]'))?.data.datasets.every(d => d.bbConfiguration !== 1)"
    )
    assert read_charts(page) == relative


def test_adding_and_removing_runs_updates_in_place(page, site):
    page.goto(f"{site[0]}/compare?runs={runs_param(site, 'ext4', 'xfs')}&mode=relative")
    page.evaluate("window.notReloaded = true")
    # the box suggests the newest runs not compared, loaded apart from the (cached) comparison
    expect(page.locator(f"#recent-runs option[value='{site[1]['btrfs']}']")).to_have_count(1)
    expect(page.locator(f"#recent-runs option[value='{site[1]['ext4']}']")).to_have_count(0)
    page.get_by_label("Add runs").fill(f"{site[1]['btrfs']} {site[1]['old']}")
    page.get_by_label("Add runs").press("Enter")
    expected = runs_param(site, "ext4", "xfs", "btrfs", "old")
    page.wait_for_url(re.compile(rf"runs={expected}&"))
    assert_charts_hold_the_api_numbers(read_charts(page), api_compare(site, f"runs={expected}&mode=relative"))
    page.get_by_role("button", name=f"remove run {site[1]['ext4']}").click()
    remaining = runs_param(site, "xfs", "btrfs", "old")
    # the baseline was removed: the first remaining run becomes it
    page.wait_for_url(re.compile(rf"runs={remaining}&baseline={site[1]['xfs']}&mode=relative$"))
    assert_charts_hold_the_api_numbers(read_charts(page), api_compare(site, f"runs={remaining}&mode=relative"))
    assert page.evaluate("window.notReloaded") is True
    page.get_by_label("Add runs").fill("999999")
    page.get_by_label("Add runs").press("Enter")
    expect(page.locator(".notice")).to_contain_text("No run #999999")


def test_too_fast_result_has_its_mark_and_explanation_and_no_zero_value(page, site):
    page.goto(f"{site[0]}/compare?runs={runs_param(site, 'ext4', 'xfs')}")
    charts = read_charts(page)
    rewrite = charts["block_io"]["labels"].index("rewrite")
    dataset = charts["block_io"]["datasets"][0]
    assert dataset["configuration"] == 1 and dataset["status"][rewrite] == "too_fast"
    assert dataset["data"][rewrite] is None  # no value at all, least of all 0
    marks = page.evaluate("() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]')).$bbMarks")
    mark = next(m for m in marks if m["run"] == 1 and m["test"] == "rewrite")
    assert mark["height"] > 10 and mark["width"] > 2
    # at the top of the chart (faster than measurable), never a bar from zero
    area = page.evaluate("() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]')).chartArea")
    assert mark["kind"] == "top" and mark["y"] == area["top"]
    legend = page.evaluate(
        "() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]')).legend.legendItems.map(i => i.text)"
    )
    assert "+++++ too fast to measure (marked at the top)" in legend
    # %CPU too: an empty labelled slot, no value
    cpu = charts["cpu"]["datasets"][0]
    assert cpu["status"][rewrite] == "too_fast" and cpu["data"][rewrite] is None
    cpu_marks = page.evaluate("() => Chart.getChart(document.querySelector('canvas[data-chart=cpu]')).$bbMarks")
    assert {(m["kind"], m["test"]) for m in cpu_marks if m["run"] == 1} >= {("slot", "rewrite")}
    # the bar element at that place has no height: only the mark is drawn there
    drawn_bar = page.evaluate(
        f"() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]')).getDatasetMeta(0).data[{rewrite}].height > 0"
    )
    assert drawn_bar is False

    page.locator("canvas[data-chart=block_io]").scroll_into_view_if_needed()
    box = page.locator("canvas[data-chart=block_io]").bounding_box()
    page.mouse.move(box["x"] + mark["x"] + mark["width"] / 2, box["y"] + mark["y"] + mark["height"] / 2)
    page.wait_for_function(
        "() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]')).tooltip.opacity > 0"
    )
    tooltip = page.evaluate("""() => { const t = Chart.getChart(document.querySelector('canvas[data-chart=block_io]')).tooltip;
        return {title: t.title, body: t.body.flatMap(b => b.lines), footer: t.footer}; }""")
    assert tooltip["title"] == ["rewrite"]
    assert "ext4 on RAID-5 · fs=ext4: +++++ too fast to measure" in tooltip["body"]
    assert any(line.startswith("wifo3-02 · fs=xfs: 171.7 MiB/s (175,829 KiB/s)") for line in tooltip["body"])
    assert any("under 0.5 s" in line for line in tooltip["footer"])
    assert "For rewrite, a larger -s (file size) would measure it." in tooltip["footer"]
    OUTPUT_DIR.mkdir(exist_ok=True)
    screenshot(page.locator("#figure-block_io"), "compare-too-fast-tooltip.png")
    note = page.locator("#figure-block_io .note-too_fast")
    expect(note).to_contain_text("+++++ too fast to measure")
    expect(note).to_contain_text("under 0.5 s")
    # the table says +++++ too, unshaded
    open_every_figure(page)
    cell = page.locator(".heat-table tbody tr").first.locator("td.too_fast").first
    expect(cell).to_have_text("+++++")
    assert not re.search(r"heat-\d", cell.get_attribute("class"))


def test_hostile_names_show_as_text_everywhere(page, site):
    hostile = site[1]["hostile"]
    base_url = site[0]
    for path in (
        "/",
        f"/runs/{hostile}",
        f"/compare?runs={runs_param(site, 'hostile', 'ext4')}",
        f"/compare?runs={runs_param(site, 'ext4', 'hostile')}&mode=relative",
    ):
        page.goto(base_url + path)
        assert HOSTILE in page.locator("main").inner_text(), path
        assert page.locator("img").count() == 0, path
        assert page.locator("main script:not([type='application/json'])").count() == 0, path
    # chart labels and tooltips are text too
    charts = read_charts(page)
    names = [d["label"] for d in charts["block_io"]["datasets"]]
    assert names == [f"{HOSTILE} · fs={HOSTILE_TAG} raid=6"]
    page.locator("canvas[data-chart=metadata]").scroll_into_view_if_needed()
    box = page.locator("canvas[data-chart=metadata]").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.5)
    page.wait_for_function(
        "() => Chart.getChart(document.querySelector('canvas[data-chart=metadata]')).tooltip.opacity > 0"
    )
    body = page.evaluate(
        "() => Chart.getChart(document.querySelector('canvas[data-chart=metadata]')).tooltip.body.flatMap(b => b.lines)"
    )
    assert body and body[0].startswith(f"{HOSTILE} · fs={HOSTILE_TAG} raid=6: ")
    expect(page.locator(".run-chips")).to_contain_text(HOSTILE)
    open_every_figure(page)
    expect(page.locator(".heat-value")).to_contain_text(HOSTILE_TAG)
    page.get_by_role("combobox", name="Baseline").select_option(str(site[1]["hostile"]))
    page.wait_for_url(re.compile(rf"baseline={hostile}"))
    expect(page.locator(".run-chips .is-baseline")).to_contain_text(HOSTILE)


def test_runs_list_filters_in_place_and_sends_the_ticked_runs_to_compare(page, site):
    page.goto(f"{site[0]}/")
    page.evaluate("window.notReloaded = true")
    rows = page.locator("#runs tbody tr")
    expect(rows).to_have_count(5)
    page.get_by_label("Tags").fill("raid=5 fs=xfs")
    page.wait_for_url(re.compile(r"tag=raid%3D5"))
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("wifo3-02")
    page.get_by_label("Tags").fill("")
    page.get_by_label("Format").select_option("1.98")
    page.wait_for_url(re.compile(r"format=1\.98"))
    expect(rows).to_have_count(2)
    page.get_by_label("Machine").fill("vm")
    expect(rows).to_have_count(1)
    page.get_by_label("Machine").fill("")
    expect(rows).to_have_count(2)
    assert page.evaluate("window.notReloaded") is True
    page.get_by_label("Tags").fill("nonsense")
    expect(page.locator("#runs .notice")).to_contain_text("KEY=VALUE")
    # that answer is a 400 (swapped in all the same by htmx 4), which Chromium logs as an error
    assert [e for e in page.errors if "status of 400" in e]
    page.errors[:] = [e for e in page.errors if "status of 400" not in e]
    page.get_by_label("Tags").fill("")
    expect(rows).to_have_count(2)

    page.get_by_label(f"select run {site[1]['hostile']}").check()
    page.get_by_label(f"select run {site[1]['ext4']}").check()
    # ticks survive a filter change, even for a run the filter hides, and the order of ticking is kept
    page.get_by_label("Machine").fill("vm")
    page.wait_for_url(re.compile(r"machine=vm"))
    expect(page.locator("#chosen-text")).to_have_text(f"2 ticked: #{site[1]['hostile']} (baseline) #{site[1]['ext4']}")
    page.get_by_label("Machine").fill("")
    expect(rows).to_have_count(2)
    expect(page.get_by_label(f"select run {site[1]['hostile']}")).to_be_checked()
    page.get_by_label("Order").select_option("name")
    page.wait_for_url(re.compile(r"sort=name"))
    page.get_by_role("button", name="Compare selected").click()
    # the list sends runs=A,B (in the order ticked) and run=...; the page answers with its canonical address
    page.wait_for_url(re.compile(r"/compare\?runs=\d+,\d+$"))
    assert page.url.split("runs=")[1].split(",") == [str(site[1]["hostile"]), str(site[1]["ext4"])]
    charts = read_charts(page)
    assert charts["block_io"]["datasets"][0]["label"].startswith(HOSTILE)  # the first ticked: the baseline


def test_run_page_edits_tags_in_place_and_links_to_compare(page, site):
    run_id = site[1]["btrfs"]
    page.goto(f"{site[0]}/runs/{run_id}")
    page.evaluate("window.notReloaded = true")
    page.get_by_role("textbox", name="Label", exact=True).fill(f"btrfs {HOSTILE}")
    page.get_by_label("new tag key").first.fill("disk")
    page.get_by_label("new tag value").first.fill(HOSTILE_TAG)
    page.get_by_role("button", name="Save label and tags").click()
    expect(page.locator("#run-tags .ok")).to_have_text("Saved.")
    assert page.evaluate("window.notReloaded") is True
    run = httpx.get(f"{site[0]}/api/runs/{run_id}", verify=CLIENT_SSL).json()
    assert run["label"] == f"btrfs {HOSTILE}"
    assert run["tags"] == {"fs": "btrfs", "raid": "5", "disk": HOSTILE_TAG}
    expect(page.get_by_label("tag 1 value")).to_have_value(HOSTILE_TAG)  # tags are shown sorted by key
    expect(page.locator("#run-tags .current")).to_contain_text(f"btrfs {HOSTILE} · disk={HOSTILE_TAG}")
    # a value without a key is refused, and what was typed stays
    page.get_by_label("new tag value").first.fill("orphan")
    page.get_by_role("button", name="Save label and tags").click()
    expect(page.locator("#run-tags .bad")).to_contain_text("has no key")
    expect(page.get_by_label("tag 4 value")).to_have_value("orphan")
    assert [e for e in page.errors if "status of 422" in e]  # the refusal is a 422, which Chromium logs
    page.errors[:] = [e for e in page.errors if "status of 422" not in e]
    assert httpx.get(f"{site[0]}/api/runs/{run_id}", verify=CLIENT_SSL).json()["tags"] == {
        "fs": "btrfs",
        "raid": "5",
        "disk": HOSTILE_TAG,
    }
    # put the tags back for the other tests (module-scoped data)
    httpx.patch(
        f"{site[0]}/api/runs/{run_id}", json={"label": None, "tags": {"fs": "btrfs", "raid": "5"}}, verify=CLIENT_SSL
    )
    page.get_by_role("link", name="Compare this run with others").click()
    page.wait_for_url(re.compile(rf"/compare\?runs={run_id}$"))
    read_charts(page)


@pytest.fixture(scope="module")
def sweep_site(tmp_path_factory):
    """Its own server: two configurations x 3 runs (tests/compare_data.py: put_block +20 % with 1 %
    spread, getc +1 % with 5 % spread)."""
    with running_server(tmp_path_factory.mktemp("sweep") / "bonnieboard.db") as base_url:
        ids = [i for fs in SWEEP for i in upload(base_url, sweep_csv(fs).splitlines(), tags={"fs": fs, "dev": "loop"})]
        yield base_url, ",".join(map(str, ids))


def test_configurations_show_error_bars_verdict_marks_and_shade_only_significant_cells(page, sweep_site):
    base_url, runs = sweep_site
    query = f"runs={runs}&group=fs&mode=relative"
    page.goto(f"{base_url}/compare?{query}")
    charts = read_charts(page)
    api = with_null_figures(httpx.get(f"{base_url}/api/compare?{query}", verify=CLIENT_SSL).json())
    assert_charts_hold_the_api_numbers(charts, api)
    block = charts["block_io"]
    put_block, getc = block["labels"].index("put_block"), block["labels"].index("getc")
    [xfs] = block["datasets"]  # relative: the baseline configuration (fs=ext4) has no bars
    assert xfs["label"] == "fs=xfs (N=3)" and xfs["data"][put_block] == 20
    low, high = xfs["errors"][put_block]
    assert low < 20 < high and xfs["verdicts"][put_block] == "better"
    assert xfs["verdicts"][getc] == "within_noise"
    drawn = page.evaluate("""() => { const c = Chart.getChart(document.querySelector('canvas[data-chart=block_io]'));
        return {bars: c.$bbErrorBars, marks: c.$bbVerdictMarks, fill: c.data.datasets[0].backgroundColor, colour: c.data.datasets[0].bbColor,
                labels: c.$bbValueLabels}; }""")
    bar = next(b for b in drawn["bars"] if b["index"] == put_block)
    assert bar["yLow"] - bar["yHigh"] > 3  # a visible line, in pixels (y grows downwards)
    assert {(m["index"], m["text"]) for m in drawn["marks"]} >= {(put_block, "▲"), (getc, "~")}
    # the bar keeps its configuration's colour (the second: --run-1); within noise is paler, never green or red
    run_1 = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--run-1').trim()")
    assert drawn["colour"] == run_1 and drawn["fill"][put_block] == run_1
    assert drawn["fill"][getc].startswith("rgba(") and drawn["fill"][getc].endswith(",0.4)")
    assert {(label["index"], label["text"]) for label in drawn["labels"]} >= {(put_block, "+20%")}
    # the heat table colours exactly the cells whose verdict is better or worse
    open_every_figure(page)
    table = page.locator(".heat-table tbody")
    significant = table.locator("td[data-verdict=better], td[data-verdict=worse]")
    assert significant.count() == table.locator("td.heat-better, td.heat-worse").count() > 0
    assert (
        table.locator("td[data-verdict=within_noise].heat-better, td[data-verdict=within_noise].heat-worse").count()
        == 0
    )
    # the words are folded per family, each fold opened from the keyboard, and say the ratio as the answer does
    fold = page.locator("details.words-fold[data-family=block_io]")
    fold.locator("summary").focus()
    page.keyboard.press("Enter")
    expect(fold).to_have_attribute("open", "")
    expect(fold).to_contain_text("fs=xfs vs fs=ext4: block write ×1.20 faster (95 % CI")
    expect(page.locator("#figure-block_io .chart-hints")).to_contain_text("CPU-bound")
    OUTPUT_DIR.mkdir(exist_ok=True)
    screenshot(page, "compare-configurations.png", full_page=True)

    # absolute mode: both configurations, each bar with its CI around the mean
    page.get_by_role("radio", name="absolute").check()
    page.wait_for_function("() => !Chart.getChart(document.querySelector('canvas[data-chart=block_io]'))?.$bb.relative")
    absolute = read_charts(page)
    assert [d["data"][put_block] for d in absolute["block_io"]["datasets"]] == [100000, 120000]
    # the interval is the geometric mean's (×/÷ t·SE of the logs), so it is not symmetric around the bar's mean
    low, high = absolute["block_io"]["datasets"][0]["errors"][put_block]
    assert (low, high) == pytest.approx((97543.1, 102511.9), abs=0.1)
    geometric_mean = (low * high) ** 0.5
    assert geometric_mean == pytest.approx(99996.7, abs=0.1) and high / geometric_mean == pytest.approx(
        geometric_mean / low
    )
    # same colours as in relative mode; the baseline's mean is a reference line
    colours = page.evaluate(
        "() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]')).data.datasets.map(d => d.bbColor)"
    )
    assert colours[1] == run_1
    lines = page.evaluate(
        "() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]')).$bbReferenceLines"
    )
    # absolute mode: the block tests on their canvas (the per-char ones on their own axis beside it)
    labels = page.evaluate("() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]')).data.labels")
    assert labels == ["put_block", "rewrite", "get_block"]
    assert {(line["index"], line["value"]) for line in lines} >= {(labels.index("put_block"), 100000)}


def test_warnings_show_on_the_page(page, sweep_site):
    base_url, runs = sweep_site
    other = upload(
        base_url,
        [
            with_field(corpus_line("bonnie200-sample.csv", "1.98,2.00a,vm,1,1795352513,"), 5, "1G"),
            corpus_line("public-sample.csv", "mindpipe,"),
        ],
    )
    page.goto(f"{base_url}/compare?runs={runs},{other[0]},{other[1]}")
    warnings = page.locator(".warnings")
    expect(warnings.locator("[data-code=file_size_differs]")).to_contain_text("1024 MiB")
    expect(warnings.locator("[data-code=family_differs]")).to_contain_text("stdio")
    open_setup(page)
    expect(page.locator(".setup-table tbody tr")).to_have_count(8)
    for run_id in other:
        httpx.delete(f"{base_url}/api/runs/{run_id}", verify=CLIENT_SSL)


def test_twelve_configurations_keep_a_legend_on_a_phone_and_26_have_distinct_fills(page, sweep_site):
    base_url, _ = sweep_site
    ids = upload(base_url, [sweep_line(f"box-{i}", 100_000 + 5_000 * i, 1000) for i in range(26)])
    try:
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(f"{base_url}/compare?runs={','.join(map(str, ids[:12]))}&group=none")
        read_charts(page)
        for key in CHART_KEYS:
            legend = page.evaluate(
                f"() => Chart.getChart(document.querySelector('canvas[data-chart={key}]')).legend.legendItems.filter(i => i.datasetIndex !== undefined).length"
            )
            assert legend == 12, key
        colours = page.evaluate(
            "() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]')).data.datasets.map(d => d.bbColor)"
        )
        assert len(set(colours)) == 12
        OUTPUT_DIR.mkdir(exist_ok=True)
        screenshot(page.locator("#figure-block_io"), "compare-12-runs-phone-block_io.png")
        # the legend grew the chart instead of squeezing its bars
        box = page.locator("#figure-block_io .chart-box").first.bounding_box()
        assert box["height"] > 250

        page.set_viewport_size({"width": 1366, "height": 900})
        page.goto(f"{base_url}/compare?runs={','.join(map(str, ids))}&group=none")
        read_charts(page)
        fills = page.evaluate("""() => Chart.getChart(document.querySelector('canvas[data-chart=block_io]')).data.datasets.map(d =>
            [d.bbColor, typeof d.bbFill === 'string' ? 'solid' : 'pattern', Math.floor(d.bbColour / 12)])""")
        assert len({tuple(f) for f in fills}) == 26  # 12 colours, then striped, then dotted
        assert fills[12][1] == "pattern" and fills[12][0] == fills[0][0]
        screenshot(page.locator("#figure-block_io"), "compare-26-runs-block_io.png")
        # past 12 configurations one legend above the charts names them all; each chart keeps only its marks' legend
        legend = page.locator(".chart-legend button[data-configuration]")
        expect(legend).to_have_count(26)
        expect(page.locator(".chart-legend")).to_have_count(1)
        assert "(baseline)" in legend.first.inner_text()
        for key in CHART_KEYS:
            items = page.evaluate(
                f"() => Chart.getChart(document.querySelector('canvas[data-chart={key}]')).legend.legendItems.map(i => [i.text, i.datasetIndex])"
            )
            assert items and all(index is None for _, index in items), key
        # pressing a configuration hides it in every chart, and pressing it again brings it back
        visible = """([keys, id]) => keys.map(key => {
            const c = Chart.getChart(document.querySelector(`canvas[data-chart=${key}]`));
            return c.isDatasetVisible(c.data.datasets.findIndex(d => String(d.bbConfiguration) === id)); })"""
        third = legend.nth(2)
        configuration = third.get_attribute("data-configuration")
        third.click()
        expect(third).to_have_attribute("aria-pressed", "false")
        assert page.evaluate(visible, [list(CHART_KEYS), configuration]) == [False] * len(CHART_KEYS)
        third.click()
        expect(third).to_have_attribute("aria-pressed", "true")
        assert page.evaluate(visible, [list(CHART_KEYS), configuration]) == [True] * len(CHART_KEYS)

        # the PNG of a chart without a legend of its own gets the names of its shown configurations under it
        def png_height() -> int:
            with page.expect_download() as download:
                page.locator("#figure-block_io").get_by_role("button", name="PNG").click()
            return int.from_bytes(Path(download.value.path()).read_bytes()[20:24], "big")

        with_names = png_height()
        for index in range(26):
            legend.nth(index).click()
        without_names = png_height()
        assert with_names > without_names + 17  # at least a row of names
    finally:
        for run_id in ids:
            httpx.delete(f"{base_url}/api/runs/{run_id}", verify=CLIENT_SSL)


def test_outliers_are_clipped_with_a_labelled_off_scale_marker(page, sweep_site):
    base_url, _ = sweep_site
    lines = [
        sweep_line("outlier-base", 100_000, 1000),
        sweep_line("outlier-near", 110_000, 1000),
        with_field(sweep_line("outlier-far", 10_000_000, 1000), 39, "4307000us"),
    ]
    ids = upload(base_url, lines)
    try:
        page.goto(f"{base_url}/compare?runs={','.join(map(str, ids))}&group=none&mode=relative")
        charts = read_charts(page)
        far = charts["block_io"]["datasets"][1]
        put_block = charts["block_io"]["labels"].index("put_block")
        assert far["data"][put_block] == 9900  # the value is still the truth (+9,900 %)
        state = page.evaluate("""() => { const c = Chart.getChart(document.querySelector('canvas[data-chart=block_io]'));
            return {max: c.scales.y.max, off: c.$bbOffScale}; }""")
        assert state["max"] < 1000  # the axis did not stretch to +9,900 %
        # one label per clipped bar: its value, "off scale" and its verdict mark (a single run: unknown)
        assert [(m["index"], m["text"]) for m in state["off"]] == [(put_block, "+9,900% off scale ?")]
        latency = page.evaluate("""() => { const c = Chart.getChart(document.querySelector('canvas[data-chart=latency]'));
            return {max: c.scales.y.max, type: c.scales.y.type, off: c.$bbOffScale}; }""")
        assert latency["type"] == "logarithmic" and latency["max"] <= 100
        assert [m["text"] for m in latency["off"]] == ["×1,000 off scale ?"]  # 4307000 / 4307 µs
        OUTPUT_DIR.mkdir(exist_ok=True)
        screenshot(page.locator("#figure-block_io"), "compare-off-scale-block_io.png")
        screenshot(page.locator("#figure-latency"), "compare-off-scale-latency.png")
    finally:
        for run_id in ids:
            httpx.delete(f"{base_url}/api/runs/{run_id}", verify=CLIENT_SSL)


def test_every_chart_and_the_matrix_at_desktop_and_phone_size(browser, sweep_site):
    """Screenshots for a person (test-output/), and the matrix's cells and small multiples equal the API."""
    base_url, runs = sweep_site
    OUTPUT_DIR.mkdir(exist_ok=True)
    for width, height in ((1366, 900), (390, 844)):
        page = browser.new_page(viewport={"width": width, "height": height})
        try:
            for mode in ("absolute", "relative"):
                page.goto(f"{base_url}/compare?runs={runs}&group=fs&mode={mode}")
                read_charts(page)
                for key in CHART_KEYS:
                    screenshot(page.locator(f"#figure-{key}"), f"chart-{key}-{mode}-{width}.png")
                open_every_figure(page)
                screenshot(page.locator(".heat"), f"heat-table-{width}.png")
                if width == 1366:  # the rates table fits: no sideways scrolling at 1366 px
                    assert page.evaluate("document.querySelector('.heat-value').scrollWidth") <= 1366
            page.goto(f"{base_url}/matrix?rows=fs&cols=dev&test=put_block&runs={runs}")
            page.wait_for_function(
                "() => [...document.querySelectorAll('canvas[data-matrix-row]')].every(c => Chart.getChart(c))"
            )
            api = httpx.get(
                f"{base_url}/api/matrix?rows=fs&cols=dev&test=put_block&runs={runs}", verify=CLIENT_SSL
            ).json()
            drawn = page.evaluate(
                "() => [...document.querySelectorAll('canvas[data-matrix-row]')].map(c => Chart.getChart(c).data.datasets.map(d => d.data[0]))"
            )
            assert drawn == [[cell["mean"] if cell else None for cell in row["cells"]] for row in api["rows"]]
            assert [
                float(m) for m in page.locator(".matrix-cell").evaluate_all("cells => cells.map(c => c.dataset.mean)")
            ] == [cell["mean"] for row in api["rows"] for cell in row["cells"] if cell]
            screenshot(page, f"matrix-{width}.png", full_page=True)
        finally:
            page.close()


def test_exports_are_one_click_and_hold_the_api_numbers(page, sweep_site):
    base_url, runs = sweep_site
    page.goto(f"{base_url}/compare?runs={runs}&group=fs")
    read_charts(page)
    with page.expect_download() as download:
        page.locator("#figure-block_io").get_by_role("button", name="PNG").click()
    assert download.value.suggested_filename == "bonnieboard-block_io.png"
    assert Path(download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # no SVG: Chart.js draws on a canvas only, and a bitmap inside an SVG is no vector drawing
    assert page.get_by_role("button", name="SVG").count() == 0
    csv_link = page.get_by_role("link", name="CSV", exact=True).get_attribute("href")
    assert csv_link == f"/api/compare.csv?runs={runs}&group=fs"
    assert httpx.get(base_url + csv_link, verify=CLIENT_SSL).text.count("\n") == 1 + sum(
        len(c["configurations"]) * len(c["tests"])
        for c in httpx.get(f"{base_url}/api/compare?runs={runs}&group=fs", verify=CLIENT_SSL).json()["charts"]
    )
    lines = httpx.get(
        base_url + page.get_by_role("link", name="bonnie.csv", exact=True).get_attribute("href"), verify=CLIENT_SSL
    ).text.splitlines()
    assert lines == [sweep_line(f"{fs}-box", *row) for fs in SWEEP for row in SWEEP[fs]]
