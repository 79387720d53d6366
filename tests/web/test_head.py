"""HEAD is answered wherever GET is (app.web.middleware.HeadAsGet): the same status and headers as the GET, no body, and a
streamed export stops after its headers instead of reading every run."""

import re
import socket
from urllib.parse import urlsplit

import pytest
from sqlalchemy import event

from app.store import db
from app.web.routes import api, login, pages
from tests.helpers import LINE_103, LINE_198, distinct_lines, post_csv, set_setting
from tests.live_server import live_server

# A concrete URL for each GET route, with what it needs to answer 200 once the runs of _store_runs are stored.
GET_URLS = {
    "/api/runs": "/api/runs?tag=fs=xfs",
    "/api/runs/export.csv": "/api/runs/export.csv",
    "/api/runs/{run_id:run_id}": "/api/runs/1",
    "/api/compare": "/api/compare?runs=1,2&mode=relative",
    "/api/compare.csv": "/api/compare.csv?runs=1,2",
    "/api/matrix": "/api/matrix?rows=raid&cols=fs",
    "/api/health": "/api/health",
    "/": "/?tag=fs=xfs",
    "/compare": "/compare?runs=1,2",
    "/compare/setup": "/compare/setup?runs=1,2",
    "/compare/figures": "/compare/figures?runs=1,2&mode=relative",
    "/compare/recent": "/compare/recent?runs=1",
    "/matrix": "/matrix?rows=raid&cols=fs",
    "/runs/{run_id}": "/runs/1",
    "/upload": "/upload",
    "/login": "/login",
    "/docs": "/docs",
    "/openapi.json": "/openapi.json",
}

# Made anew for every response: present on both, never equal.
DIFFERENT_EACH_TIME = {"set-cookie"}


def _store_runs(client) -> None:
    assert client.post("/api/runs?tag=raid=5&tag=fs=xfs", content=LINE_198).status_code == 201
    assert client.post("/api/runs?tag=raid=6&tag=fs=ext4", content=LINE_103).status_code == 201


def _headers(response) -> dict[str, str]:
    return {name: "*" if name in DIFFERENT_EACH_TIME else value for name, value in response.headers.items()}


def get_and_head(client, url: str):
    """The GET and the HEAD of `url`, each as a browser's first visit (no session cookie yet)."""
    client.cookies.clear()
    got = client.get(url)
    client.cookies.clear()
    return got, client.head(url)


def test_every_get_route_has_a_url_here():
    routers = (api.router, pages.router, login.router)
    gets = {route.path for router in routers for route in router.routes if "GET" in route.methods}
    assert gets | {"/docs", "/openapi.json"} == set(GET_URLS)


@pytest.mark.parametrize("url", sorted(GET_URLS.values()))
def test_head_answers_as_get_without_a_body(client, url):
    _store_runs(client)
    got, head = get_and_head(client, url)
    assert got.status_code == 200, got.text[:300]
    assert head.status_code == 200
    assert _headers(head) == _headers(got)
    assert head.content == b""
    if "content-length" in got.headers and "content-encoding" not in got.headers:  # a streamed export has none
        assert int(head.headers["content-length"]) == len(got.content)


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/api/runs/999", 404),
        ("/runs/999", 404),
        ("/nowhere", 404),
        ("/api/runs?limit=0", 422),
        ("/compare?runs=x", 400),
    ],
)
def test_head_of_an_error_is_the_get_error_without_a_body(client, url, status):
    got, head = get_and_head(client, url)
    assert got.status_code == head.status_code == status
    assert _headers(head) == _headers(got) and head.content == b""


def test_static_files_keep_their_own_head(client):
    got, head = get_and_head(client, "/static/app.css")
    assert head.status_code == 200 and head.headers["etag"] == got.headers["etag"]
    # The bytes sent: gzipped, as the test client accepts gzip (httpx's .content is them unpacked).
    assert head.headers["content-encoding"] == got.headers["content-encoding"] == "gzip"
    assert int(head.headers["content-length"]) == int(got.headers["content-length"]) == got.num_bytes_downloaded


def test_allow_names_head_beside_get(client):
    assert client.put("/api/runs/1").headers["allow"] == "DELETE, GET, HEAD, PATCH"
    # A path with no GET has no HEAD either.
    refused = client.head("/runs/1/tags")
    assert refused.status_code == 405 and refused.headers["allow"] == "POST"


def test_head_needs_what_get_needs(client, monkeypatch):
    set_setting(monkeypatch, "API_TOKEN", "a-token-for-reading")
    set_setting(monkeypatch, "PRIVATE_READS", "true")
    assert client.head("/api/runs").status_code == 401
    assert client.head("/api/runs", headers={"Authorization": "Bearer a-token-for-reading"}).status_code == 200
    refused = client.head("/runs/1", follow_redirects=False)
    assert refused.status_code == 303 and refused.headers["location"] == "/login?next=%2Fruns%2F1"


EXPORT_BATCH_SQL = re.compile(r"SELECT run\.id, run\.raw_line\b")


def test_head_of_the_export_reads_at_most_its_first_batch(client):
    # 4,200 runs are four batches of app.store.runs.export_batches (100, 2,000, 2,000, 100).
    assert post_csv(client, "\n".join(distinct_lines("head-export", 4200))).status_code == 201
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args):
        if EXPORT_BATCH_SQL.search(statement):
            statements.append(statement)

    event.listen(db.get_engine(), "before_cursor_execute", count)
    try:
        got = client.get("/api/runs/export.csv")
        assert got.status_code == 200 and got.text.count("\n") == 4200 and len(statements) == 4
        statements.clear()
        head = client.head("/api/runs/export.csv")
        assert head.status_code == 200 and head.headers["content-type"] == got.headers["content-type"]
        assert len(statements) <= 1
    finally:
        event.remove(db.get_engine(), "before_cursor_execute", count)


def test_a_real_server_answers_head_with_headers_only(database_url):
    # Two requests on one connection: the second answer starts right after the first one's headers, so no byte
    # of a body (chunked or not) came between them.
    with live_server(database_url) as server:
        parts = urlsplit(server.url)
        with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
            for path in ("/api/runs/export.csv", "/"):
                sock.sendall(f"HEAD {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n\r\n".encode())
            sock.sendall(f"GET /api/health HTTP/1.1\r\nHost: {parts.netloc}\r\nConnection: close\r\n\r\n".encode())
            received = b""
            while chunk := sock.recv(65536):
                received += chunk
    export, page, health = received.split(b"\r\n\r\n", 2)
    assert export.startswith(b"HTTP/1.1 200 ") and b"content-type: text/csv" in export
    assert page.startswith(b"HTTP/1.1 200 ") and b"content-length: " in page
    assert health.startswith(b"HTTP/1.1 200 ") and received.endswith(
        b'\r\n\r\n{"status":"ok","ingest_path":"compiled"}'
    )
