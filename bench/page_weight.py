"""Phone weight of the 50-run compare page: its HTML bytes, its DOM, and the time until its first screen, every chart
and the last chart a reader scrolls to are drawn in Chromium emulating a phone, against a plain page (the runs list)
measured the same way in the same run.

Usage: PYTHONPATH=. .venv/bin/python bench/page_weight.py [--runs 10000] [--compare 50] [--rounds 5] [--throttle 4]
       [--mode relative,absolute] [--database FILE]

Loads --runs real bonnie++ lines (every line of tests/data/corpus/, cycled, each with its own machine name) into a
temporary SQLite file with `bonnieboard ingest`, serves it (`bonnieboard serve`, one worker), and compares --compare
of them spread over the table (the runs, baseline and order of bench/compare_bench.py). The page is asked once
before measuring, so the server answers from its comparison cache: what is measured is the page's weight in the
browser, not the server's work.

The phone: Playwright's "Pixel 5" (393 x 727 CSS px, 2.75 device pixels per px, touch, mobile user agent) in
Debian's Chromium, its CPU slowed --throttle times by the DevTools protocol (Emulation.setCPUThrottlingRate, as
Lighthouse's mobile profile does with 4); the network is the loopback, unthrottled. Per round and page, each in a
new tab of one browser context (static files cached after the first round as a returning visitor has them), timed
from the navigation's start to the first animation frame at which:
- first screen: the document is complete and every chart canvas in the first screen has its Chart.js chart;
- every chart: every chart canvas of the page has its chart (the charts a phone does not show yet are drawn as they
  come near the screen, or one per idle moment: static/charts.js);
- last chart, scrolled to: in another load, the last chart canvas is scrolled into view as soon as the document is
  parsed (by the page itself, at readyState "interactive"), and the document is complete and that chart drawn (a
  reader going straight to the last chart).
A page without charts: the document complete, for all three. Medians over --rounds rounds, the pages taking turns.

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

# In every page from its start: performance.now() at the first animation frame at which the document is complete
# and the charts of each moment are drawn (window.bbMoments), so that every moment is timed by the page itself.
MOMENTS = """(() => {
    const moments = window.bbMoments = {};
    const drawn = canvas => window.Chart && Chart.getChart(canvas);
    const inView = canvas => { const box = canvas.getBoundingClientRect(); return box.bottom > 0 && box.top < innerHeight; };
    const tick = () => {
        if (document.readyState === 'complete') {
            const now = performance.now();
            const charts = [...document.querySelectorAll('canvas[data-chart], canvas[data-part-of], canvas[data-matrix-row]')];
            const last = charts[charts.length - 1];
            if (!moments['first screen'] && charts.filter(inView).every(drawn)) moments['first screen'] = now;
            if (!moments['every chart'] && charts.every(drawn)) moments['every chart'] = now;
            if (!moments['last chart'] && (!last || drawn(last))) moments['last chart'] = now;
        }
        if (Object.keys(moments).length < 3) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
})()"""
# In the page, the moment its document is parsed (readyState "interactive", before its deferred scripts run): a
# scroll sent by the harness once it has seen that comes a round trip later, 0.4-1.5 s on a throttled phone, and
# that delay, not the page, would be timed.
SCROLL_TO_LAST = """document.addEventListener('readystatechange', () => {
    if (document.readyState !== 'interactive') return;
    const last = [...document.querySelectorAll('canvas[data-chart], canvas[data-part-of], canvas[data-matrix-row]')].pop();
    if (last) last.scrollIntoView({block: 'center'});
})"""
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


def _load(context, url: str, throttle: float, scroll: bool) -> tuple[dict[str, float], dict]:
    """(window.bbMoments, the DOM's counts) of one load of the page, its last chart scrolled to at once if `scroll`."""
    page = context.new_page()
    try:
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        cdp = context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": throttle})
        if scroll:
            page.add_init_script(SCROLL_TO_LAST)
        page.goto(url, wait_until="commit")
        page.wait_for_function("() => Object.keys(window.bbMoments).length === 3", timeout=120_000)
        moments, dom = page.evaluate("window.bbMoments"), page.evaluate(DOM)
        assert not errors, errors
        return moments, dom
    finally:
        page.close()


def measure(context, url: str, throttle: float) -> tuple[dict[str, float], dict]:
    """({first screen, every chart, last chart scrolled to: ms}, the DOM's counts) of the page: two loads."""
    moments, dom = _load(context, url, throttle, scroll=False)
    scrolled, _ = _load(context, url, throttle, scroll=True)
    return {
        "first screen": moments["first screen"],
        "every chart": moments["every chart"],
        "last chart, scrolled to": scrolled["last chart"],
    }, dom


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--compare", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--throttle", type=float, default=4.0, help="CPU slow-down factor (DevTools protocol)")
    parser.add_argument("--mode", default="relative,absolute", help="compare page modes to measure")
    parser.add_argument("--database", type=Path, help="a SQLite file kept between runs (loaded when missing)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        database = args.database or workdir / "bench.db"
        database_url = f"sqlite:///{database}"
        if not database.exists():
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
            context.add_init_script(MOMENTS)
            for path in pages.values():  # the static files in the browser's cache, as for a returning visitor
                measure(context, base_url + path, 1)
            times: dict[str, dict[str, list[float]]] = {name: {} for name in pages}
            doms: dict[str, dict] = {}
            for _ in range(args.rounds):
                for name, path in pages.items():
                    measured, doms[name] = measure(context, base_url + path, args.throttle)
                    for moment, ms in measured.items():
                        times[name].setdefault(moment, []).append(ms)
            browser.close()
    load = os.getloadavg()
    print(
        f"\n{args.runs} runs stored, {args.compare} compared; Chromium as a Pixel 5, CPU throttled {args.throttle:g}x; "
        f"{args.rounds} rounds; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}\n"
    )
    print("| page | HTML bytes (gzip) | elements | DOM nodes | charts |")
    print("|---|---|---|---|---|")
    for name in pages:
        dom = doms[name]
        print(
            f"| {name} | {sizes[name][0]:,} ({sizes[name][1]:,}) | {dom['elements']:,} | {dom['nodes']:,} "
            f"| {dom['charts']} |"
        )
    moments = list(times["runs list (/)"])
    print("\n| page | " + " | ".join(f"{moment}, ms (rounds) | ratio" for moment in moments) + " |")
    print("|---|" + "---|---|" * len(moments))
    for name in pages:
        cells = []
        for moment in moments:
            rounds = times[name][moment]
            plain = statistics.median(times["runs list (/)"][moment])
            median = statistics.median(rounds)
            cells.append(f"{median:.0f} ({' '.join(f'{t:.0f}' for t in rounds)}) | {median / plain:.2f}x")
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
