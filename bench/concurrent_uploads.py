"""Concurrent uploads: throughput of 1,000-line uploads from several clients at once, and the latency of
GET /api/runs while they run, against a real `bonnieboard serve` on loopback, on SQLite and PostgreSQL.

Usage: .venv/bin/python bench/concurrent_uploads.py [--db sqlite,postgresql] [--clients 8]
           [--uploads-per-client 6] [--lines 1000] [--sqlite-workers 2] [--postgres-workers 4]

Each client posts its own distinct 1,000-line files one after another (every line new, so every upload
writes 1,000 runs); a reader thread meanwhile sends GET /api/runs?limit=50 back to back. Measured: the
wall time from the first upload to the last answer (uploads/s, lines/s), each upload's latency, and each
GET's latency (p50/p99), plus the same GET on the idle server before the uploads. Fresh database per run:
a temporary SQLite file, or a throwaway PostgreSQL cluster (tests/postgres.py; or BONNIEBOARD_TEST_POSTGRES_URL).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.store.migrate import upgrade
from tests.helpers import distinct_lines
from tests.live_server import live_server
from tests.postgres import postgres_server

IDLE_READS = 200


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def measure(base_url: str, clients: int, uploads_per_client: int, lines: int) -> dict:
    bodies = [
        ["\n".join(distinct_lines(f"bench-{client}-{upload}", lines)) + "\n" for upload in range(uploads_per_client)]
        for client in range(clients)
    ]
    with httpx.Client(base_url=base_url, timeout=60) as http:
        idle = []
        for _ in range(IDLE_READS):
            began = time.perf_counter()
            assert http.get("/api/runs", params={"limit": 50}).status_code == 200
            idle.append(time.perf_counter() - began)

    start = threading.Barrier(clients + 2)  # the clients, the reader and this thread
    done = threading.Event()
    upload_latencies: list[float] = []
    read_latencies: list[float] = []

    def client(files: list[str]) -> None:
        with httpx.Client(base_url=base_url, timeout=300) as http:
            start.wait()
            for body in files:
                began = time.perf_counter()
                response = http.post("/api/runs", content=body, headers={"Content-Type": "text/csv"})
                upload_latencies.append(time.perf_counter() - began)
                assert response.status_code == 201 and len(response.json()["created"]) == lines, response.text[:300]

    def reader() -> None:
        with httpx.Client(base_url=base_url, timeout=300) as http:
            start.wait()
            while not done.is_set():
                began = time.perf_counter()
                assert http.get("/api/runs", params={"limit": 50}).status_code == 200
                read_latencies.append(time.perf_counter() - began)

    with ThreadPoolExecutor(clients + 1) as pool:
        read_future = pool.submit(reader)
        futures = [pool.submit(client, files) for files in bodies]
        start.wait()
        began = time.perf_counter()
        for future in futures:
            future.result()
        wall = time.perf_counter() - began
        done.set()
        read_future.result()
    uploads = clients * uploads_per_client
    return {
        "uploads": uploads,
        "wall_s": wall,
        "uploads_per_s": uploads / wall,
        "lines_per_s": uploads * lines / wall,
        "upload_p50_ms": 1000 * statistics.median(upload_latencies),
        "upload_p99_ms": 1000 * percentile(upload_latencies, 0.99),
        "reads": len(read_latencies),
        "read_p50_ms": 1000 * statistics.median(read_latencies),
        "read_p99_ms": 1000 * percentile(read_latencies, 0.99),
        "idle_read_p50_ms": 1000 * statistics.median(idle),
        "idle_read_p99_ms": 1000 * percentile(idle, 0.99),
    }


def run_one(database: str, args: argparse.Namespace) -> dict:
    workers = args.sqlite_workers if database == "sqlite" else args.postgres_workers
    if database == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            url = f"sqlite:///{folder}/bench.db"
            upgrade(url)
            with live_server(url, workers=workers) as server:
                return {
                    "database": database,
                    "workers": workers,
                    **measure(server.url, args.clients, args.uploads_per_client, args.lines),
                }
    with postgres_server(os.environ.get("BONNIEBOARD_TEST_POSTGRES_URL")) as postgres:
        url = postgres.create_database(f"bench_{os.getpid()}")
        upgrade(url)
        try:
            with live_server(url, workers=workers) as server:
                return {
                    "database": database,
                    "workers": workers,
                    **measure(server.url, args.clients, args.uploads_per_client, args.lines),
                }
        finally:
            postgres.drop_database(f"bench_{os.getpid()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--uploads-per-client", type=int, default=6)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--sqlite-workers", type=int, default=2)
    parser.add_argument("--postgres-workers", type=int, default=4)
    args = parser.parse_args()
    print(
        f"{args.clients} clients x {args.uploads_per_client} uploads of {args.lines} distinct lines each; "
        f"GET /api/runs?limit=50 back to back meanwhile; {os.cpu_count()} CPUs",
        flush=True,
    )
    print(
        "| database | workers | clients | uploads | uploads/s | lines/s | upload p50 / p99 ms "
        "| GET /api/runs p50 / p99 ms during uploads (n) | idle GET p50 / p99 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for database in args.db.split(","):
        r = run_one(database, args)
        print(
            f"| {database} | {r['workers']} | {args.clients} | {r['uploads']} | {r['uploads_per_s']:.1f} | {r['lines_per_s']:,.0f} "
            f"| {r['upload_p50_ms']:.0f} / {r['upload_p99_ms']:.0f} | {r['read_p50_ms']:.0f} / {r['read_p99_ms']:.0f} ({r['reads']}) "
            f"| {r['idle_read_p50_ms']:.1f} / {r['idle_read_p99_ms']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
