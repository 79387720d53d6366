"""A bonnie++ text report pasted into the upload page, in Debian's Chromium against a real server: the page
says the runs were read from the report (the "converted" notice, with what the report did not carry exactly),
and the stored runs hold the report's values. The reports are real bonnie++ 2.00a output (tests/data/reports)."""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from tests.browser_support import CHROMIUM_ARGS, chromium_path, running_server
from tests.ingest.test_report_text import REPORTS, split_real

pytestmark = pytest.mark.slow  # a real browser, server, runner or bonnie++: pytest -m 'not slow' skips it


def test_a_pasted_text_report_is_stored_as_converted_runs(tmp_path):
    # Two reports as a forum post would quote them: the text tables only, without bonnie++'s CSV lines.
    default_report, default_csv = split_real(REPORTS / "real-default.txt")
    gigabyte_report, _ = split_real(REPORTS / "real-gigabyte.txt")
    paste = default_report + "\n" + gigabyte_report
    with running_server(tmp_path / "b.db") as board, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=board)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{board}/upload")
            # A real paste: the report on the clipboard, then Ctrl+V into the box.
            page.evaluate("text => navigator.clipboard.writeText(text)", paste)
            box = page.locator("textarea[name=lines]")
            box.focus()
            page.keyboard.press("Control+V")
            assert box.input_value() == paste
            with page.expect_response(lambda r: r.url == f"{board}/upload" and r.request.method == "POST") as answer:
                page.get_by_role("button", name="Upload").click()
            assert answer.value.status == 201

            result = page.locator(".upload-result")
            expect(result).to_contain_text("2 runs created")
            expect(result).to_contain_text("Read from the text report:")
            converted = result.locator("ul.converted > li")
            expect(converted).to_have_count(2)
            first, second = converted.nth(0), converted.nth(1)
            # Each names the line of its report's results row (the 4th of a report; a blank line between the
            # two) and the CSV line it became, and lists what the report did not carry.
            expect(first).to_contain_text("line 4 →")
            expect(second).to_contain_text(f"line {len(default_report.splitlines()) + 1 + 4} →")
            expect(first.locator("ul")).to_contain_text("not in the text report, so left empty: seed")
            first_csv = first.locator("code").inner_text()
            assert first_csv.startswith("1.98,2.00a,default,1,,256M,,8192,5,564,42,+++++,+++,+++++,+++,709,40,")
            assert first_csv.endswith(default_csv.split(",", 24)[24])  # the file tests and latencies, exactly
            # The report rounds 1.6g and 1.7g: the notice says so.
            expect(second.locator("ul")).to_contain_text("put_block")

            # The run page of the first: the report's values.
            first.get_by_role("link").click()
            page.wait_for_url(re.compile(r"/runs/\d+$"))
            run_id = int(page.url.rsplit("/", 1)[1])
            stored = httpx.get(f"{board}/api/runs/{run_id}").json()
            assert stored["machine"] == "default" and stored["file_size_mib"] == 256
            putc, getc = stored["results"]["putc"], stored["results"]["getc"]
            assert (putc["value"], putc["cpu_pct"], putc["latency_us"]) == (564, 42, 79330)
            assert (getc["value"], getc["cpu_pct"], getc["latency_us"]) == (709, 40, 51840)
            assert stored["results"]["put_block"]["status"] == "too_fast"
            text = page.locator("main").inner_text()
            assert "default" in text and "564" in text and "709" in text
            assert errors == []
        finally:
            browser.close()
