"""History: change points replayed. How many false changes does app/history/detect.py report on series of one
unchanged setup, how soon does it find a real step, and how long does it take? The figures of bench/RESULTS.md,
"History: change points by E-divisive with a t-test" (before) and "Change points as the runs come" (after).

Usage: .venv/bin/python bench/history_replay.py [--configurations 40] [--trials 400] [--rates-p P] [--latencies-p P]
       [--replay-200 C] [--timing-only | --false-changes-only]

1. False changes per 100 runs of a machine·configuration (its 24 series: 12 rates at series_max_p(12, RATE), 12
   latencies at series_max_p(12, LATENCY) with series_min_effect): simulated (tests/history/simulated.py: bonnie++'s printing, CV 1-30 %, log-normal and log-t3
   tails, the file tests' rates +++++ in 0 or 30 % of runs), N = 12, 50 and 200 runs a series, --configurations
   configurations per row. Counted twice: the changes of each series' final analysis (a snapshot), and every change
   ever reported while the runs arrive one at a time (sim.false_changes_ever_per_100_runs: the board analyses again
   after every upload, here from run 2 × MIN_RUNS on, and a change shown once has been on /changes and in the feed
   even when a later run takes it back; one that moves to another run is another row, so it counts again). N = 12
   and 50 replay the snapshot's own configurations (the same seeds), so they are never below it; N = 200 only with
   --replay-200 C, its first C configurations (a configuration of 200 runs replayed takes 3-4 s, 40 a row minutes,
   so the column is left out unless asked for).
2. Found: a 10 % and a 5 % step at CV 1-3 % after 20 or 100 runs, with exactly 3 runs after it (found within one
   run; of those, at the step's own run), and replayed run by run up to 20 after it, the median delay.
3. The real series of one unchanged setup each: tests/data/aa/, tests/data/aa_censored/ and tests/data/history/
   (when present): changes per 100 runs of the file's configuration, all its series together; and
   tests/data/history/throttle-step/ (when present), whose throttle halved: the changes with 3 runs after the step
   and with all 40.
4. Time: analyse() on 1,000 runs, median of repeats, beside numpy sorting the same 1,000 values (the reference
   measured in the same run), and a machine of 24 such series. --false-changes-only prints table 1 alone.

Every row draws from its own seed (its name's CRC), so the figures are deterministic. Prints Markdown.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.history import detect
from app.history.series import LATENCY, RATE
from tests.history import simulated as sim

SERIES = sim.PER_MEASURE


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def false_changes(configurations: int, family: dict[str, float], replay_200: int = 0) -> None:
    rates, latencies = (family[m] / SERIES for m in (RATE, LATENCY))
    replayed = (12, 50, 200) if replay_200 > 0 else (12, 50)
    print(
        f"### False changes per 100 runs of a configuration (12 rates at max_p = {rates:.3g}, 12 latencies at "
        f"{latencies:.3g} and ×{detect.LATENCY_MIN_EFFECT})\n"
    )
    print(
        "N = …: the changes of each series' final analysis (a snapshot). N = …, ever: every change ever reported, "
        f"replayed run by run (analysed again at every run from the {2 * detect.MIN_RUNS}th; a change counted once "
        "per run index), on the same configurations"
        + (f" (N = 200: the first {replay_200} of them)" if replay_200 > 0 else "")
        + ".\n"
    )
    print("| CV | tails | +++++ | N = 12 | N = 50 | N = 200 | " + " | ".join(f"N = {n}, ever" for n in replayed) + " |")
    print("|---:|---|---:|---:|---:|---:|" + "---:|" * len(replayed))
    for cv in (0.01, 0.03, 0.10, 0.30):
        for heavy in (False, True):
            for share in (0.0, 0.3):
                noise = sim.Noise(cv, heavy=heavy, censored_share=share)
                cells, ever = [], []
                for n in (12, 50, 200):
                    # the same number of runs per row: 200 configurations of 12 runs weigh as 12 of 200
                    count = max(configurations, configurations * 200 // n // 4)
                    rate = sim.false_changes_per_100_runs(rng_for(f"aa {noise} {n}"), noise, n, count, family)
                    cells.append(f"{rate:.2f}")
                    if n in replayed:
                        count = min(count, replay_200) if n == 200 else count
                        rate = sim.false_changes_ever_per_100_runs(rng_for(f"aa {noise} {n}"), noise, n, count, family)
                        ever.append(f"{rate:.2f}")
                cells += ever
                tails = "log-t3" if heavy else "log-normal"
                print(f"| {cv:.0%} | {tails} | {share:.0%} | " + " | ".join(cells) + " |")
    print()


def found(trials: int, max_p: float) -> None:
    print(f"### Steps found (max_p = {max_p:.3g}; {trials} series a row)\n")
    print(
        "| step | CV | runs before | found with 3 after | at its own run | found with 20 after | median delay (runs) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for ratio in (1.10, 1.05):
        for cv in (0.01, 0.02, 0.03):
            for before in (20, 100):
                noise = sim.Noise(cv)
                three = sim.found(rng_for(f"3 {ratio} {cv} {before}"), noise, ratio, before, 3, trials, max_p)
                late = sim.found(
                    rng_for(f"20 {ratio} {cv} {before}"), noise, ratio, before, 20, trials // 4, max_p, delays=True
                )
                delay = "-" if late.median_delay is None else f"{late.median_delay:.0f}"
                print(
                    f"| {ratio - 1:+.0%} | {cv:.0%} | {before} | {three.share:.1%} | {three.located_exactly:.0%} | "
                    f"{late.share:.1%} | {delay} |"
                )
    print("\nWith +++++ (30 % of the runs before the step above the bound; the rank test):\n")
    print(
        "| step | CV | runs before | found with 3 after | at its own run | found with 20 after | median delay (runs) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for ratio in (1.25, 0.8):
        for cv in (0.03, 0.10):
            noise = sim.Noise(cv, censored_share=0.3)
            name = f"{ratio} {cv} +++++"
            three = sim.found(rng_for(f"3 {name}"), noise, ratio, 100, 3, trials // 4, max_p, censorable=True)
            late = sim.found(
                rng_for(f"20 {name}"), noise, ratio, 100, 20, trials // 4, max_p, delays=True, censorable=True
            )
            delay = "-" if late.median_delay is None else f"{late.median_delay:.0f}"
            print(
                f"| {ratio - 1:+.0%} | {cv:.0%} | 100 | {three.share:.1%} | {three.located_exactly:.0%} | "
                f"{late.share:.1%} | {delay} |"
            )
    print()


def real(family: dict[str, float]) -> None:
    print("### Real series of one unchanged setup (as a machine of one configuration: 12 series of each measure)\n")
    print("| file | runs | series (+++++ in some runs) | changes | per 100 runs of the configuration |")
    print("|---|---:|---:|---:|---:|")
    for name, series in sim.real_sets().items():
        runs = len(series[0].values)
        changes = sum(len(sim.analysed(s, family).changes) for s in series)
        censored = sum(any(s.censored) for s in series)
        print(f"| {name} | {runs} | {len(series)} ({censored}) | {changes} | {100 * changes / runs:.2f} |")
    print()
    stepped = sim.real_step()
    if stepped is None:
        return
    print(f"tests/data/history/{sim.STEPPED}/ (the throttle halved from run {sim.STEP_INDEX + 1}):\n")
    print("| series | runs given | changes (run, ratio) |")
    print("|---|---:|---|")
    for s in stepped:
        for runs in (sim.STEP_INDEX + 3, len(s.values)):
            found = sim.analysed(sim.Series(s.name, s.values[:runs], s.censored[:runs]), family).changes
            if found:
                shown = ", ".join(f"{c.index + 1} ×{c.ratio:.2f}" for c in found)
                print(f"| {s.name} | {runs} | {shown} |")
    print()


def medians_ms(work, reference, repeats: int) -> tuple[float, float, float]:
    """Median wall and CPU (this process's) ms of `work`, and the median ratio of its wall time to the reference's,
    each repeat timing the reference just before the work: on a shared machine both then meet the same load."""
    walls, cpus, ratios = [], [], []
    for _ in range(repeats):
        started = time.perf_counter()
        reference()
        reference_s = time.perf_counter() - started
        started, started_cpu = time.perf_counter(), time.process_time()
        work()
        cpus.append(time.process_time() - started_cpu)
        walls.append(time.perf_counter() - started)
        ratios.append(walls[-1] / reference_s)
    return 1000 * statistics.median(walls), 1000 * statistics.median(cpus), statistics.median(ratios)


def timing(max_p: float, repeats: int = 31) -> None:
    rng = rng_for("timing")
    plain = sim.series(rng, sim.Noise(0.05), 50_000, 1_000, step=(600, 1.1))
    censored = sim.series(rng, sim.Noise(0.05, censored_share=0.3), 50_000, 1_000, censorable=True)
    machine = sim.configuration(rng, sim.Noise(0.05, censored_share=0.3), 1_000)
    values = np.array([v for v in plain.values if v is not None])
    reference = [values.copy() for _ in range(100)]

    def sort_100() -> None:
        for copy in reference:
            np.sort(copy)

    print("### Time (median of repeats)\n")
    print("| what | wall ms | CPU ms | × numpy sorting the same 1,000 values 100 times |")
    print("|---|---:|---:|---:|")
    rows = {
        "numpy: np.sort of the series' 1,000 values, 100 times (reference)": sort_100,
        "analyse(), 1,000 runs, a 10 % step, no +++++": lambda: detect.analyse(
            plain.values, plain.censored, max_p=max_p
        ),
        "analyse(), 1,000 runs, 30 % +++++ (rank test)": lambda: detect.analyse(
            censored.values, censored.censored, max_p=max_p
        ),
        "a machine: 24 series of 1,000 runs (6 with +++++)": lambda: [
            detect.analyse(s.values, s.censored, max_p=max_p) for s in machine
        ],
    }
    for what, work in rows.items():
        wall, cpu, ratio = medians_ms(work, sort_100, repeats if "machine" not in what else max(3, repeats // 4))
        print(f"| {what} | {wall:.2f} | {cpu:.2f} | {ratio:.1f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configurations", type=int, default=40, help="simulated configurations per row (N=200)")
    parser.add_argument("--trials", type=int, default=400, help="series per row of the found table")
    parser.add_argument("--rates-p", type=float, default=detect.FAMILY_P[RATE], help="the rates' family p")
    parser.add_argument("--latencies-p", type=float, default=detect.FAMILY_P[LATENCY], help="the latencies' family p")
    parser.add_argument(
        "--replay-200",
        type=int,
        default=0,
        metavar="C",
        help="configurations per row for N=200 replayed run by run (0: the column left out)",
    )
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--timing-only", action="store_true", help="table 4 alone")
    only.add_argument("--false-changes-only", action="store_true", help="table 1 alone")
    args = parser.parse_args()
    family = {RATE: args.rates_p, LATENCY: args.latencies_p}
    max_p = family[RATE] / SERIES  # a rate's: the found table's series are rates
    started = time.perf_counter()
    if args.false_changes_only:
        false_changes(args.configurations, family, args.replay_200)
        print(f"Took {time.perf_counter() - started:.0f} s.")
        return
    timing(max_p)
    if args.timing_only:
        return
    real(family)
    false_changes(args.configurations, family, args.replay_200)
    found(args.trials, max_p)
    print(f"Took {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
