"""Server memory for the largest uploads allowed (docs/decisions.md, "Upload memory under 300 MB"): a real
server's peak RSS stays under 300 MB for 32 MiB of junk, whose answer lists the first 100 errors, for 32 MiB of
valid lines, and for 32 MiB pastes that hold a text report."""

from pathlib import Path

import httpx
import pytest

from app.ingest.service import JUNK_ALLOWANCE_LINES
from tests.helpers import distinct_lines
from tests.live_server import LiveServer, live_server

pytestmark = pytest.mark.slow  # a real browser, server, runner or bonnie++: pytest -m 'not slow' skips it

MAX_PEAK_RSS_BYTES = 300 * 1024 * 1024
UPLOAD_BYTES = 32 * 1024 * 1024  # the default BONNIEBOARD_MAX_UPLOAD_BYTES
# One-field lines, two million of them. (Shorter lines only take longer: once errors are counted
# rather than kept, memory does not grow with their number; kept, these took gigabytes.)
JUNK_LINE = b"not a bonnie++ line\n"[:16]


def peak_rss_bytes(pid: int) -> int:
    """The process's high-water mark of resident memory (VmHWM), from Linux's /proc."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def peak_then_kill(server: LiveServer) -> int:
    """The server's peak RSS so far; then the server killed, not stopped: a stop waits for the upload's change
    detection, 20 s of CPU for 112,000 runs of one machine, which is not what these tests measure."""
    peak = peak_rss_bytes(server.process.pid)
    server.kill()
    return peak


def post(url: str, body: bytes, **params: str) -> httpx.Response:
    return httpx.post(f"{url}/api/runs", content=body, params=params, headers={"Content-Type": "text/csv"}, timeout=600)


@pytest.mark.databases("sqlite")
def test_32_mib_uploads_keep_server_memory_under_300_mb(database_url):
    junk = (JUNK_LINE[:-1] + b"\n") * (UPLOAD_BYTES // len(JUNK_LINE))
    lines = distinct_lines("memory", UPLOAD_BYTES // 300)
    valid = "\n".join(lines).encode()[:UPLOAD_BYTES]
    valid = valid[: valid.rindex(b"\n")]
    with live_server(database_url) as server:
        idle = peak_rss_bytes(server.process.pid)
        # With partial=true reading stops past 10,000 invalid lines (and 10 per valid one); without, after 100.
        junk_response = post(server.url, junk, partial="true")
        refused = post(server.url, junk)
        after_junk = peak_rss_bytes(server.process.pid)
        head = "\n".join(lines[:300]).encode() + b"\n"
        partial_response = post(server.url, head + junk[: len(JUNK_LINE) * JUNK_ALLOWANCE_LINES], partial="true")
        valid_response = post(server.url, valid, tag=["fs=xfs", "disk=nvme0"])
        peak = peak_then_kill(server)
    print(
        f"server peak RSS: idle {idle / 2**20:.0f} MiB, after junk {after_junk / 2**20:.0f} MiB, after valid {peak / 2**20:.0f} MiB"
    )

    assert junk_response.status_code == 422, junk_response.text[:300]
    body = junk_response.json()
    stop = JUNK_ALLOWANCE_LINES + 1
    assert body["detail"].startswith(f"reading stopped at line {stop} ("), body["detail"]
    assert body["error_count"] == stop and [e["line"] for e in body["errors"]] == list(range(1, 101))
    assert len(junk_response.content) < 50_000
    assert refused.status_code == 422 and refused.json()["error_count"] == 101
    assert refused.json()["detail"].startswith("more than 100 lines are invalid; nothing was stored")

    assert partial_response.status_code == 201, partial_response.text[:300]
    partial = partial_response.json()
    assert partial["error_count"] == JUNK_ALLOWANCE_LINES and len(partial["errors"]) == 100
    assert len(partial["created"]) == 300
    assert valid_response.status_code == 201, valid_response.text[:300]
    assert len(valid_response.json()["created"]) + len(valid_response.json()["duplicates"]) == valid.count(b"\n") + 1

    assert after_junk < MAX_PEAK_RSS_BYTES and peak < MAX_PEAK_RSS_BYTES, (idle, after_junk, peak)


REPORTS = Path(__file__).resolve().parents[1] / "data" / "reports"
REPORT_AND_CSV = (REPORTS / "real-default.txt").read_text()
REPORT = REPORT_AND_CSV[: REPORT_AND_CSV.index("1.98,")]  # the report without bonnie++'s CSV line under it


def filled(head: str, line: str) -> bytes:
    """`head`, then `line` again and again up to the upload limit."""
    return (head + line * ((UPLOAD_BYTES - len(head)) // len(line))).encode()


def report_then_csv() -> bytes:
    lines = distinct_lines("pasted", UPLOAD_BYTES // 200)
    body = (REPORT + "\n".join(lines)).encode()[:UPLOAD_BYTES]
    return body[: body.rindex(b"\n")]


# What a paste holding a text report can be, at the upload limit (bench/upload_memory.py measures the same):
# held whole, every line (and every line's error) at once, each takes from 470 MB to 1.3 GB.
PASTES = {
    # Lines that look like CSV lines gone wrong: each an error, counted, the first 100 kept.
    "report-then-comma-junk": (lambda: filled(REPORT, "," * 11 + "\n"), 422, "more than 100 lines are invalid"),
    # 4,095 tabs a line are 32,760 columns once expanded: only a report's own lines ever are.
    "title-then-tab-junk": (lambda: filled(REPORT.splitlines(True)[0], "\t" * 4095 + "\n"), 422, "column heading"),
    # A report and a whole CSV file: every line stored, none held.
    "report-then-csv-lines": (report_then_csv, 201, None),
    # A report of a few hundred thousand rows: at most MAX_REPORT_ROWS are read.
    "report-rows": (lambda: filled("".join(REPORT.splitlines(True)[:3]), REPORT.splitlines(True)[3]), 422, "rows"),
}


@pytest.mark.databases("sqlite")
@pytest.mark.parametrize("paste", PASTES)
def test_32_mib_pastes_with_a_report_keep_server_memory_under_300_mb(database_url, paste):
    make_body, status, words = PASTES[paste]
    body = make_body()
    assert UPLOAD_BYTES - 5000 < len(body) <= UPLOAD_BYTES
    with live_server(database_url) as server:
        response = httpx.post(
            f"{server.url}/api/runs", content=body, headers={"Content-Type": "text/plain"}, timeout=600
        )
        peak = peak_then_kill(server)
    print(f"{paste}: server peak RSS {peak / 2**20:.0f} MiB")
    assert response.status_code == status, response.text[:300]
    if words is not None:
        assert words in response.json()["detail"] + str(response.json()["errors"][:1])
        assert len(response.json()["errors"]) <= 100 and len(response.content) < 50_000
    else:  # every CSV line, and the report's run (not one of them)
        csv_lines = body.count(b"\n") - REPORT.count("\n") + 1
        assert len(response.json()["created"]) == csv_lines + 1 and len(response.json()["converted"]) == 1
    assert peak < MAX_PEAK_RSS_BYTES, peak
