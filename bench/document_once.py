"""What a runner document costs a real `bonnieboard serve` (one worker): issue #36's F2 and F3.

F2: one JSON upload of --lines distinct format-1.98 lines with one document of about --document-bytes (a long
string, as the issue's 1 MB of random text). Reported: the POST's wall time and how much the database grew (SQLite:
its file and WAL; PostgreSQL: pg_database_size).

F3: --runs runs, each uploaded alone with a document of its own of about 125 KB that holds 20,000 values in its
`runs` list (the run's own entry, with a limiter, last); and as many runs without a document. GET /api/compare of
each set is timed --rounds times, the two taking turns; each request names another baseline among the runs, so
each is a miss of the comparison cache (the compare is made, not served from memory). Reported: the median and the
fastest of each, and the server's peak RSS (VmHWM) at the end.

The code measured is the server's: run it with PYTHONPATH pointing at another tree (`git archive` of main, built with
`setup.py build_ext --inplace`) to measure that tree's server with the same script.

Usage: .venv/bin/python bench/document_once.py [--database sqlite|postgresql] [--lines 1000] [--runs 100] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers import distinct_lines  # noqa: E402
from tests.live_server import live_server  # noqa: E402
from tests.postgres import postgres_server  # noqa: E402

REQUEST_TIMEOUT_S = 600


def database_bytes(url: str) -> int:
    if url.startswith("sqlite"):
        path = Path(url.removeprefix("sqlite:///"))
        return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    engine = create_engine(url, poolclass=NullPool)
    with engine.connect() as connection:
        size = connection.scalar(text("SELECT pg_database_size(current_database())"))
    engine.dispose()
    return int(size)


def post(client: httpx.Client, lines: list[str], document: dict[str, Any] | None) -> list[int]:
    body: dict[str, Any] = {"csv": "\n".join(lines) + "\n"}
    if document is not None:
        body["document"] = document
    response = client.post("/api/runs", json=body)
    if response.status_code != 201:
        raise RuntimeError(f"upload refused: {response.status_code} {response.text[:300]}")
    return response.json()["created"]


def large_document(lines: list[str], size_bytes: int) -> dict[str, Any]:
    document: dict[str, Any] = {
        "schema": "bonnieboard-runner/1",
        "system": {"ram_bytes": 8 * 2**30, "hostname": "bench"},
        "runs": [{"csv": lines[0], "tests": {"put_block": {"limiter": {"code": "disk", "text": "the disk"}}}}],
    }
    document["pad"] = os.urandom(size_bytes // 2).hex()[: max(0, size_bytes - 300)]
    return document


def compare_document(line: str) -> dict[str, Any]:
    """About 125 KB of JSON with 20,000 values in `runs`, the run's own entry last."""
    entries: list[Any] = [1000 + i % 9000 for i in range(19_980)]
    entries.append({"csv": line, "tests": {"putc": {"limiter": {"code": "cpu", "text": "the CPU"}}}})
    return {"schema": "bonnieboard-runner/1", "system": {"ram_bytes": 8 * 2**30}, "runs": entries}


def vmhwm_kib(pid: int) -> int:
    """The serving process's peak RSS: the worker, the only child of `bonnieboard serve` with one worker, else
    the process itself."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    child = children.read_text().split() if children.exists() else []
    target = int(child[0]) if child else pid
    for line in Path(f"/proc/{target}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def f2(url: str, lines_count: int, document_bytes: int) -> None:
    lines = distinct_lines("f2", lines_count)
    document = large_document(lines, document_bytes)
    with live_server(url) as server, httpx.Client(base_url=server.url, timeout=REQUEST_TIMEOUT_S) as client:
        before = database_bytes(url)
        started = time.perf_counter()
        created = post(client, lines, document)
        took_s = time.perf_counter() - started
        grown = database_bytes(url) - before
    body_bytes = len(httpx.Request("POST", "http://x", json={"csv": "\n".join(lines), "document": document}).content)
    print(
        f"F2: {len(created)} runs, JSON body {body_bytes / 1e6:.2f} MB: POST {took_s:.2f} s, "
        f"database grew {grown / 1e6:.1f} MB"
    )


def f3(url: str, runs: int, rounds: int) -> None:
    with live_server(url) as server, httpx.Client(base_url=server.url, timeout=REQUEST_TIMEOUT_S) as client:
        # One machine each side, so that both sets are one configuration of `runs` runs.
        documented = [post(client, [line], compare_document(line))[0] for line in distinct_lines("f3doc", runs)]
        plain = post(client, distinct_lines("f3plain", runs), None)
        times: dict[str, list[float]] = {"with documents": [], "without": []}
        for round_ in range(rounds):
            for name, ids in (("with documents", documented), ("without", plain)):
                params = {"runs": ",".join(map(str, ids)), "baseline": str(ids[round_ % len(ids)])}
                started = time.perf_counter()
                response = client.get("/api/compare", params=params)
                times[name].append(time.perf_counter() - started)
                response.raise_for_status()
        peak_mib = vmhwm_kib(server.process.pid) / 1024
    size = len(httpx.Request("POST", "http://x", json=compare_document(distinct_lines("f3doc", 1)[0])).content)
    with_docs, without = (statistics.median(times[name]) for name in times)
    print(f"F3: {runs} runs, documents of {size / 1e3:.0f} KB (20,000 values), {rounds} rounds, cache misses:")
    for name, measured in times.items():
        print(f"    {name}: median {statistics.median(measured) * 1000:.0f} ms, fastest {min(measured) * 1000:.0f} ms")
    print(f"    ratio of medians {with_docs / without:.2f}x; server peak RSS {peak_mib:.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--document-bytes", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", choices=("f2", "f3"))
    args = parser.parse_args()
    with ExitStack() as stack:
        if args.database == "sqlite":
            directory = stack.enter_context(tempfile.TemporaryDirectory(prefix="bb-document-once-"))
            urls = (f"sqlite:///{directory}/f2.db", f"sqlite:///{directory}/f3.db")
        else:
            server = stack.enter_context(postgres_server(os.environ.get("BONNIEBOARD_TEST_POSTGRES_URL")))
            urls = (server.create_database("bb_bench_f2"), server.create_database("bb_bench_f3"))
        if args.only in (None, "f2"):
            f2(urls[0], args.lines, args.document_bytes)
        if args.only in (None, "f3"):
            f3(urls[1], args.runs, args.rounds)


if __name__ == "__main__":
    main()
