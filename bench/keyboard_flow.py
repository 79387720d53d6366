"""Key presses from upload to a grouped comparison relative to a baseline on pages without the upload answer's direct
links (main's before they came): the way a keyboard user has there, counted by tests/e2e/test_browser_keys.py's Keys.

Usage: PYTHONPATH=. .venv/bin/python bench/keyboard_flow.py [--code DIR]

Serves the app of the checkout DIR (default: this one; its modules first on PYTHONPATH) on a temporary SQLite file and
drives Debian's Chromium with the keyboard only, the test's file (three ext4 and three xfs lines of the sample sweep,
fs= from their machine names): skip to the content and Tab to the file input, pick the file, Tab to *Tags from
names* and type `{fs}`, Enter; Tab to *Compare these runs*, Enter; skip to the content, Tab to the mode, ArrowDown
(% vs baseline); Tab to *Group by*, Control+A, type `fs`, Enter. Prints each press and the count; the page's state
at the end is checked as the test checks its own (grouped by fs, relative, xfs drawn against ext4).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import Page, expect, sync_playwright

from tests.browser_support import CHROMIUM_ARGS, chromium_path
from tests.e2e.test_browser_keys import COUNT_KEYDOWNS, Keys, assert_grouped_relative, focused, sweep_file
from tests.live_server import live_server


def upload(keys: Keys, page: Page, file: Path) -> None:
    if focused(page) != "INPUT file=":
        keys.press("Tab", "to the skip link")
        keys.press("Enter", "skip to the content")
        keys.press("Tab", "to the file input")
    keys.choose_file("Space", file)
    for field in ("the pasted lines", "tags", "tags from names"):
        keys.press("Tab", f"to {field}")
    keys.type("{fs}", "the name pattern")
    with page.expect_response(lambda r: r.url.endswith("/upload") and r.request.method == "POST"):
        keys.press("Enter", "submit")
    expect(page.locator(".upload-result")).to_contain_text("6 runs created")


def compare(keys: Keys, page: Page) -> None:
    """From the upload's answer to the comparison grouped by fs, relative to the first run."""
    while not focused(page).startswith("A: Compare these runs"):
        keys.press("Tab", f"on from {focused(page)}")
        assert len(keys.presses) < 60, keys.report()
    keys.press("Enter", "open Compare these runs")
    page.wait_for_url("**/compare?*")
    keys.press("Tab", "to the skip link")
    keys.press("Enter", "skip to the content")
    keys.press("Tab", "to the checked mode")
    with page.expect_response(lambda r: "mode=relative" in r.url):
        keys.press("ArrowDown", "% vs baseline")
    expect(page.locator("input[name=mode][value=relative]")).to_be_focused()
    keys.press("Tab", "to the baseline")
    keys.press("Tab", "to Group by")
    keys.press("Control+A", "select its value (params)")
    keys.type("fs", "group by fs")
    with page.expect_response(lambda r: "group=fs" in r.url):
        keys.press("Enter", "show")
    expect(page.locator("input[name=group]")).to_be_focused()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parent.parent)
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="keyboard-flow-"))
    file = sweep_file(folder)
    env = {"PYTHONPATH": str(options.code.resolve())}
    with live_server(f"sqlite:///{folder / 'b.db'}", env=env) as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.add_init_script(COUNT_KEYDOWNS)
        page = context.new_page()
        page.goto(f"{server.url}/upload")
        keys = Keys(page)
        upload(keys, page, file)
        compare(keys, page)
        assert_grouped_relative(page)
        received, pressed = keys.keydowns()
        assert received == pressed, (received, pressed)
        browser.close()
    print(keys.report())
    print(f"{len(keys.presses)} presses ({received} keydowns) with the code of {options.code}")


if __name__ == "__main__":
    main()
