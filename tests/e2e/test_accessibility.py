"""axe-core (tests/vendor/, pinned) in Debian's Chromium on the seven pages a new user meets (the API's /docs, in the
nav, among them), on the sample data `make run` loads, at desktop and phone width: no serious or critical
violation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.browser_support import CHROMIUM, CHROMIUM_ARGS
from tests.sample_board import SWEEP_COMPARE, SWEEP_RUNS, sample_board

pytestmark = pytest.mark.slow  # a real browser and server: pytest -m 'not slow' skips it

AXE_VERSION = "4.14.1"
AXE = Path(__file__).resolve().parents[1] / "vendor" / f"axe-core-{AXE_VERSION}.min.js"
FAILING_IMPACTS = ("serious", "critical")
WIDTHS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
PAGES = {
    "runs": "/",
    "compare": SWEEP_COMPARE,
    "matrix": f"/matrix?rows=fs&cols=mode&test=put_block&runs={SWEEP_RUNS}",
    "run": "/runs/1",
    "upload": "/upload",
    "login": "/login",
    "docs": "/docs",
    "history": "/history?machine=nightly-loop",
    "machines": "/history",
    "changes": "/changes",
}


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Iterator[str]:
    with sample_board(tmp_path_factory.mktemp("axe")) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def serious_violations(browser: Browser, url: str, viewport: dict[str, int]) -> list[str]:
    """axe's violations of impact serious or critical on the page at `url`, one line per rule with its nodes."""
    page = browser.new_context(viewport=viewport).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    response = page.goto(url)
    assert response is not None and response.status == 200, url
    page.wait_for_load_state("networkidle")
    if "/docs" in url:  # Swagger UI draws the operations once it has read /openapi.json
        page.wait_for_selector(".opblock-summary")
    # Evaluated through the DevTools protocol, as a script the page's CSP (script-src 'self') would refuse.
    page.evaluate(AXE.read_text())
    assert page.evaluate("axe.version") == AXE_VERSION
    found = page.evaluate(
        """async (impacts) => {
            const result = await axe.run(document, {resultTypes: ["violations"]});
            return result.violations.filter(v => impacts.includes(v.impact)).map(v =>
                `${v.id}: ${v.impact} (${v.help}): ` + v.nodes.map(n => n.target.join(" ")).join(" | "));
        }""",
        list(FAILING_IMPACTS),
    )
    page.context.close()
    assert errors == []
    return found


def page_cases() -> list:
    return [pytest.param(name, width, id=f"{name}-{width}") for name in PAGES for width in WIDTHS]


@pytest.mark.parametrize(("name", "width"), page_cases())
def test_no_serious_or_critical_axe_violation(board, browser, name, width):
    assert serious_violations(browser, board + PAGES[name], WIDTHS[width]) == []


def test_axe_finds_a_serious_violation_when_there_is_one(board, browser):
    """The check can fail: text in the board's muted grey on the heat tables' red, 3.3:1, is caught."""
    page = browser.new_context().new_page()
    page.goto(board + "/upload")
    page.evaluate(
        """() => { const p = document.createElement("p"); p.textContent = "low contrast";
                   p.style.cssText = "color: #5b6670; background: #f3b3ad"; document.querySelector("main").append(p); }"""
    )
    page.evaluate(AXE.read_text())
    ids = page.evaluate("async () => (await axe.run(document)).violations.map(v => v.impact + ' ' + v.id)")
    page.context.close()
    assert "serious color-contrast" in ids
