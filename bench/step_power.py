"""History: how close does the detection come to the best any test can do on a 10 % step with 3 runs after it?

The goal asks that a 10 % step at CV ≤ 3 % be found, within one run, in ≥ 95 % of series by the 3rd run after it,
while a machine·configuration shows at most one false change per 100 runs. The second goal sets each rate series'
threshold (detect.series_max_p(12)), of which the first look at a split, 3 runs after it, has its share
(detect.look_p). This script sets beside each other, for N runs before the step:

- the ideal test: Student's t of the 3 runs after against the N before, the step's run given, at the first look's
  threshold (the detection tests each split at that look: it must also not take a neighbouring split for the step);
- the detection itself: app/history/detect.analyse on the same kind of series (tests/history/simulated.py: log-normal
  noise, bonnie++'s rounding), found within one run of the step;
- the threshold the ideal test would need for 95 %, as a multiple of the first look's: the factor by which the false
  changes of the noisiest series (bench/RESULTS.md, up to 0.9 per 100 runs at CV 30 %) would grow with it.

Usage: .venv/bin/python bench/step_power.py [--trials 1000] [--ideal-trials 200000]
Every row draws from its own seed, so the figures are deterministic. Prints Markdown.
"""

from __future__ import annotations

import argparse
import math
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.compare.stats import t_sf
from app.history import detect
from tests.history import simulated as sim

STEP = 1.10
AFTER = 3
CV = 0.03
GOAL = 0.95


def critical_t(p_two_sided: float, df: int) -> float:
    """The t beyond which a two-sided p is below p_two_sided (bisection on t_sf)."""
    low, high = 0.0, 50.0
    for _ in range(80):
        middle = (low + high) / 2
        low, high = (middle, high) if 2 * t_sf(middle, df) > p_two_sided else (low, middle)
    return high


def ideal_t(rng: np.random.Generator, before: int, trials: int) -> np.ndarray:
    """The pooled t of each simulated series' AFTER runs against its `before` runs, on the logs."""
    sigma = math.sqrt(math.log1p(CV * CV))
    x = rng.normal(0.0, sigma, (trials, before))
    y = rng.normal(math.log(STEP), sigma, (trials, AFTER))
    pooled = ((before - 1) * x.var(axis=1, ddof=1) + (AFTER - 1) * y.var(axis=1, ddof=1)) / (before + AFTER - 2)
    return (y.mean(axis=1) - x.mean(axis=1)) / np.sqrt(pooled * (1 / before + 1 / AFTER))


def needed_p(t_values: np.ndarray, df: int) -> float:
    """The largest two-sided threshold at which the ideal test finds GOAL of the steps."""
    t_at_goal = float(np.quantile(t_values, 1 - GOAL))
    return 2 * t_sf(t_at_goal, df)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000, help="series the detection analyses a row")
    parser.add_argument("--ideal-trials", type=int, default=200_000, help="series the ideal test sees a row")
    options = parser.parse_args()
    max_p = detect.series_max_p(sim.PER_MEASURE)
    first_look = detect.look_p(max_p)[0]
    print(
        f"A +10 % step at CV {CV:.0%}, {AFTER} runs after it; threshold max_p = {max_p:.3g} a series, "
        f"{first_look:.3g} at a split's first look.\n"
    )
    print("| runs before | ideal t-test, step's run given | detection, within one run | threshold for 95 % (ideal) |")
    print("|---:|---:|---:|---:|")
    for before in (20, 50, 100):
        df = before + AFTER - 2
        t_values = ideal_t(np.random.default_rng(zlib.crc32(f"ideal-{before}".encode())), before, options.ideal_trials)
        ideal = float((t_values > critical_t(first_look, df)).mean())
        found = sim.found(
            np.random.default_rng(zlib.crc32(f"found-{before}".encode())),
            sim.Noise(CV),
            STEP,
            before,
            AFTER,
            options.trials,
            max_p,
        ).share
        needed = needed_p(t_values, df)
        print(f"| {before} | {ideal:.1%} | {found:.1%} | {needed:.2g} (×{needed / first_look:.1f}) |")


if __name__ == "__main__":
    main()
