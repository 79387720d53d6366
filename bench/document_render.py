"""Run page cost of hostile runner documents: each of tests/hostile_documents.py's documents (every one within
the limits the API accepts) is uploaded to a real `bonnieboard serve` (one worker, a temporary SQLite file),
and its run page is fetched --rounds times, the pages taking turns with GET /api/health and the run page of the
runner's real document (tests/data/runner-document.json), measured in the same run.

Usage: .venv/bin/python bench/document_render.py [--rounds 5] [--only wide-table,deep]

Each page has a server of its own (all on the one database), so that the memory one page's views take is not
reused by another's. Each server is warmed up first (GET /api/health, then the runner document's run page: the
templates compiled), and its RSS then is its idle RSS. Reported per page:
- HTML bytes (the same each round);
- the median over the rounds of each view's wall time as the client sees it (requests one after the other)
  and of the server's CPU time for it (its threads' /proc/PID/task/TID/schedstat);
- the server's peak RSS (VmHWM) over its idle RSS, after all the rounds: what viewing the page costs in memory.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers import DATA_DIR, LINE_198  # noqa: E402
from tests.hostile_documents import HOSTILE_DOCUMENTS  # noqa: E402
from tests.live_server import LiveServer, live_server  # noqa: E402

VIEW_TIMEOUT_S = 600


@dataclass
class View:
    wall_s: float
    cpu_s: float
    html_bytes: int


def cpu_s(pid: int) -> float:
    """CPU time of the process's threads (the route runs in a worker thread), in nanoseconds' resolution:
    /proc/PID/stat counts in clock ticks of 10 ms."""
    total_ns = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with suppress(FileNotFoundError):  # a thread that ended meanwhile
            total_ns += int((task / "schedstat").read_text().split()[0])
    return total_ns / 1e9


def status_kib(pid: int, name: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {name} in /proc/{pid}/status")


def view(client: httpx.Client, pid: int, path: str) -> View:
    cpu_before_s = cpu_s(pid)
    start = time.perf_counter()
    response = client.get(path)
    wall_s = time.perf_counter() - start
    response.raise_for_status()
    return View(wall_s=wall_s, cpu_s=cpu_s(pid) - cpu_before_s, html_bytes=len(response.content))


def upload(client: httpx.Client, document: dict, line: str) -> int:
    response = client.post("/api/runs", json={"csv": line, "document": document})
    if response.status_code != 201:
        raise RuntimeError(f"upload refused: {response.status_code} {response.text[:300]}")
    return response.json()["created"][0]


def upload_pages(client: httpx.Client, only: list[str]) -> dict[str, str]:
    """{name: path}: the plain pages, then one run page per hostile document."""
    runner_document = json.loads((DATA_DIR / "runner-document.json").read_text())
    runner_run = upload(client, runner_document, runner_document["runs"][0]["csv"])
    found = {"GET /api/health": "/api/health", "run page, runner's document": f"/runs/{runner_run}"}
    for name, build in HOSTILE_DOCUMENTS.items():
        if only and name not in only:
            continue
        # Each upload needs a line of its own: a line stored before is a duplicate, and keeps its document.
        line = LINE_198.replace(",vm,", f",vm{len(found)},", 1)
        document = build()
        for run in document.get("runs", []):
            if run.get("csv") == LINE_198:
                run["csv"] = line  # the run page draws this line's per-test facts
        found[f"run page, {name}"] = f"/runs/{upload(client, document, line)}"
    return found


def warm_up(client: httpx.Client, server: LiveServer, runner_page: str) -> int:
    """The server's idle RSS (KiB) once it has answered a plain request and drawn a run page."""
    for path in ("/api/health", "/api/health", runner_page):
        client.get(path).raise_for_status()
    return status_kib(server.process.pid, "VmRSS")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated document names (default: all)")
    args = parser.parse_args()
    only = [name for name in args.only.split(",") if name]
    unknown = set(only) - set(HOSTILE_DOCUMENTS)
    if unknown:
        parser.error(f"no such document: {', '.join(sorted(unknown))}; known: {', '.join(HOSTILE_DOCUMENTS)}")
    start_load = ", ".join(f"{figure:.2f}" for figure in os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        database_url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        with live_server(database_url) as loader, httpx.Client(base_url=loader.url) as client:
            paths = upload_pages(client, only)
        servers: dict[str, tuple[LiveServer, httpx.Client, int]] = {}
        for name in paths:
            server = stack.enter_context(live_server(database_url))
            client = stack.enter_context(httpx.Client(base_url=server.url, timeout=VIEW_TIMEOUT_S))
            servers[name] = (server, client, warm_up(client, server, paths["run page, runner's document"]))
        views: dict[str, list[View]] = {name: [] for name in paths}
        for _ in range(args.rounds):
            for name, path in paths.items():
                server, client, _ = servers[name]
                views[name].append(view(client, server.process.pid, path))
        peak_mib = {
            name: (status_kib(server.process.pid, "VmHWM") - idle_kib) / 1024
            for name, (server, _, idle_kib) in servers.items()
        }
    end_load = ", ".join(f"{figure:.2f}" for figure in os.getloadavg())
    print(
        f"\n{args.rounds} rounds, one worker, SQLite; load average {start_load} at the start, {end_load} at the end\n"
    )
    print("| page | HTML bytes | median wall ms (each round) | median server CPU ms | peak RSS over idle, MiB |")
    print("|---|---|---|---|---|")
    for name, measured in views.items():
        walls = ", ".join(f"{v.wall_s * 1000:.0f}" for v in measured)
        print(
            f"| {name} | {measured[0].html_bytes:,} | {statistics.median(v.wall_s for v in measured) * 1000:.1f} "
            f"({walls}) | {statistics.median(v.cpu_s for v in measured) * 1000:.0f} | {peak_mib[name]:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
