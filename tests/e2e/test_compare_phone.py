"""The compare page at phone width (390 px) in Debian's Chromium: with 18 runs their chips are folded into
one line, so the charts are within reach; unfolded, every chip is there and removes its run."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.browser_support import CHROMIUM, CHROMIUM_ARGS, running_server, upload
from tests.helpers import CORPUS_DIR

pytestmark = pytest.mark.slow  # a real browser and server: pytest -m 'not slow' skips it

RUNS = 18
PHONE = {"width": 390, "height": 844}


def eighteen_lines() -> list[str]:
    lines = [line for line in (CORPUS_DIR / "bonnie200-sample.csv").read_text().splitlines() if line.startswith("1.98")]
    assert lines
    out = []
    for i in range(RUNS):
        fields = lines[i % len(lines)].split(",")
        fields[2] = f"phone-host-{i:02d}"
        out.append(",".join(fields))
    return out


def test_eighteen_run_chips_fold_at_phone_width_and_the_charts_are_reachable(tmp_path):
    with running_server(tmp_path / "bonnieboard.db") as base_url, sync_playwright() as playwright:
        ids = upload(base_url, eighteen_lines())
        assert len(ids) == RUNS
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=PHONE).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{base_url}/compare?runs={','.join(map(str, ids))}")

        folded = page.locator("details.run-list")
        expect(folded.locator("summary")).to_have_text(f"{RUNS} runs (show, remove)")
        expect(page.locator(".run-chips li").first).to_be_hidden()
        summary_top = folded.locator("summary").bounding_box()["y"]
        assert summary_top < PHONE["height"] / 2
        chart_top = page.locator("#figure-block_io").bounding_box()["y"]

        folded.locator("summary").click()
        expect(page.locator(".run-chips li")).to_have_count(RUNS)
        expect(page.locator(".run-chips li").last).to_be_visible()
        chips_height = page.locator(".run-chips").bounding_box()["height"]
        # Open, the chips fill most of a screen: that is what the fold saves before the first chart.
        assert chips_height > PHONE["height"] / 2
        assert page.locator("#figure-block_io").bounding_box()["y"] >= chart_top + chips_height
        # A chip still removes its run.
        page.locator(f'.run-chips button.remove[value="{ids[-1]}"]').click()
        expect(page.locator("details.run-list summary")).to_have_text(f"{RUNS - 1} runs (show, remove)")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        browser.close()
        assert errors == []


def test_charts_below_the_phone_screen_are_drawn_later_as_the_legend_shows_them(tmp_path):
    """On a phone the charts a reader does not see yet are drawn as they come near or when the browser is idle
    (static/charts.js): one drawn after a press on the shared legend hides what the others hide, and a chart
    saved as PNG before it was drawn is drawn for it. The CPU is slowed so that the last chart is still waiting
    when the legend is pressed."""
    with running_server(tmp_path / "bonnieboard.db") as base_url, sync_playwright() as playwright:
        ids = upload(base_url, eighteen_lines())
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport=PHONE)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": 20})
        page.goto(f"{base_url}/compare?runs={','.join(map(str, ids))}", wait_until="commit")
        page.wait_for_function("() => document.querySelector('.chart-legend button[data-configuration]')")
        # In one turn of the page's event loop: whether the last chart is still waiting, then the press.
        waited, configuration = page.evaluate(
            """() => {
                const last = [...document.querySelectorAll('canvas[data-chart]')].pop();
                const button = document.querySelectorAll('.chart-legend button[data-configuration]')[2];
                const waiting = !Chart.getChart(last);
                button.click();
                return [waiting, button.dataset.configuration];
            }"""
        )
        assert waited, "the last chart was drawn before the page was even idle"
        hidden = page.wait_for_function(
            """configuration => {
                const charts = [...document.querySelectorAll('canvas[data-chart], canvas[data-part-of]')].map(c => Chart.getChart(c));
                if (!charts.every(Boolean)) return false;
                return charts.map(c => c.isDatasetVisible(c.data.datasets.findIndex(d => String(d.bbConfiguration) === configuration)));
            }""",
            arg=configuration,
            timeout=120_000,
        ).json_value()
        assert hidden == [False] * len(hidden) and len(hidden) >= 6

        # A fresh load: the last chart's PNG asked for before anything drew it.
        page.goto(f"{base_url}/compare?runs={','.join(map(str, ids))}", wait_until="commit")
        # Chart.js can be there while charts.js, the deferred script after it, is still loading, and charts.js's
        # click listener makes the PNG: wait for the shared legend, which charts.js builds once it runs.
        page.wait_for_function("() => document.querySelector('.chart-legend button[data-configuration]')")
        last_key = page.evaluate("[...document.querySelectorAll('canvas[data-chart]')].pop().dataset.chart")
        with page.expect_download() as download:
            page.locator(f'button[data-export-chart="{last_key}"]').dispatch_event("click")
        assert Path(download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        browser.close()
        assert errors == []


def test_the_runs_list_shows_a_figure_on_a_phone_s_first_screen_and_keeps_the_name_in_view(tmp_path):
    """At 390 px the block write column comes right after the machine's name, and swiping the table sideways
    keeps the name at the left edge: every figure seen has its run's name beside it."""
    with running_server(tmp_path / "bonnieboard.db") as base_url, sync_playwright() as playwright:
        upload(base_url, eighteen_lines())
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=PHONE).new_page()
        page.goto(f"{base_url}/")
        header = page.locator("table.runs th", has_text="put_block").bounding_box()
        assert header["x"] + header["width"] <= PHONE["width"]
        scroller = page.locator(".table-scroll")
        left = scroller.bounding_box()["x"]
        page.evaluate("document.querySelector('.table-scroll').scrollLeft = 400")
        assert scroller.evaluate("e => e.scrollLeft") > 300
        name = page.locator("table.runs td.machine").first
        assert abs(name.bounding_box()["x"] - left) < 2
        expect(name).to_have_text("phone-host-17")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        browser.close()
