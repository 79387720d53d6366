"""Cross-site writes in a real browser: a page on another origin posts forms and fetches
to an open board, in Debian's Chromium. The board refuses every one and stores nothing, while its own
pages keep working; a cross-site POST to /login does not sign the victim in."""

from __future__ import annotations

import html
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from tests.browser_support import CHROMIUM_ARGS, chromium_path
from tests.helpers import LINE_103, LINE_197, LINE_198
from tests.live_server import CLIENT_SSL, live_server

pytestmark = pytest.mark.slow  # a real browser, server, runner or bonnie++: pytest -m 'not slow' skips it


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("board")
    with live_server(f"sqlite:///{folder / 'bonnieboard.db'}") as server:
        yield server.url


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def attacker_site(tmp_path_factory) -> Iterator[tuple[Path, int]]:
    """A static site on another port: (its folder, its port)."""
    folder = tmp_path_factory.mktemp("attacker")

    def handler(*args, **kwargs):
        return _QuietHandler(*args, directory=str(folder), **kwargs)

    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield folder, server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def auto_post_form(action: str, fields: dict[str, str], multipart: bool = False) -> str:
    inputs = "".join(f'<textarea name="{html.escape(k)}">{html.escape(v)}</textarea>' for k, v in fields.items())
    enctype = ' enctype="multipart/form-data"' if multipart else ""
    return f'<form action="{html.escape(action)}" method="post"{enctype}>{inputs}</form><script>document.forms[0].submit()</script>'


def state(board: str) -> list[tuple]:
    return [(r["id"], r["label"], r["tags"]) for r in httpx.get(f"{board}/api/runs", verify=CLIENT_SSL).json()["items"]]


@pytest.mark.parametrize("attacker_host", ["127.0.0.1", "localhost"])  # another port of the same site, another site
def test_another_origin_cannot_write_to_an_open_board(board, attacker_site, browser, attacker_host):
    folder, port = attacker_site
    attacker = f"http://{attacker_host}:{port}"
    run_id = httpx.post(f"{board}/api/runs", content=LINE_198, params={"label": "mine"}, verify=CLIENT_SSL).json()[
        "created"
    ]
    run_id = run_id[0] if run_id else state(board)[0][0]
    context = browser.new_context()
    page = context.new_page()
    try:
        # The victim uses the board first: the browser holds its session cookie (sent along to a
        # same-site attacker on another port, as SameSite allows).
        page.goto(f"{board}/upload")
        before = state(board)

        pages = {
            "upload.html": auto_post_form(
                f"{board}/upload", {"lines": LINE_197, "csrf_token": "guess"}, multipart=True
            ),
            "tags.html": auto_post_form(f"{board}/runs/{run_id}/tags", {"label": "pwned", "key": "", "value": ""}),
            "api.html": auto_post_form(f"{board}/api/runs", {"x": LINE_103}),
        }
        for name, text in pages.items():
            (folder / name).write_text(text)
            with page.expect_response(lambda r: r.url.startswith(board) and r.request.method == "POST") as answer:
                page.goto(f"{attacker}/{name}")
            assert answer.value.status == 403, (name, answer.value.status)
            assert "may not write here" in answer.value.text()

        # fetch() with a body a form could send (text/plain: no preflight), and one that needs a preflight.
        (folder / "fetch.html").write_text("<p>hello</p>")
        page.goto(f"{attacker}/fetch.html")
        statuses = page.evaluate(
            """async ([board, line, runId]) => {
                const simple = await fetch(board + '/api/runs', {method: 'POST', mode: 'no-cors', credentials: 'include',
                    headers: {'Content-Type': 'text/plain'}, body: line});
                let preflighted = 'sent';
                try {
                    await fetch(board + '/api/runs/' + runId, {method: 'DELETE', credentials: 'include'});
                } catch (e) { preflighted = 'blocked'; }
                return [simple.type, preflighted];
            }""",
            [board, LINE_103, run_id],
        )
        assert statuses == ["opaque", "blocked"]
        assert state(board) == before  # nothing stored, nothing changed

        # The board's own page still writes, in the same browser.
        page.goto(f"{board}/upload")
        page.locator("textarea[name=lines]").fill(LINE_103)
        with page.expect_response(lambda r: r.url == f"{board}/upload" and r.request.method == "POST") as answer:
            page.get_by_role("button", name="Upload").click()
        assert answer.value.status == 201
        assert len(state(board)) == len(before) + 1
        httpx.delete(f"{board}/api/runs/{state(board)[0][0]}", verify=CLIENT_SSL)
    finally:
        context.close()


def test_another_origin_cannot_sign_a_victim_in(attacker_site, browser, tmp_path):
    """Login CSRF: the attacker holds a real token (a colleague's board) and posts it from their page."""
    folder, port = attacker_site
    token = "attackers-own-token-0123456789"
    with live_server(f"sqlite:///{tmp_path / 'b.db'}", env={"BONNIEBOARD_API_TOKEN": token}) as server:
        board = server.url
        context = browser.new_context()
        page = context.new_page()
        try:
            page.goto(f"{board}/upload")
            assert page.locator("input[name=token]").count() == 1
            (folder / "login.html").write_text(auto_post_form(f"{board}/login", {"token": token, "next": "/upload"}))
            with page.expect_response(lambda r: r.url == f"{board}/login" and r.request.method == "POST") as answer:
                page.goto(f"http://127.0.0.1:{port}/login.html")
            assert answer.value.status == 403
            page.goto(f"{board}/upload")
            assert page.locator("input[name=token]").count() == 1 and "Signed in" not in page.content()
            # The board's own sign-in form, in the same browser, works.
            page.locator("input[name=token]").fill(token)
            # The form posts and is redirected back to the page it was on: wait for the answer, not the address
            # (the same before and after), then for the signed-in page.
            with page.expect_response(lambda r: r.url == f"{board}/login" and r.request.method == "POST") as signed:
                page.get_by_role("button", name="Sign in").click()
            assert signed.value.status == 303, signed.value.status
            expect(page.get_by_text("Signed in with the token")).to_be_visible()
        finally:
            context.close()
