"""A board served under a path prefix (`bonnieboard serve --root-path /bb` behind a proxy that strips /bb): every
link, form action, htmx URL, redirect and URL in an answer stays under the prefix, and answers."""

from __future__ import annotations

import json
from collections import deque
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import expect, sync_playwright
from pydantic import ValidationError

from app.config import Settings
from app.main import create_app
from tests.browser_support import CHROMIUM, CHROMIUM_ARGS
from tests.helpers import reset_caches, run_cli
from tests.live_server import live_server
from tests.prefix_proxy import prefix_proxy
from tests.sample_board import SWEEP_COMPARE, load_samples

# A real server behind a proxy, and a real browser: pytest -m 'not slow' skips those tests.
slow = pytest.mark.slow

PREFIX = "/bb"
# The pages a visitor reaches first, and those a link may not lead to directly from the runs list.
SEEDS = (
    "/",
    SWEEP_COMPARE,
    "/matrix?rows=fs&cols=dev",
    "/runs/1",
    "/upload",
    "/login",
    "/docs",
    "/?sort=name",
    "/?sort=oldest",
)
# Every link of every page within this many clicks of a seed is followed; the links of the pages beyond are
# still checked to be under the prefix (the runs list's tag links combine without end).
MAX_CLICKS = 2
URL_ATTRIBUTES = {"href", "src", "action", "hx-get", "hx-post", "data-openapi-url"}


class Links(HTMLParser):
    """(attribute, method, URL) of every URL a page makes: links, assets, forms and htmx requests."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        for name, value in attrs:
            if name not in URL_ATTRIBUTES or value is None or value.startswith(("#", "data:", "mailto:")):
                continue
            if name == "action":
                method = (named.get("method") or "get").upper()
            else:
                method = "POST" if name == "hx-post" else "GET"
            self.found.append((f"{tag} {name}", method, value))


def _served_under_prefix(tmp_path):
    database = load_samples(tmp_path)
    server = live_server(f"sqlite:///{database}", args=("--root-path", PREFIX))
    return server


@slow
def test_every_link_form_and_redirect_of_every_page_stays_under_the_root_path(tmp_path):
    with (
        _served_under_prefix(tmp_path) as server,
        prefix_proxy(server.url, PREFIX) as proxy,
        httpx.Client(timeout=60) as http,
    ):
        origin = proxy.url.removesuffix(PREFIX)
        escaped: list[str] = []  # "where: what" for every URL outside the prefix
        failed: list[str] = []
        posts: dict[str, str] = {}  # URL -> where it was found
        queue = deque((origin + PREFIX + seed, 0, "seed", False) for seed in SEEDS)
        seen = {url for url, *_ in queue}
        fetched = 0

        def check(where: str, url: str) -> bool:
            if urlsplit(url).netloc != urlsplit(origin).netloc:
                return False  # another site's
            path = urlsplit(url).path
            if not (path == PREFIX or path.startswith(PREFIX + "/")):
                escaped.append(f"{where}: {url}")
                return False
            return True

        while queue:
            url, clicks, where, partial = queue.popleft()
            headers = {"HX-Request": "true"} if partial else {}
            response = http.get(url, headers=headers)
            fetched += 1
            if response.is_redirect:
                location = urljoin(url, response.headers["location"])
                if check(f"{url} redirects", location) and location not in seen:
                    seen.add(location)
                    queue.append((location, clicks, f"redirect of {url}", False))
                continue
            if response.status_code != 200:
                failed.append(f"{url} ({where}): {response.status_code}")
                continue
            if "HX-Push-Url" in response.headers:
                check(f"{url} pushes", urljoin(url, response.headers["HX-Push-Url"]))
            kind = response.headers.get("content-type", "")
            if kind.startswith("application/json"):
                answer = response.json()
                if isinstance(answer, dict) and "compare_url" in answer:
                    target = urljoin(url, answer["compare_url"])
                    if check(f"{url} compare_url", target) and target not in seen:
                        seen.add(target)
                        queue.append((target, clicks + 1, url, False))
                continue
            if not kind.startswith("text/html"):
                continue
            parser = Links()
            parser.feed(response.text)
            for attribute, method, value in parser.found:
                target = urljoin(url, value)
                if not check(f"{url} <{attribute}>", target):
                    continue
                if method == "POST":
                    posts.setdefault(target, url)
                    continue
                fragment = attribute.endswith("hx-get")
                key = target + (" (htmx)" if fragment else "")
                if clicks < MAX_CLICKS and key not in seen:
                    seen.add(key)
                    queue.append((target, clicks + 1, url, fragment))

        assert proxy.outside == [], f"requests that left the prefix: {proxy.outside[:10]}"
        assert escaped == [], f"{len(escaped)} URLs outside {PREFIX}, e.g. {escaped[:10]}"
        assert failed == [], f"{len(failed)} of {fetched} pages did not answer 200, e.g. {failed[:10]}"
        assert fetched > 200, f"only {fetched} pages followed: the crawl missed the board's links"
        # Every form that writes reaches its route (a form without its CSRF token is refused there, not lost).
        # (Without tokens there is nothing to sign in to: the next test has the login form.)
        assert {urlsplit(url).path for url in posts} >= {f"{PREFIX}/upload", f"{PREFIX}/runs/1/tags"}
        for url, where in posts.items():
            status = http.post(url, data={"token": "x"}).status_code
            assert status in (400, 401, 403, 422), f"POST {url} (a form of {where}): {status}"

        # The API's own URLs: the schema names its server, /docs loads it, a matrix links its comparison.
        schema = http.get(f"{proxy.url}/openapi.json").json()
        assert schema["servers"] == [{"url": PREFIX}]
        matrix = http.get(f"{proxy.url}/api/matrix", params={"rows": "fs", "cols": "dev"}).json()
        assert matrix["compare_url"].startswith(f"{PREFIX}/compare?runs=")
        assert http.get(origin + matrix["compare_url"]).status_code in (200, 303)
        # A page that needs a token sends the browser to the login under the prefix, and back.
        missing = http.get(f"{proxy.url}/runs/999999")
        assert missing.status_code == 404 and f'href="{PREFIX}/"' in missing.text
        assert http.get(f"{proxy.url}/compare?run=1&run=2").headers["location"].startswith(f"{PREFIX}/compare?")
        api_error = http.get(f"{proxy.url}/api/runs/999999")
        assert api_error.status_code == 404 and "detail" in json.loads(api_error.text)


@slow
def test_signing_in_under_the_root_path_comes_back_under_it(tmp_path):
    env = {"BONNIEBOARD_PRIVATE_READS": "true", "BONNIEBOARD_API_TOKEN": "a-token-long-enough-for-this"}
    database = load_samples(tmp_path)
    with (
        live_server(f"sqlite:///{database}", args=("--root-path", PREFIX), env=env) as server,
        prefix_proxy(server.url, PREFIX) as proxy,
        httpx.Client(timeout=60) as http,
    ):
        asked = http.get(f"{proxy.url}/runs/2?x=1")
        assert asked.status_code == 303
        assert asked.headers["location"] == f"{PREFIX}/login?next=%2Fruns%2F2%3Fx%3D1"
        assert f"Path={PREFIX};" in asked.headers["set-cookie"]  # the board's cookie, not every app's on the host
        login = http.get(proxy.url.removesuffix(PREFIX) + asked.headers["location"])
        assert login.status_code == 200 and f'<form class="token" action="{PREFIX}/login"' in login.text
        csrf = login.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        signed_in = http.post(
            f"{proxy.url}/login",
            data={"token": env["BONNIEBOARD_API_TOKEN"], "next": "/runs/2?x=1", "csrf_token": csrf},
            headers={"Origin": proxy.url.removesuffix(PREFIX)},
        )
        assert signed_in.status_code == 303 and signed_in.headers["location"] == f"{PREFIX}/runs/2?x=1"
        assert http.get(proxy.url.removesuffix(PREFIX) + signed_in.headers["location"]).status_code == 200


@slow
def test_the_runs_list_compare_button_and_the_compare_controls_stay_under_the_root_path(tmp_path):
    with (
        _served_under_prefix(tmp_path) as server,
        prefix_proxy(server.url, PREFIX) as proxy,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        page.goto(f"{proxy.url}/")
        page.locator("input.choose").nth(0).check()
        page.locator("input.choose").nth(1).check()
        page.get_by_role("button", name="Compare selected").click()
        page.wait_for_url(f"{proxy.url}/compare?runs=*")
        expect(page.locator("canvas").first).to_be_visible()  # charts.js drew from the page's data
        # The folded setup table is fetched when opened (htmx), from under the prefix; its run links stay there.
        page.locator("details.setup > summary").click()
        expect(page.locator(".setup-table")).to_be_visible()
        assert page.locator(".setup-table a").first.get_attribute("href").startswith(f"{PREFIX}/runs/")
        # A control of the comparison asks htmx for the fragment and pushes the new URL: both under the prefix.
        page.locator("input[name=mode][value=relative]").check()
        page.wait_for_url("**mode=relative**")
        assert page.url.startswith(f"{proxy.url}/compare?")
        page.get_by_role("link", name="Runs", exact=True).click()
        page.wait_for_url(f"{proxy.url}/")
        browser.close()
        outside = [url for url in asked if not urlsplit(url).path.startswith(PREFIX + "/")]
        assert outside == [] and proxy.outside == []


# ---- The setting, without a proxy ----


@pytest.mark.parametrize(("given", "kept"), [("/bb", "/bb"), ("/bb/", "/bb"), ("/", None), ("", None)])
def test_the_root_path_setting_is_a_path_without_its_trailing_slash(given, kept):
    assert Settings(root_path=given).root_path == kept


@pytest.mark.parametrize("given", ["bb", "//evil.example", "/bb?x=1", "/b b", "/bé"])
def test_a_root_path_that_is_not_a_path_is_refused(given):
    with pytest.raises(ValidationError, match="BONNIEBOARD_ROOT_PATH"):
        Settings(root_path=given)


def test_serve_refuses_a_root_path_that_is_not_a_path_in_one_line(tmp_path):
    refused = run_cli(tmp_path, "serve", "--root-path", "bb")
    assert refused.returncode == 2
    assert refused.stderr == "bonnieboard: --root-path: BONNIEBOARD_ROOT_PATH: 'bb' is not a path such as /bb\n"


def test_the_setting_alone_puts_the_pages_under_the_root_path(database_url, monkeypatch):
    """Started without serve's --root-path (`uvicorn app.main:app`, a test client), the app gives each request
    the setting's root path itself: the routes still answer, and static and page links agree."""
    monkeypatch.setenv("BONNIEBOARD_ROOT_PATH", "/bb")
    reset_caches()
    with TestClient(create_app()) as client:
        page = client.get("/upload")
        assert page.status_code == 200
        assert '<a href="/bb/docs">API</a>' in page.text and 'action="/bb/upload"' in page.text
        assert 'href="/bb/static/app.css?v=' in page.text
        assert client.get("/compare?mode=absolute", follow_redirects=False).headers["location"] == "/bb/compare"
        assert client.get("/api/runs/5").json()["detail"]  # the API's errors stay JSON
        # The versioned static link answers (the client asks without the prefix, as the proxy passes it on).
        css = page.text.split('<link rel="stylesheet" href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
        assert client.get(css.removeprefix("/bb")).status_code == 200
