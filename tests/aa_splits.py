"""A/A pages: comparisons in which nothing changed, for calibrating the comparison's verdicts.

Every configuration of an A/A page is the same setup, so every better/worse verdict on it is a false alarm.
Two sources:

- **real**: the 24 runs of tests/data/aa/ (tests/data/aa/README.md) and the 24 partly +++++ runs of
  tests/data/aa_censored/ (`n80`, `n64`; tests/data/aa_censored/README.md), split into fake configurations:
  `two_way_splits` (every unordered pair of disjoint groups of k runs), `sampled_two_way_splits` (a seeded
  sample of them) and `random_partitions` (a baseline and more configurations, seeded);
- **simulated**: `simulated_page`, runs drawn from a log-normal with a given CV around a fixed profile of
  twelve means, optionally integer-rounded and +++++-censored as bonnie++ prints them, with an optional true
  change (`effect`) on one test of one configuration (for power). `Noise(partly_censored=True)` gives the runs a
  setup (SIZED_SETUP: a file size and -n) whose +++++ bounds the comparison works out, and puts 20–80 % of the runs
  of each test that has a bound above it (PARTLY_CENSORED_SHARE).

Pure: no pytest, no database, no HTTP; random numbers only from the `random.Random` passed in, so a seed
gives the same pages on any machine. A page is a list of `RunFigures` whose tag `cfg` names its
configuration (`cfg=0` the baseline), compared with `group=cfg` (`PAGE_GROUP`) against `page[0]`.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

from app import bonnie
from app.bonnie import STATUS_OK, STATUS_TOO_FAST, TESTS, Result
from app.compare.figures import NO_SETUP, RunFigures, RunSetup
from app.ingest.parsing import ParsedRun, parse_line

AA_DIR = Path(__file__).resolve().parent / "data" / "aa"
AA_CENSORED_DIR = AA_DIR.parent / "aa_censored"
AA_FILES = {
    "tmpfs": AA_DIR / "tmpfs.csv",
    "ext4": AA_DIR / "ext4.csv",
    "n80": AA_CENSORED_DIR / "n80.csv",
    "n64": AA_CENSORED_DIR / "n64.csv",
}
CONFIG_TAG = "cfg"
BASELINE = "0"  # the baseline configuration's cfg tag

Split = tuple[tuple[int, ...], tuple[int, ...]]  # (baseline's run indexes, the other's)
Partition = tuple[tuple[int, ...], ...]  # the baseline's run indexes first


# ==== Splits and partitions of n runs (indexes 0..n-1) ====


def two_way_splits(n: int, k: int) -> Iterator[Split]:
    """Every split of k of the n runs against k others, each unordered pair once (the lower first run is
    the baseline): C(n, k) * C(n - k, k) / 2 of them, e.g. 9,240 for n = 12, k = 3 and 8,316 for k = 5.
    Once per pair is enough: Welch's interval of B/A is that of A/B inverted, so the verdict flips side
    but a flag stays a flag."""
    for first in itertools.combinations(range(n), k):
        rest = [i for i in range(n) if i not in first]
        for second in itertools.combinations(rest, k):
            if first[0] < second[0]:
                yield first, second


def count_two_way_splits(n: int, k: int) -> int:
    return math.comb(n, k) * math.comb(n - k, k) // 2


def sampled_two_way_splits(n: int, k: int, count: int, seed: int) -> list[Split]:
    """`count` distinct splits drawn without replacement (all of them, in order, when there are no more)."""
    every = list(two_way_splits(n, k))
    if count >= len(every):
        return every
    return random.Random(seed).sample(every, count)


def random_partitions(n: int, groups: int, size: int, count: int, seed: int) -> list[Partition]:
    """`count` random partitions of `groups` * `size` of the n runs into `groups` configurations of `size`
    runs (drawn with replacement: 12 runs into 6 pairs have 7,484,400 ordered partitions). The first group
    is the baseline."""
    if groups * size > n:
        raise ValueError(f"{groups} groups of {size} need {groups * size} runs, not {n}")
    rng = random.Random(seed)
    partitions = []
    for _ in range(count):
        order = rng.sample(range(n), groups * size)
        partitions.append(tuple(tuple(sorted(order[g * size : (g + 1) * size])) for g in range(groups)))
    return partitions


# ==== Real A/A runs ====


def setup_of(parsed: ParsedRun) -> RunSetup:
    file_test = tuple(parsed.file_test) if parsed.file_test is not None else None
    return RunSetup(
        parsed.file_size_mib,
        parsed.io_chunk_bytes,
        file_test,
        parsed.seek_count,
        parsed.seek_procs,
        parsed.concurrency,
        None,
    )


def load_aa_runs(fs: str) -> list[ParsedRun]:
    """The 12 runs of tests/data/aa/<fs>.csv, in run order."""
    runs = []
    for number, line in enumerate(AA_FILES[fs].read_text(encoding="ascii").splitlines(), 1):
        parsed = parse_line(line, number)
        if not isinstance(parsed, ParsedRun):
            raise ValueError(f"{AA_FILES[fs]}:{number}: not a bonnie++ result: {parsed}")
        runs.append(parsed)
    return runs


def page_of_groups(runs: Sequence[ParsedRun], groups: Sequence[Sequence[int]]) -> list[RunFigures]:
    """The runs of `groups` (indexes into `runs`) as one page: group g tagged cfg=g, the baseline's first."""
    page: list[RunFigures] = []
    for g, indexes in enumerate(groups):
        for i in indexes:
            parsed = runs[i]
            page.append(
                RunFigures(
                    id=len(page) + 1,
                    machine=parsed.machine,
                    label=None,
                    tags={CONFIG_TAG: str(g)},
                    format_version=parsed.format_version,
                    bonnie_version=parsed.bonnie_version,
                    results=parsed.results,
                    setup=setup_of(parsed),
                )
            )
    return page


# ==== Simulated runs ====

# Twelve true means (TESTS order) of a made-up slow disk run with -b: block I/O in KiB/s, seeks/s and
# files/s. The small ones (seeks, the fsynced creates and deletes) are where integer rounding bites:
# at CV 5 % a mean of 12 has an SD of 0.6, so repeats often print the same number.
MEANS = (900.0, 120_000.0, 50_000.0, 2_500.0, 300_000.0, 180.0, 45.0, 20_000.0, 60.0, 30.0, 15_000.0, 12.0)
# With censoring: the share of runs of each test that print +++++ (took under MinTime, 0.5 s). Block I/O
# and the slow, fsynced tests are always measured; seeks sometimes; the fast stats and a create often.
CENSORED_SHARE = (0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0, 0.5, 0.0, 0.3, 0.7, 0.0)
# Partly censored runs (Noise.partly_censored): a 256 MiB file (block I/O +++++ above 524,288 KiB/s) and -n 16
# (file tests +++++ above 32,768 files/s), as bonnie.too_fast_above works them out from the line; per test the
# share of runs above that bound, 20–80 % wherever a bound exists (per-char I/O is never that fast; seeks have none).
SIZED_SETUP = RunSetup(256, None, (16, 0, 0, 0, None), None, None, None, None)
PARTLY_CENSORED_SHARE = (0.0, 0.2, 0.5, 0.0, 0.8, 0.0, 0.3, 0.8, 0.5, 0.6, 0.7, 0.4)
CPU_PCT, LATENCY_US = 50, 100  # every simulated run's %CPU and latency: equal, so they never give a verdict


@dataclass(frozen=True, slots=True)
class Noise:
    """How simulated runs vary: log-normal with coefficient of variation `cv` (0.05 = 5 %), printed as
    bonnie++ prints (`rounded`: whole numbers) and with `censored`: a value above its test's MinTime bound
    (the value exceeded by CENSORED_SHARE of a run's draws) printed as +++++."""

    cv: float
    rounded: bool = False
    censored: bool = False
    partly_censored: bool = False  # SIZED_SETUP's bounds, PARTLY_CENSORED_SHARE of the runs above them

    @property
    def sigma(self) -> float:
        return math.sqrt(math.log1p(self.cv * self.cv))

    @property
    def setup(self) -> RunSetup:
        return SIZED_SETUP if self.partly_censored else NO_SETUP

    def means(self) -> tuple[float, ...]:
        """Per test, the true mean: MEANS, or with partly_censored, for a test with a share, the mean whose runs
        exceed the setup's bound with that share (log X ~ N(log mean − σ²/2, σ²))."""
        if not self.partly_censored:
            return MEANS
        sigma = self.sigma
        means = []
        for test, mean, share in zip(TESTS, MEANS, PARTLY_CENSORED_SHARE, strict=True):
            bound = self._sized_bound(test)
            if share <= 0 or bound is None:
                means.append(mean)
                continue
            z = NormalDist().inv_cdf(1 - share)
            means.append(bound * math.exp(sigma * sigma / 2 - sigma * z))
        return tuple(means)

    @staticmethod
    def _sized_bound(test: str) -> float | None:
        file_test = SIZED_SETUP.file_test
        return bonnie.too_fast_above(test, SIZED_SETUP.file_size_mib, file_test[0] if file_test else None)

    def bounds(self) -> tuple[float | None, ...]:
        """Per test, the rate above which bonnie++ prints +++++ (None: never)."""
        if self.partly_censored:
            return tuple(
                self._sized_bound(test) if share > 0 else None
                for test, share in zip(TESTS, PARTLY_CENSORED_SHARE, strict=True)
            )
        if not self.censored:
            return (None,) * len(TESTS)
        sigma = self.sigma
        bounds: list[float | None] = []
        for mean, share in zip(MEANS, CENSORED_SHARE, strict=True):
            if share <= 0:
                bounds.append(None)
                continue
            # log X ~ N(log mean - sigma^2 / 2, sigma^2): P(X > bound) = share
            z = NormalDist().inv_cdf(1 - share)
            bounds.append(math.exp(math.log(mean) - sigma * sigma / 2 + sigma * z))
        return tuple(bounds)


def simulated_results(
    rng: random.Random, noise: Noise, bounds: Sequence[float | None], factors: Sequence[float] = ()
) -> tuple[Result, ...]:
    """One run's twelve Results; `factors[t]` multiplies test t's true mean (a real change)."""
    sigma = noise.sigma
    mu_shift = -sigma * sigma / 2  # the log-normal's mean is then exactly the true mean
    results = []
    for t, mean in enumerate(noise.means()):
        true_mean = mean * (factors[t] if t < len(factors) else 1.0)
        value: float = true_mean * math.exp(rng.gauss(mu_shift, sigma))
        bound = bounds[t]  # file size / MinTime: the same for every configuration, changed or not
        if bound is not None and value > bound:
            results.append(Result(STATUS_TOO_FAST, None, None, LATENCY_US))
            continue
        if noise.rounded:
            value = max(round(value), 0)
        results.append(Result(STATUS_OK, value, CPU_PCT, LATENCY_US))
    return tuple(results)


def simulated_page(
    rng: random.Random,
    noise: Noise,
    configurations: int,
    n: int,
    effect: tuple[int, int, float] | None = None,
) -> list[RunFigures]:
    """`configurations` configurations (the first the baseline) of `n` runs each; `effect` =
    (configuration, test index, factor) makes that configuration's true mean of that test `factor` times
    the others' (None: an A/A page)."""
    bounds = noise.bounds()
    page: list[RunFigures] = []
    for g in range(configurations):
        factors = [1.0] * len(TESTS)
        if effect is not None and effect[0] == g:
            factors[effect[1]] = effect[2]
        for _ in range(n):
            run_id = len(page) + 1
            page.append(
                RunFigures(
                    run_id,
                    "sim",
                    None,
                    {CONFIG_TAG: str(g)},
                    "1.98",
                    "2.00a",
                    simulated_results(rng, noise, bounds, factors),
                    noise.setup,
                )
            )
    return page
