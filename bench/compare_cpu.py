"""CPU time of engine.compare() on pages of a few runs a side, where the statistics cost most: the real A/A runs of
tests/data/aa/ split 3 vs 3 and 5 vs 5, and a baseline with five configurations of 2 runs; with the power figures
(stats.welch_power) each page asks for, most of them by runs_needed's search.

Usage: .venv/bin/python bench/compare_cpu.py [--pages 400] [--rounds 3] [--code DIR]

--code DIR imports app/ from another checkout (e.g. a worktree of an earlier commit) with this file's pages, for a
before and after. Prints per case the median over --rounds of the CPU ms a compare, and the power figures a page.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose app/ is measured")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(args.code.resolve()))

    from app.compare import engine, stats
    from app.compare.grouping import Grouping
    from tests.aa_splits import CONFIG_TAG, load_aa_runs, page_of_groups, random_partitions, two_way_splits

    asked = [0]
    power = stats.welch_power

    def counted(*figures: float) -> float:
        asked[0] += 1
        return power(*figures)

    stats.welch_power = counted
    grouping = Grouping(keys=(CONFIG_TAG,))
    cases = {}
    for fs in ("tmpfs", "ext4"):
        runs = load_aa_runs(fs)
        for k in (3, 5):
            splits = itertools.islice(two_way_splits(len(runs), k), args.pages)
            cases[f"{fs}: {k} vs {k}"] = [page_of_groups(runs, split) for split in splits]
        partitions = random_partitions(len(runs), 6, 2, args.pages, seed=1)
        cases[f"{fs}: baseline + 5 configurations of 2"] = [page_of_groups(runs, p) for p in partitions]
    print(f"app/ from {Path(engine.__file__).parents[2]}; {args.pages} pages a case, median of {args.rounds} rounds")
    print("| case | CPU ms a compare | power figures a page |")
    print("|---|---:|---:|")
    for name, pages in cases.items():
        times = []
        for _ in range(args.rounds):
            asked[0] = 0
            start = time.process_time()
            for page in pages:
                engine.compare(page, baseline=page[0].id, grouping=grouping)
            times.append((time.process_time() - start) / len(pages) * 1000)
        print(f"| {name} | {statistics.median(times):.2f} | {asked[0] / len(pages):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
