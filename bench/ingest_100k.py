"""Ingest speed and memory: POST a 100,000-line file to a real server, against sqlite3's .import.

Usage: .venv/bin/python bench/ingest_100k.py [--lines 100000] [--repeat 3]

The file cycles through real format-1.98 lines (tests/data/corpus/bonnie200-sample.csv and the
public 2.00a line) and gives line i the machine name host<i>. Each timing is into a fresh database:
the server's (started with `bonnieboard serve`, SQLite, WAL) and sqlite3's own `.import` of the same
file into a plain 50-column table. Prints medians, the ratio and the server's peak RSS (VmHWM).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "corpus"


def real_198_lines() -> list[str]:
    lines = []
    for name in ("bonnie200-sample.csv", "public-sample.csv"):
        lines += [line for line in (CORPUS / name).read_text().splitlines() if line.startswith("1.98,")]
    return lines


def make_file(path: Path, count: int) -> None:
    templates = [line.split(",") for line in real_198_lines()]
    with path.open("w") as out:
        for i in range(count):
            fields = list(templates[i % len(templates)])
            fields[2] = f"host{i}"
            out.write(",".join(fields) + "\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


def time_server(data_file: Path, workdir: Path) -> tuple[float, float]:
    db = workdir / f"server-{time.monotonic_ns()}.db"
    port = free_port()
    env = os.environ | {
        "BONNIEBOARD_DATABASE_URL": f"sqlite:///{db}",
        "BONNIEBOARD_MAX_UPLOAD_BYTES": str(256 * 1024 * 1024),
    }
    server = subprocess.Popen(
        [ROOT / ".venv/bin/bonnieboard", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                httpx.get(f"{url}/api/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.05)
        body = data_file.read_bytes()
        start = time.perf_counter()
        response = httpx.post(f"{url}/api/runs", content=body, headers={"Content-Type": "text/csv"}, timeout=600)
        elapsed = time.perf_counter() - start
        assert response.status_code == 201, response.text[:500]
        assert len(response.json()["created"]) == body.count(b"\n")
        return elapsed, peak_rss_mib(server.pid)
    finally:
        server.terminate()
        server.wait()


def time_sqlite_import(data_file: Path, workdir: Path) -> float:
    db = workdir / f"import-{time.monotonic_ns()}.db"
    columns = ",".join(f"c{i}" for i in range(50))
    start = time.perf_counter()
    subprocess.run(["sqlite3", db, f"create table t({columns});", ".mode csv", f".import {data_file} t"], check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        data_file = workdir / "runs.csv"
        make_file(data_file, args.lines)
        print(f"file: {args.lines} lines, {data_file.stat().st_size / 1e6:.1f} MB")
        server_s, import_s, rss = [], [], []
        for _ in range(args.repeat):  # alternate, so drift on a shared machine hits both alike
            import_s.append(time_sqlite_import(data_file, workdir))
            elapsed, peak = time_server(data_file, workdir)
            server_s.append(elapsed)
            rss.append(peak)
        med_server, med_import = statistics.median(server_s), statistics.median(import_s)
        print("sqlite3 .import s:", " ".join(f"{t:.2f}" for t in import_s), f"median {med_import:.2f}")
        print("POST /api/runs s: ", " ".join(f"{t:.2f}" for t in server_s), f"median {med_server:.2f}")
        print(f"ratio (median POST / median .import): {med_server / med_import:.2f}x")
        print(f"server peak RSS MiB: {max(rss):.0f} (runs: {' '.join(f'{r:.0f}' for r in rss)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
