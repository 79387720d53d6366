"""What a chart's axis and legend say, in Debian's Chromium on the sample data: +++++ drawn where it is known to
be (absolute: above the floor the page gives; relative: the bound a verdict rests on, or nothing), and at phone
width a labelled log axis, the axis title's unit and a legend whose words are not cut off."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from tests.browser_support import CHROMIUM, CHROMIUM_ARGS
from tests.sample_board import STUDY_IDS, SWEEP_COMPARE, SWEEP_IDS, sample_board

pytestmark = pytest.mark.slow  # a real browser and server: pytest -m 'not slow' skips it

CHART = "canvas[data-chart=metadata_stat]"
FLOOR = 65_536  # files/s: the figure the page gives every +++++ run of these tests ("> 65,536 files/s")
PHONE = {"width": 390, "height": 844}
DESK = {"width": 1280, "height": 800}


@contextmanager
def sample_page(tmp_path: Path, viewport: dict[str, int]) -> Iterator[tuple[str, Page]]:
    """(base URL, page) of a served sample board in Debian's Chromium; no script error may happen on it."""
    with sample_board(tmp_path) as base_url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=viewport).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        yield base_url, page
        browser.close()
    assert errors == []


def chart_state(page: Page, selector: str, body: str) -> dict[str, Any]:
    """`body` (JavaScript returning an object, with `chart` the Chart of `selector`) once the chart is drawn."""
    page.locator(selector).scroll_into_view_if_needed()
    found = f"Chart.getChart(document.querySelector({json.dumps(selector)}))"
    page.wait_for_function(f"() => {found}?.$bbMarks !== undefined && {found}.$bbValueLabels !== undefined")
    return page.evaluate(f"() => {{ const chart = {found}; return {body}; }}")


def test_too_fast_marks_sit_above_their_floor_and_a_mixed_cell_has_both(tmp_path):
    """The sample study at phone width: 9 of 10 ext4 runs' seq_stat and of xfs's ran_stat were +++++, faster than
    65,536 files/s; the tenth measured 53,101 and 44,362."""
    with sample_page(tmp_path, PHONE) as (base_url, page):
        page.goto(f"{base_url}/compare?runs={','.join(map(str, STUDY_IDS))}&group=config")
        assert f"&gt; {FLOOR:,} files/s" in page.content()
        drawn = chart_state(
            page,
            CHART,
            f"""{{labels: chart.data.labels,
                 datasets: chart.data.datasets.map(d => ({{label: d.label, data: d.data, status: d.bbStatus,
                                                          floors: d.bbTooFastAbove}})),
                 marks: chart.$bbMarks, floorY: chart.scales.y.getPixelForValue({FLOOR}), top: chart.scales.y.max}}""",
        )
        notes = page.locator("#figure-metadata_stat .chart-notes").inner_text()
    # the note under the chart names the mixed cells too, with how many runs the bar leaves out
    assert "config=ext4: seq_stat (9 of 10 runs), ran_stat" in notes
    assert "config=xfs: seq_stat, ran_stat (9 of 10 runs)" in notes
    seq_stat, ran_stat = drawn["labels"].index("seq_stat"), drawn["labels"].index("ran_stat")
    ext4, xfs = drawn["datasets"]
    assert ext4["label"].startswith("config=ext4") and xfs["label"].startswith("config=xfs")
    # the mixed cells: the measured run's bar, and the floor of the others
    assert (ext4["status"][seq_stat], ext4["data"][seq_stat], ext4["floors"][seq_stat]) == ("ok", 53_101, FLOOR)
    assert (xfs["status"][ran_stat], xfs["data"][ran_stat], xfs["floors"][ran_stat]) == ("ok", 44_362, FLOOR)
    marked = {(m["datasetIndex"], m["test"]) for m in drawn["marks"]}
    # every cell with a +++++ run has its mark: the two all-+++++ cells and the two mixed ones
    assert marked == {(0, "seq_stat"), (0, "ran_stat"), (1, "seq_stat"), (1, "ran_stat")}
    assert drawn["top"] > FLOOR
    for mark in drawn["marks"]:
        assert mark["kind"] == "top" and mark["y"] + mark["height"] < drawn["floorY"], mark


def test_relative_bars_of_a_too_fast_baseline_are_its_bounds_and_too_fast_on_both_sides_has_no_mark(tmp_path):
    """The sample sweep against fs=ext4 dev=loop mode=async, whose metadata tests were all +++++: the sync
    configurations' verdicts ("at least ×14 slower") come from that bound, and their bars are the bound; the
    configurations +++++ like the baseline get no mark at the top of the % axis (it would read "far better")."""
    with sample_page(tmp_path, DESK) as (base_url, page):
        page.goto(f"{base_url}{SWEEP_COMPARE}&baseline={SWEEP_IDS[0]}&mode=relative")
        drawn = chart_state(
            page,
            "canvas[data-chart=metadata]",
            """{labels: chart.data.labels,
                datasets: chart.data.datasets.map(d => ({label: d.label, data: d.data, status: d.bbStatus,
                                                        bounds: d.bbBounds})),
                marks: chart.$bbMarks, valueLabels: chart.$bbValueLabels}""",
        )
        notes = page.locator("#figure-metadata .chart-notes").inner_text()
    by_name = {d["label"].split(" (N=")[0]: (i, d) for i, d in enumerate(drawn["datasets"])}
    seq_create = drawn["labels"].index("seq_create")
    index, sync = by_name["fs=ext4 dev=loop mode=sync"]
    # 954 files/s at most against +++++ above 16,384 (ratio 0.0681, rounded as the API gives it): -93.2 %
    assert sync["status"][seq_create] == "ok" and sync["bounds"][seq_create] is True
    assert sync["data"][seq_create] == -93.2
    label = next(v for v in drawn["valueLabels"] if v["datasetIndex"] == index and v["index"] == seq_create)
    assert label["text"].startswith("≤ ")
    for name in ("fs=tmpfs dev=ram mode=async", "fs=xfs dev=loop mode=async"):
        _, both = by_name[name]
        assert set(both["status"]) == {"too_fast_unjudged"} and set(both["data"]) == {None}
    assert drawn["marks"] == []
    assert "no comparison: +++++ here, not known to be faster than the baseline" in notes


def test_a_phone_s_charts_label_their_log_axis_and_keep_the_words_that_matter(tmp_path):
    """At 390 px: the latency axis (under two decades here) has every tick labelled, 1-2-5; the axis title keeps
    its unit; the legend's baseline line is a short text of its own, not a cut one."""
    body = """{ticks: chart.scales.y.ticks.map(t => [t.value, t.label]), title: chart.options.scales.y.title.text,
               legend: chart.legend.legendItems.map(i => i.text), min: chart.scales.y.min, max: chart.scales.y.max}"""
    with sample_page(tmp_path, PHONE) as (base_url, page):
        page.goto(f"{base_url}/compare?runs={','.join(map(str, STUDY_IDS))}&group=config")
        latency = chart_state(page, "canvas[data-chart=latency]", body)
        stat = chart_state(page, CHART, body)
    assert latency["max"] / latency["min"] < 100 and len(latency["ticks"]) >= 3
    assert all(label for _, label in latency["ticks"])
    assert {round(value / 10 ** math.floor(math.log10(value))) for value, _ in latency["ticks"]} <= {1, 2, 5}
    assert stat["title"] == "files/s"
    assert "dashed: baseline mean" in stat["legend"] and not any(text.endswith("…") for text in stat["legend"])


def test_a_matrix_s_small_charts_mark_too_fast_above_its_floor(tmp_path):
    """The sample sweep's seq_create by fs and mode: the async cells are +++++ (every run above 16,384 files/s),
    the sync ones measured about 1,000-2,500; each row's chart reaches past the floor and marks +++++ above it."""
    with sample_page(tmp_path, DESK) as (base_url, page):
        page.goto(f"{base_url}/matrix?rows=fs&cols=mode&test=seq_create&runs={','.join(map(str, SWEEP_IDS))}")
        drawn = [
            chart_state(
                page,
                f"canvas[data-matrix-row='{index}']",
                """{marks: chart.$bbMarks, floorY: chart.scales.y.getPixelForValue(16384),
                    floors: chart.data.datasets.map(d => d.bbTooFastAbove[0])}""",
            )
            for index in range(page.locator("canvas[data-matrix-row]").count())
        ]
    assert drawn and all(chart["marks"] for chart in drawn)
    for chart in drawn:
        assert set(chart["floors"]) <= {16384, None}
        for mark in chart["marks"]:
            assert mark["y"] + mark["height"] < chart["floorY"], mark


WIDTHS = {"desktop": {"width": 1366, "height": 900}, "phone": PHONE}
AXIS_OF_THE_BARS = """{
    max: chart.scales.y.max,
    bars: Math.max(0, ...chart.data.datasets.flatMap(d => d.data.filter(v => v !== null))),
    floors: Math.max(0, ...chart.data.datasets.flatMap(d => (d.bbTooFastAbove || []).filter(Boolean))),
    whiskers: Math.max(0, ...chart.data.datasets.flatMap(d => d.bbErrors.filter(Boolean).map(e => e[1]))),
    clipped: chart.$bbErrorBars.filter(b => b.clipped).length,
    log: chart.scales.y.type === "logarithmic",
}"""


def png_size(path: str) -> tuple[int, int]:
    header = Path(path).read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")


def test_axes_matrix_focus_and_png_at_desktop_and_phone_width(tmp_path):
    """The sample sweep (3 runs a configuration, some with intervals four times their mean) at 1366 and 390 px:
    every absolute axis is set by its bars and +++++ floors, never by a whisker (those past it are clipped); the
    matrix fits the screen; the focus stays on the control an update replaced; a chart's PNG is twice the size
    drawn, with the per-char panel beside the block chart."""
    with sample_board(tmp_path) as base_url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        errors: list[str] = []
        for name, viewport in WIDTHS.items():
            page = browser.new_context(viewport=viewport, accept_downloads=True).new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{base_url}{SWEEP_COMPARE}")
            clipped = 0
            canvases = page.evaluate(
                """() => [...document.querySelectorAll('canvas[data-chart], canvas[data-part-of]')].map(c =>
                          c.dataset.chart ? `canvas[data-chart=${c.dataset.chart}]` : `canvas[data-part-of=${c.dataset.partOf}]`)"""
            )
            assert len(canvases) >= 7
            for selector in canvases:
                axis = chart_state(page, selector, AXIS_OF_THE_BARS)
                # a linear axis: room for the verdict marks above the bars and the +++++ marks above their floor
                reach = axis["bars"] if axis["log"] else max(axis["bars"] * 1.08, axis["floors"] * 1.2)
                # then a round top: at most one tick step (a sixth of the axis, rounded up) past them
                assert reach <= axis["max"] <= reach * 1.6, (name, selector, axis)
                clipped += axis["clipped"]
                assert axis["clipped"] == 0 or axis["whiskers"] > axis["max"]
            assert clipped > 0, name  # the sweep's widest intervals reach beyond their axes
            # the tables of every figure give each interval whole
            page.locator(".heat-fold summary").click()
            assert page.locator(".heat-table small.ci").first.inner_text().startswith("CI ")

            # A chart's PNG: both panels of the block chart, at 2 pixels per CSS pixel of the box around them.
            box = page.evaluate(
                """() => { const rs = [...document.querySelectorAll('canvas[data-chart=block_io], canvas[data-part-of=block_io]')]
                           .map(c => c.getBoundingClientRect());
                           return [Math.min(...rs.map(r => r.left)), Math.max(...rs.map(r => r.right)), rs.length]; }"""
            )
            with page.expect_download() as download:
                page.locator('button[data-export-chart="block_io"]').dispatch_event("click")
            width, height = png_size(download.value.path())
            exported = page.locator('button[data-export-chart="block_io"]').evaluate("b => ({...b.dataset})")
            assert box[2] == 2 and exported["exportedPanels"] == "2"
            assert abs(width - 2 * (box[1] - box[0])) <= 2 and height > width / 2, (name, width, height, box)

            # Focus after each update: a mode radio chosen by the keyboard, then Enter in Group by. Each update
            # replaces the form (the old one is marked, to wait for the new).
            replaced = "() => !document.querySelector('form.compare-controls[data-old]') && document.activeElement.name"
            mark_old = "document.querySelector('form.compare-controls').dataset.old = '1'"
            page.evaluate(mark_old)
            page.focus("input[name=mode][value=absolute]")
            page.keyboard.press("ArrowDown")
            page.wait_for_function(replaced)
            assert page.evaluate("[document.activeElement.name, document.activeElement.value]") == ["mode", "relative"]
            page.evaluate(mark_old)
            page.fill("input[name=group]", "fs,mode")
            page.press("input[name=group]", "Enter")
            page.wait_for_function(replaced)
            assert page.evaluate("document.activeElement.name") == "group"
            expect(page).to_have_url(re.compile(r"[?&]group=fs(,|%2C)mode(&|$)"))
            # the seeks chart's relative title is wider than a phone's chart: wrapped, not cut
            with page.expect_download():
                page.locator('button[data-export-chart="seeks"]').dispatch_event("click")
            title_lines = page.locator('button[data-export-chart="seeks"]').get_attribute("data-exported-title-lines")
            assert int(title_lines) >= (2 if name == "phone" else 1)
            page.goto(f"{base_url}/compare")
            page.keyboard.press("Tab")
            assert page.evaluate("document.activeElement.className") == "skip-link"

            # The matrix fits the screen: no sideways scroll, its table within the viewport; cards on a phone.
            page.goto(f"{base_url}/matrix?rows=fs&cols=mode&test=put_block&runs={','.join(map(str, SWEEP_IDS))}")
            fits = page.evaluate(
                """() => ({page: document.documentElement.scrollWidth, table: document.querySelector('.matrix-table').scrollWidth,
                           scroller: document.querySelector('.matrix-scroll').scrollWidth,
                           row: getComputedStyle(document.querySelector('.matrix-table tbody tr')).display,
                           chart: document.querySelector('canvas[data-matrix-row]').getBoundingClientRect().top + scrollY})"""
            )
            assert fits["page"] <= viewport["width"] and fits["scroller"] <= viewport["width"], (name, fits)
            assert fits["row"] == ("block" if name == "phone" else "table-row")
            if name == "phone":
                assert fits["chart"] < 2 * viewport["height"], fits
            rows = [
                chart_state(page, f"canvas[data-matrix-row='{index}']", AXIS_OF_THE_BARS)
                for index in range(page.locator("canvas[data-matrix-row]").count())
            ]
            # one axis for every row's chart, set by the highest bar of them all
            reach = max(max(row["bars"] * 1.08, row["floors"] * 1.2) for row in rows)
            assert all(reach <= row["max"] <= reach * 1.6 for row in rows), rows
            page.screenshot(path=str(tmp_path / f"matrix-{name}.png"), full_page=True)
            page.context.close()
        browser.close()
    assert errors == []
