"""A million runs: read latency of the runs list, its filters, deep pages, a run page, a 50-run compare, the
CSV export (first byte, whole body, server RSS) and startup, against /api/health, on SQLite and PostgreSQL.

Usage: .venv/bin/python bench/million_runs.py [--db sqlite,postgresql] [--runs 1000000] [--requests 30]
           [--workers 1] [--exports 2] [--export-only] [--export-reference] [--no-cache]

--no-cache serves with BONNIEBOARD_COMPARE_CACHE_MIB=0: nothing is kept (comparisons, the matrix, the runs list),
so every request makes its answer, as the first reader after a write does.

--export-reference also serves the database from a server whose export sends its first batch as large as the
others (bench/export_full_first_batch.py, the reference of docs/decisions.md, "A small first export batch"); the
two servers' exports take turns and the medians of --exports each are printed. --export-only skips the table of
URLs.

Loading: the real lines of tests/data/corpus/ are ingested with `bonnieboard ingest`, then copied by one
INSERT ... SELECT per database until --runs rows exist, each copy with its own line hash, machine
(host0..host999) and upload; tags: fs=ext4|xfs|btrfs on every run, rare=yes on one run in 1,000.
Each URL gets --requests sequential requests on one keep-alive connection, the URLs taking turns; the
figure is the median. Fresh database per run: a temporary SQLite file, or a throwaway PostgreSQL cluster
(tests/postgres.py; or BONNIEBOARD_TEST_POSTGRES_URL).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.columns import RESULT_COLUMNS
from app.store.migrate import upgrade
from tests.live_server import LiveServer, live_server
from tests.postgres import postgres_server
from tests.zygote import BONNIEBOARD

CORPUS = sorted((ROOT / "tests" / "data" / "corpus").glob("*.csv"))
COPIED = [
    "created_at",
    "raw_line",
    "format_version",
    "bonnie_version",
    "concurrency",
    "seed",
    "file_size_mib",
    "io_chunk_bytes",
    "seek_count",
    "seek_procs",
    "num_files",
    "file_max_size",
    "file_min_size",
    "file_num_dirs",
    "file_link",
    "label",
] + list(RESULT_COLUMNS)
MACHINES = 1000
UPLOADS = 100


def load(database_url: str, runs: int) -> None:
    """Fill an empty database with `runs` runs (see the module's docstring)."""
    upgrade(database_url)
    env = os.environ | {"BONNIEBOARD_DATABASE_URL": database_url}
    subprocess.run(
        [BONNIEBOARD, "ingest", "--partial", *map(str, CORPUS)],
        env=env,
        check=True,
        capture_output=True,
    )
    engine = create_engine(database_url)
    columns = ", ".join(COPIED)
    seed_columns = ", ".join(f"s.{c}" for c in COPIED)
    postgres = engine.dialect.name == "postgresql"
    with engine.begin() as connection:
        seeds = connection.scalar(text("SELECT count(*) FROM run"))
        connection.execute(text("DELETE FROM tag"))
        first_upload = connection.scalar(text("SELECT min(id) FROM upload"))
        connection.execute(
            text(
                "INSERT INTO upload (created_at, source, filename, label) SELECT created_at, source, filename, label "
                f"FROM upload, {'generate_series(1, :n)' if postgres else '(WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < :n) SELECT i FROM g)'} AS x "
                "WHERE upload.id = :first"
            ),
            {"n": UPLOADS, "first": first_upload},
        )
        series = (
            "generate_series(0, :n - 1) AS g(i)"
            if postgres
            else "(WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < :n - 1) SELECT i FROM c) AS g"
        )
        line_hash = "decode(md5(g.i::text || 'bench'), 'hex')" if postgres else "randomblob(16)"
        connection.execute(
            text(
                f"INSERT INTO run (upload_id, line_hash, machine, {columns}) "
                f"SELECT :first + 1 + g.i % {UPLOADS}, {line_hash}, 'host' || (g.i % {MACHINES}), {seed_columns} "
                f"FROM {series} JOIN (SELECT row_number() OVER (ORDER BY id) - 1 AS k, * FROM run) AS s "
                f"ON s.k = g.i % :seeds"
            ),
            {"n": runs - seeds, "first": first_upload, "seeds": seeds},
        )
        mod = "%"
        connection.execute(
            text(
                "INSERT INTO tag (run_id, key, value) SELECT id, 'fs', CASE id % 3 WHEN 0 THEN 'ext4' WHEN 1 THEN 'xfs' "
                f"ELSE 'btrfs' END FROM run; INSERT INTO tag (run_id, key, value) SELECT id, 'rare', 'yes' FROM run WHERE id {mod} 1000 = 0"
            )
            if postgres
            else text(
                "INSERT INTO tag (run_id, key, value) SELECT id, 'fs', CASE id % 3 WHEN 0 THEN 'ext4' WHEN 1 THEN 'xfs' "
                "ELSE 'btrfs' END FROM run"
            )
        )
        if not postgres:
            connection.execute(
                text("INSERT INTO tag (run_id, key, value) SELECT id, 'rare', 'yes' FROM run WHERE id % 1000 = 0")
            )
    with engine.connect() as connection:
        connection.execution_options(isolation_level="AUTOCOMMIT").execute(
            text("VACUUM ANALYZE" if postgres else "ANALYZE")
        )
    engine.dispose()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def worker_pids(pid: int) -> list[int]:
    """The server process and its children (uvicorn's workers)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid, *map(int, children)]


def measure_export(url: str, pid: int) -> dict[str, float]:
    """First byte and total time of /api/runs/export.csv, and the server's peak RSS above idle meanwhile.

    The client is made before the clock starts: httpx.Client() builds a TLS context (the CA bundle) even for
    http://, 40-85 ms here, which the figures up to 2026-11-23 counted as the server's."""
    with httpx.Client(timeout=600) as client:
        return _measure_export(client, url, pid)


def _measure_export(client: httpx.Client, url: str, pid: int) -> dict[str, float]:
    idle_kib = sum(rss_kib(p) for p in worker_pids(pid))
    peak = [idle_kib]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], sum(rss_kib(p) for p in worker_pids(pid)))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    started = time.perf_counter()
    first_byte = None
    size = 0
    with client.stream("GET", f"{url}/api/runs/export.csv") as response:
        headers = time.perf_counter() - started
        for chunk in response.iter_raw():
            if first_byte is None:
                first_byte = time.perf_counter() - started
            size += len(chunk)
    total = time.perf_counter() - started
    done.set()
    sampler.join()
    return {
        "headers_ms": headers * 1000,
        "first_byte_ms": (first_byte or 0) * 1000,
        "total_s": total,
        "bytes": size,
        "rss_over_idle_mib": (peak[0] - idle_kib) / 1024,
    }


def urls(client: httpx.Client) -> dict[str, str]:
    newest = client.get("/api/runs?limit=1").json()["items"][0]["id"]
    step = max(1, newest // 50)
    fifty = ",".join(str(newest - i * step) for i in range(50))
    return {
        "GET /api/health": "/api/health",
        "GET / (front page)": "/",
        "GET /api/runs": "/api/runs",
        "GET /?tag=fs=xfs": "/?tag=fs%3Dxfs",
        "GET /api/runs?tag=rare=yes": "/api/runs?tag=rare%3Dyes",
        "GET /?tag=rare=yes": "/?tag=rare%3Dyes",
        "GET /?machine=host7": "/?machine=host7",
        "GET /?format=1.98": "/?format=1.98",
        "GET /api/runs?offset=500000": "/api/runs?offset=500000",
        "GET /api/runs?offset=999000": "/api/runs?offset=999000",
        "GET /?page=10000": "/?page=10000",
        "GET /?sort=oldest&page=10000": "/?sort=oldest&page=10000",
        f"GET /?sort=oldest&after={newest * 9 // 10} (keyset)": f"/?sort=oldest&after={newest * 9 // 10}",
        "GET /?tag=fs=xfs&page=5000": "/?tag=fs%3Dxfs&page=5000",
        "GET /?format=1.98&page=5000": "/?format=1.98&page=5000",
        "GET /?sort=name": "/?sort=name",
        "GET /?sort=name&page=2": "/?sort=name&page=2",
        "GET /?sort=name&page=10000": "/?sort=name&page=10000",
        "GET /?sort=name&at_machine=host5&skip=500 (cursor)": "/?sort=name&at_machine=host5&skip=500",
        "GET /?sort=name&tag=fs=ext4": "/?sort=name&tag=fs%3Dext4",
        "GET /?sort=name&tag=fs=ext4&page=2": "/?sort=name&tag=fs%3Dext4&page=2",
        "GET /?sort=name&tag=rare=yes": "/?sort=name&tag=rare%3Dyes",
        f"GET /api/runs?before={newest * 1 // 10}": f"/api/runs?before={newest * 1 // 10}",
        f"GET /?before={newest * 1 // 10}": f"/?before={newest * 1 // 10}",
        f"GET /runs/{newest - 12345}": f"/runs/{newest - 12345}",
        "GET /api/compare (50 runs)": f"/api/compare?runs={fifty}",
        "GET /compare (50 runs)": f"/compare?runs={fifty}",
        "GET /matrix (fs x rare, newest 100)": "/matrix?rows=fs&cols=rare",
        "GET /api/matrix (fs x rare, newest 100)": "/api/matrix?rows=fs&cols=rare",
        "GET /upload": "/upload",
        "GET /docs": "/docs",
    }


def print_export(name: str, exports: list[dict[str, float]]) -> None:
    for export in exports:
        print(
            f"{name}: headers {export['headers_ms']:.1f} ms, first body bytes {export['first_byte_ms']:.1f} ms, whole {export['total_s']:.2f} s, "
            f"{export['bytes'] / 1e6:.0f} MB, server RSS +{export['rss_over_idle_mib']:.0f} MiB over idle",
            flush=True,
        )
    if len(exports) > 2:
        first_bytes = [export["first_byte_ms"] for export in exports]
        print(
            f"{name}: median of {len(exports)}: first body bytes {statistics.median(first_bytes):.1f} ms "
            f"(min {min(first_bytes):.1f}, max {max(first_bytes):.1f}), whole "
            f"{statistics.median(export['total_s'] for export in exports):.2f} s, server RSS "
            f"+{statistics.median(export['rss_over_idle_mib'] for export in exports):.0f} MiB",
            flush=True,
        )


def compare_exports(database_url: str, server: LiveServer, rounds: int) -> None:
    """This server's exports and a reference server's (first batch EXPORT_BATCH lines), taking turns."""
    with live_server(database_url, preload="bench.export_full_first_batch") as reference:
        measure_export(reference.url, reference.process.pid)  # warm up both
        measure_export(server.url, server.process.pid)
        ours, theirs = [], []
        for _ in range(rounds):
            theirs.append(measure_export(reference.url, reference.process.pid))
            ours.append(measure_export(server.url, server.process.pid))
    print_export("export.csv, reference (first batch 2,000 lines)", theirs)
    print_export("export.csv, now (first batch 100 lines)", ours)
    ratio = statistics.median(e["first_byte_ms"] for e in ours) / statistics.median(e["first_byte_ms"] for e in theirs)
    print(f"first body bytes, now / reference (medians): {ratio:.2f}", flush=True)
    with httpx.Client(base_url=server.url) as client:
        client.get("/api/health")
        health = []
        for _ in range(30):
            t0 = time.perf_counter()
            client.get("/api/health")
            health.append((time.perf_counter() - t0) * 1000)
    print(f"GET /api/health on a kept-alive connection, median of 30: {statistics.median(health):.2f} ms", flush=True)


def bench(
    database: str,
    database_url: str,
    runs: int,
    requests: int,
    workers: int,
    exports: int = 2,
    export_only: bool = False,
    export_reference: bool = False,
    no_cache: bool = False,
) -> None:
    started = time.perf_counter()
    load(database_url, runs)
    print(
        f"## {database}: {runs:,} runs loaded in {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    started = time.perf_counter()
    env = {"BONNIEBOARD_COMPARE_CACHE_MIB": "0"} if no_cache else None
    with live_server(database_url, workers=workers, env=env) as server:
        if export_only or export_reference:
            if export_reference:
                compare_exports(database_url, server, exports)
            else:
                print_export("export.csv", [measure_export(server.url, server.process.pid) for _ in range(exports)])
            return
        print(
            f"startup (process start to /api/health answering): {time.perf_counter() - started:.2f} s",
            flush=True,
        )
        with httpx.Client(base_url=server.url, timeout=600) as client:
            targets = urls(client)
            timings: dict[str, list[float]] = {name: [] for name in targets}
            statuses: dict[str, int] = {}
            for name, path in targets.items():  # warm up
                statuses[name] = client.get(path).status_code
            for _ in range(requests):
                for name, path in targets.items():
                    t0 = time.perf_counter()
                    client.get(path)
                    timings[name].append((time.perf_counter() - t0) * 1000)
        health = statistics.median(timings["GET /api/health"])
        print("| URL | status | median ms | ratio to /api/health |\n|---|---|---|---|")
        for name, values in timings.items():
            median = statistics.median(values)
            print(f"| {name} | {statuses[name]} | {median:.2f} | {median / health:.1f}x |")
        print_export("export.csv", [measure_export(server.url, server.process.pid) for _ in range(exports)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--exports", type=int, default=2, help="exports measured (per server)")
    parser.add_argument("--export-only", action="store_true", help="measure only the export")
    parser.add_argument("--export-reference", action="store_true", help="and a first-batch-2,000 reference server")
    parser.add_argument("--no-cache", action="store_true", help="serve with BONNIEBOARD_COMPARE_CACHE_MIB=0")
    args = parser.parse_args()
    options = {
        "exports": args.exports,
        "export_only": args.export_only,
        "export_reference": args.export_reference,
        "no_cache": args.no_cache,
    }
    for database in args.db.split(","):
        if database == "sqlite":
            with tempfile.TemporaryDirectory(prefix="bonnieboard-million-") as directory:
                bench(database, f"sqlite:///{directory}/runs.db", args.runs, args.requests, args.workers, **options)
        else:
            with postgres_server(os.environ.get("BONNIEBOARD_TEST_POSTGRES_URL")) as server:
                url = server.create_database("bonnieboard_million")
                try:
                    bench(database, url, args.runs, args.requests, args.workers, **options)
                finally:
                    server.drop_database("bonnieboard_million")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
