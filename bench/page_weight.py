"""Phone weight of the 50-run compare page: its HTML bytes, its DOM, and the time until its last chart is drawn in
Chromium emulating a phone, against a plain page (the runs list) measured the same way in the same run.

Usage: PYTHONPATH=. .venv/bin/python bench/page_weight.py [--runs 10000] [--compare 50] [--rounds 5] [--throttle 4]
       [--mode relative,absolute]

Loads --runs real bonnie++ lines (every line of tests/data/corpus/, cycled, each with its own machine name) into a
temporary SQLite file with `bonnieboard ingest`, serves it (`bonnieboard serve`, one worker), and compares --compare
of them spread over the table (the runs, baseline and order of bench/compare_bench.py). The page is asked once
before measuring, so the server answers from its comparison cache: what is measured is the page's weight in the
browser, not the server's work.

The phone: Playwright's "Pixel 5" (393 x 727 CSS px, 2.75 device pixels per px, touch, mobile user agent) in
Debian's Chromium, its CPU slowed --throttle times by the DevTools protocol (Emulation.setCPUThrottlingRate, as
Lighthouse's mobile profile does with 4); the network is the loopback, unthrottled. Per round and page: a new tab
in one browser context (static files cached after the first round as a returning visitor has them), timed from the
navigation's start to the first animation frame at which the document is complete and every chart canvas has its
Chart.js chart (a page without charts: the document complete). Medians over --rounds rounds, the pages taking turns.

HTML bytes: the page as sent without compression (and gzipped, as a browser gets it). DOM: the elements
(document.getElementsByTagName('*')) and all nodes (text and comments too) once the page is complete.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpus_runs import load_runs  # noqa: E402
from tests.browser_support import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.live_server import live_server  # noqa: E402

# performance.now() at the first frame where the page is complete and every chart is drawn; null until then.
DONE = """() => document.readyState === 'complete'
    && [...document.querySelectorAll('canvas[data-chart], canvas[data-part-of], canvas[data-matrix-row]')]
        .every(c => window.Chart && Chart.getChart(c))
    && performance.now()"""
DOM = """() => {
    let nodes = 0;
    const walker = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_ALL);
    while (walker.nextNode()) nodes++;
    return {elements: document.getElementsByTagName('*').length, nodes: nodes + 1,
            charts: document.querySelectorAll('canvas[data-chart], canvas[data-part-of]').length};
}"""


def html_bytes(url: str) -> tuple[int, int]:
    """The page's bytes as sent without and with gzip."""
    sizes = []
    for encoding in ("identity", "gzip"):
        with httpx.stream("GET", url, headers={"Accept-Encoding": encoding}) as response:
            assert response.status_code == 200, (url, response.status_code)
            sizes.append(len(b"".join(response.iter_raw())))
    return sizes[0], sizes[1]


def measure(context, url: str, throttle: float) -> tuple[float, dict]:
    page = context.new_page()
    try:
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        cdp = context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": throttle})
        page.goto(url, wait_until="commit")
        done_ms = page.wait_for_function(DONE, polling="raf", timeout=120_000).json_value()
        dom = page.evaluate(DOM)
        assert not errors, errors
        return float(done_ms), dom
    finally:
        page.close()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--compare", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--throttle", type=float, default=4.0, help="CPU slow-down factor (DevTools protocol)")
    parser.add_argument("--mode", default="relative,absolute", help="compare page modes to measure")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        database_url = f"sqlite:///{workdir / 'bench.db'}"
        start = time.perf_counter()
        load_runs(workdir, args.runs, database_url)
        print(f"loaded {args.runs} runs in {time.perf_counter() - start:.1f} s", flush=True)
        with live_server(database_url) as server, sync_playwright() as playwright:
            base_url = server.url
            total = httpx.get(f"{base_url}/api/runs", params={"limit": 1}).json()["total"]
            assert total == args.runs, total
            # Runs spread over the whole table, in an order that is not the ids' order (as bench/compare_bench.py).
            step = args.runs // args.compare
            ids = [1 + ((i * 7919) % args.compare) * step for i in range(args.compare)]
            pages = {"runs list (/)": "/"}
            for mode in args.mode.split(","):
                query = f"runs={','.join(map(str, ids))}&baseline={ids[0]}&mode={mode}"
                if mode == "absolute":
                    query = f"runs={','.join(map(str, ids))}"
                pages[f"/compare, {args.compare} runs, {mode}"] = f"/compare?{query}"
            sizes = {name: html_bytes(base_url + path) for name, path in pages.items()}  # warms the server's cache
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(**playwright.devices["Pixel 5"])
            for path in pages.values():  # the static files in the browser's cache, as for a returning visitor
                measure(context, base_url + path, 1)
            times: dict[str, list[float]] = {name: [] for name in pages}
            doms: dict[str, dict] = {}
            for _ in range(args.rounds):
                for name, path in pages.items():
                    done_ms, doms[name] = measure(context, base_url + path, args.throttle)
                    times[name].append(done_ms)
            browser.close()
    load = os.getloadavg()
    print(
        f"\n{args.runs} runs stored, {args.compare} compared; Chromium as a Pixel 5, CPU throttled {args.throttle:g}x; "
        f"{args.rounds} rounds; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}\n"
    )
    plain = statistics.median(times["runs list (/)"])
    print(
        "| page | HTML bytes (gzip) | elements | DOM nodes | charts | complete, ms (rounds) | ratio to the runs list |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in pages:
        median = statistics.median(times[name])
        rounds = " ".join(f"{t:.0f}" for t in times[name])
        dom = doms[name]
        print(
            f"| {name} | {sizes[name][0]:,} ({sizes[name][1]:,}) | {dom['elements']:,} | {dom['nodes']:,} "
            f"| {dom['charts']} | {median:.0f} ({rounds}) | {median / plain:.2f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
