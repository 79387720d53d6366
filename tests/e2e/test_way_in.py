"""The way in, on the sample data `make run` loads, in Debian's Chromium at 1366×900: the front page says what
the sample data is and links its sweep's comparison; a tag chip filters; "Select all N shown" ticks the page's
runs; grouped, the baseline is chosen among configurations; every tag is in view without scrolling sideways."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from tests.browser_support import CHROMIUM, CHROMIUM_ARGS, running_server, upload
from tests.helpers import CORPUS_DIR
from tests.sample_board import SWEEP_IDS, sample_board

pytestmark = pytest.mark.slow  # a real browser and server: pytest -m 'not slow' skips it

DESKTOP = {"width": 1366, "height": 900}
CONFIGURATIONS = [f"fs={fs} mode={mode}" for fs in ("ext4", "tmpfs", "xfs") for mode in ("async", "sync")]


def test_a_new_user_finds_the_sample_sweep_and_compares_it(tmp_path):
    with sample_board(tmp_path) as base_url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=DESKTOP).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(base_url + "/")

        intro = page.locator("section.samples")
        expect(intro).to_contain_text("126 runs here are real bonnie++ output that make run loaded")
        # The sample history is offered beside the studies.
        expect(intro.get_by_role("link", name="A machine over time: nightly-loop")).to_be_visible()
        expect(intro).to_contain_text("6 configurations (fs × mode), each run 3 times, 18 runs tagged sweep=media-sync")
        # The study the disk answered for comes first: the sweep's runs grouped by their config tag.
        expect(intro.locator("li").first).to_contain_text(
            "2 configurations (config), each run 10 times, 20 runs tagged study=ext4-xfs-device"
        )
        # The sweep's caveat is on the front page too: 3 GiB on a 24 GiB machine measures the page cache.
        expect(intro).to_contain_text("Its file (3,072 MiB) is under twice the machine's RAM (24,105 MiB)")
        link = intro.get_by_role("link", name="Compare the sample study media-sync", exact=True)
        assert link.bounding_box()["y"] + link.bounding_box()["height"] <= DESKTOP["height"]

        # Every tag chip of a page is in view at 1366 px: the table does not scroll sideways. The newest runs are the
        # sample history's; the sweep's are on the page older than them ("older →" goes there).
        page.goto(base_url + "/?before=39")
        scroll_width, client_width = page.evaluate(
            "(e => [e.scrollWidth, e.clientWidth])(document.querySelector('.table-scroll'))"
        )
        assert scroll_width <= client_width
        sweep_chip = page.locator("tr", has=page.get_by_role("link", name="#33", exact=True)).locator(
            "a.tag", has_text="sweep=media-sync"
        )
        box = sweep_chip.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= DESKTOP["width"]

        # A chip filters the list by its tag; "Select all 18 shown" ticks them, in the order shown.
        sweep_chip.click()
        expect(page).to_have_url(re.compile(r"[?&]tag=sweep%3Dmedia-sync(&|$)"))
        expect(page.locator("p.summary")).to_contain_text("18 runs")
        page.get_by_role("button", name="Select all 18 shown").click()
        expect(page.locator("input.choose:checked")).to_have_count(18)
        expect(page.locator("#chosen-text")).to_contain_text("18 ticked: #38 (baseline)")
        assert sorted(page.locator("#chosen").input_value().split(","), key=int) == [
            str(run_id) for run_id in SWEEP_IDS
        ]
        # A run ticked before stays first (the baseline): select-all adds the rest after it.
        page.locator("input.choose").first.uncheck()
        page.locator("input.choose").last.uncheck()
        page.locator("input.choose").last.check()
        page.get_by_role("button", name="Select all 18 shown").click()
        assert page.locator("#chosen").input_value().split(",")[-2:] == ["21", "38"]

        # The front page's link: the sweep by its configurations, the baseline chosen among them.
        page.goto(base_url + "/")
        page.get_by_role("link", name="Compare the sample study media-sync", exact=True).click()
        expect(page).to_have_url(
            re.compile(r"/compare\?runs=21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38&.*group=fs,mode")
        )
        baseline = page.locator("select[name=baseline] option")
        expect(baseline).to_have_count(1 + len(CONFIGURATIONS))  # and "default: the first run"
        assert baseline.all_inner_texts()[1:] == [f"{name} (N=3)" for name in CONFIGURATIONS]
        page.locator("select[name=baseline]").select_option(label="fs=xfs mode=sync (N=3)")
        expect(page).to_have_url(re.compile(r"baseline=36"))
        expect(page.locator("select[name=baseline] option:checked")).to_have_text("fs=xfs mode=sync (N=3)")
        browser.close()
        assert errors == []


def test_the_sample_introduction_is_not_shown_without_sample_data_or_on_a_filtered_list(tmp_path):
    line = next(
        line for line in (CORPUS_DIR / "bonnie200-sample.csv").read_text().splitlines() if line.startswith("1.98")
    )
    with running_server(tmp_path / "own.db") as base_url:
        upload(base_url, [line], tags={"sweep": "mine"})
        assert "The sample data" not in httpx.get(base_url + "/").text
    with sample_board(tmp_path) as base_url:
        assert "The sample data" in httpx.get(base_url + "/").text
        assert "The sample data" not in httpx.get(base_url + "/?tag=set%3Dlab1").text
        assert "The sample data" not in httpx.get(base_url + "/?page=2").text
