"""Reads after a write: the first GET /api/compare and /compare page of 50 runs, and /matrix and /api/matrix of
100 configurations, each right after an upload changed the data, against GET /api/health of the same server in the
same run; and the same URLs warm (read again, nothing written since). SQLite and PostgreSQL.

Usage: .venv/bin/python bench/cold_reads.py [--db sqlite,postgresql] [--runs 10000] [--rounds 15] [--pause-ms 0,500]
           [--write upload,label]

Loading: --runs real bonnie++ lines (every line of tests/data/corpus/, cycled, each with its own machine name) with
`bonnieboard ingest`, in four uploads tagged fs=ext4|xfs and raid=5|6; then 100 runs spread over the table are tagged
row=0..9 and col=0..9 (one PATCH each): the matrix's 100 configurations. Then a `bonnieboard serve` (one worker)
on a temporary SQLite file, or on a throwaway PostgreSQL cluster (tests/postgres.py; or
BONNIEBOARD_TEST_POSTGRES_URL).

Each round, per URL: one URL's view is read twice (it is the view last served), one write is made (`upload`: a new
run, POST /api/runs of one line with a machine name never seen; `label`: PATCH /api/runs/ID of the first run the URL
compares with a new label, so that the view itself changed), the client waits --pause-ms (0: at once, as a script
would; 500: as a person who clicks after the upload answered), then the URL is timed, and again (warm). GET
/api/health is timed five times before the upload, the server idle (the reference of the ratios), and five
times after the warm read ("just after": while the background re-warm may still be making the other views),
then the client waits 1 s. Every request on one kept-alive connection with `Accept-Encoding: gzip`, as browsers send. Reported: the
median over rounds of the URL's time, of health's, and their ratio. The warm rows time the same URLs read
again after the cold one (a cache hit). Each --write and --pause-ms value is a pass of its own.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus_runs import corpus_lines, load_runs, with_machine
from tests.live_server import live_server
from tests.postgres import postgres_server

HEALTH_SAMPLES = 5


def timed_ms(client: httpx.Client, path: str) -> float:
    started = time.perf_counter()
    answer = client.get(path)
    elapsed = (time.perf_counter() - started) * 1000
    assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
    return elapsed


def views(client: httpx.Client, runs: int) -> dict[str, str]:
    """The URLs timed: 50 runs spread over the table (not in id order), and the matrix of the 100 tagged runs."""
    step = runs // 50
    fifty = ",".join(str(1 + ((i * 7919) % 50) * step) for i in range(50))
    query = f"runs={fifty}&baseline={fifty.split(',')[0]}&mode=relative"
    tagged = tag_matrix(client, runs)
    matrix = f"rows=row&cols=col&test=put_block&runs={tagged}"
    return {
        "GET /api/compare (50 runs)": f"/api/compare?{query}",
        "GET /compare page (50 runs)": f"/compare?{query}",
        "GET /api/matrix (100 configurations)": f"/api/matrix?{matrix}",
        "GET /matrix page (100 configurations)": f"/matrix?{matrix}",
    }


def tag_matrix(client: httpx.Client, runs: int) -> str:
    """Tag 100 runs spread over the table row=0..9, col=0..9; their ids."""
    step = runs // 100
    ids = [1 + i * step + step // 2 for i in range(100)]
    for i, run_id in enumerate(ids):
        tags = client.get(f"/api/runs/{run_id}").json()["tags"] | {"row": str(i // 10), "col": str(i % 10)}
        client.patch(f"/api/runs/{run_id}", json={"tags": tags}).raise_for_status()
    return ",".join(map(str, ids))


def write(client: httpx.Client, kind: str, path: str, count: int) -> None:
    """The write of a round: a new run uploaded (`upload`), or a new label on the first run `path` compares
    (`label`: a stored run changed, so the view must be made again)."""
    if kind == "upload":
        line = with_machine(corpus_lines()[0], f"fresh{os.getpid()}-{count}-{time.time_ns()}")
        answer = client.post("/api/runs", content=line + "\n", headers={"Content-Type": "text/csv"})
        assert answer.status_code == 201, answer.text
        return
    run_id = parse_qs(urlsplit(path).query)["runs"][0].split(",")[0]
    client.patch(f"/api/runs/{run_id}", json={"label": f"label {count}"}).raise_for_status()


def measure(
    server_url: str, runs: int, rounds: int, pause_ms: int, kind: str = "upload"
) -> dict[str, dict[str, list[float]]]:
    figures: dict[str, dict[str, list[float]]] = {}
    written = 0
    with httpx.Client(base_url=server_url, timeout=120, headers={"Accept-Encoding": "gzip"}) as client:
        targets = views(client, runs)
        for name in targets:
            figures[name] = {"cold": [], "warm": [], "health": [], "health_after": []}
        for _ in range(rounds):
            for name, path in targets.items():
                timed_ms(client, path)
                timed_ms(client, path)  # the view last served, and cached
                health = [timed_ms(client, "/api/health") for _ in range(HEALTH_SAMPLES)]
                figures[name]["health"].append(statistics.median(health))
                written += 1
                write(client, kind, path, written)
                if pause_ms:
                    time.sleep(pause_ms / 1000)
                figures[name]["cold"].append(timed_ms(client, path))
                figures[name]["warm"].append(timed_ms(client, path))
                # While the other views are being made again (the background re-warm): its cost to other reads.
                after = [timed_ms(client, "/api/health") for _ in range(HEALTH_SAMPLES)]
                figures[name]["health_after"].append(statistics.median(after))
                time.sleep(1)  # the next round starts with the server idle
    return figures


def report(
    database: str, runs: int, rounds: int, pause_ms: int, kind: str, figures: dict[str, dict[str, list[float]]]
) -> None:
    what = {"upload": "an upload", "label": "a label changed"}[kind]
    print(f"\n### {database}, {runs:,} runs, {rounds} rounds, pause {pause_ms} ms after {what}\n", flush=True)
    print(f"| URL | after {what}, ms | × health | warm, ms | × health | health, ms | health just after, ms |")
    print("|---|---|---|---|---|---|---|")
    for name, values in figures.items():
        health, after = statistics.median(values["health"]), statistics.median(values["health_after"])
        cold, warm = statistics.median(values["cold"]), statistics.median(values["warm"])
        print(
            f"| {name} | {cold:.2f} | {cold / health:.1f}× | {warm:.2f} | {warm / health:.1f}× | {health:.2f} | {after:.2f} |",
            flush=True,
        )


def bench(database: str, database_url: str, runs: int, rounds: int, pauses: list[int], kinds: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="bonnieboard-cold-") as directory:
        started = time.perf_counter()
        load_runs(Path(directory), runs, database_url)
        print(f"## {database}: {runs:,} runs loaded in {time.perf_counter() - started:.0f} s", flush=True)
        with live_server(database_url) as server:
            for kind in kinds:
                for pause_ms in pauses:
                    figures = measure(server.url, runs, rounds, pause_ms, kind)
                    report(database, runs, rounds, pause_ms, kind, figures)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="sqlite,postgresql")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--pause-ms", default="0,500", help="waits after each upload, comma-separated")
    parser.add_argument("--write", default="upload,label", help="the writes, comma-separated: upload, label")
    args = parser.parse_args()
    pauses = [int(p) for p in args.pause_ms.split(",")]
    kinds = args.write.split(",")
    for database in args.db.split(","):
        if database == "sqlite":
            with tempfile.TemporaryDirectory(prefix="bonnieboard-cold-db-") as directory:
                bench(database, f"sqlite:///{directory}/runs.db", args.runs, args.rounds, pauses, kinds)
        else:
            with postgres_server(os.environ.get("BONNIEBOARD_TEST_POSTGRES_URL")) as server:
                url = server.create_database("bonnieboard_cold")
                try:
                    bench(database, url, args.runs, args.rounds, pauses, kinds)
                finally:
                    server.drop_database("bonnieboard_cold")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
