"""History at scale: one machine of 1,000 runs × 12 tests, alone in its database and among a million runs.

For each database: the runs are loaded as bench/million_runs.py loads them (the corpus's real lines copied, machine
host0..host{M-1}, tags fs=ext4|xfs|btrfs); then host0's 1,000 runs are made one machine's nightly series: each the
figures of one real 1.98 line of the corpus with 3 % log-normal noise on every rate and latency (seed 1), in one
upload with time= (ties keep id order), and one tag fs=ext4. `bonnieboard detect --machine host0` finds its changes (timed: what an upload's
background detection costs), then a fresh server answers:
- the first GET /history?machine=host0 of the process (cold: nothing cached in it), its size;
- --firsts times: another machine's upload, a second's wait (its detection runs after its answer), then the first
  GET /history?machine=host0 after it (the median, and the range); taking turns with the same page after a second
  of nothing (no write): what the wait alone costs, the threads of an idle server woken on a shared machine;
- then --requests rounds of /api/health, /history and /api/history on one keep-alive connection, taking turns;
medians and the ratio to /api/health measured in the same rounds.

Usage: .venv/bin/python bench/history_scale.py [--db sqlite,postgresql] [--total 1000,1000000] [--requests 20]
           [--firsts 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bench.million_runs as million  # noqa: E402
from app.columns import RESULT_COLUMNS  # noqa: E402
from bench.million_runs import COPIED  # noqa: E402
from tests.live_server import live_server  # noqa: E402
from tests.postgres import postgres_server  # noqa: E402
from tests.zygote import BONNIEBOARD  # noqa: E402

MACHINE = "host0"
RUNS_PER_MACHINE = 1000


def one_machine_series(url: str) -> None:
    """host0's runs as described in the module's docstring."""
    engine = create_engine(url)
    rng = random.Random(1)
    with engine.begin() as connection:
        seed = (
            connection.execute(
                text("SELECT * FROM run WHERE format_version = '1.98' AND put_block_status = 'ok' ORDER BY id LIMIT 1")
            )
            .one()
            ._mapping
        )
        ids = list(connection.scalars(text("SELECT id FROM run WHERE machine = :m ORDER BY id"), {"m": MACHINE}))
        upload = connection.scalar(text("SELECT upload_id FROM run WHERE id = :id"), {"id": ids[0]})
        start = datetime(2024, 1, 1, 2, tzinfo=UTC)
        connection.execute(
            text("DELETE FROM tag WHERE run_id IN (SELECT id FROM run WHERE machine = :m)"), {"m": MACHINE}
        )
        for run_id in ids:
            values = {column: seed[column] for column in COPIED if column in seed}
            for column in RESULT_COLUMNS:
                if column.endswith(("_value", "_latency_us")) and values[column] is not None:
                    noisy = values[column] * rng.lognormvariate(0, 0.03)
                    values[column] = noisy if column == "seeks_value" else round(noisy)
            values["upload_id"], values["id"] = upload, run_id
            assignments = ", ".join(f"{column} = :{column}" for column in values if column != "id")
            connection.execute(text(f"UPDATE run SET {assignments} WHERE id = :id"), values)
            connection.execute(text("INSERT INTO tag (run_id, key, value) VALUES (:id, 'fs', 'ext4')"), {"id": run_id})
        connection.execute(text("UPDATE upload SET run_time = :t WHERE id = :id"), {"t": start, "id": upload})
    engine.dispose()


def million_line(seed: int = 1795352513) -> str:
    """A line of a machine of its own; each seed a line of its own (an upload of a stored line stores nothing)."""
    return f"1.98,2.00a,elsewhere,1,{seed},512M,,8192,5,869,96,420469,81,+++++,+++,1443,98,+++++,+++,+++++,+++,16,,,,,16795,94,+++++,+++,+++++,+++,23036,95,+++++,+++,+++++,+++,18213us,4307us,1098us,10287us,117us,7618us,10730us,5072us,2346us,12162us,214us,6909us\n"


def bench(database: str, url: str, total: int, requests: int, firsts: int) -> None:
    # host0 gets every 1,000th run: 1,000 of them whatever the total.
    million.MACHINES = max(1, total // RUNS_PER_MACHINE)
    started = time.perf_counter()
    million.load(url, total)
    one_machine_series(url)
    loaded_s = time.perf_counter() - started
    env = os.environ | {"BONNIEBOARD_DATABASE_URL": url}
    started = time.perf_counter()
    subprocess.run([BONNIEBOARD, "detect", "--machine", MACHINE], env=env, check=True, capture_output=True)
    detect_s = time.perf_counter() - started
    print(f"## {database}, {total:,} runs ({loaded_s:.0f} s to load); detect --machine {MACHINE}: {detect_s:.2f} s")
    with live_server(url) as server, httpx.Client(base_url=server.url, timeout=600) as client:
        assert client.get("/api/health").status_code == 200
        t0 = time.perf_counter()
        cold = client.get("/history", params={"machine": MACHINE})
        cold_ms = (time.perf_counter() - t0) * 1000
        assert cold.status_code == 200, cold.text[:300]
        # The same page after another machine's upload: the process warm, its answers cached for a write ago.
        first_ms, idle_ms = [], []
        for seed in range(firsts):
            time.sleep(1)
            t0 = time.perf_counter()
            assert client.get("/history", params={"machine": MACHINE}).status_code == 200
            idle_ms.append((time.perf_counter() - t0) * 1000)
            line = million_line(1795352513 + seed)
            upload = client.post("/api/runs?tag=fs=ext4", content=line, headers={"Content-Type": "text/csv"})
            assert upload.status_code == 201, upload.text
            time.sleep(1)  # its detection runs after its answer: let it end, as a reader a second later finds it
            t0 = time.perf_counter()
            first = client.get("/history", params={"machine": MACHINE})
            first_ms.append((time.perf_counter() - t0) * 1000)
        paths = {
            "GET /api/health": ("/api/health", {}),
            "GET /history": ("/history", {"machine": MACHINE}),
            "GET /api/history": ("/api/history", {"machine": MACHINE}),
        }
        timings: dict[str, list[float]] = {name: [] for name in paths}
        sizes = {}
        for _ in range(requests):
            for name, (path, params) in paths.items():
                t0 = time.perf_counter()
                answer = client.get(path, params=params)
                timings[name].append((time.perf_counter() - t0) * 1000)
                sizes[name] = len(answer.content)
    health = statistics.median(timings["GET /api/health"])
    print(
        f"first /history of the process (templates compiled, connections opened): {cold_ms:.1f} ms = {cold_ms / health:.1f}x /api/health"
    )
    median_first = statistics.median(first_ms)
    print(
        f"first /history after a write (another machine's upload), median of {firsts}: {median_first:.1f} ms = "
        f"{median_first / health:.1f}x /api/health ({min(first_ms):.1f}-{max(first_ms):.1f} ms); "
        f"{len(first.content) / 1024:.0f} KiB"
    )
    median_idle = statistics.median(idle_ms)
    print(
        f"first /history after an idle second (no write), median of {firsts}: {median_idle:.1f} ms = "
        f"{median_idle / health:.1f}x /api/health ({min(idle_ms):.1f}-{max(idle_ms):.1f} ms)"
    )
    print("| URL | median ms (warm) | ratio to /api/health | KiB |\n|---|---|---|---|")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {median / health:.1f}x | {sizes[name] / 1024:.0f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--total", default="1000,1000000", help="runs in the database, comma-separated")
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--firsts", type=int, default=5, help="uploads of another machine, each followed by a page")
    args = parser.parse_args()
    for total in (int(value) for value in args.total.split(",")):
        for database in args.db.split(","):
            if database == "sqlite":
                with tempfile.TemporaryDirectory(prefix="bonnieboard-history-") as directory:
                    bench(database, f"sqlite:///{directory}/runs.db", total, args.requests, args.firsts)
            else:
                with postgres_server(os.environ.get("BONNIEBOARD_TEST_POSTGRES_URL")) as server:
                    url = server.create_database("bonnieboard_history")
                    try:
                        bench(database, url, total, args.requests, args.firsts)
                    finally:
                        server.drop_database("bonnieboard_history")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
