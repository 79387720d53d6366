"""DNS rebinding: a page on evil.example whose name resolves to the board's loopback address is
same-origin with its own requests, so Origin and Host agree and the cross-site check lets them through.
BONNIEBOARD_ALLOWED_HOSTS (default on loopback: loopback names only) refuses their Host with 400 —
in the test client, and in real Chromium against a real `bonnieboard serve`."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import sync_playwright
from pydantic import ValidationError

from app.config import LOOPBACK_HOSTS, Settings, default_allowed_hosts
from app.main import create_app
from tests.browser_support import CHROMIUM_ARGS, chromium_path
from tests.helpers import LINE_103, LINE_198, set_setting
from tests.live_server import live_server


@pytest.fixture
def loopback_only(database_url, monkeypatch) -> Iterator[TestClient]:
    """The app as it starts outside `serve` with the setting unset (the suite names "testserver" in it)."""
    set_setting(monkeypatch, "ALLOWED_HOSTS", "")  # empty is unset
    with TestClient(create_app(), base_url="http://localhost:8000") as client:
        yield client


@pytest.mark.parametrize("host", ["localhost:8000", "127.0.0.1", "127.0.0.1:1", "[::1]:8000", "LOCALHOST"])
def test_loopback_names_are_served_by_default(loopback_only, host):
    assert loopback_only.get("/api/runs", headers={"Host": host}).status_code == 200
    assert loopback_only.get("/", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "testserver", "127.0.0.2", "localhost.evil"])
def test_another_host_name_gets_400_naming_the_setting(loopback_only, host):
    read = loopback_only.get("/api/runs", headers={"Host": host})
    assert read.status_code == 400
    assert host in read.json()["detail"] and "BONNIEBOARD_ALLOWED_HOSTS" in read.json()["detail"]
    write = loopback_only.post("/api/runs", content=LINE_198, headers={"Host": host})
    assert write.status_code == 400 and "BONNIEBOARD_ALLOWED_HOSTS" in write.json()["detail"]
    page = loopback_only.get("/upload", headers={"Host": host})
    assert page.status_code == 400 and page.headers["content-type"].startswith("text/plain")
    assert "does not answer to the host name" in page.text
    assert page.headers["x-frame-options"] == "DENY"  # the security headers are on the refusal too
    assert loopback_only.get("/api/runs").json()["total"] == 0  # the refused write stored nothing


def test_named_hosts_replace_the_loopback_default(database_url, monkeypatch):
    set_setting(monkeypatch, "ALLOWED_HOSTS", "board.example, *.lab.example")
    with TestClient(create_app(), base_url="http://board.example") as client:
        assert client.get("/api/runs").status_code == 200
        assert client.get("/api/runs", headers={"Host": "db7.lab.example:8000"}).status_code == 200
        assert client.get("/api/runs", headers={"Host": "localhost"}).status_code == 400
        assert client.get("/api/runs", headers={"Host": "board.example.evil"}).status_code == 400


def test_any_host_with_a_star(database_url, monkeypatch):
    set_setting(monkeypatch, "ALLOWED_HOSTS", "*")
    with TestClient(create_app()) as client:
        assert client.get("/api/runs", headers={"Host": "whatever.example"}).status_code == 200


@pytest.mark.parametrize(
    ("bind", "expected"),
    [
        ("127.0.0.1", LOOPBACK_HOSTS),
        ("127.0.1.1", LOOPBACK_HOSTS),
        ("::1", LOOPBACK_HOSTS),
        ("localhost", LOOPBACK_HOSTS),
        ("0.0.0.0", ("*",)),
        ("::", ("*",)),
        ("192.168.1.5", ("*",)),
        ("board.example", ("*",)),
    ],
)
def test_the_default_follows_the_address_serve_listens_on(bind, expected):
    assert default_allowed_hosts(bind) == expected


def test_the_setting_is_a_comma_list_of_names(monkeypatch):
    monkeypatch.setenv("BONNIEBOARD_ALLOWED_HOSTS", " Board.example,,[::1] ,*.lab.example")
    assert Settings().allowed_hosts == ("board.example", "[::1]", "*.lab.example")
    monkeypatch.setenv("BONNIEBOARD_ALLOWED_HOSTS", "")
    assert Settings().allowed_hosts is None
    for wrong in ("board.example:8000", "::1", "ev*l.example", "*example"):
        monkeypatch.setenv("BONNIEBOARD_ALLOWED_HOSTS", wrong)
        with pytest.raises(ValidationError, match="BONNIEBOARD_ALLOWED_HOSTS"):
            Settings()


LNA_FEATURES = "LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights"
REBINDING_PAGE = """<!doctype html><title>cute cats</title><p>cats</p><script>
window.attack = async (line) => {
  const read = await fetch('/api/runs');
  const write = await fetch('/api/runs', {method: 'POST', headers: {'Content-Type': 'text/csv'}, body: line});
  const page = await fetch('/upload');
  return [read.status, write.status, page.status, await read.text()];
};
</script>"""


@pytest.mark.slow
def test_a_rebinding_page_in_chromium_can_neither_read_nor_write(tmp_path):
    # BONNIEBOARD_ALLOWED_HOSTS empty: unset, so serve derives it from --host 127.0.0.1.
    with live_server(f"sqlite:///{tmp_path / 'b.db'}", env={"BONNIEBOARD_ALLOWED_HOSTS": ""}) as server:
        port = server.url.rsplit(":", 1)[1]
        mine = httpx.post(f"{server.url}/api/runs", content=LINE_198, params={"label": "secret-label"})
        assert mine.status_code == 201
        evil = f"http://evil.example:{port}"
        # Chromium's Local Network Access checks would block a public page's fetch to loopback on their own;
        # off here, as in browsers without them: the board must refuse by itself.
        args = [
            *CHROMIUM_ARGS,
            "--host-resolver-rules=MAP evil.example 127.0.0.1",
            f"--disable-features={LNA_FEATURES}",
        ]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), args=args)
            try:
                page = browser.new_page()
                # The attacker's page, as first served from the attacker's own address; by the time its script
                # runs, evil.example resolves to 127.0.0.1 (the resolver rule), as after a rebinding.
                page.route(
                    f"{evil}/cats.html", lambda route: route.fulfill(content_type="text/html", body=REBINDING_PAGE)
                )
                page.goto(f"{evil}/cats.html")
                read, write, upload_page, read_body = page.evaluate("line => window.attack(line)", LINE_103)
                assert (read, write, upload_page) == (400, 400, 400)
                assert "secret-label" not in read_body and "BONNIEBOARD_ALLOWED_HOSTS" in read_body
                # The board itself, by its loopback names, in the same browser.
                for name in ("127.0.0.1", "localhost"):
                    response = page.goto(f"http://{name}:{port}/")
                    assert response is not None and response.status == 200 and "secret-label" in page.content()
            finally:
                browser.close()
        runs = httpx.get(f"{server.url}/api/runs").json()
        assert [run["label"] for run in runs["items"]] == ["secret-label"]  # the rebinding page stored nothing
        assert "any Host name" not in server.log()  # loopback: no warning


@pytest.mark.slow
def test_serve_on_every_address_answers_any_name_and_warns(tmp_path):
    with live_server(f"sqlite:///{tmp_path / 'b.db'}", env={"BONNIEBOARD_ALLOWED_HOSTS": ""}, host="0.0.0.0") as server:
        assert httpx.get(f"{server.url}/api/runs", headers={"Host": "board.example:8000"}).status_code == 200
        assert "set BONNIEBOARD_ALLOWED_HOSTS to the board's names" in server.log()


@pytest.mark.slow
def test_serve_keeps_the_names_it_is_given(tmp_path):
    env = {"BONNIEBOARD_ALLOWED_HOSTS": "127.0.0.1,board.example"}
    with live_server(f"sqlite:///{tmp_path / 'b.db'}", env=env, host="0.0.0.0") as server:
        assert httpx.get(f"{server.url}/api/runs", headers={"Host": "board.example"}).status_code == 200
        assert httpx.get(f"{server.url}/api/runs", headers={"Host": "localhost"}).status_code == 400
        assert "BONNIEBOARD_ALLOWED_HOSTS" not in server.log()
