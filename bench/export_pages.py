"""The runs export read a page at a time (keyset on id, a short session per page) against a reference server
(another checkout, e.g. main's one cursor held for the whole body), on the same database in the same run.

Usage: .venv/bin/python bench/export_pages.py --reference /work/main [--db sqlite,postgresql] [--runs 200000]
           [--requests 5]

Loads --runs runs as bench/million_runs.py does, then for each export URL (all runs; tag fs=xfs, a third;
tag rare=yes, one in 1,000) times the first body bytes and the whole body, requests alternating between the
two servers; the figures are medians. Both servers read the same database, one at a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.million_runs import load
from tests.live_server import free_port
from tests.postgres import postgres_server
from tests.zygote import BONNIEBOARD

EXPORTS = {
    "all runs": "/api/runs/export.csv",
    "tag fs=xfs": "/api/runs/export.csv?tag=fs=xfs",
    "tag rare=yes": "/api/runs/export.csv?tag=rare=yes",
}


@contextmanager
def serve(executable: Path, database_url: str) -> Iterator[str]:
    port = free_port()
    env = os.environ | {"BONNIEBOARD_DATABASE_URL": database_url}
    process = subprocess.Popen(
        [str(executable), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=executable.parent.parent.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{url}/api/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def timed_export(client: httpx.Client, path: str) -> tuple[float, float, int]:
    """Seconds to the first body bytes, seconds to the whole body, and its size."""
    began = time.perf_counter()
    first_s, size = 0.0, 0
    with client.stream("GET", path) as response:
        for chunk in response.iter_raw():
            if not size:
                first_s = time.perf_counter() - began
            size += len(chunk)
    return first_s, time.perf_counter() - began, size


def bench(database: str, database_url: str, reference: Path, runs: int, requests: int) -> None:
    load(database_url, runs)
    servers = {"paged (this tree)": BONNIEBOARD, "reference": reference / ".venv" / "bin" / "bonnieboard"}
    with serve(servers["paged (this tree)"], database_url) as ours, serve(servers["reference"], database_url) as ref:
        clients = {
            name: httpx.Client(base_url=url, timeout=600) for name, url in zip(servers, (ours, ref), strict=True)
        }
        for label, path in EXPORTS.items():
            figures: dict[str, list[tuple[float, float, int]]] = {name: [] for name in servers}
            for _ in range(requests):
                for name, client in clients.items():
                    figures[name].append(timed_export(client, path))
            sizes = {size for runs_ in figures.values() for _, _, size in runs_}
            assert len(sizes) == 1, f"{label}: the servers sent different bodies ({sizes})"
            line = [f"{database} {runs:,} runs, {label} ({sizes.pop() / 2**20:.1f} MiB):"]
            for name, measured in figures.items():
                first = statistics.median(f for f, _, _ in measured) * 1000
                whole = statistics.median(w for _, w, _ in measured) * 1000
                line.append(f"{name} first bytes {first:.1f} ms, whole {whole:.0f} ms;")
            ours_whole = statistics.median(w for _, w, _ in figures["paged (this tree)"])
            ref_whole = statistics.median(w for _, w, _ in figures["reference"])
            line.append(f"whole-body ratio {ours_whole / ref_whole:.2f}")
            print(" ".join(line), flush=True)
        for client in clients.values():
            client.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reference", type=Path, required=True, help="a checkout with its own .venv")
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--runs", type=int, default=200_000)
    parser.add_argument("--requests", type=int, default=5)
    args = parser.parse_args()
    for database in args.db.split(","):
        if database == "sqlite":
            with tempfile.TemporaryDirectory() as folder:
                bench(database, f"sqlite:///{folder}/bench.db", args.reference, args.runs, args.requests)
        else:
            with postgres_server(os.environ.get("BONNIEBOARD_TEST_POSTGRES_URL")) as server:
                url = server.create_database("bonnieboard_export")
                try:
                    bench(database, url, args.reference, args.runs, args.requests)
                finally:
                    server.drop_database("bonnieboard_export")
    return 0


if __name__ == "__main__":
    sys.exit(main())
