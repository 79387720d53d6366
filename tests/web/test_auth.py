"""Tokens (app.web.auth): writes need a bearer token once tokens are in use, reads follow
BONNIEBOARD_PRIVATE_READS, a refused request changes nothing, and a revoked token stops at once —
in the app, through the `bonnieboard token` commands, in the browser, and in a real multi-worker server."""

import hashlib
import os
import re

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.errors import BadRequest
from app.main import create_app
from app.store.models import ApiToken, BrowserLogin
from app.web import auth
from tests import zygote
from tests.helpers import (
    LINE_103,
    LINE_197,
    LINE_198,
    create_token,
    csrf_of,
    csrf_token,
    post_csv,
    post_form,
    set_setting,
    sign_in,
)
from tests.live_server import CLIENT_SSL, live_server

ENV_TOKEN = "env-token-0123456789"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def stored_state(client) -> list[tuple]:
    """Everything a write could change, as the public API shows it."""
    return [
        (r["id"], r["label"], r["tags"], r["raw_line"])
        for r in client.get("/api/runs", params={"limit": 1000}, headers=bearer(ENV_TOKEN)).json()["items"]
    ]


def test_without_tokens_everything_is_open(client):
    run_id = post_csv(client, LINE_198).json()["created"][0]
    assert client.patch(f"/api/runs/{run_id}", json={"label": "x"}).status_code == 200
    assert client.delete(f"/api/runs/{run_id}").status_code == 204
    assert 'class="upload"' in client.get("/upload").text and 'name="token"' not in client.get("/upload").text


@pytest.mark.parametrize("private_reads", [False, True])
def test_env_token_guards_every_write_and_a_refusal_changes_nothing(client, monkeypatch, private_reads):
    run_id = post_csv(client, f"{LINE_198}\n{LINE_103}\n", tag="fs=xfs", label="before").json()["created"][0]
    set_setting(monkeypatch, "API_TOKEN", ENV_TOKEN)
    set_setting(monkeypatch, "PRIVATE_READS", str(private_reads).lower())
    before = stored_state(client)
    writes = [
        ("POST", "/api/runs", {"content": LINE_197, "headers": {"Content-Type": "text/csv"}}),
        ("POST", "/api/runs", {"files": {"file": ("b.csv", LINE_197.encode())}}),
        ("POST", "/api/runs", {"json": {"csv": LINE_197}}),
        ("PATCH", f"/api/runs/{run_id}", {"json": {"label": "after", "tags": {}}}),
        ("DELETE", f"/api/runs/{run_id}", {}),
    ]
    for method, url, kwargs in writes:
        headers = kwargs.pop("headers", {})
        for auth_headers, status in (
            ({}, 401),
            (bearer("wrong"), 403),
            ({"Authorization": f"Basic {ENV_TOKEN}"}, 401),
            (bearer(ENV_TOKEN + "x"), 403),
        ):
            response = client.request(method, url, headers=headers | auth_headers, **kwargs)
            assert response.status_code == status, (method, url, auth_headers, response.text)
            assert isinstance(response.json()["detail"], str)
            if status == 401:
                assert response.headers["www-authenticate"].startswith("Bearer")
        kwargs["headers"] = headers
    assert stored_state(client) == before

    reads = ["/api/runs", f"/api/runs/{run_id}", "/api/runs/export.csv"]
    for url in reads:
        assert client.get(url).status_code == (401 if private_reads else 200), url
        assert client.get(url, headers=bearer("wrong")).status_code == (403 if private_reads else 200), url
        assert client.get(url, headers=bearer(ENV_TOKEN)).status_code == 200, url
    assert client.get("/api/health").status_code == 200  # what a load balancer polls stays open
    assert client.get("/openapi.json").status_code == 200 and client.get("/docs").status_code == 200

    for method, url, kwargs in writes:
        response = client.request(method, url, headers=kwargs.pop("headers", {}) | bearer(ENV_TOKEN), **kwargs)
        assert response.status_code in (200, 201, 204), (method, url, response.text)
    assert client.get(f"/api/runs/{run_id}", headers=bearer(ENV_TOKEN)).status_code == 404


def test_created_token_is_needed_then_revoked_at_once(client, session):
    post_csv(client, LINE_198)
    secret = create_token(session, "lab-1")
    assert post_csv(client, LINE_103).status_code == 401  # a token exists: writes are closed
    assert client.get("/api/runs").status_code == 200  # reads stay open
    assert client.post("/api/runs", content=LINE_103, headers=bearer(secret)).status_code == 201
    other = create_token(session, "lab-2")
    auth.revoke_token(session=session, name="lab-1")
    session.commit()
    response = client.post("/api/runs", content=LINE_197, headers=bearer(secret))
    assert response.status_code == 403 and "revoked" in response.json()["detail"]
    assert client.get("/api/runs").json()["total"] == 2
    assert client.post("/api/runs", content=LINE_197, headers=bearer(other)).status_code == 201
    auth.revoke_token(session=session, name="lab-2")
    session.commit()
    # Every token is revoked, yet tokens were in use: writes stay closed rather than fall open.
    assert post_csv(client, "x").status_code == 401


def test_token_names_and_revoking_what_is_not_there(session):
    with pytest.raises(BadRequest, match="letters, digits"):
        auth.create_token(session=session, name="no spaces")
    with pytest.raises(BadRequest, match="no live token"):
        auth.revoke_token(session=session, name="nobody")


def test_tokens_are_stored_hashed(session):
    secret = create_token(session, "ci")
    (row,) = session.scalars(select(ApiToken)).all()
    assert row.secret_sha256 == hashlib.sha256(secret.encode()).digest()
    assert secret not in repr([getattr(row, c.key) for c in ApiToken.__table__.columns])
    assert len(secret) >= 40 and create_token(session, "ci2") != secret


def run_cli(*args, database_url):
    env = os.environ | {"BONNIEBOARD_DATABASE_URL": database_url}
    return zygote.run(list(args), env=env, cwd=os.getcwd())


@pytest.mark.slow
def test_token_commands_create_list_revoke(client, database_url):
    created = run_cli("token", "create", "build-server", database_url=database_url)
    assert created.returncode == 0, created.stderr
    secret = created.stdout.strip()
    assert re.fullmatch(r"bb_[A-Za-z0-9_-]{40,}", secret) and "shown only this once" in created.stderr
    listed = run_cli("token", "list", database_url=database_url)
    assert listed.returncode == 0 and re.search(r"^build-server\tcreated \S+ \S+ UTC\tlive$", listed.stdout, re.M)
    assert secret not in listed.stdout
    duplicate = run_cli("token", "create", "build-server", database_url=database_url)
    assert duplicate.returncode == 1 and "exists" in duplicate.stderr

    assert client.post("/api/runs", content=LINE_198, headers=bearer(secret)).status_code == 201
    revoked = run_cli("token", "revoke", "build-server", database_url=database_url)
    assert revoked.returncode == 0 and "revoked" in revoked.stdout
    assert client.post("/api/runs", content=LINE_103, headers=bearer(secret)).status_code == 403
    assert re.search(
        r"^build-server\tcreated .* UTC\trevoked \S+ \S+ UTC$",
        run_cli("token", "list", database_url=database_url).stdout,
        re.M,
    )
    again = run_cli("token", "create", "build-server", database_url=database_url)  # a revoked name is free again
    assert again.returncode == 0 and again.stdout.strip() != secret
    assert client.post("/api/runs", content=LINE_103, headers=bearer(again.stdout.strip())).status_code == 201


# ==== Browser: the token once, a signed HttpOnly session cookie, CSRF on forms that write ====


def test_upload_page_asks_for_the_token_once_and_forms_carry_csrf(client, session):
    open_page = client.get("/upload").text
    assert 'class="upload"' in open_page and 'name="token"' not in open_page  # no tokens: nothing to ask
    secret = create_token(session, "alice")

    page = client.get("/upload")
    assert page.status_code == 200 and 'name="token"' in page.text and 'class="upload"' not in page.text
    form = {"lines": LINE_198}
    refused = client.post("/upload", data=form, headers={"HX-Request": "true"})
    assert refused.status_code == 401

    assert sign_in(client, "wrong").status_code == 403
    assert sign_in(client, "").status_code == 401
    signed_in = sign_in(client, secret)
    assert signed_in.status_code == 303 and signed_in.headers["location"] == "/upload"
    cookie = signed_in.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict") and secret not in cookie

    page = client.get("/upload").text
    assert 'class="upload"' in page and "Signed in with the token <strong>alice</strong>" in page
    csrf = csrf_of(page)
    assert f'hx-headers=\'{{"X-CSRF-Token": "{csrf}"}}\'' in page

    assert client.post("/upload", data=form).status_code == 403  # no CSRF token
    assert client.post("/upload", data=form | {"csrf_token": "forged"}).status_code == 403
    assert client.post("/upload", data=form, headers={"X-CSRF-Token": "forged"}).status_code == 403
    assert client.get("/api/runs").json()["total"] == 0

    assert client.post("/upload", data=form | {"csrf_token": csrf}).status_code == 201  # plain HTML form
    htmx = client.post("/upload", data={"lines": LINE_103}, headers={"HX-Request": "true", "X-CSRF-Token": csrf})
    assert htmx.status_code == 201 and "1 run created" in htmx.text
    multipart = client.post("/upload", data={"csrf_token": csrf}, files={"file": ("b.csv", LINE_197.encode())})
    assert multipart.status_code == 201
    assert client.get("/api/runs").json()["total"] == 3

    # The API does not take the cookie for writes: those need the bearer token (and so no CSRF).
    assert client.post("/api/runs", content=LINE_198, headers={"Content-Type": "text/csv"}).status_code == 401

    auth.revoke_token(session=session, name="alice")
    session.commit()
    assert client.post("/upload", data={"lines": "x", "csrf_token": csrf}).status_code == 401  # at once
    assert 'name="token"' in client.get("/upload").text


def test_forged_or_tampered_session_cookie_is_no_session(client, session):
    secret = create_token(session, "bob")
    sign_in(client, secret)
    value = client.cookies[auth.SESSION_COOKIE]
    client.cookies.set(auth.SESSION_COOKIE, value[:-3] + ("AAA" if not value.endswith("AAA") else "BBB"))
    assert 'name="token"' in client.get("/upload").text
    client.cookies.set(auth.SESSION_COOKIE, "not-even-signed")
    assert client.post("/upload", data={"lines": LINE_198, "csrf_token": "x"}).status_code == 401


def test_sign_out_needs_csrf_and_ends_the_session_on_the_server(client, session, monkeypatch):
    sign_in(client, create_token(session, "carol"))
    set_setting(monkeypatch, "PRIVATE_READS", "true")
    signed_in_cookie = client.cookies[auth.SESSION_COOKIE]
    csrf = csrf_of(client.get("/upload").text)
    assert client.post("/logout", data={"csrf_token": "forged"}).status_code == 403
    assert 'class="upload"' in client.get("/upload").text
    out = client.post("/logout", data={"csrf_token": csrf}, follow_redirects=False)
    assert out.status_code == 303 and client.cookies[auth.SESSION_COOKIE] != signed_in_cookie
    assert 'name="token"' in client.get("/upload").text
    # A copy of the cookie kept from before signing out (a stolen one) opens nothing any more.
    client.cookies.set(auth.SESSION_COOKIE, signed_in_cookie)
    assert 'name="token"' in client.get("/upload").text
    assert client.get("/api/runs").status_code == 401
    assert session.scalar(select(func.count()).select_from(BrowserLogin)) == 0


def test_private_reads_send_pages_to_sign_in_and_back(client, session, monkeypatch):
    run_id = post_csv(client, LINE_198, label="secret run").json()["created"][0]
    secret = create_token(session, "dave")
    set_setting(monkeypatch, "PRIVATE_READS", "true")
    for url in ("/", f"/runs/{run_id}", "/?machine=vm"):
        response = client.get(url, follow_redirects=False)
        assert response.status_code == 303, url
        assert response.headers["location"].startswith("/login?next=%2F"), response.headers["location"]
        assert "secret run" not in response.text
    login = client.get("/login?next=/runs/1")
    assert login.status_code == 200 and 'value="/runs/1"' in login.text
    assert 'value="/upload"' in client.get("/login?next=//evil.example/").text  # never another site
    assert sign_in(client, secret, f"/runs/{run_id}").headers["location"] == f"/runs/{run_id}"
    assert "secret run" in client.get(f"/runs/{run_id}").text
    assert client.get("/api/runs").status_code == 200  # the page's own session reads the API too
    assert client.get("/static/app.css").status_code == 200


@pytest.mark.slow
def test_revoked_token_stops_at_once_in_every_worker_of_a_real_server(database_url, database_kind):
    created = run_cli("token", "create", "runner", database_url=database_url)
    secret = created.stdout.strip()
    workers = 3 if database_kind == "postgresql" else 2
    with (
        live_server(database_url, workers=workers) as server,
        httpx.Client(verify=CLIENT_SSL, base_url=server.url, timeout=30) as http,
    ):
        assert http.post("/api/runs", content=LINE_198, headers=bearer(secret)).status_code == 201
        assert http.post("/api/runs", content=LINE_103).status_code == 401
        assert run_cli("token", "revoke", "runner", database_url=database_url).returncode == 0
        # New connections spread over the workers; not one of them may still take the token.
        statuses = {
            httpx.post(
                f"{server.url}/api/runs", content=LINE_197, headers=bearer(secret), verify=CLIENT_SSL
            ).status_code
            for _ in range(12)
        }
        assert statuses == {403}
        assert http.get("/api/runs").json()["total"] == 1


def test_every_form_that_writes_carries_the_csrf_token(client, session):
    run_id = post_csv(client, LINE_198).json()["created"][0]
    sign_in(client, create_token(session, "erin"))
    csrf = csrf_of(client.get("/upload").text)
    posting_forms = 0
    for url in ("/", f"/runs/{run_id}", "/upload", f"/compare?runs={run_id}"):
        html = client.get(url).text
        for form in re.findall(r"<form\b[^>]*>.*?</form>", html, re.S):
            if re.search(r'method="post"|hx-post=', form, re.I):
                posting_forms += 1
                assert f'name="csrf_token" value="{csrf}"' in form, (url, form[:300])
    assert posting_forms >= 3  # upload, sign out, the run page's tags
    saved = client.post(
        f"/runs/{run_id}/tags", data={"csrf_token": csrf, "label": "via form", "key": "fs", "value": "xfs"}
    )
    assert saved.status_code == 200 and client.get(f"/api/runs/{run_id}").json()["label"] == "via form"
    refused = client.post(f"/runs/{run_id}/tags", data={"label": "forged", "key": "", "value": ""})
    assert refused.status_code == 403 and client.get(f"/api/runs/{run_id}").json()["label"] == "via form"


# ==== Cross-site writes: refused on an open board too; curl and the runner keep working ====

OTHER_ORIGIN = {"Origin": "http://evil.example"}
CROSS_SITE_HEADERS = [
    pytest.param(OTHER_ORIGIN, id="other-origin"),
    pytest.param({"Origin": "http://testserver:8080"}, id="same-host-other-port"),
    pytest.param({"Origin": "null"}, id="null-origin"),
    pytest.param({"Sec-Fetch-Site": "cross-site"}, id="sec-fetch-cross-site"),
    pytest.param({"Sec-Fetch-Site": "same-site"}, id="sec-fetch-same-site"),
    pytest.param({"Origin": "http://testserver", "Sec-Fetch-Site": "cross-site"}, id="own-origin-but-cross-site"),
]


@pytest.mark.parametrize("headers", CROSS_SITE_HEADERS)
def test_cross_site_writes_are_refused_on_an_open_board(client, headers):
    run_id = post_csv(client, LINE_198, tag="fs=xfs", label="before").json()["created"][0]
    before = stored_state(client)
    csrf = csrf_token(client)
    writes = [
        ("POST", "/api/runs", {"content": LINE_197, "headers": {"Content-Type": "text/csv"}}),
        ("POST", "/api/runs", {"files": {"file": ("b.csv", LINE_197.encode())}}),
        ("PATCH", f"/api/runs/{run_id}", {"json": {"label": "after", "tags": {}}}),
        ("DELETE", f"/api/runs/{run_id}", {}),
        # The forms, even with the right CSRF token (an attacker cannot know it; Origin says enough).
        ("POST", "/upload", {"data": {"lines": LINE_197, "csrf_token": csrf}}),
        ("POST", f"/runs/{run_id}/tags", {"data": {"label": "after", "key": "", "value": "", "csrf_token": csrf}}),
        ("POST", "/login", {"data": {"token": "x", "csrf_token": csrf}}),
        ("POST", "/logout", {"data": {"csrf_token": csrf}}),
    ]
    for method, url, kwargs in writes:
        extra = kwargs.pop("headers", {})
        response = client.request(method, url, headers=extra | headers, follow_redirects=False, **kwargs)
        assert response.status_code == 403, (method, url, response.text[:300])
        assert "may not write here" in response.text
    assert stored_state(client) == before
    # Reads from anywhere are fine (a browser does not let the other site read the answer).
    assert client.get("/api/runs", headers=headers).status_code == 200


def test_same_origin_browser_writes_and_curl_still_work(client, monkeypatch):
    own = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
    assert client.post("/api/runs", content=LINE_198, headers={"Content-Type": "text/csv"}).status_code == 201  # curl
    assert client.post("/api/runs", content=LINE_103, headers=own | {"Content-Type": "text/csv"}).status_code == 201
    assert post_form(client, "/upload", {"lines": LINE_197}, headers=own).status_code == 201
    # An HTTPS proxy in front: the browser's origin is https://host, the server sees http and the same Host
    # (which the deployment names in BONNIEBOARD_ALLOWED_HOSTS).
    set_setting(monkeypatch, "ALLOWED_HOSTS", "testserver,board.example")
    with TestClient(create_app()) as proxied:
        behind_proxy = {"Origin": "https://board.example", "Host": "board.example"}
        assert proxied.get("/api/runs", headers=behind_proxy).json()["total"] == 3
        run_id = proxied.get("/api/runs").json()["items"][0]["id"]
        assert proxied.delete(f"/api/runs/{run_id}", headers=behind_proxy).status_code == 204


def test_forms_need_the_csrf_token_on_an_open_board_too(client):
    run_id = post_csv(client, LINE_198, label="before").json()["created"][0]
    assert client.post("/upload", data={"lines": LINE_197}).status_code == 403  # no session cookie, no token
    csrf = csrf_token(client)
    assert client.post("/upload", data={"lines": LINE_197, "csrf_token": "forged"}).status_code == 403
    assert client.post(f"/runs/{run_id}/tags", data={"label": "x", "key": "", "value": ""}).status_code == 403
    assert (
        client.get("/api/runs").json()["total"] == 1 and client.get(f"/api/runs/{run_id}").json()["label"] == "before"
    )
    assert client.post("/upload", data={"lines": LINE_197}, headers={"X-CSRF-Token": csrf}).status_code == 201
    # Another browser's token is no good: each session cookie has its own.
    with TestClient(create_app()) as other:
        assert other.post("/upload", data={"lines": LINE_103, "csrf_token": csrf}).status_code == 403


def test_login_needs_the_csrf_token_so_no_site_can_sign_a_victim_in(client, session):
    secret = create_token(session, "mallory")
    # An attacker's page posting the attacker's token: no CSRF token, or not this browser's.
    attacker = TestClient(create_app())
    refused = client.post("/login", data={"token": secret, "next": "/upload"}, follow_redirects=False)
    assert refused.status_code == 403
    refused = client.post("/login", data={"token": secret, "csrf_token": csrf_token(attacker)}, follow_redirects=False)
    assert refused.status_code == 403
    assert 'name="token"' in client.get("/upload").text  # the victim is not signed in
    assert session.scalar(select(func.count()).select_from(BrowserLogin)) == 0
    # The login rotates the CSRF token: one known before signing in does not carry over.
    before = csrf_token(client)
    assert sign_in(client, secret).status_code == 303
    assert csrf_token(client) != before


@pytest.mark.parametrize("tokens", [False, True])
def test_run_tag_form_with_many_tags_works(client, session, monkeypatch, tokens):
    tags = {f"key{i}": f"value{i}" for i in range(12)}
    run_id = post_csv(client, LINE_198, tag=[f"{k}={v}" for k, v in tags.items()]).json()["created"][0]
    if tokens:
        sign_in(client, create_token(session, "frank"))
    page = client.get(f"/runs/{run_id}").text
    rows = re.findall(r'<input name="key" value="([^"]*)"', page)
    assert len(rows) == len(tags) + 2  # every tag, and two empty rows for new ones
    form = {
        "csrf_token": csrf_of(page),
        "label": "many",
        "key": [*tags, "disk", ""],
        "value": [*tags.values(), "nvme", ""],
    }
    saved = client.post(f"/runs/{run_id}/tags", data=form, headers={"HX-Request": "true"})
    assert saved.status_code == 200, saved.text[:300]
    assert client.get(f"/api/runs/{run_id}").json()["tags"] == tags | {"disk": "nvme"}
