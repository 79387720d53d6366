"""/history in Debian's Chromium at a laptop's width (1366 px) and a phone's (390 px): the change is the first
thing read, every test's chart is drawn without a script error, nothing is wider than the screen, and a click on
a run's point opens that run."""

from __future__ import annotations

import random

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from tests.browser_support import CHROMIUM, CHROMIUM_ARGS, running_server
from tests.helpers import LINE_198, with_field
from tests.live_server import CLIENT_SSL

pytestmark = pytest.mark.slow  # a real browser and server

LAPTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
PUT_BLOCK = 11


def _post_series(base_url: str) -> list[int]:
    """16 nightly runs of two configurations; ext4's block write halves from the 11th."""
    rng = random.Random(7)
    ids = []
    for night in range(16):
        for fs in ("ext4", "xfs"):
            level = 200_000 if fs == "ext4" and night >= 10 else 400_000
            line = with_field(with_field(LINE_198, 2, "nightly"), 4, str(night * 2 + (fs == "xfs")))
            line = with_field(line, PUT_BLOCK, str(round(level * rng.lognormvariate(0, 0.02))))
            answer = httpx.post(
                f"{base_url}/api/runs",
                params={"tag": f"fs={fs}", "time": f"2026-10-{night + 1:02d}T02:00:00Z"},
                content=line + "\n",
                headers={"Content-Type": "text/csv"},
                verify=CLIENT_SSL,
            )
            answer.raise_for_status()
            ids += answer.json()["created"]
    return ids


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366px", "390px"])
def test_the_history_page_reads_on_a_laptop_and_a_phone(tmp_path, viewport):
    with running_server(tmp_path / "bonnieboard.db") as base_url, sync_playwright() as playwright:
        ids = _post_series(base_url)
        ext4 = ids[0::2]
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=viewport).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{base_url}/history?machine=nightly")

        change = page.locator(".change-group").first
        expect(change).to_contain_text("block write ×0.5")
        expect(change).to_contain_text(f"Run {ext4[10]}")
        expect(change).to_contain_text("fs=ext4")
        assert change.bounding_box()["y"] + 20 < viewport["height"], "the change is on the first screen"
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]

        canvases = page.locator("canvas[data-test]")
        expect(canvases).to_have_count(page.locator("figure.history-chart").count())
        drawn = page.evaluate(
            "[...document.querySelectorAll('canvas[data-test]')].map(c => [c.dataset.test, !!Chart.getChart(c), c.width])"
        )
        assert drawn and all(chart and width > 0 for _, chart, width in drawn), drawn
        page.screenshot(path=str(tmp_path / f"history-{viewport['width']}-first-screen.png"))
        page.screenshot(path=str(tmp_path / f"history-{viewport['width']}.png"), full_page=True)

        # A click on ext4's 11th point (the first of the new stretch) opens its run.
        canvas = page.locator('canvas[data-test="put_block"]')
        canvas.scroll_into_view_if_needed()
        point = page.evaluate(
            """() => {
                const chart = Chart.getChart(document.querySelector('canvas[data-test="put_block"]'));
                const index = chart.data.datasets.findIndex(d => d.label === "runs");
                const element = chart.getDatasetMeta(index).data[10];
                return [element.x, element.y];
            }"""
        )
        box = canvas.bounding_box()
        page.mouse.click(box["x"] + point[0], box["y"] + point[1])
        page.wait_for_url(f"**/runs/{ext4[10]}")
        expect(page.locator("h1")).to_contain_text(f"Run #{ext4[10]}")
        browser.close()
        assert errors == []
