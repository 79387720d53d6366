"""A client that goes away in the middle of /api/runs/export.csv gives its database connection back. A session
held across the stream's yields is never closed when Starlette abandons the generator: 16 aborted downloads would
hold the whole pool (5 + 10 overflow) and every later request wait 30 s for a 500. On a real server."""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx
import pytest

from tests.helpers import distinct_lines
from tests.live_server import CLIENT_SSL, live_server

# About 6 MB of export: more than the loopback socket buffers hold, so each aborted stream is mid-way.
EXPORT_LINES = 25_000
ABORTED = 16  # one more than the pool holds


def _start_export(url: str) -> socket.socket:
    """An export request whose answer has begun and is then not read (a tiny receive buffer)."""
    parts = urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((parts.hostname, parts.port))
    sock.sendall(f"GET /api/runs/export.csv HTTP/1.1\r\nHost: {parts.netloc}\r\n\r\n".encode())
    assert sock.recv(64).startswith(b"HTTP/1.1 200")
    return sock


def _read_slowly_then_leave(url: str) -> None:
    """A download read at about 100 KB/s and given up after 2 s, mid-way."""
    sock = _start_export(url)
    with sock:
        until = time.monotonic() + 2
        while time.monotonic() < until:
            assert sock.recv(1024)
            time.sleep(0.01)


@pytest.mark.slow
def test_aborted_exports_leave_the_pool_free(database_url):
    lines = distinct_lines("aborted-export", EXPORT_LINES)
    with live_server(database_url) as server, httpx.Client(verify=CLIENT_SSL, base_url=server.url, timeout=60) as http:
        assert http.post("/api/runs", content="\n".join(lines)).status_code == 201
        with ThreadPoolExecutor(ABORTED) as pool:
            list(pool.map(lambda _: _read_slowly_then_leave(server.url), range(ABORTED)))
        # With the pool held: a 30 s wait for a pooled connection, then 500 ("QueuePool limit ... reached").
        with ThreadPoolExecutor(ABORTED) as pool:
            statuses = list(
                pool.map(
                    lambda _: httpx.get(f"{server.url}/api/runs?limit=1", timeout=10, verify=CLIENT_SSL).status_code,
                    range(ABORTED),
                )
            )
        assert statuses == [200] * ABORTED
        export = http.get("/api/runs/export.csv")
        assert export.status_code == 200 and export.text == "".join(f"{line}\n" for line in lines)
