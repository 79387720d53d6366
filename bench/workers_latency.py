"""Latency with several workers (docs/decisions.md, "TCP_NODELAY on every connection": without it, a ~44 ms
stall per request when Nagle's algorithm meets delayed ACKs): GET /api/health and GET /api/runs?limit=50 on one
keep-alive connection, idle and while 4 other clients send GET /api/runs back to back, for
`bonnieboard serve --workers 1` and `--workers 2`.

Usage: .venv/bin/python bench/workers_latency.py [--requests 200] [--runs 1000]

SQLite in a temporary file, loaded with the corpus (tests/data/corpus/) and then copies of its runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.million_runs import load
from tests.live_server import live_server

LOAD_CLIENTS = 4


def timed(client: httpx.Client, path: str, requests: int) -> list[float]:
    values = []
    for _ in range(requests):
        started = time.perf_counter()
        assert client.get(path).status_code == 200
        values.append((time.perf_counter() - started) * 1000)
    return values


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--runs", type=int, default=1000)
    args = parser.parse_args()
    print("| workers | load | URL | median ms | p99 ms |\n|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="bonnieboard-workers-") as directory:
        url = f"sqlite:///{directory}/runs.db"
        load(url, args.runs)
        for workers in (1, 2):
            with live_server(url, workers=workers) as server:
                for loaded in (False, True):
                    stop = threading.Event()

                    def hammer(stop: threading.Event = stop) -> None:
                        with httpx.Client(base_url=server.url) as client:
                            while not stop.is_set():
                                client.get("/api/runs")

                    threads = [threading.Thread(target=hammer) for _ in range(LOAD_CLIENTS if loaded else 0)]
                    for thread in threads:
                        thread.start()
                    with httpx.Client(base_url=server.url) as client:
                        for path in ("/api/health", "/api/runs?limit=50"):
                            timed(client, path, 10)  # warm up
                            values = timed(client, path, args.requests)
                            load_text = f"{LOAD_CLIENTS} clients" if loaded else "idle"
                            print(
                                f"| {workers} | {load_text} | {path} | {statistics.median(values):.2f} | {percentile(values, 0.99):.2f} |",
                                flush=True,
                            )
                    stop.set()
                    for thread in threads:
                        thread.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
