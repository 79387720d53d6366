"""Compare page speed: GET /api/compare for 50 runs and the full /compare page, against the trivial
GET /api/health of the same server in the same run, with 10,000 runs in the database; and
GET /api/compare grouped: --grouped runs (100) tagged cfg=0..9, compared with group=cfg, i.e. 10
configurations of 10 runs each with statistics and verdicts (the target: within 2x of the 50-run figure).

Usage: .venv/bin/python bench/compare_bench.py [--runs 10000] [--compare 50] [--grouped 100] [--duration 10] [--rounds 3]
       [--no-cache]

Loads --runs real bonnie++ lines (every line of tests/data/corpus/, cycled, each with its own machine
name, in four uploads tagged fs=ext4|xfs and raid=5|6) into a temporary SQLite file with
`bonnieboard ingest`, starts `bonnieboard serve` (one worker), and measures each URL with Debian's
`wrk` (one thread, one connection: the latency one user feels, requests one after the other) for
--duration seconds, the three URLs taking turns for --rounds rounds. Reports wrk's median latency per
URL (the median of the rounds' medians), the ratios to /api/health, and the bytes of JavaScript and
CSS the compare page loads (as served, and gzipped for reference).

wrk sends no Accept-Encoding, so the plain rows are the uncompressed answers; the "(gzip)" rows send
`Accept-Encoding: gzip`, as every browser does. Repeated requests of one URL are answered from the
comparison cache (app/compare/cache.py; docs/decisions.md, "Comparisons served from a cache"); --no-cache
serves with BONNIEBOARD_COMPARE_CACHE_MIB=0, so every request computes its answer (what the first reader after a
write waits for).
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus_runs import load_runs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BONNIEBOARD = ROOT / ".venv" / "bin" / "bonnieboard"
WRK_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wrk_median_ms(url: str, duration_s: int, headers: dict[str, str]) -> tuple[float, float]:
    """wrk's median latency (ms) and requests/s for `url`, one connection."""
    header_args = [arg for name, value in headers.items() for arg in ("-H", f"{name}: {value}")]
    result = subprocess.run(
        ["wrk", "-t1", "-c1", f"-d{duration_s}s", "--latency", *header_args, url],
        capture_output=True,
        text=True,
        check=True,
    )
    median = re.search(r"^\s+50%\s+([\d.]+)(us|ms|s)\s*$", result.stdout, re.M)
    rate = re.search(r"^Requests/sec:\s+([\d.]+)", result.stdout, re.M)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", result.stdout)
    if not median or not rate or errors:
        raise RuntimeError(f"wrk on {url}:\n{result.stdout}{result.stderr}")
    return float(median.group(1)) * WRK_UNITS_MS[median.group(2)], float(rate.group(1))


def response_bytes(url: str, headers: dict[str, str]) -> int:
    """The bytes sent for `url` (compressed ones as they travel)."""
    with httpx.stream("GET", url, headers={"Accept-Encoding": "identity"} | headers) as response:
        return len(b"".join(response.iter_raw()))


def page_assets(base_url: str, page_path: str) -> list[tuple[str, int, int]]:
    """(path, bytes as served, gzipped bytes) of every script and stylesheet the page loads."""
    html = httpx.get(base_url + page_path).text
    paths = re.findall(r'<script[^>]+src="([^"]+)"', html) + re.findall(
        r'<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"', html
    )
    assets = []
    for path in paths:
        body = httpx.get(path if path.startswith("http") else base_url + path).content
        assets.append((path.replace(base_url, ""), len(body), len(gzip.compress(body, 9))))
    return assets


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--compare", type=int, default=50)
    parser.add_argument("--grouped", type=int, default=100, help="runs compared in 10 configurations (0: skip)")
    parser.add_argument("--duration", type=int, default=10, help="seconds of wrk per URL per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-cache", action="store_true", help="serve with BONNIEBOARD_COMPARE_CACHE_MIB=0")
    args = parser.parse_args()
    if not shutil.which("wrk"):
        print("wrk is missing: apt-get install -y wrk", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("BONNIEBOARD_")}
        env["BONNIEBOARD_DATABASE_URL"] = f"sqlite:///{workdir / 'bench.db'}"
        if args.no_cache:
            env["BONNIEBOARD_COMPARE_CACHE_MIB"] = "0"
        start = time.perf_counter()
        load_runs(workdir, args.runs, env["BONNIEBOARD_DATABASE_URL"])
        print(f"loaded {args.runs} runs in {time.perf_counter() - start:.1f} s")
        port = free_port()
        server = subprocess.Popen(
            [BONNIEBOARD, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        base_url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    if httpx.get(f"{base_url}/api/health", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            total = httpx.get(f"{base_url}/api/runs", params={"limit": 1}).json()["total"]
            assert total == args.runs, total
            # Runs spread over the whole table, in an order that is not the ids' order.
            step = args.runs // args.compare
            ids = [1 + ((i * 7919) % args.compare) * step for i in range(args.compare)]
            query = f"runs={','.join(map(str, ids))}&baseline={ids[0]}&mode=relative"
            gzip = {"Accept-Encoding": "gzip"}
            urls = {
                "GET /api/health": ("/api/health", {}),
                f"GET /api/compare ({args.compare} runs, relative)": (f"/api/compare?{query}", {}),
                f"GET /compare page ({args.compare} runs, relative)": (f"/compare?{query}", {}),
                f"GET /api/compare ({args.compare} runs, relative) (gzip)": (f"/api/compare?{query}", gzip),
                f"GET /compare page ({args.compare} runs, relative) (gzip)": (f"/compare?{query}", gzip),
            }
            if args.grouped:
                # Other runs than the 50 (one step further on), tagged cfg=0..9 in turn: 10 configurations.
                grouped = [1 + (i * step + step // 2) % args.runs for i in range(args.grouped)]
                for i, run_id in enumerate(grouped):
                    tags = httpx.get(f"{base_url}/api/runs/{run_id}").json()["tags"] | {"cfg": str(i % 10)}
                    httpx.patch(f"{base_url}/api/runs/{run_id}", json={"tags": tags}).raise_for_status()
                grouped_query = f"runs={','.join(map(str, grouped))}&baseline={grouped[0]}&mode=relative&group=cfg"
                urls[f"GET /api/compare ({args.grouped} runs in 10 configurations, group=cfg, relative)"] = (
                    f"/api/compare?{grouped_query}",
                    {},
                )
            for path, headers in urls.values():
                response = httpx.get(base_url + path, headers=headers)
                assert response.status_code == 200, (path, response.status_code)
            sizes = {name: response_bytes(base_url + path, headers) for name, (path, headers) in urls.items()}
            medians: dict[str, list[float]] = {name: [] for name in urls}
            rates: dict[str, list[float]] = {name: [] for name in urls}
            for _ in range(args.rounds):
                for name, (path, headers) in urls.items():
                    median_ms, rate = wrk_median_ms(base_url + path, args.duration, headers)
                    medians[name].append(median_ms)
                    rates[name].append(rate)
            assets = page_assets(base_url, f"/compare?{query}")
        finally:
            server.terminate()
            server.wait()

    trivial = statistics.median(medians["GET /api/health"])
    cache = "comparison cache off" if args.no_cache else "comparison cache on"
    print(
        f"\nwrk -t1 -c1 -d{args.duration}s --latency, {args.rounds} rounds; {args.runs} runs in the database; {cache}\n"
    )
    print("| URL | response bytes | median latency, ms (rounds) | ratio to /api/health | requests/s |")
    print("|---|---|---|---|---|")
    for name in urls:
        median = statistics.median(medians[name])
        rounds = ", ".join(f"{m:.2f}" for m in medians[name])
        print(
            f"| {name} | {sizes[name]:,} | {median:.2f} ({rounds}) | {median / trivial:.1f}x | {statistics.median(rates[name]):.0f} |"
        )
    print("\n| compare page asset | bytes | gzipped |")
    print("|---|---|---|")
    for path, size, zipped in assets:
        print(f"| {path} | {size:,} | {zipped:,} |")
    print(f"| **total JS + CSS** | **{sum(a[1] for a in assets):,}** | {sum(a[2] for a in assets):,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
