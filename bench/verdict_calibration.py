"""Verdict calibration: how often does the comparison say ▲ or ▼ when nothing changed, and how often does it
find a change that is there? The figures of bench/RESULTS.md, "Verdict calibration, before" (the engine
before the page-wide error control) and "Verdict calibration, after".

Usage: .venv/bin/python bench/verdict_calibration.py [--pages 1000] [--five-splits N] [--partitions 1000]
       [--jobs 2] [--no-sample-sweep]

Measures the engine as GET /api/compare runs it: app.compare.engine.compare() on in-memory runs, grouped by a tag
(group=cfg) against the first configuration (no server, no database). Everything it reads of an answer is in
one place, "The engine", below: `compare_page` makes a comparison and `rate_flags` (through `flags`) says
which cells are a ▲/▼. When the engine gains fields (an adjusted verdict, a family-wise flag), re-point those
two and the tables follow.

1. Real A/A (tests/data/aa/: 12 runs of one unchanged setup per file system): every split of the 12 runs into
   two configurations of 3 (9,240) and every split into two of 5 (8,316; --five-splits N samples N), and
   --partitions seeded partitions into a baseline + 5 configurations of 2 runs each; per file system the share
   with at least one rate ▲/▼, and separately at least one %CPU and one latency ▲/▼.
2. Simulated A/A pages (tests/aa_splits.py): two configurations, and a baseline + 5; log-normal CV 5 % and
   30 %; N = 3 and 5; with and without integer rounding and +++++ censoring; --pages pages each.
3. Power: a true +20 % on block write (and, as a side row, on a test that is often +++++) at CV 5 %, the only
   difference on the page; the share of pages where that cell is ▲.
4. The summary paragraph the engine writes for the sample sweep (sample_data/: `make samples` into a temporary
   SQLite database, then runs 1-18 grouped by fs,mode against ext4/async, run 1), as the page shows it.

Every figure is deterministic: each table row draws from its own seed (a CRC of its name), so --jobs changes
the time, not the numbers. Prints Markdown (the tables of bench/RESULTS.md) and the time taken.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.compare import engine  # noqa: E402 - after the sys.path line: run as a plain script
from app.compare.figures import RunFigures  # noqa: E402
from app.compare.grouping import Grouping  # noqa: E402
from app.ingest.parsing import TESTS  # noqa: E402
from tests.aa_splits import (  # noqa: E402
    CENSORED_SHARE,
    CONFIG_TAG,
    MEANS,
    Noise,
    count_two_way_splits,
    load_aa_runs,
    page_of_groups,
    random_partitions,
    sampled_two_way_splits,
    simulated_page,
    two_way_splits,
)

# ==== The engine: the only place that knows how a comparison is made and how a verdict is read ====

PAGE_GROUPING = Grouping(keys=(CONFIG_TAG,))  # group=cfg
RATE, CPU, LATENCY = "rate", "cpu", "latency"
MEASURES = (RATE, CPU, LATENCY)
# Which of the answer's charts hold which measure (app/compare/engine.py CHARTS): the four rate charts, %CPU, latency.
MEASURE_OF_CHART = {
    "block_io": RATE,
    "seeks": RATE,
    "metadata": RATE,
    "metadata_stat": RATE,
    "cpu": CPU,
    "latency": LATENCY,
}
FLAGGED = frozenset({"better", "worse"})  # ▲ ▼: what a reader takes for a real difference
JUDGED = FLAGGED | {"within_noise"}  # a verdict was made (not "unknown", not the baseline's null)


def compare_page(page: list[RunFigures]) -> dict[str, Any]:
    """GET /api/compare?runs=<the page's runs>&group=cfg&baseline=<its first run>."""
    return engine.compare(page, baseline=page[0].id, grouping=PAGE_GROUPING)


@dataclass(frozen=True, slots=True)
class Flag:
    configuration: int  # the configuration's id in the answer (the baseline's is the answer's baseline_configuration)
    measure: str  # RATE, CPU or LATENCY
    test: str
    verdict: str
    ci95: tuple[float, float] | None  # the ratio's 95 % CI, as the answer gives it


def verdict_cells(comparison: dict[str, Any]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(configuration id, measure, cell) of every configuration but the baseline, every chart, every test."""
    base = comparison["baseline_configuration"]
    for chart in comparison["charts"]:
        measure = MEASURE_OF_CHART[chart["key"]]
        for entry in chart["configurations"]:
            if entry["configuration"] != base:
                for cell in entry["tests"]:
                    yield entry["configuration"], measure, cell


def verdict_of(cell: dict[str, Any]) -> str | None:
    """The cell's verdict: a %CPU cell's is that of CPU per unit of work (%CPU itself has none); an engine from
    before CPU per unit of work has no such field and judged %CPU itself."""
    return cell.get("cpu_per_work_verdict") or cell["verdict"]


def is_flag(cell: dict[str, Any]) -> bool:
    return verdict_of(cell) in FLAGGED


def is_judged(cell: dict[str, Any]) -> bool:
    return verdict_of(cell) in JUDGED


def flags(comparison: dict[str, Any], measure: str) -> list[Flag]:
    return [
        Flag(config, m, cell["test"], verdict_of(cell) or "", tuple(cell["ratio_ci95"]) if cell["ratio_ci95"] else None)
        for config, m, cell in verdict_cells(comparison)
        if m == measure and is_flag(cell)
    ]


def rate_flags(comparison: dict[str, Any]) -> list[Flag]:
    """The rate ▲/▼ of a comparison: what the issue counts."""
    return flags(comparison, RATE)


def judged_count(comparison: dict[str, Any], measure: str) -> int:
    return sum(1 for _, m, cell in verdict_cells(comparison) if m == measure and is_judged(cell))


# ==== Counting ====


@dataclass(slots=True)
class Tally:
    """Over pages: how many had at least one ▲/▼ per measure, how many configuration-vs-baseline comparisons
    did, how many verdicts were judged and flagged; for power, how often the changed cell was found."""

    pages: int = 0
    flagged_pages: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MEASURES, 0))
    comparisons: int = 0
    flagged_comparisons: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MEASURES, 0))
    judged: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MEASURES, 0))
    flags: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MEASURES, 0))
    any_pages: int = 0  # pages with a ▲/▼ of any measure
    exact_flags: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MEASURES, 0))  # CI of zero width
    found: int = 0  # power: the changed cell got the right mark
    found_alone: int = 0  # ... and no other rate cell of the page was flagged
    wrong_way: int = 0  # the changed cell got the opposite mark
    detectable: list[float] = field(default_factory=list)  # power: the changed cell's detectable_pct when missed
    seconds: float = 0.0

    def add(self, comparison: dict[str, Any], target: tuple[int, str, str] | None = None) -> None:
        self.pages += 1
        others = len(comparison["configurations"]) - 1
        self.comparisons += others
        any_flag = False
        for measure in MEASURES:
            found = flags(comparison, measure)
            if target is not None and measure == RATE:
                hit = [f for f in found if (f.configuration, f.test) == target[:2]]
                if hit and hit[0].verdict == target[2]:
                    self.found += 1
                    self.found_alone += len(found) == 1
                elif hit:
                    self.wrong_way += 1
                else:
                    missed = target_cell(comparison, target)
                    if missed is not None and missed.get("detectable_pct") is not None:
                        self.detectable.append(missed["detectable_pct"])
                found = [f for f in found if (f.configuration, f.test) != target[:2]]
            self.flags[measure] += len(found)
            self.exact_flags[measure] += sum(1 for f in found if f.ci95 is not None and f.ci95[0] == f.ci95[1])
            self.judged[measure] += judged_count(comparison, measure)
            self.flagged_pages[measure] += bool(found)
            self.flagged_comparisons[measure] += len({f.configuration for f in found})
            any_flag = any_flag or bool(found)
        self.any_pages += any_flag


def target_cell(comparison: dict[str, Any], target: tuple[int, str, str]) -> dict[str, Any] | None:
    return next(
        (cell for config, m, cell in verdict_cells(comparison) if m == RATE and (config, cell["test"]) == target[:2]),
        None,
    )


def median(values: list[float]) -> str:
    if not values:
        return "–"
    ordered = sorted(values)
    middle = len(ordered) // 2
    value = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return f"{value:.0f} %"


def wilson(successes: int, total: int, z: float = 1.959964) -> tuple[float, float]:
    if total == 0:
        return (math.nan, math.nan)
    p = successes / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return (max(0.0, centre - half), min(1.0, centre + half))


def pct(successes: int, total: int) -> str:
    return f"{100 * successes / total:.1f} %" if total else "–"


def pct_ci(successes: int, total: int) -> str:
    low, high = wilson(successes, total)
    return f"{100 * successes / total:.1f} % ({100 * low:.1f}–{100 * high:.1f})" if total else "–"


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


# ==== The tasks: each one row of a table, from its own seed ====


@dataclass(frozen=True, slots=True)
class Task:
    table: str
    name: str
    run: Callable[..., Tally]
    args: tuple[Any, ...]


def real_splits(fs: str, k: int, sample: int | None) -> Tally:
    runs = load_aa_runs(fs)
    splits: Iterable[tuple[tuple[int, ...], ...]]
    if sample is None:
        splits = two_way_splits(len(runs), k)
    else:
        splits = sampled_two_way_splits(len(runs), k, sample, seed_of(f"real {fs} {k} {sample}"))
    tally = Tally()
    for split in splits:
        tally.add(compare_page(page_of_groups(runs, split)))
    return tally


def real_partitions(fs: str, groups: int, size: int, count: int) -> Tally:
    runs = load_aa_runs(fs)
    tally = Tally()
    for partition in random_partitions(len(runs), groups, size, count, seed_of(f"real {fs} {groups}x{size} {count}")):
        tally.add(compare_page(page_of_groups(runs, partition)))
    return tally


def simulated(name: str, noise: Noise, configurations: int, n: int, pages: int) -> Tally:
    rng = random.Random(seed_of(name))
    tally = Tally()
    for _ in range(pages):
        tally.add(compare_page(simulated_page(rng, noise, configurations, n)))
    return tally


def power(name: str, noise: Noise, configurations: int, n: int, test: str, factor: float, pages: int) -> Tally:
    """The last configuration's true mean of `test` is `factor` times the others'."""
    rng = random.Random(seed_of(name))
    changed = configurations - 1
    # Configuration ids are 1.. in page order (app/compare/grouping.py); a rate that rose is "better".
    target = (changed + 1, test, "better" if factor > 1 else "worse")
    tally = Tally()
    for _ in range(pages):
        page = simulated_page(rng, noise, configurations, n, effect=(changed, TESTS.index(test), factor))
        tally.add(compare_page(page), target)
    return tally


def run_task(task: Task) -> Tally:
    started = time.perf_counter()
    tally = task.run(*task.args)
    tally.seconds = time.perf_counter() - started
    return tally


def variant_name(noise: Noise) -> str:
    return {
        (False, False): "plain",
        (True, False): "rounded",
        (False, True): "+++++",
        (True, True): "rounded, +++++",
    }[(noise.rounded, noise.censored)]


def tasks(args: argparse.Namespace) -> list[Task]:
    listed = []
    for fs in ("tmpfs", "ext4"):
        listed.append(Task("real", f"{fs}: 3 vs 3, every split", real_splits, (fs, 3, None)))
        five = "every split" if args.five_splits is None else f"{args.five_splits} sampled splits"
        listed.append(Task("real", f"{fs}: 5 vs 5, {five}", real_splits, (fs, 5, args.five_splits)))
        listed.append(
            Task(
                "real",
                f"{fs}: baseline + 5 configurations of 2, {args.partitions} partitions",
                real_partitions,
                (fs, 6, 2, args.partitions),
            )
        )
    for configurations in (2, 6):
        for n in (3, 5):
            for cv in (0.05, 0.30):
                for rounded, censored in ((False, False), (True, False), (False, True), (True, True)):
                    noise = Noise(cv, rounded, censored)
                    name = f"A/A {configurations} configurations N={n} CV={cv:g} {variant_name(noise)}"
                    listed.append(Task("sim", name, simulated, (name, noise, configurations, n, args.pages)))
    power_rows = [(c, n, Noise(0.05), "put_block") for c in (2, 6) for n in (5, 3)]
    power_rows += [(2, n, Noise(0.05, True, True), "put_block") for n in (5, 3)]
    power_rows += [(2, n, Noise(0.05, True, True), "seq_stat") for n in (5, 3)]
    for configurations, n, noise, test in power_rows:
        name = f"power {configurations} configurations N={n} CV=0.05 {variant_name(noise)} {test} x1.2"
        listed.append(Task("power", name, power, (name, noise, configurations, n, test, 1.2, args.pages)))
    return listed


# ==== The sample sweep's summary, as the page shows it ====


def sample_sweep_summary() -> str:
    """`make samples` into a fresh SQLite file, then what GET /api/compare?runs=1..18&group=fs,mode&baseline=1
    answers (run 1 is the first line of sweep-ext4-loop-async.csv) — its `summary`."""
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from app.compare.figures import figures_of
    from app.compare.request import parse_group
    from app.store import runs as run_store
    from app.store.db import make_engine
    from app.store.models import tag_table

    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{folder}/samples.db"
        env = {**os.environ, "BONNIEBOARD_DATABASE_URL": url}
        # this interpreter's own CLI: a git worktree shares another checkout's venv and has no .venv of its own
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), env.get("PYTHONPATH"))))
        command = [sys.executable, "-m", "app.cli", "ingest", "--if-empty", "--tag", "source=sample_data"]
        command += ["--manifest", str(ROOT / "sample_data" / "manifest")]
        subprocess.run(command, env=env, check=True, capture_output=True)
        engine = make_engine(url)
        with Session(engine) as session:
            sweep = select(tag_table.c.run_id).where(tag_table.c.key == "sweep").order_by(tag_table.c.run_id)
            run_ids = list(session.scalars(sweep))
            compared = run_store.runs_to_compare(session=session, run_ids=run_ids)
            figures = [figures_of(row, compared.tags[row.id]) for row in compared.rows]
        engine.dispose()
    first = figures[0]
    assert (first.tags.get("fs"), first.tags.get("mode")) == ("ext4", "async"), first.tags
    data = engine.compare(figures, baseline=first.id, grouping=parse_group("fs,mode"))
    header = f"runs={run_ids[0]}..{run_ids[-1]} ({len(run_ids)}) group=fs,mode baseline={first.id}"
    counts = {m: len(flags(data, m)) for m in MEASURES}
    return f"{header}; ▲/▼ cells: {counts}\n\n> {data['summary']}"


# ==== Output ====


def markdown(listed: list[Task], tallies: list[Tally]) -> str:
    out = []
    rows = [(t, y) for t, y in zip(listed, tallies, strict=True)]

    out.append("### Real A/A (tests/data/aa/)\n")
    out.append(
        "| file system and split | pages | ≥1 rate ▲/▼ | ≥1 %CPU ▲/▼ | ≥1 latency ▲/▼ | any ▲/▼ "
        "| ▲/▼ per judged verdict: rate / %CPU / latency | judged verdicts per page: rate / %CPU / latency |"
    )
    out.append("|---|---|---|---|---|---|---|---|")
    for task, y in rows:
        if task.table == "real":
            out.append(
                f"| {task.name} | {y.pages:,} | {pct(y.flagged_pages[RATE], y.pages)} | {pct(y.flagged_pages[CPU], y.pages)} "
                f"| {pct(y.flagged_pages[LATENCY], y.pages)} | {pct(y.any_pages, y.pages)} "
                f"| {' / '.join(pct(y.flags[m], y.judged[m]) for m in MEASURES)} "
                f"| {' / '.join(f'{y.judged[m] / y.pages:.1f}' for m in MEASURES)} |"
            )
    out.append("\n### Simulated A/A pages (12 rate tests)\n")
    out.append(
        "| configurations | N | CV | values | pages | pages with ≥1 rate ▲/▼ (95 % CI) | comparisons with ≥1 "
        "| ▲/▼ per judged verdict | judged verdicts per comparison | ▲/▼ from identical repeats |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for task, y in rows:
        if task.table == "sim":
            _, noise, configurations, n, _ = task.args
            layout = "2" if configurations == 2 else f"baseline + {configurations - 1}"
            out.append(
                f"| {layout} | {n} | {noise.cv * 100:g} % | {variant_name(noise)} | {y.pages:,} "
                f"| {pct_ci(y.flagged_pages[RATE], y.pages)} | {pct(y.flagged_comparisons[RATE], y.comparisons)} "
                f"| {pct(y.flags[RATE], y.judged[RATE])} | {y.judged[RATE] / y.comparisons:.1f} "
                f"| {y.exact_flags[RATE]} of {y.flags[RATE]} |"
            )
    out.append("\n### Power: a true +20 % on one test, the only difference on the page (CV 5 %)\n")
    out.append(
        "| configurations | N | values | changed test | pages | that test ▲ (95 % CI) "
        "| ▲ and no other rate ▲/▼ | that test ▼ | pages with another rate ▲/▼ "
        "| median detectable_pct where missed |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for task, y in rows:
        if task.table == "power":
            _, noise, configurations, n, test, _, _ = task.args
            layout = "2" if configurations == 2 else f"baseline + {configurations - 1}"
            out.append(
                f"| {layout} | {n} | {variant_name(noise)} | {test} | {y.pages:,} | {pct_ci(y.found, y.pages)} "
                f"| {pct(y.found_alone, y.pages)} | {pct(y.wrong_way, y.pages)} | {pct(y.flagged_pages[RATE], y.pages)} "
                f"| {median(y.detectable)} |"
            )
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1000, help="simulated pages per row (default 1000)")
    parser.add_argument(
        "--five-splits", type=int, default=None, help="sample this many 5-vs-5 splits of the real runs (default: all)"
    )
    parser.add_argument("--partitions", type=int, default=1000, help="baseline + 5 partitions of the real runs")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--no-sample-sweep", action="store_true", help="skip the sample sweep's summary")
    args = parser.parse_args()
    started = time.perf_counter()
    load_before = os.getloadavg()
    listed = tasks(args)
    # Longest first, so that the last worker is not left alone with a long row.
    order = sorted(range(len(listed)), key=lambda i: -estimate(listed[i]))
    tallies: list[Tally | None] = [None] * len(listed)
    with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
        for index, tally in zip(order, pool.imap(run_task, [listed[i] for i in order]), strict=True):
            tallies[index] = tally
    done = [t for t in tallies if t is not None]
    print(markdown(listed, done))
    if not args.no_sample_sweep:
        print("\n### The sample sweep's summary (today's engine)\n")
        print(sample_sweep_summary())
    wall = time.perf_counter() - started
    cpu = sum(t.seconds for t in done)
    print(
        f"\nProfile: MEANS={MEANS}, CENSORED_SHARE={CENSORED_SHARE}. Real splits counted: 3 vs 3 "
        f"{count_two_way_splits(12, 3):,}, 5 vs 5 {count_two_way_splits(12, 5):,}."
    )
    print(
        f"Took {wall:.0f} s wall, {cpu:.0f} s in the rows, --jobs {args.jobs}, on {os.cpu_count()} CPUs; "
        f"load average {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after; "
        f"Python {sys.version.split()[0]}."
    )
    return 0


def estimate(task: Task) -> float:
    """Roughly how long a row takes (ms per page times pages), for ordering only."""
    if task.run is real_splits:
        k, sample = task.args[1], task.args[2]
        return (sample or count_two_way_splits(12, k)) * 2.0
    if task.run is real_partitions:
        return task.args[-1] * 11.5
    configurations, pages = task.args[2], task.args[-1]
    return pages * (2.5 if configurations == 2 else 11.5)


if __name__ == "__main__":
    sys.exit(main())
