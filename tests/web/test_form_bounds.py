"""A page form's body costs the server little unless the request may write: a real server refuses a form without
its session cookie or with a wrong X-CSRF-Token header before reading the body, and takes the upload form
urlencoded (parsed into one object per %XX escape) only up to a few KiB. Measured against a reference the same
test makes: the same number of bytes sent as the page sends them (multipart, with the CSRF token), read whole."""

from __future__ import annotations

import gzip
import html
import os
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from app.web.routes.pages import UPLOAD_FORM_URLENCODED_BYTES
from tests.helpers import csrf_token, distinct_lines
from tests.ingest.test_upload_memory import peak_rss_bytes
from tests.live_server import live_server

pytestmark = pytest.mark.slow  # a real server: pytest -m 'not slow' skips it

# 8 MiB, a quarter of the upload limit: escapes this size took the server 660 MB and about 5 s of a core.
BODY_BYTES = 8 * 1024 * 1024
ESCAPES = b"lines=" + b"%41" * (BODY_BYTES // 3)
URLENCODED = {"Content-Type": "application/x-www-form-urlencoded"}
# What the refused requests together may add to the server's peak RSS (the reference adds about the body's size).
MAX_GROWTH_BYTES = 40 * 1024 * 1024
CLOCK_TICKS_S = 1 / os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """The process's CPU time so far, user and system (/proc/PID/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * CLOCK_TICKS_S


def chunked(head: bytes, body: bytes) -> Iterator[bytes]:
    """The body without a Content-Length (httpx sends an iterator chunked)."""
    yield head
    for start in range(0, len(body), 65536):
        yield body[start : start + 65536]


def shapes(csrf: str) -> dict[str, tuple[Callable[[httpx.Client], httpx.Response], int, str]]:
    """name -> (the request, its status, words of its detail)."""
    token = b"csrf_token=" + csrf.encode() + b"&"
    fields = b"&".join([b"tags=%41"] * (BODY_BYTES // 9))
    squeezed = gzip.compress(ESCAPES)
    stale = "the form's CSRF token is missing or stale"
    over = f"the limit is {UPLOAD_FORM_URLENCODED_BYTES}"
    return {
        "escapes, no cookie": (
            lambda _: httpx.post(_.base_url.join("/upload"), content=ESCAPES, headers=URLENCODED, timeout=60),
            403,
            stale,
        ),
        "escapes, forged header": (
            lambda c: c.post("/upload", content=ESCAPES, headers=URLENCODED | {"X-CSRF-Token": "forged"}),
            403,
            stale,
        ),
        "escapes, the visitor's token": (
            lambda c: c.post("/upload", content=token + ESCAPES, headers=URLENCODED),
            413,
            over,
        ),
        "many small fields": (lambda c: c.post("/upload", content=token + fields, headers=URLENCODED), 413, over),
        "escapes, chunked": (
            lambda c: c.post("/upload", content=chunked(token, ESCAPES), headers=URLENCODED),
            413,
            "over the limit of",
        ),
        "escapes, gzip, no cookie": (
            lambda _: httpx.post(
                _.base_url.join("/upload"),
                content=squeezed,
                headers=URLENCODED | {"Content-Encoding": "gzip"},
                timeout=60,
            ),
            403,
            stale,
        ),
        "escapes, chunked, no cookie": (
            lambda _: httpx.post(
                _.base_url.join("/upload"), content=chunked(b"", ESCAPES), headers=URLENCODED, timeout=60
            ),
            403,
            stale,
        ),
    }


def test_a_form_is_refused_before_its_body_costs_the_server(database_url):
    with live_server(database_url) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        pid = server.process.pid
        csrf = csrf_token(client)
        # The reference: as many bytes as the page sends them, parsed whole (and stored, as one invalid line).
        before = cpu_s(pid)
        started = time.perf_counter()
        reference = client.post("/upload", data={"csrf_token": csrf}, files={"file": ("junk.csv", b"A" * BODY_BYTES)})
        reference_s, reference_cpu_s = time.perf_counter() - started, cpu_s(pid) - before
        assert reference.status_code == 422, reference.text[:300]
        idle = peak_rss_bytes(pid)
        for name, (send, status, words) in shapes(csrf).items():
            before = cpu_s(pid)
            started = time.perf_counter()
            response = send(client)
            took_s, took_cpu_s = time.perf_counter() - started, cpu_s(pid) - before
            assert response.status_code == status, (name, response.text[:300])
            assert words in html.unescape(response.text), (name, response.text[:600])
            # Each costs at most what reading the same bytes costs (a clock tick of slack: /proc counts in ticks).
            assert took_cpu_s <= reference_cpu_s + CLOCK_TICKS_S, (name, took_cpu_s, reference_cpu_s)
            assert took_s <= 2 * reference_s + 10 * CLOCK_TICKS_S, (name, took_s, reference_s)
        growth = peak_rss_bytes(pid) - idle
        # The health check answers as ever: nothing is left queued on the event loop.
        assert httpx.get(f"{server.url}/api/health", timeout=5).status_code == 200
    print(
        f"reference {reference_s:.2f} s, {reference_cpu_s:.2f} s CPU; growth after the refusals {growth / 2**20:.1f} MiB"
    )
    assert growth < MAX_GROWTH_BYTES, growth


def test_the_upload_form_urlencoded_within_its_limit_is_stored(database_url):
    """What a script posts urlencoded to /upload within the limit is read as before."""
    lines = "\n".join(distinct_lines("form", 100))
    with live_server(database_url) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        answer = client.post("/upload", data={"lines": lines, "csrf_token": csrf_token(client)})
    assert answer.status_code == 201, answer.text[:300]


def test_with_tokens_in_use_a_write_without_one_is_refused_before_its_body(database_url):
    env = {"BONNIEBOARD_API_TOKEN": "a-secret-of-the-board"}
    with live_server(database_url, env=env) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        pid = server.process.pid
        csrf = csrf_token(client)
        before = cpu_s(pid)
        started = time.perf_counter()
        reference = client.post(
            "/api/runs",
            content=b"A" * BODY_BYTES,
            headers={"Authorization": "Bearer a-secret-of-the-board", "Content-Type": "text/csv"},
        )
        reference_s, reference_cpu_s = time.perf_counter() - started, cpu_s(pid) - before
        assert reference.status_code == 422, reference.text[:300]
        idle = peak_rss_bytes(pid)
        for url, headers, body in (
            ("/upload", URLENCODED | {"X-CSRF-Token": csrf}, ESCAPES),
            ("/upload", URLENCODED, b"csrf_token=" + csrf.encode() + b"&" + ESCAPES),
            ("/api/runs", URLENCODED, ESCAPES),
            ("/api/runs", {"Content-Type": "text/csv"}, chunked(b"", ESCAPES)),
        ):
            before = cpu_s(pid)
            started = time.perf_counter()
            response = client.post(url, content=body, headers=headers)
            took_s, took_cpu_s = time.perf_counter() - started, cpu_s(pid) - before
            assert response.status_code == 401, (url, response.text[:300])
            assert took_cpu_s <= reference_cpu_s + CLOCK_TICKS_S, (url, took_cpu_s, reference_cpu_s)
            assert took_s <= 2 * reference_s + 10 * CLOCK_TICKS_S, (url, took_s, reference_s)
        assert peak_rss_bytes(pid) - idle < MAX_GROWTH_BYTES
