"""Hostile input: whatever comes in — broken or malicious lines, JSON, ids, oversized or endless
bodies — the answer is a 4xx naming the problem or a 201, never a server error; HTML is escaped by
Jinja's autoescape; pages run no script but our own files; every response carries the security headers."""

import asyncio
import json
import random
import re
import socket
import time
from html.parser import HTMLParser
from urllib.parse import urlsplit

import httpx
import pytest

from app.config import get_settings
from app.ingest.parsing import COLUMNS_198, MAX_MACHINE_CHARS
from app.limits import MAX_ID
from app.main import create_app
from app.web import auth
from app.web.middleware import CONTENT_SECURITY_POLICY
from app.web.templating import templates
from tests.helpers import (
    HOSTILE,
    LINE_103,
    LINE_198,
    csrf_token,
    post_csv,
    post_form,
    set_setting,
    with_field,
)
from tests.ingest.test_report_text import REPORTS
from tests.live_server import live_server
from tests.parsing_oracle import parse_text

# Cells that each break a line in its own way: huge, negative, non-ASCII digits, control and
# markup characters, a float where an integer belongs, an overflowing latency.
HOSTILE_CELLS = [
    "9" * 15,
    "9" * 16,
    "9" * 400,
    "-1",
    "-" + "9" * 30,
    "1e308",
    "NaN",
    "²",
    "١٢",
    "0x10",
    " 7",
    "7 ",
    "+++++",
    "+++",
    "999999999999s",
    "99999999999ms",
    "1.5",
    "\x7f",
    "\u202e",
    HOSTILE,
    "'; DROP TABLE run; --",
]


def assert_not_server_error(response: httpx.Response) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])


def test_every_field_of_a_line_with_every_hostile_cell(client):
    lines = [with_field(LINE_198, index, cell) for index in range(len(COLUMNS_198)) for cell in HOSTILE_CELLS]
    lines += [with_field(LINE_103, index, cell) for index in range(27) for cell in HOSTILE_CELLS]
    response = post_csv(client, "\n".join(lines), partial="true")
    assert response.status_code == 201, response.text[:500]
    body = response.json()
    assert len(body["created"]) + len(body["duplicates"]) + body["error_count"] == len(lines)
    # The answer lists the first 100 errors; the parser names them all.
    invalid = [error.line for error in parse_text("\n".join(lines)).errors]
    assert len(invalid) == body["error_count"] and [e["line"] for e in body["errors"]] == invalid[:100]
    for error in body["errors"]:
        assert 1 <= error["line"] <= len(lines) and error["error"]
    # What was stored reads back, as JSON and as a page.
    listed = client.get("/api/runs", params={"limit": 1000})
    assert listed.status_code == 200 and listed.json()["total"] == len(body["created"])
    export = client.get("/api/runs/export.csv").text.splitlines()
    assert sorted(export) == sorted({lines[i] for i in range(len(lines)) if i + 1 not in set(invalid)})
    for run_id in body["created"][:: max(1, len(body["created"]) // 25)]:
        assert client.get(f"/runs/{run_id}").status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(LINE_198.encode() + b"\n" + bytes(random.Random(5).randbytes(20000)), id="binary-garbage"),
        pytest.param(LINE_198.encode().replace(b",vm,", b",v\x00m,"), id="nul-byte"),
        pytest.param(b"\xff\xfe" + LINE_198.encode("utf-16-le"), id="utf-16"),
        pytest.param(LINE_198.encode().replace(b"vm", b"v\xe9m"), id="latin-1"),
        pytest.param(b"\xed\xa0\x80" + LINE_198.encode(), id="encoded-surrogate"),
        pytest.param(("1.98," * 819).encode(), id="repeated-fields-within-the-line-limit"),
        pytest.param(("+++++," * 100000).encode(), id="repeated-fields-over-the-line-limit"),
        pytest.param(b",\n" * 50000, id="fifty-thousand-empty-lines"),
        pytest.param(b"\r" * 10000 + LINE_198.encode(), id="carriage-returns"),
    ],
)
def test_broken_bytes_are_per_line_errors(client, body):
    response = client.post("/api/runs", content=body, params={"partial": "true"}, headers={"Content-Type": "text/csv"})
    assert_not_server_error(response)
    assert response.status_code in (201, 422)
    errors = response.json()["errors"]
    assert errors and all(isinstance(e["line"], int) and e["error"] for e in errors)
    page = post_form(client, "/upload", {"partial": "true"}, files={"file": ("x.csv", body)})
    assert page.status_code in (201, 422) and '<table class="errors">' in page.text


def test_the_longest_machine_name_of_text_that_does_not_compress_is_stored_and_found(client):
    """PostgreSQL refused a (machine, id) index entry over 2,704 bytes: a 2,800-character name of text that
    does not compress failed the whole upload with a 503, and SQLite stored it. Now both store 500 characters
    of 4 bytes each (2,000 bytes, all different), refuse one more as the line's error, and find the name by
    its filter and its "next" cursor; a filter may be as long as a line (a name stored before the limit)."""
    name = "".join(chr(0x20000 + (i * 7919) % 40000) for i in range(MAX_MACHINE_CHARS))
    longest = LINE_198.replace(",vm,", f",{name},", 1)
    over = LINE_198.replace(",vm,", f",{name}x,", 1)
    refused = post_csv(client, over)
    assert refused.status_code == 422, refused.text
    assert refused.json()["errors"] == [
        {"line": 1, "field": "name", "error": "the machine name is 501 characters; the limit is 500"}
    ]
    created = [post_csv(client, longest.replace(",5,", f",{n},", 1)).json()["created"][0] for n in (5, 6, 7)]
    assert [run["id"] for run in client.get("/api/runs", params={"machine": name}).json()["items"]] == created[::-1]
    first = client.get("/", params={"sort": "name", "machine": name})
    assert first.status_code == 200 and all(f'value="{run_id}"' in first.text for run_id in created)
    by_cursor = client.get("/", params={"sort": "name", "at_machine": name, "skip": 1})
    assert by_cursor.status_code == 200, by_cursor.text[:300]
    assert client.get("/", params={"sort": "name", "at_machine": "x" * 5000}).status_code == 400


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029", "\x7f", "\x1e"])
def test_a_control_or_line_separator_in_any_text_field_is_refused_on_every_path(client, char):
    """One rule for the machine name, the version and the seed (app.ingest.parsing.control_or_separator), whichever way
    the line comes: SQLite's compiled path stored a name holding U+0085 or U+2028 that str.splitlines cuts in two."""
    for index, field in ((1, "bonnie_version"), (2, "name"), (4, "seed")):
        response = post_csv(client, with_field(LINE_198, index, f"a{char}b"))
        assert response.status_code == 422, (field, response.text)
        [error] = response.json()["errors"]
        assert (error["line"], error["field"]) == (1, field) and f"U+{ord(char):04X}" in error["error"]
    report = (REPORTS / "real-default.txt").read_text().rsplit("1.98,", 1)[0].replace("default", f"lab{char}1")
    response = client.post("/api/runs", content=report, headers={"Content-Type": "text/plain"})
    assert response.status_code == 422, response.text
    assert [(e["line"], e["field"]) for e in response.json()["errors"]] == [(4, "name")]
    assert client.get("/api/runs").json()["total"] == 0


def test_document_numbers_past_a_double_or_64_bits_are_refused_or_shown_as_they_are(client):
    """On both databases. 1e400 reads as infinity, which PostgreSQL refuses (a 500 if stored as it comes) and SQLite
    stores where no comparison can read it back. Integers past 64 bits are kept (a document is any JSON), but the
    RAM figure ignores them (the comparison's JSON cannot hold one: a 500 on PostgreSQL), and the run page shows
    them without converting them to a size (a float overflow: a 500 on both)."""
    for number in ("1e400", "-1e400"):
        raw = json.dumps({"csv": LINE_198, "document": {"system": {"x": 0}}}).replace('"x": 0', f'"x": {number}')
        refused = client.post("/api/runs", content=raw.encode(), headers={"Content-Type": "application/json"})
        assert refused.status_code == 400, refused.text
        assert "too large for a double at document.system.x" in refused.json()["detail"]
    assert client.get("/api/runs").json()["total"] == 0
    huge = 2**84
    document = {"system": {"ram_bytes": huge, "disk_bytes": int("9" * 4000)}}
    response = client.post("/api/runs", json={"csv": LINE_198, "document": document})
    assert response.status_code == 201, response.text
    (run_id,) = response.json()["created"]
    compared = client.get("/api/compare", params={"runs": str(run_id)})
    assert compared.status_code == 200, compared.text[:300]
    assert compared.json()["setup"][0]["ram_mib"] is None
    assert client.get("/compare", params={"runs": str(run_id)}).status_code == 200
    page = client.get(f"/runs/{run_id}")
    assert page.status_code == 200 and str(huge) in page.text


def test_a_run_id_of_thousands_of_digits_is_a_404_not_a_server_error(client):
    for method in ("GET", "PATCH", "DELETE"):
        response = client.request(method, "/api/runs/" + "9" * 4301, json={"label": "x"})
        assert response.status_code == 404, (method, response.text[:200])
        assert isinstance(response.json()["detail"], str)
    assert client.get("/api/runs/" + "9" * 20).status_code == 422  # past MAX_ID, still a number


@pytest.mark.parametrize("seeks", ["999999999999999.99", "999999999999999.9999", "99999999999999.999999"])
def test_seeks_that_round_up_to_the_limit_are_refused_on_either_path(client, seeks):
    """15 digits and a fraction round up to 10^15, which the parser refuses; SQLite's compiled path stored it."""
    fields = LINE_198.split(",")
    at = COLUMNS_198.index("seeks")
    fields[at : at + 2] = [seeks, "1"]  # and its %CPU
    response = post_csv(client, ",".join(fields))
    if seeks.startswith("99999999999999."):  # 14 digits: below the limit, stored
        assert response.status_code == 201, response.text
        return
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == "seeks"


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("[" * 100_000 + "]" * 100_000, id="deep-array"),
        pytest.param('{"csv": "x", "document": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}", id="deep-document"),
        pytest.param(
            '{"csv": "LINE", "document": ' + '{"a": ' * 40 + "1" + "}" * 40 + "}", id="document-over-32-levels"
        ),
        pytest.param('{"csv": "LINE", "document": {"x": NaN}}', id="nan"),
        pytest.param('{"csv": "LINE", "document": {"x": Infinity}}', id="infinity"),
        pytest.param('{"csv": "LINE", "document": {"x": "\\ud800"}}', id="lone-surrogate-in-document"),
        pytest.param('{"csv": "LINE", "document": {"\\udfff": 1}}', id="lone-surrogate-key"),
        pytest.param('{"csv": "LINE", "tags": {"k\\ud800": "v"}}', id="lone-surrogate-tag"),
        pytest.param('{"csv": "LINE", "label": "\\ud800"}', id="lone-surrogate-label"),
        pytest.param('{"csv": "LINE", "label": "\\u0000"}', id="nul-label"),
        pytest.param('{"csv": "LINE", "tags": {"k": "' + "v" * 201 + '"}}', id="long-tag"),
        pytest.param('{"csv": "LINE", "document": {"x": ' + "9" * 5000 + "}}", id="huge-integer"),
        pytest.param('{"csv": "LINE", "document": [1]}', id="document-not-an-object"),
    ],
)
def test_hostile_json_uploads_are_400_and_store_nothing(client, raw):
    response = client.post(
        "/api/runs", content=raw.replace("LINE", LINE_198).encode(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400, response.text[:300]
    assert isinstance(response.json()["detail"], str)
    assert client.get("/api/runs").json()["total"] == 0


def test_a_document_the_runner_could_send_is_kept(client):
    document = {
        "runs": [{"tests": {"putc": {"syscalls": {"write": 2**53}}}}],
        "name": "ü\u202e<b>",
        "big": 10**30,
        "x": 1e308,
    }
    response = client.post("/api/runs", json={"csv": LINE_198, "document": document})
    assert response.status_code == 201
    assert client.get(f"/api/runs/{response.json()['created'][0]}").json()["document"] == document


def test_hostile_edits_are_400_and_change_nothing(client):
    run_id = post_csv(client, LINE_198, label="keep", tag="a=1").json()["created"][0]
    for raw in (
        '{"label": "\\ud800"}',
        '{"tags": {"\\ud800": "x"}}',
        '{"label": "\\u0000"}',
        '{"tags": {"": "x"}}',
        '{"label": "' + "x" * 501 + '"}',
    ):
        response = client.patch(
            f"/api/runs/{run_id}", content=raw.encode(), headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 400, (raw, response.text)
    deep = client.patch(f"/api/runs/{run_id}", content=b"[" * 100_000, headers={"Content-Type": "application/json"})
    assert 400 <= deep.status_code < 500
    run = client.get(f"/api/runs/{run_id}").json()
    assert run["label"] == "keep" and run["tags"] == {"a": "1"}


@pytest.mark.parametrize("value", [str(MAX_ID + 1), "9" * 30, "-9" + "9" * 30, "0"])
def test_out_of_range_ids_and_offsets_are_4xx(client, value):
    post_csv(client, LINE_198)
    for method, url in (
        ("GET", f"/api/runs/{value}"),
        ("PATCH", f"/api/runs/{value}"),
        ("DELETE", f"/api/runs/{value}"),
        ("GET", f"/api/runs?upload={value}"),
        ("GET", f"/api/runs?offset={value}"),
        ("GET", f"/api/runs?limit={value}"),
        ("GET", f"/api/runs/export.csv?upload={value}"),
        ("GET", f"/runs/{value}"),
        ("GET", f"/?page={value}"),
        ("GET", f"/api/compare?runs=1,{value}"),
        ("GET", f"/compare?runs=1,{value}"),
        ("POST", f"/runs/{value}/tags"),
    ):
        response = client.request(method, url, json={"label": "x"} if method == "PATCH" else None)
        assert 400 <= response.status_code < 500 or (response.status_code == 200 and value == "0"), (
            method,
            url,
            response.status_code,
        )


# ==== Size limits: 413 without reading the body whole ====


def call_asgi(app, path: str, headers: list[tuple[bytes, bytes]], chunks):
    """Run one request through the ASGI app; return (status, bytes of body the app took)."""
    taken = 0
    status = None

    async def receive():
        nonlocal taken
        chunk = next(chunks, None)
        if chunk is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        taken += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}

    async def send(message):
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    asyncio.run(app(scope, receive, send))
    return status, taken


def endless(chunk: bytes, first: bytes = b""):
    if first:
        yield first
    while True:
        yield chunk


def browser_session() -> list[tuple[bytes, bytes]]:
    """The headers of a browser with a session: its cookie and the CSRF token the page gave it."""
    cookie = auth.new_session_cookie()
    _, set_cookie = auth.session_cookie_header(cookie, get_settings(), https=False)
    return [(b"cookie", set_cookie.split(b";")[0]), (b"x-csrf-token", cookie.csrf_token.encode())]


@pytest.mark.databases("sqlite")
@pytest.mark.parametrize("path", ["/api/runs", "/upload"])
def test_oversized_uploads_get_413_without_being_read_whole(database_url, monkeypatch, path):
    set_setting(monkeypatch, "MAX_UPLOAD_BYTES", str(1 << 20))
    app = create_app()
    content_type = (b"content-type", b"multipart/form-data; boundary=xx" if path == "/upload" else b"text/csv")
    chunk = b"x" * 65536
    session: list[tuple[bytes, bytes]] = []
    if path == "/upload":
        # The page's form without a session cookie is refused before its body, whatever its size.
        status, taken = call_asgi(app, path, [content_type, (b"content-length", b"1000000000000")], endless(chunk))
        assert (status, taken) == (403, 0)
        session = browser_session()
    # A declared length over the limit: refused before one byte of the body is read.
    headers = [content_type, *session, (b"content-length", b"1000000000000")]
    status, taken = call_asgi(app, path, headers, endless(chunk))
    assert (status, taken) == (413, 0)
    # An endless chunked body (no length): refused as soon as the limit is passed. The form is parsed
    # as it arrives, so the page gets a well-formed start of a file part that never ends.
    part = (
        b'--xx\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\n' if path == "/upload" else b""
    )
    headers = [content_type, *session, (b"transfer-encoding", b"chunked")]
    status, taken = call_asgi(app, path, headers, endless(chunk, part))
    assert status == 413 and (1 << 20) < taken <= (1 << 20) + len(chunk) + len(part)


def read_response_head(sock: socket.socket, deadline: float) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data and time.monotonic() < deadline:
        part = sock.recv(65536)
        if not part:
            break
        data += part
    return data


@pytest.mark.slow
@pytest.mark.databases("sqlite")
def test_real_server_answers_413_to_huge_and_endless_bodies(database_url):
    limit = 1 << 20
    with live_server(database_url, env={"BONNIEBOARD_MAX_UPLOAD_BYTES": str(limit)}) as server:
        host, port = server.url.removeprefix("http://").split(":")
        # Headers that promise a terabyte, and no body at all: the answer comes anyway.
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(
                b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/csv\r\nContent-Length: 1099511627776\r\n\r\n"
            )
            head = read_response_head(sock, time.monotonic() + 10)
        assert head.startswith(b"HTTP/1.1 413"), head[:200]
        # An endless chunked body from a visitor with a session: the answer must come while we are still sending.
        with httpx.Client(base_url=server.url) as visitor:
            session = b"Cookie: bonnieboard_session=%s\r\nX-CSRF-Token: %s\r\n" % (
                visitor.get("/upload").cookies["bonnieboard_session"].encode(),
                csrf_token(visitor).encode(),
            )
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            part = b'--xx\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\n'
            sock.sendall(
                b"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=xx\r\n"
                b"Transfer-Encoding: chunked\r\n" + session + b"\r\n"
            )
            sock.sendall(b"%x\r\n%s\r\n" % (len(part), part))
            chunk = b"10000\r\n" + b"x" * 65536 + b"\r\n"
            sent, head = 0, b""
            sock.setblocking(False)
            deadline = time.monotonic() + 30
            while not head and sent < 64 * limit and time.monotonic() < deadline:
                try:
                    head = sock.recv(65536)
                except BlockingIOError:
                    try:
                        sent += sock.send(chunk)
                    except BlockingIOError:
                        time.sleep(0.001)
            assert head.startswith(b"HTTP/1.1 413"), (sent, head[:200])
            assert sent < 64 * limit


# ==== HTML: autoescape, no script but our own files, security headers everywhere ====


def test_jinja_autoescapes_every_template():
    autoescape = templates.env.autoescape
    assert autoescape is True or all(autoescape(name) for name in templates.env.list_templates())


def ours(url: str) -> bool:
    """A file we serve ourselves: /static/... on this site (url_for writes the site's own origin)."""
    parts = urlsplit(url)
    return parts.netloc in ("", "testserver") and parts.path.startswith("/static/")


class ScriptAudit(HTMLParser):
    """Collects what a CSP of script-src 'self' would block: inline scripts and event-handler attributes."""

    def __init__(self):
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                self.problems.append(f"<{tag} {name}={value!r}>")
        if tag == "script" and "src" not in attributes and attributes.get("type") != "application/json":
            self.problems.append(f"inline <script {attributes}>")
        if tag == "script" and "src" in attributes and not ours(attributes["src"]):
            self.problems.append(f"script from elsewhere: {attributes['src']}")
        if tag == "link" and attributes.get("rel") == "stylesheet" and not ours(attributes.get("href", "")):
            self.problems.append(f"stylesheet from elsewhere: {attributes.get('href')}")


def test_pages_escape_hostile_text_and_run_only_our_own_scripts(client):
    # A tag holds no space and its key no '=': the markup still gets through in other forms.
    hostile_tag = "k<script>alert(3)</script>=<img/src=x/onerror=alert(1)>"
    run_id = post_csv(client, with_field(LINE_198, 2, HOSTILE), tag=hostile_tag, label=HOSTILE).json()["created"][0]
    bad_line = with_field(LINE_198, 9, HOSTILE)
    upload_result = post_form(client, "/upload", {"lines": bad_line, "label": HOSTILE})
    assert upload_result.status_code == 422
    pages = {
        "runs": client.get("/").text,
        "runs-filtered": client.get("/", params={"machine": HOSTILE, "tag": hostile_tag}).text,
        "run": client.get(f"/runs/{run_id}").text,
        "upload": client.get("/upload").text,
        "upload-errors": upload_result.text,
        "login": client.get("/login", params={"next": '/"><script>alert(1)</script>'}).text,
        "not-found": client.get(f"/runs/{MAX_ID}").text,
        "docs": client.get("/docs").text,
    }
    for name, html in pages.items():
        assert HOSTILE not in html and "<script>alert" not in html and "<img/src" not in html, name
        audit = ScriptAudit()
        audit.feed(html)
        assert audit.problems == [], (name, audit.problems)
    assert (
        "&lt;img src=x onerror=alert(1)&gt;" in pages["run"]
        and "&lt;img src=x onerror=alert(1)&gt;" in pages["upload-errors"]
    )


@pytest.mark.databases("sqlite")
def test_every_response_carries_the_security_headers(client, monkeypatch):
    run_id = post_csv(client, LINE_198).json()["created"][0]
    responses = {
        "json": client.get("/api/runs"),
        "json-error": client.get("/api/runs/abc"),
        "csv": client.get("/api/runs/export.csv"),
        "created": post_csv(client, LINE_103),
        "deleted": client.delete(f"/api/runs/{run_id}"),
        "page": client.get("/"),
        "htmx-partial": client.get("/", headers={"HX-Request": "true"}),
        "error-page": client.get("/runs/12345"),
        "static": client.get("/static/app.css"),
        "docs": client.get("/docs"),
        "openapi": client.get("/openapi.json"),
        "too-large": client.post("/api/runs", content=b"x", headers={"Content-Length": "99999999999"}),
    }
    set_setting(monkeypatch, "API_TOKEN", "t" * 20)
    set_setting(monkeypatch, "PRIVATE_READS", "true")
    responses["unauthorized"] = client.get("/api/runs")
    responses["redirect"] = client.get("/", follow_redirects=False)
    assert responses["redirect"].status_code == 303 and responses["unauthorized"].status_code == 401
    for name, response in responses.items():
        headers = response.headers
        assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY, name
        assert headers["x-content-type-options"] == "nosniff", name
        assert headers["referrer-policy"] == "same-origin", name
        assert headers["x-frame-options"] == "DENY", name
    policy = dict(part.strip().split(" ", 1) for part in CONTENT_SECURITY_POLICY.split(";"))
    assert (
        policy["script-src"] == "'self'" and policy["frame-ancestors"] == "'none'" and policy["object-src"] == "'none'"
    )
    assert "unsafe" not in CONTENT_SECURITY_POLICY and "*" not in CONTENT_SECURITY_POLICY


def test_docs_are_served_from_vendored_files(client):
    html = client.get("/docs").text
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    # Swagger UI's script, its stylesheet and the contrast fixes over it, its start-up script, the favicon, the home
    # link: all this board's own
    assert len(sources) == 6 and all(ours(s) or s == "/" for s in sources), sources
    for source in sources:
        if ours(source):
            assert client.get(source).status_code == 200, source
    assert (
        json.loads(client.get("/openapi.json").text)["components"]["securitySchemes"]["HTTPBearer"]["scheme"]
        == "bearer"
    )
