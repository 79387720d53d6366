"""The 50-run compare page's weight: its HTML bytes (as generated, and gzipped as sent), its DOM nodes, and on an
emulated phone the time until its last chart is drawn, against a plain page (/upload) loaded the same way.

Usage: .venv/bin/python bench/compare_weight.py [--runs 50] [--rounds 5] [--cpu-slowdown 4]

A `bonnieboard serve` on a temporary SQLite file holds --runs real bonnie++ lines (tests/data/corpus/, cycled,
each with its own machine name, tagged fs=ext4|xfs in turn). Debian's Chromium through Playwright, a phone's
viewport (390 x 844, device scale 3, touch) and its CPU slowed --cpu-slowdown times (DevTools'
Emulation.setCPUThrottlingRate), a new context (empty cache) per load. "Last chart drawn": from the navigation's
start until every <canvas> of the page has its Chart.js chart (Chart.getChart), read from the page's clock
(performance.now()); the plain page: until its load event. Medians of --rounds loads each, taking turns.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import tempfile
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser_support import CHROMIUM_ARGS, chromium_path, running_server, upload

CORPUS = ROOT / "tests" / "data" / "corpus"
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True, "has_touch": True}
CHARTS_DRAWN = """() => {
  const canvases = [...document.querySelectorAll('canvas')];
  return canvases.length > 0 && window.Chart !== undefined && canvases.every((c) => window.Chart.getChart(c));
}"""


def lines(count: int) -> list[str]:
    corpus = [
        line
        for path in sorted(CORPUS.glob("*.csv"))
        for line in path.read_text().splitlines()
        if line.startswith("1.9")  # 1.9x lines: the machine is the third field
    ]
    out = []
    for i in range(count):
        fields = corpus[i % len(corpus)].split(",")
        fields[2] = f"weight-host-{i:03d}"
        out.append(",".join(fields))
    return out


def load_ms(browser, url: str, slowdown: float, until_charts: bool) -> float:
    context = browser.new_context(**PHONE)
    page = context.new_page()
    client = context.new_cdp_session(page)
    client.send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
    page.goto(url, wait_until="load", timeout=120_000)
    if until_charts:
        page.wait_for_function(CHARTS_DRAWN, timeout=120_000, polling=50)
        elapsed = page.evaluate("performance.now()")
    else:
        elapsed = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
    context.close()
    return float(elapsed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cpu-slowdown", type=float, default=4.0)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="bonnieboard-weight-") as directory,
        running_server(Path(directory) / "runs.db") as base_url,
        sync_playwright() as playwright,
    ):
        ids: list[int] = []
        for start in range(0, args.runs, 10):
            batch = lines(args.runs)[start : start + 10]
            ids += upload(base_url, batch, tags={"fs": "xfs" if start % 20 else "ext4"})
        compare = f"{base_url}/compare?runs={','.join(map(str, ids))}"
        plain = f"{base_url}/upload"
        html = httpx.get(compare, headers={"Accept-Encoding": "identity"}).content
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        nodes_page = browser.new_page()
        nodes_page.goto(compare, wait_until="load")
        nodes = nodes_page.evaluate("document.getElementsByTagName('*').length")
        nodes_page.close()
        compare_ms, plain_ms = [], []
        for _ in range(args.rounds):
            compare_ms.append(load_ms(browser, compare, args.cpu_slowdown, until_charts=True))
            plain_ms.append(load_ms(browser, plain, args.cpu_slowdown, until_charts=False))
        browser.close()
    last_chart, plain_load = statistics.median(compare_ms), statistics.median(plain_ms)
    print(f"{args.runs}-run compare page, {args.rounds} rounds, CPU slowed {args.cpu_slowdown:g}x, phone viewport\n")
    print("| figure | value |\n|---|---|")
    print(f"| HTML bytes (gzipped as sent) | {len(html):,} ({len(gzip.compress(html, 3)):,}) |")
    print(f"| DOM nodes (elements) | {nodes:,} |")
    rounds = ", ".join(f"{m:.0f}" for m in compare_ms)
    print(f"| last chart drawn, ms (rounds) | {last_chart:.0f} ({rounds}) |")
    print(
        f"| plain page (/upload) loaded, ms (rounds) | {plain_load:.0f} ({', '.join(f'{m:.0f}' for m in plain_ms)}) |"
    )
    print(f"| ratio | {last_chart / plain_load:.1f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
