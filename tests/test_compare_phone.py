"""The compare page at phone width (390 px) in Debian's Chromium: with 18 runs their chips are folded into
one line, so the charts are within reach; unfolded, every chip is there and removes its run."""

from __future__ import annotations

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
