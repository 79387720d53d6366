"""Server memory and time for the largest uploads allowed: junk on every path, against a valid upload.

Usage: .venv/bin/python bench/upload_memory.py [--mib 32] [--only NAME ...] [--baseline /work/other-checkout ...]

Each body is POSTed as text to a fresh `bonnieboard serve` (SQLite, one worker, the default upload and line
limits), and the server's peak RSS (VmHWM, from /proc/PID/status) is read after the answer: VmHWM only grows,
so one server per body. The bodies are at most --mib MiB (the default limit, BONNIEBOARD_MAX_UPLOAD_BYTES):

* valid csv: distinct real-looking format-1.98 lines (the reference: an upload that stores everything);
* csv junk: 16-byte lines of text (the case tests/ingest/test_upload_memory.py holds under 300 MB);
* csv a-lines: `a\\n` again and again, 16 million one-character lines (also with partial=true, which reads all);
* report + comma junk: a real bonnie++ 2.00a report, then lines of 11 commas (each looks like a CSV line gone wrong;
  also with partial=true);
* report + tab junk: a report's title, then lines of 4,095 tabs (each 32,760 columns once tabs are expanded);
* report + csv: a real report, then valid format-1.98 lines (a paste of a report and a whole CSV file);
* report rows: one report header, then its I/O row again and again (a report of a few hundred thousand runs).

With --baseline (repeatable), another checkout's server (served by this interpreter from that checkout's
directory, which needs its own built app/_plain_lines*.so) takes the same bodies: before and after in one run.
Prints, per body and server: the status, the seconds the POST took, and the peak RSS against the idle server's.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
REPORT = (ROOT / "tests" / "data" / "reports" / "real-default.txt").read_text()
REPORT_ONLY = REPORT[: REPORT.index("1.98,")]  # the report without the CSV line bonnie++ printed under it
TITLE = REPORT.splitlines()[0] + "\n"
LINE_198 = REPORT.splitlines()[-1]


def fill(head: str, line: str, limit_bytes: int) -> bytes:
    """`head`, then `line` (with its newline) as many times as fit in limit_bytes."""
    count = (limit_bytes - len(head.encode())) // len(line.encode())
    return (head + line * count).encode()


def valid_lines(limit_bytes: int, head: str = "") -> bytes:
    """`head`, then distinct format-1.98 lines (each its own seed) up to limit_bytes."""
    fields = LINE_198.split(",")
    parts = [head]
    size = len(head)
    i = 0
    while True:
        fields[4] = str(1_000_000_000 + i)
        line = ",".join(fields) + "\n"
        if size + len(line) > limit_bytes:
            return "".join(parts).encode()
        parts.append(line)
        size += len(line)
        i += 1


def report_rows(limit_bytes: int) -> bytes:
    lines = REPORT_ONLY.splitlines(keepends=True)
    return fill("".join(lines[:3]), lines[3], limit_bytes)


def a_lines(limit: int) -> bytes:
    return fill("", "a\n", limit)


def comma_junk(limit: int) -> bytes:
    return fill(REPORT_ONLY, "," * 11 + "\n", limit)


# name -> (the body for a size limit, the query: partial=true reads every line and counts every error)
BODIES: dict[str, tuple[Callable[[int], bytes], dict[str, str]]] = {
    "valid csv": (valid_lines, {}),
    "csv junk": (lambda limit: fill("", "not a bonnie++ \n", limit), {}),
    "csv a-lines": (a_lines, {}),
    "csv a-lines, partial": (a_lines, {"partial": "true"}),
    "report + comma junk": (comma_junk, {}),
    "report + comma junk, partial": (comma_junk, {"partial": "true"}),
    "report + tab junk": (lambda limit: fill(TITLE, "\t" * 4095 + "\n", limit), {}),
    "report + csv": (lambda limit: valid_lines(limit, REPORT_ONLY), {}),
    "report rows": (report_rows, {}),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for process {pid}")


def measure(root: Path, body: bytes, params: dict[str, str], workdir: Path) -> tuple[int, float, float, float, str]:
    """(status, seconds, idle peak RSS MiB, peak RSS MiB after the POST, the answer's start) on a fresh server."""
    db = workdir / f"board-{time.monotonic_ns()}.db"
    port = free_port()
    env = os.environ | {"BONNIEBOARD_DATABASE_URL": f"sqlite:///{db}"}
    # Served from the checkout's own directory by this interpreter: `app` is imported from there.
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
        idle = peak_rss_mib(server.pid)
        start = time.perf_counter()
        response = httpx.post(
            f"{url}/api/runs", content=body, params=params, headers={"Content-Type": "text/plain"}, timeout=1800
        )
        elapsed = time.perf_counter() - start
        answer = response.text[:160].replace("\n", " ")
        return response.status_code, elapsed, idle, peak_rss_mib(server.pid), answer
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait()
        for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            path.unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=float, default=32, help="each body's size in MiB (default: the upload limit)")
    parser.add_argument("--only", action="append", choices=list(BODIES), help="just these bodies (repeatable)")
    parser.add_argument(
        "--baseline", type=Path, action="append", default=[], help="another checkout to serve the same bodies"
    )
    parser.add_argument("--answers", action="store_true", help="print the start of each answer")
    args = parser.parse_args()
    limit = int(args.mib * 1024 * 1024)
    servers = {"this": ROOT} | {f"baseline {i + 1}": path.resolve() for i, path in enumerate(args.baseline)}
    for name, root in servers.items():
        print(f"{name}: {root} at {git_head(root)}")
    print("| body | MB | server | status | POST s | idle RSS MiB | peak RSS MiB | growth MiB |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for body_name in args.only or list(BODIES):
            make_body, params = BODIES[body_name]
            body = make_body(limit)
            for server_name, root in servers.items():
                status, seconds, idle, peak, answer = measure(root, body, params, Path(tmp))
                print(
                    f"| {body_name} | {len(body) / 1e6:.1f} | {server_name} | {status} | {seconds:.1f} "
                    f"| {idle:.0f} | {peak:.0f} | {peak - idle:.0f} |",
                    flush=True,
                )
                if args.answers:
                    print(f"    {answer}")
    return 0


def git_head(root: Path) -> str:
    result = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return result.stdout.strip() or "?"


if __name__ == "__main__":
    sys.exit(main())
