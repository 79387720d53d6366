"""From upload to a grouped comparison relative to a baseline with the keyboard only, in Debian's Chromium against a
real server on an empty board: every key press is made through one counter, and the page itself counts the keydowns
it receives, so the count the test asserts is the one a person would make. The file is three lines of ext4 and three
of xfs from the sample sweep (bonnie++ -m ext4, -m xfs), tagged fs= from their machine names at upload."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from tests.browser_support import CHROMIUM_ARGS, ROOT, chromium_path, running_server
from tests.e2e.test_accessibility import AXE, FAILING_IMPACTS

pytestmark = pytest.mark.slow  # a real browser, server, runner or bonnie++: pytest -m 'not slow' skips it

# What a person can stand from upload to the comparison they came for; the flow below makes 12.
MAX_PRESSES = 15
SWEEP = {"ext4": "sweep-ext4-loop-async.csv", "xfs": "sweep-xfs-loop-async.csv"}

# The page's own count of keydowns, kept across page loads in the tab's sessionStorage (the CSP allows no inline
# script; an init script goes in through the DevTools protocol).
COUNT_KEYDOWNS = """document.addEventListener("keydown", () => {
    sessionStorage.keydowns = String(Number(sessionStorage.keydowns || 0) + 1);
}, true);"""


class Keys:
    """The only way the test touches the page: each key pressed, and each file picked in a chooser, is one press,
    recorded with why it is made."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.presses: list[tuple[str, str]] = []
        # Playwright catches file choosers once a listener asks for them, a round trip later: a listener from the
        # start, or the first chooser may open before the catching does (and never reach the test).
        page.on("filechooser", lambda chooser: None)
        page.evaluate("() => 0")

    def press(self, key: str, why: str) -> None:
        self.page.keyboard.press(key)
        self.presses.append((key, why))

    def type(self, text: str, why: str) -> None:
        for character in text:  # "fs" is two presses
            self.page.keyboard.type(character)
            self.presses.append((character, why))

    def choose_file(self, key: str, path: Path) -> None:
        """`key` on the focused file input opens the chooser (Space in Chromium; Enter does not); picking the file in
        it is one more press."""
        with self.page.expect_file_chooser() as chooser:
            self.press(key, "open the file chooser")
        chooser.value.set_files(path)
        self.presses.append(("(file)", "pick the file in the chooser"))

    def keydowns(self) -> tuple[int, int]:
        """The keydowns the page received, and those the presses make: one a key, two a chord (Control+A), none the
        pick in the chooser."""
        received = int(self.page.evaluate("() => Number(sessionStorage.keydowns || 0)"))
        return received, sum(len(key.split("+")) for key, _ in self.presses if key != "(file)")

    def report(self) -> str:
        return "\n".join(f"{n:2}. {key:8} {why}" for n, (key, why) in enumerate(self.presses, 1))


def sweep_file(folder: Path) -> Path:
    """Three ext4 and three xfs lines of the sample sweep, their machines named for the file system."""
    lines = []
    for fs, name in SWEEP.items():
        for line in (ROOT / "sample_data" / name).read_text().splitlines()[1:]:
            fields = line.split(",")
            fields[2] = fs
            lines.append(",".join(fields))
    path = folder / "ext4-xfs.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def focused(page: Page) -> str:
    """The focused element as `tag name=… value=…` or `tag: text`, to say where the focus is."""
    return page.evaluate(
        """() => { const e = document.activeElement;
            return e.name ? `${e.tagName} ${e.name}=${e.value}` : `${e.tagName}: ${(e.textContent || "").trim()}`; }"""
    )


def upload_by_keys(keys: Keys, page: Page, file: Path) -> None:
    """From the upload page's first control to the result, the fs tag taken from each machine's name."""
    # The browser moves the focus to an [autofocus] control at a rendering update, which can come after the load
    # event that page.goto waits for: wait for it, not just read it.
    expect(page.locator("input[type=file][name=file]"), "the upload page opens on its file input").to_be_focused()
    keys.choose_file("Space", file)
    for field in ("the pasted lines", "tags", "tags from names"):
        keys.press("Tab", f"to {field}")
    assert focused(page) == "INPUT name_tags="
    keys.type("{fs}", "the name pattern: the machine's name is the fs tag")
    with page.expect_response(lambda r: r.url.endswith("/upload") and r.request.method == "POST") as answer:
        keys.press("Enter", "submit (Enter in a text box submits its form)")
    assert answer.value.status == 201
    expect(page.locator(".upload-result")).to_contain_text("6 runs created")


def test_upload_to_a_grouped_relative_comparison_in_at_most_15_key_presses(tmp_path):
    file = sweep_file(tmp_path)
    with running_server(tmp_path / "b.db") as board, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.add_init_script(COUNT_KEYDOWNS)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{board}/upload")
            keys = Keys(page)
            upload_by_keys(keys, page, file)

            # The htmx answer puts the focus on its first link, the comparison grouped by the one tag that varies.
            grouped = page.get_by_role("link", name="Compare these runs grouped by fs")
            expect(grouped).to_be_focused()
            assert serious_violations(page) == []
            expect(grouped).to_be_focused()
            keys.press("Tab", "to the same comparison relative to the first configuration")
            relative = page.get_by_role("link", name="as % vs fs=ext4")
            expect(relative).to_be_focused()
            keys.press("Enter", "open it")
            page.wait_for_url("**/compare?*")
            flow = keys.report()
            assert_grouped_relative(page)
            assert len(keys.presses) <= MAX_PRESSES, flow
            received, pressed = keys.keydowns()
            assert received == pressed, flow
            print(f"\n{len(keys.presses)} presses from upload to the grouped relative comparison:\n{flow}")

            focus_kept_on_the_compare_page(Keys(page), page)
            assert errors == []
        finally:
            browser.close()


def serious_violations(page: Page) -> list[str]:
    """axe's serious or critical violations on the page as it is (the upload's answer swapped in)."""
    page.evaluate(AXE.read_text())
    return page.evaluate(
        """async (impacts) => (await axe.run(document, {resultTypes: ["violations"]})).violations
            .filter(v => impacts.includes(v.impact)).map(v => `${v.id}: ${v.nodes.map(n => n.target).join(" | ")}`)""",
        list(FAILING_IMPACTS),
    )


def assert_grouped_relative(page: Page) -> None:
    """The page shows what its URL says: grouped by fs, relative to ext4, with xfs drawn against it."""
    assert "group=fs" in page.url and "mode=relative" in page.url
    expect(page.locator("input[name=group]")).to_have_value("fs")
    expect(page.locator("input[name=mode][value=relative]")).to_be_checked()
    expect(page.locator("select[name=baseline] option:checked")).to_have_text("fs=ext4 (N=3)")
    expect(page.locator("h1")).to_have_text("Compare 6 runs relative to a baseline")
    page.wait_for_function(
        "() => { const c = [...document.querySelectorAll('canvas[data-chart]')];"
        " return c.length && c.every(canvas => Chart.getChart(canvas)); }"
    )
    configurations = page.evaluate(
        "() => Chart.getChart(document.querySelector('canvas[data-chart]')).data.datasets.map(d => d.label)"
    )
    assert configurations == ["fs=xfs (N=3)"], configurations


def focus_kept_on_the_compare_page(keys: Keys, page: Page) -> None:
    """Each htmx update of the compare page leaves the focus on the control that changed."""
    keys.press("Tab", "to the skip link")
    keys.press("Enter", "skip to the content")
    keys.press("Tab", "to the checked mode: % vs baseline")
    expect(page.locator("input[name=mode][value=relative]")).to_be_focused()
    with page.expect_response(lambda r: "/compare?" in r.url and "mode=absolute" in r.url):
        keys.press("ArrowUp", "absolute")
    expect(page.locator("h1")).to_have_text("Compare 6 runs")
    expect(page.locator("input[name=mode][value=absolute]")).to_be_focused()
    with page.expect_response(lambda r: "/compare?" in r.url and "mode=relative" in r.url):
        keys.press("ArrowDown", "back to % vs baseline")
    expect(page.locator("h1")).to_have_text("Compare 6 runs relative to a baseline")
    expect(page.locator("input[name=mode][value=relative]")).to_be_focused()
    keys.press("Tab", "to the baseline")
    keys.press("Tab", "to Group by")
    expect(page.locator("input[name=group]")).to_be_focused()
    keys.press("End", "after fs")
    with page.expect_response(lambda r: "/compare?" in r.url and "group=none" in r.url):
        for _ in "fs":
            keys.press("Backspace", "clear the group")
        keys.type("none", "every run alone")
        keys.press("Enter", "show")
    # The typed "none" and the focus are there before the answer is: only the address tells the update apart. htmx
    # pushes it once it has the answer, just before the swap; focus.js moves the focus back after the swap (htmx's
    # settle delay later), so the focus is waited for after the address, not read once.
    expect(page).to_have_url(re.compile(r"[?&]group=none(&|$)"))
    expect(page.locator("input[name=group]")).to_have_value("none")
    expect(page.locator("input[name=group]")).to_be_focused()
