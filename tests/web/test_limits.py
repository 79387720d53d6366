"""Limits where a client controls size or time: tag filters per request, PostgreSQL's
statement_timeout for reads, and header and body deadlines in a real server."""

from __future__ import annotations

import socket
import time

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from app.tags import MAX_TAG_FILTERS
from tests.helpers import LINE_103, LINE_198, post_csv, set_setting
from tests.live_server import live_server


@pytest.mark.parametrize("count", [MAX_TAG_FILTERS + 1, 256, 991])
def test_too_many_tag_filters_are_a_400_on_every_listing(client, count):
    post_csv(client, LINE_198, tag="fs=xfs")
    params = [("tag", f"k{i}=v{i}") for i in range(count)]
    for url in ("/api/runs", "/api/runs/export.csv", "/"):
        response = client.get(url, params=params)
        assert response.status_code == 400, (url, response.status_code, response.text[:200])
        assert f"at most {MAX_TAG_FILTERS} tag filters" in response.text
    # The runs page's one text box holds them space-separated.
    response = client.get("/", params={"tag": " ".join(f"k{i}=v{i}" for i in range(count))})
    assert response.status_code == 400 and f"at most {MAX_TAG_FILTERS} tag filters" in response.text


def test_the_most_tag_filters_allowed_still_answer(client):
    post_csv(client, LINE_198, tag=[f"k{i}=v{i}" for i in range(MAX_TAG_FILTERS)])
    post_csv(client, LINE_103, tag="k0=v0")
    params = [("tag", f"k{i}=v{i}") for i in range(MAX_TAG_FILTERS)]
    assert client.get("/api/runs", params=params).json()["total"] == 1
    assert client.get("/api/runs/export.csv", params=params).text == LINE_198 + "\n"
    assert client.get("/", params=params).status_code == 200


@pytest.mark.databases("postgresql")
def test_a_postgresql_read_stops_at_the_read_timeout(client, database_url, monkeypatch):
    """A read stuck behind a lock (as one stuck in a huge plan) is stopped, answered 503, and gone from
    the server; writes are not bound by the read timeout."""
    post_csv(client, LINE_198)
    set_setting(monkeypatch, "READ_TIMEOUT_S", "0.5")
    engine = create_engine(database_url, poolclass=NullPool)
    with engine.connect() as locker:
        locker.execute(text("LOCK TABLE run IN ACCESS EXCLUSIVE MODE"))
        started = time.monotonic()
        response = client.get("/api/runs")
        waited_s = time.monotonic() - started
        assert response.status_code == 503, response.text
        assert "BONNIEBOARD_READ_TIMEOUT_S" in response.json()["detail"]
        assert waited_s < 10  # the lock is held until the end of this block: only the timeout ended the wait
        page = client.get("/")
        assert page.status_code == 503 and "text/html" in page.headers["content-type"]
        waiting = locker.execute(
            text(
                "select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'"
            )
        ).scalar()
        assert waiting == 0
        locker.rollback()
    engine.dispose()
    assert client.get("/api/runs").json()["total"] == 1


# ==== A real server: slow clients are cut off ====


def _closed_within(sock: socket.socket, seconds: float, trickle: bytes = b"") -> tuple[bool, bytes]:
    """Send `trickle` a byte at a time, reading meanwhile; (closed by the server within `seconds`, what it sent)."""
    sock.settimeout(0.2)
    deadline = time.monotonic() + seconds
    received = b""
    pending = trickle
    while time.monotonic() < deadline:
        if pending:
            try:
                sock.send(pending[:1])
            except OSError:
                return True, received
            pending = pending[1:] or trickle  # keep trickling, never finishing the headers
        try:
            part = sock.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            return True, received
        if not part:
            return True, received
        received += part
    return False, received


@pytest.mark.slow
@pytest.mark.databases("sqlite")
def test_slow_headers_and_bodies_do_not_hold_a_connection(database_url):
    env = {"BONNIEBOARD_HEADER_TIMEOUT_S": "1", "BONNIEBOARD_BODY_TIMEOUT_S": "1"}
    with live_server(database_url, env=env) as server:
        host, port = server.url.removeprefix("http://").split(":")
        address = (host, int(port))
        # Nothing at all after connecting.
        with socket.create_connection(address) as sock:
            assert _closed_within(sock, 6)[0]
        # Headers a byte at a time, never ending.
        with socket.create_connection(address) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            assert _closed_within(sock, 6, b"X-Slow: a\r\n")[0]
        # A body that never arrives whole: 408, then the connection ends.
        with socket.create_connection(address) as sock:
            sock.sendall(
                b"POST /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/csv\r\nContent-Length: 100000\r\n\r\n1.98,"
            )
            closed, received = _closed_within(sock, 6)
            assert received.startswith(b"HTTP/1.1 408"), received[:200]
        # A second request on a kept-alive connection has the same header deadline.
        with socket.create_connection(address) as sock:
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            closed, received = _closed_within(sock, 6, b"X-Slow: a\r\n")
            assert closed and received.count(b"HTTP/1.1 200") == 1
        # A quick client is served as ever.
        with socket.create_connection(address) as sock:
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert _closed_within(sock, 6)[1].startswith(b"HTTP/1.1 200")


@pytest.mark.slow
@pytest.mark.databases("postgresql")
def test_a_postgresql_read_stops_when_its_client_leaves(database_url):
    """The read timeout is long; the read is stuck behind a lock; the client hangs up: the query goes."""
    engine = create_engine(database_url, poolclass=NullPool)

    def waiting(connection) -> int:
        connection.execute(text("select pg_stat_clear_snapshot()"))  # else the same answer all transaction long
        return connection.execute(
            text(
                "select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'"
            )
        ).scalar()

    with live_server(database_url, env={"BONNIEBOARD_READ_TIMEOUT_S": "120"}) as server, engine.connect() as locker:
        locker.execute(text("LOCK TABLE run IN ACCESS EXCLUSIVE MODE"))
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as sock:
            sock.sendall(b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            deadline = time.monotonic() + 20
            while waiting(locker) == 0:  # the read has reached the lock
                assert time.monotonic() < deadline, server.log()
                time.sleep(0.05)
        left = time.monotonic()
        while waiting(locker) != 0:
            assert time.monotonic() - left < 10, "the read went on after its client left"
            time.sleep(0.05)
        locker.rollback()
    engine.dispose()
