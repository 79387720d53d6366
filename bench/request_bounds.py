"""What a hostile request costs a server before it is refused: page forms (issue #36 F1) and junk uploads with
partial=true or stray lines after a text report (F4).

Usage: .venv/bin/python bench/request_bounds.py [--mib 32] [--only NAME ...] [--baseline /path/to/other/checkout ...]

Each request goes to a fresh `bonnieboard serve` (SQLite, one worker, default limits), served by this interpreter
from the checkout's directory (which needs its own built app/ingest/_plain_lines*.so), so that --baseline measures
another commit with the same bodies. Printed per request and server: the status, the seconds the POST took, the
longest /api/health answer while it ran (polled every 50 ms from another thread: the event loop's stall), the
server's CPU seconds, and its peak RSS (VmHWM) against the idle server's.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from upload_memory import REPORT_ONLY, fill, free_port, git_head, peak_rss_mib  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
URLENCODED = {"Content-Type": "application/x-www-form-urlencoded"}
TEXT = {"Content-Type": "text/plain"}
LATENCY = next(line for line in REPORT_ONLY.splitlines(True) if line.startswith("Latency"))


@dataclass
class Case:
    path: str
    headers: dict[str, str]
    body: Callable[[int, str], bytes]  # (size limit, the visitor's CSRF token or "") -> the body
    params: dict[str, str]
    visitor: bool = False  # sent with the session cookie of a first visit to /upload
    chunked: bool = False  # sent without a Content-Length


def escapes(limit: int, token: str) -> bytes:
    head = f"csrf_token={token}&lines=".encode() if token else b"lines="
    return head + b"%41" * ((limit - len(head)) // 3)


def a_newlines(limit: int, token: str) -> bytes:
    head = f"csrf_token={token}&lines=".encode()
    return head + b"a%0A" * ((limit - len(head)) // 4)


def no_escapes(limit: int, token: str) -> bytes:
    return b"lines=" + b"A" * (limit - 6)


def small_fields(limit: int, token: str) -> bytes:
    head = f"csrf_token={token}&".encode()
    return head + b"&".join([b"tags=%41"] * ((limit - len(head)) // 9))


BOUNDARY = "benchboundary"


def multipart(limit: int, token: str) -> bytes:
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n{token}\r\n'
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="lines"\r\n\r\n'
    ).encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    return head + b"%41" * ((limit - len(head) - len(tail)) // 3) + tail


CASES: dict[str, Case] = {
    "form: escapes, no cookie": Case("/upload", URLENCODED, escapes, {}),
    "form: a%0A, the visitor's token": Case("/upload", URLENCODED, a_newlines, {}, visitor=True),
    "form: escapes, the visitor's token, chunked": Case("/upload", URLENCODED, escapes, {}, visitor=True, chunked=True),
    "form: many small fields, the visitor's token": Case("/upload", URLENCODED, small_fields, {}, visitor=True),
    "form: no escapes, no cookie (control)": Case("/upload", URLENCODED, no_escapes, {}),
    "form: multipart, the visitor's token (control)": Case(
        "/upload", {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}, multipart, {}, visitor=True
    ),
    "api: a lines, partial": Case("/api/runs", TEXT, lambda limit, _: fill("", "a\n", limit), {"partial": "true"}),
    "api: report + comma junk, partial": Case(
        "/api/runs", TEXT, lambda limit, _: fill(REPORT_ONLY, "," * 11 + "\n", limit), {"partial": "true"}
    ),
    "api: report + 430,000 stray Latency lines": Case(
        "/api/runs", TEXT, lambda limit, _: (REPORT_ONLY + LATENCY * min(430_000, limit // len(LATENCY))).encode(), {}
    ),
}


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def longest_health_wait(url: str, stop: threading.Event, waits: list[float]) -> None:
    with httpx.Client(timeout=600) as client:
        while not stop.is_set():
            started = time.perf_counter()
            client.get(f"{url}/api/health")
            waits.append(time.perf_counter() - started)
            time.sleep(0.05)


def chunks_of(body: bytes) -> Iterator[bytes]:
    for start in range(0, len(body), 65536):
        yield body[start : start + 65536]


def measure(root: Path, case: Case, limit: int, workdir: Path) -> tuple[int, float, float, float, float, float, str]:
    """(status, POST s, longest health wait s, server CPU s, idle RSS MiB, peak RSS MiB, answer) on a fresh server."""
    db = workdir / f"board-{time.monotonic_ns()}.db"
    port = free_port()
    env = os.environ | {"BONNIEBOARD_DATABASE_URL": f"sqlite:///{db}"}
    server = subprocess.Popen(
        [sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main())", "serve", "--port", str(port)],
        env=env,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                httpx.get(f"{url}/api/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        with httpx.Client(base_url=url, timeout=1800) as client:
            token = ""
            if case.visitor:
                token = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/upload").text)[1]
            else:
                client.cookies.clear()
            body = case.body(limit, token)
            idle = peak_rss_mib(server.pid)
            stop, waits = threading.Event(), []
            poller = threading.Thread(target=longest_health_wait, args=(url, stop, waits))
            poller.start()
            before = cpu_s(server.pid)
            started = time.perf_counter()
            response = client.post(
                case.path,
                content=chunks_of(body) if case.chunked else body,
                params=case.params,
                headers=case.headers,
            )
            elapsed = time.perf_counter() - started
            cpu = cpu_s(server.pid) - before
            stop.set()
            poller.join()
        answer = html.unescape(re.sub(r"\s+", " ", response.text))
        detail = re.search(r'"detail":"([^"]*)"|<p class="bad">([^<]*)<|<main>.*?<p>([^<]*)</p>', answer)
        shown = next((group for group in detail.groups() if group), "") if detail else answer[:120]
        if response.status_code == 201:
            shown = answer[:200]
        return response.status_code, elapsed, max(waits, default=0.0), cpu, idle, peak_rss_mib(server.pid), shown
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait()
        for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            path.unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=float, default=32, help="each body's size in MiB (default: the upload limit)")
    parser.add_argument("--only", action="append", choices=list(CASES), help="just these requests (repeatable)")
    parser.add_argument(
        "--baseline", type=Path, action="append", default=[], help="another checkout to serve the same requests"
    )
    parser.add_argument("--answers", action="store_true", help="print the start of each answer")
    args = parser.parse_args()
    # Just under the upload limit, as the bodies: the limit's 413 is not what is measured.
    limit = int(args.mib * 1024 * 1024) - 4096
    servers = {"this": ROOT} | {f"baseline {i + 1}": path.resolve() for i, path in enumerate(args.baseline)}
    for name, root in servers.items():
        print(f"{name}: {root} at {git_head(root)}")
    print("| request | server | status | POST s | longest /api/health s | server CPU s | idle RSS MiB | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for case_name in args.only or list(CASES):
            for server_name, root in servers.items():
                status, seconds, health, cpu, idle, peak, answer = measure(root, CASES[case_name], limit, Path(tmp))
                print(
                    f"| {case_name} | {server_name} | {status} | {seconds:.1f} | {health:.2f} | {cpu:.1f} "
                    f"| {idle:.0f} | {peak:.0f} |",
                    flush=True,
                )
                if args.answers:
                    print(f"    {answer[:400]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
