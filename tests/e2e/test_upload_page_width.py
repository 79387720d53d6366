"""The upload page's answer in Debian's Chromium, at 1366 and 390 px: a pasted text report (its CSV line is one
long word) and a refused line shown back in the error table wrap within the page instead of widening it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect, sync_playwright

from tests.browser_support import CHROMIUM, CHROMIUM_ARGS, running_server
from tests.helpers import DATA_DIR, LINE_198, with_field

pytestmark = pytest.mark.slow  # a real browser and server: pytest -m 'not slow' skips it

VIEWPORTS = [{"width": 1366, "height": 900}, {"width": 390, "height": 844}]


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=lambda viewport: f"{viewport['width']}px")
def test_a_pasted_report_and_a_refused_line_stay_within_the_page(tmp_path, viewport):
    report = (DATA_DIR / "reports" / "real-long-name.txt").read_text()
    bad = with_field(LINE_198, 12, "x" * 100)  # a refused field: the line is still shown whole (under 400 characters)
    with running_server(tmp_path / "bonnieboard.db") as base_url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=viewport).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(base_url + "/upload")
        page.fill("textarea[name=lines]", report)
        page.get_by_role("button", name="Upload").click()
        expect(page.locator("ul.converted code").first).to_contain_text("1.98,2.00a,a very long machine")
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]

        page.fill("textarea[name=lines]", f"{LINE_198}\n{bad}\n")
        page.get_by_role("button", name="Upload").click()
        row = page.locator("table.errors tbody tr")
        expect(row).to_have_count(1)
        expect(row.locator("td").first).to_have_text("2")
        expect(row.locator("td.line-text code")).to_have_text(bad)
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
        browser.close()
        assert errors == []
