"""+++++ inside the page's error control, and power as the page's own test: the figures of bench/RESULTS.md,
"+++++ inside Holm, and power as the page's own test".

Usage: .venv/bin/python bench/censored_power.py [--app ROOT] [--splits 1000] [--pages 400]

`--app ROOT` imports `app` from another checkout (e.g. `git worktree add /tmp/before <commit>`) to measure an
older engine with this tree's A/A data and simulation (tests/aa_splits.py, loaded from here by path).

1. Rate ▲/▼ on A/A pages where tests are partly +++++: the real runs of tests/data/aa_censored/ (n80, n64) split at
   random into 2 v 2, 3 v 3, 5 v 5 (--splits each) and a baseline + 5 configurations of 2 (--splits / 2), and
   simulated pages with a setup (256 MiB, -n 16) and 20-80 % of each bounded test's runs +++++ (--pages each).
2. Power: a true +20 % on block write at CV 5 %, N = 5, two configurations.
3. What detectable_pct and runs_needed promise against what the page does (tests/compare/test_power.py's simulation:
   Welch on the logs, Holm among m verdicts, ×1.05 on the estimate): at the stated change and at the stated N.
Every row has its own seed: the figures are deterministic. Prints Markdown.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent


def load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def share(k: int, n: int) -> str:
    """k of n as a % with its 95 % Wilson interval."""
    z, p = 1.96, k / n
    d = 1 + z * z / n
    centre, half = (p + z * z / (2 * n)) / d, z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return f"{100 * p:.1f} % ({100 * (centre - half):.1f}–{100 * (centre + half):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", default=str(HERE))
    parser.add_argument("--splits", type=int, default=1000)
    parser.add_argument("--pages", type=int, default=400)
    args = parser.parse_args()
    sys.path.insert(0, args.app)
    aa = load(HERE / "tests" / "aa_splits.py", "aa_splits_here")
    power_test = load(HERE / "tests" / "compare" / "test_power.py", "test_power_here")
    from app.compare import engine, stats
    from app.compare.grouping import Grouping
    from app.ingest.parsing import TESTS

    grouping = Grouping(keys=(aa.CONFIG_TAG,))

    def compare(page: list[Any]) -> dict[str, Any]:
        return engine.compare(page, baseline=page[0].id, grouping=grouping)

    def flagged(page: list[Any]) -> bool:
        return any(
            cell["verdict"] in ("better", "worse")
            for chart in compare(page)["charts"]
            if chart["key"] in engine.RATE_CHART_KEYS
            for entry in chart["configurations"]
            for cell in entry["tests"]
        )

    started = time.time()
    print("| A/A data | page | pages | ≥1 rate ▲/▼ (95 % CI) |\n|---|---|---|---|")
    for setup in ("n80", "n64"):
        runs = aa.load_aa_runs(setup)
        for k in (2, 3, 5):
            splits = aa.sampled_two_way_splits(12, k, args.splits, seed=37 + k)
            hits = sum(flagged(aa.page_of_groups(runs, s)) for s in splits)
            print(f"| real {setup} | {k} v {k} | {len(splits)} | {share(hits, len(splits))} |", flush=True)
        parts = aa.random_partitions(12, 6, 2, args.splits // 2, seed=37)
        hits = sum(flagged(aa.page_of_groups(runs, p)) for p in parts)
        print(f"| real {setup} | baseline + 5 × 2 | {len(parts)} | {share(hits, len(parts))} |", flush=True)
    for cv in (0.05, 0.30):
        for configurations, n in ((2, 2), (2, 3), (2, 5), (6, 2), (6, 3)):
            noise = aa.Noise(cv, rounded=True, partly_censored=True)
            rng = random.Random(f"partly {configurations} {n} {cv}")
            hits = sum(flagged(aa.simulated_page(rng, noise, configurations, n)) for _ in range(args.pages))
            label = f"{n} v {n}" if configurations == 2 else f"baseline + 5 × {n}"
            print(f"| simulated, partly +++++, CV {cv:.0%} | {label} | {args.pages} | {share(hits, args.pages)} |")

    put_block = TESTS.index("put_block")
    rng = random.Random("power")
    found = 0
    for _ in range(args.pages):
        page = aa.simulated_page(rng, aa.Noise(0.05), 2, 5, effect=(1, put_block, 1.2))
        found += any(
            cell["test"] == "put_block" and cell["verdict"] == "better"
            for chart in compare(page)["charts"]
            if chart["key"] == "block_io"
            for entry in chart["configurations"]
            for cell in entry["tests"]
        )
    print(f"\nA true +20 % on block write, CV 5 %, N = 5, two configurations: found on {share(found, args.pages)}\n")

    print("| N | CV | m | stated detectable | found on | runs_needed (10 %) | found at that N |")
    print("|---|---|---|---|---|---|---|")
    for n in (2, 3, 5, 10):
        for cv in (0.01, 0.05, 0.30):
            for m in (12, 60):
                sigma = power_test.sigma_of(cv)
                if hasattr(stats, "Spreads"):
                    spread = stats.Spreads(sigma * sigma, n, sigma * sigma, n)
                    pct = stats.detectable_pct(spread, m, 1.05)
                    need = stats.runs_needed(spread, m, 10.0, 1.05)
                else:  # the engine before: the normal approximation at 2n − 2 df, a fixed point on the pooled variance
                    pct = stats.detectable_pct(sigma * math.sqrt(2 / n), 2 * n - 2, m, 1.05)
                    need = stats.runs_needed(sigma * sigma, m)
                hit = power_test.called_share(n, sigma, math.log1p(pct / 100), m, f"t{n}{cv}{m}")
                said = f"{pct:.3g} %" if pct < 1000 else f"×{1 + pct / 100:.2g}"
                at_need = power_test.called_share(need, sigma, math.log(1.1), m, f"r{n}{cv}{m}")
                print(f"| {n} | {cv:.0%} | {m} | {said} | {hit:.0%} | {need} | {at_need:.0%} |", flush=True)
    print(f"\n({time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
