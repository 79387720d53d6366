"""Every upload path's time follows what it stores: with partial=true reading stops once the invalid lines pass
10,000 and 10 more per valid line before them (a refusal naming the line and field), and a text report's paste
names the lines that neither a report nor a CSV line took (`skipped`), instead of reading stray lines as the
report's. The live tests hold each case's server CPU to a reference the same test measures."""

from __future__ import annotations

import gzip
import random
import time
from typing import Any

import httpx
import pytest

from app.ingest import service
from app.ingest.service import JUNK_ALLOWANCE_LINES, JUNK_PER_VALID_LINE
from tests.helpers import LINE_103, distinct_lines, post_form, with_field
from tests.ingest.test_upload_memory import REPORT, REPORT_AND_CSV
from tests.live_server import CLIENT_SSL, live_server
from tests.web.test_form_bounds import CLOCK_TICKS_S, cpu_s

CSV = {"Content-Type": "text/csv"}
TEXT = {"Content-Type": "text/plain"}
# The report's own Latency line, and another with other figures: a stray line must not become the run's.
LATENCY = next(line for line in REPORT.splitlines(True) if line.startswith("Latency"))
STRAY_LATENCY = LATENCY.replace("79330us", "11111us")
BAD_GETC = REPORT_AND_CSV.splitlines()[-1].replace(",709,40,", ",x,40,")  # a CSV line but for its getc


def post(client, body: bytes | str, headers=CSV, **params: str) -> httpx.Response:
    return client.post("/api/runs", content=body, params=params, headers=headers)


# ==== partial=true: junk is read up to an allowance ====


def test_partial_junk_is_refused_where_reading_stopped(client, ingest_path):
    body = "a\n" * (JUNK_ALLOWANCE_LINES + 5000)
    answer = post(client, body, partial="true")
    assert answer.status_code == 422, answer.text[:300]
    stop = JUNK_ALLOWANCE_LINES + 1
    detail = answer.json()["detail"]
    assert detail.startswith(f"reading stopped at line {stop} (too few fields: "), detail
    assert f"{stop} lines are invalid and 0 valid before it" in detail and "nothing was stored" in detail
    assert answer.json()["error_count"] == stop
    assert [error["line"] for error in answer.json()["errors"]] == list(range(1, 101))
    assert client.get("/api/runs").json()["total"] == 0


def test_partial_junk_a_field_wrong_is_named(client, ingest_path):
    """Lines that are CSV lines but for one field: the refusal names that field."""
    answer = post(client, "\n".join([BAD_GETC] * (JUNK_ALLOWANCE_LINES + 1)), partial="true")
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith(f"reading stopped at line {JUNK_ALLOWANCE_LINES + 1} (field getc: ")


@pytest.mark.parametrize("junk_after", [10 * 100 + JUNK_ALLOWANCE_LINES, 10 * 100 + JUNK_ALLOWANCE_LINES + 1])
def test_each_valid_line_before_allows_ten_more_invalid_ones(client, ingest_path, junk_after):
    valid = distinct_lines("allowance", 100)
    body = "\n".join(valid) + "\n" + "junk\n" * junk_after
    answer = post(client, body, partial="true")
    if junk_after <= JUNK_ALLOWANCE_LINES + JUNK_PER_VALID_LINE * len(valid):
        assert answer.status_code == 201, answer.text[:300]
        assert len(answer.json()["created"]) == 100 and answer.json()["error_count"] == junk_after
    else:
        assert answer.status_code == 422
        assert answer.json()["detail"].startswith(f"reading stopped at line {100 + junk_after} (")
        assert f"{junk_after} lines are invalid and 100 valid before it" in answer.json()["detail"]
        assert client.get("/api/runs").json()["total"] == 0


def test_valid_lines_after_the_junk_do_not_count(client, ingest_path):
    body = "junk\n" * (JUNK_ALLOWANCE_LINES + 1) + "\n".join(distinct_lines("late", 50))
    answer = post(client, body, partial="true")
    assert answer.status_code == 422 and "0 valid before it" in answer.json()["detail"]


def test_the_page_shows_the_refusal(client):
    page = post_form(
        client, "/upload", {"partial": "true"}, files={"file": ("junk.csv", b"a\n" * (JUNK_ALLOWANCE_LINES + 1))}
    )
    assert page.status_code == 422 and f"reading stopped at line {JUNK_ALLOWANCE_LINES + 1}" in page.text


# ==== Text reports: stray lines are not the report's, and are named ====


def test_stray_latency_lines_after_a_report_are_named_not_read(client):
    answer = post(client, REPORT + STRAY_LATENCY * 1000, headers=TEXT)
    assert answer.status_code == 201, answer.text[:300]
    body = answer.json()
    assert len(body["created"]) == 1 and len(body["converted"]) == 1
    assert body["skipped"] == [{"line": 11, "count": 1000, "text": STRAY_LATENCY.strip()}]
    assert body["skipped_count"] == 1000
    run = client.get(f"/api/runs/{body['created'][0]}").json()
    assert run["results"]["putc"]["latency_us"] == 79330  # the report's own Latency line, not the last stray one


def test_prose_around_a_report_is_named_and_blank_lines_and_comments_are_not(client):
    prose = "Using uid:0, gid:0.\r\nWriting a byte at a time...done\r\n\r\n   \n"
    after = "\n# a comment\nthat was all\n" + "x" * 200 + "\n"
    answer = post(client, prose + REPORT_AND_CSV + after, headers=TEXT)
    assert answer.status_code == 201, answer.text[:300]
    skipped = answer.json()["skipped"]
    assert skipped == [
        {"line": 1, "count": 2, "text": "Using uid:0, gid:0."},
        {"line": 18, "count": 2, "text": "that was all"},
    ], skipped
    assert answer.json()["skipped_count"] == 4
    assert post(client, REPORT_AND_CSV, headers=TEXT).json()["skipped"] == []  # a plain paste: nothing to say
    page = post_form(client, "/upload", {"lines": prose + REPORT}, headers={"HX-Request": "true"})
    assert "2 lines of the paste were not read" in page.text and "Using uid:0, gid:0." in page.text


def test_a_long_skipped_line_is_shown_cut():
    text = REPORT + "y" * 500 + "\n"
    skipped, count = service._not_read(text, [(0, len(REPORT))])
    assert count == 1 and skipped[0].text == "y" * (service.SKIPPED_TEXT_CHARS - 1) + "…"


def test_lines_not_read_are_counted_as_one_regex_would():
    """_count_not_read's string-method count against matching each line, on random pastes and slice sizes."""
    rng = random.Random(36)
    pieces = [
        "a",
        "",
        "  ",
        "\r",
        "# c",
        "  #x",
        "," * 11,
        "#" + "," * 11,
        "Latency 1us",
        " \t ",
        "x,y",
        LATENCY.strip(),
    ]
    for _ in range(2000):
        text = "\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) + rng.choice(["", "\n"])
        slice_chars = rng.randint(1, 40)
        exact = sum(1 for _ in service._NOT_READ.finditer(text))
        original, service._SLICE_CHARS = service._SLICE_CHARS, slice_chars
        try:
            assert service._count_not_read(text, 0, len(text)) == exact, (text, slice_chars)
        finally:
            service._SLICE_CHARS = original


# ==== A real server: CPU against a reference ====

BODY_BYTES = 4 * 1024 * 1024


def fill(head: str, line: str, size: int = BODY_BYTES) -> bytes:
    return (head + line * ((size - len(head)) // len(line))).encode()


@pytest.mark.slow
def test_partial_junk_costs_what_storing_its_allowance_of_valid_lines_costs(database_url):
    # The reference: as many valid lines as the junk allowance.
    valid = "\n".join(with_field(LINE_103, 0, f"reference-{i}") for i in range(JUNK_ALLOWANCE_LINES)).encode()
    a_lines = fill("", "a\n")
    shapes: dict[str, dict[str, Any]] = {
        "a lines": {"content": a_lines},
        "a lines, CRLF": {"content": fill("", "a\r\n")},
        "a lines, chunked": {"content": iter([a_lines[i : i + 65536] for i in range(0, len(a_lines), 65536)])},
        "a lines, a multipart file": {"files": {"file": ("junk.csv", a_lines)}, "headers": {}},
        # Not decoded (no Content-Encoding is): its bytes are a few lines of binary junk.
        "a lines, gzip": {"content": gzip.compress(a_lines), "headers": TEXT | {"Content-Encoding": "gzip"}},
        "a field wrong": {"content": fill("", BAD_GETC + "\n")},
        "valid, then junk": {"content": fill("\n".join(distinct_lines("head", 10)) + "\n", "a\n")},
        "report, then comma junk": {"content": fill(REPORT, "," * 11 + "\n")},
    }
    with live_server(database_url) as server:
        pid = server.process.pid
        before = cpu_s(pid)
        # name_tags: every line through the parser, as junk is (the compiled path takes plain lines only).
        reference = httpx.post(
            f"{server.url}/api/runs",
            content=valid,
            params={"name_tags": "{host}"},
            headers=CSV,
            timeout=120,
            verify=CLIENT_SSL,
        )
        reference_cpu_s = cpu_s(pid) - before
        assert reference.status_code == 201, reference.text[:300]
        for name, request in shapes.items():
            before = cpu_s(pid)
            answer = httpx.post(
                f"{server.url}/api/runs",
                params={"partial": "true"},
                timeout=120,
                **({"headers": TEXT} | request),
                verify=CLIENT_SSL,
            )
            took_cpu_s = cpu_s(pid) - before
            assert answer.status_code == 422, (name, answer.text[:300])
            if name != "a lines, gzip":
                assert answer.json()["detail"].startswith("reading stopped at line "), (name, answer.json()["detail"])
            # Before, every line was read: 4 MiB of 'a' lines took 34 s, the reference 0.3 s.
            assert took_cpu_s <= 2 * reference_cpu_s + CLOCK_TICKS_S, (name, took_cpu_s, reference_cpu_s)
    print(f"reference: {reference_cpu_s:.2f} s CPU to store {len(reference.json()['created'])} runs")


@pytest.mark.slow
def test_stray_lines_after_a_report_cost_what_any_unread_lines_cost(database_url):
    strays = fill(REPORT, STRAY_LATENCY)
    prose = fill(REPORT, "p" * (len(STRAY_LATENCY) - 1) + "\n")
    with live_server(database_url) as server:
        pid = server.process.pid
        costs = {}
        for name, body in (("prose", prose), ("strays", strays)):
            before = cpu_s(pid)
            started = time.perf_counter()
            answer = httpx.post(f"{server.url}/api/runs", content=body, headers=TEXT, timeout=120, verify=CLIENT_SSL)
            costs[name] = cpu_s(pid) - before, time.perf_counter() - started
            assert answer.status_code == 201, (name, answer.text[:300])
            assert answer.json()["skipped_count"] == body.count(b"\n") - REPORT.count("\n")
            assert answer.json()["skipped"][0]["line"] == 11
    print(f"CPU s, seconds: {costs}")
    # Before, each stray Latency line was read as the report's (4 MiB: 1.0 s against 0.1 s for prose).
    assert costs["strays"][0] <= 2 * costs["prose"][0] + 2 * CLOCK_TICKS_S, costs
