"""Series of one machine and configuration as bonnie++ prints them, for calibrating app/history/detect.py.

A configuration has 24 series: the 12 tests' rates and their 12 latencies, each drawn around a fixed level with a
given CV (log-normal, or a log-t with 3 degrees of freedom for heavier tails), printed as bonnie++ prints them
(whole rates; latencies truncated to us below 0.1 s, to ms above) and, with `censored_share`, the file tests'
rates +++++ in about that share of runs (a bound that share of the runs exceed). An optional step multiplies one
series from a given run on. Also: the real series of tests/data/aa/ and tests/data/aa_censored/ (and of
tests/data/history/ when present). Pure: numbers from the numpy Generator passed in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np

from app.bonnie import FILE_TESTS, TESTS
from app.bonnie import STATUS_OK as OK
from app.bonnie import STATUS_TOO_FAST as TOO_FAST
from app.config import DEFAULT_MIN_EFFECT
from app.history import detect
from app.history.detect import Analysis, analyse
from app.history.series import LATENCY, RATE
from app.ingest.parsing import ParsedRun, parse_line

DATA = Path(__file__).resolve().parents[1] / "data"
# A rate level per test (K/s for the block tests, /s for seeks and files) and a latency level (us).
RATE_LEVELS = dict(
    zip(TESTS, [900, 450_000, 180_000, 1_400, 900_000, 4_000, 30_000, 800, 60_000, 35_000, 900, 50_000], strict=True)
)
LATENCY_LEVELS_US = dict(
    zip(TESTS, [9_000, 250, 300_000, 12_000, 80, 1_500, 600, 40, 150_000, 700, 35, 2_000], strict=True)
)
SERIES_PER_CONFIGURATION = 2 * len(TESTS)
PER_MEASURE = len(TESTS)  # a configuration's rate series, and its latency series


@dataclass(frozen=True, slots=True)
class Noise:
    cv: float
    heavy: bool = False  # log-t with 3 degrees of freedom rather than log-normal
    rounded: bool = True
    censored_share: float = 0.0  # of the file tests' runs, +++++


@dataclass(frozen=True, slots=True)
class Series:
    name: str
    values: list[float | None]
    censored: list[bool]


def log_noise(rng: np.random.Generator, noise: Noise, n: int) -> np.ndarray:
    sigma = math.sqrt(math.log1p(noise.cv * noise.cv))
    if noise.heavy:
        return sigma * rng.standard_t(3, n) / math.sqrt(3)  # t_3 has variance 3
    return sigma * rng.standard_normal(n)


def printed_latency_us(value_us: np.ndarray) -> np.ndarray:
    """bonnie++ truncates: us below 0.1 s, ms below 100 s."""
    return np.where(value_us < 100_000, np.floor(value_us), np.floor(value_us / 1_000) * 1_000)


def series(
    rng: np.random.Generator,
    noise: Noise,
    level: float,
    n: int,
    *,
    latency: bool = False,
    censorable: bool = False,
    step: tuple[int, float] | None = None,
) -> Series:
    """One series of n runs; `step` = (first run, ratio) multiplies the runs from that one on."""
    values = level * np.exp(log_noise(rng, noise, n))
    if step is not None:
        values[step[0] :] *= step[1]
    if noise.rounded:
        values = np.maximum(printed_latency_us(values) if latency else np.round(values), 1.0)
    censored = np.zeros(n, dtype=bool)
    if censorable and noise.censored_share > 0:
        sigma = math.sqrt(math.log1p(noise.cv * noise.cv))
        bound = level * math.exp(sigma * NormalDist().inv_cdf(1 - noise.censored_share))
        censored = values > bound
    shown: list[float | None] = [None if c else float(v) for v, c in zip(values, censored, strict=True)]
    return Series("latency" if latency else "rate", shown, censored.tolist())


def configuration(rng: np.random.Generator, noise: Noise, n: int) -> list[Series]:
    """The 24 series of one unchanged configuration of n runs."""
    rates = [series(rng, noise, RATE_LEVELS[t], n, censorable=t in FILE_TESTS) for t in TESTS]
    latencies = [series(rng, noise, LATENCY_LEVELS_US[t], n, latency=True) for t in TESTS]
    return rates + latencies


def real_series(lines: list[str]) -> list[Series]:
    """Each test's rate (+++++ censored) and latency over the runs of `lines` (one bonnie++ CSV line a run, in
    order); a series of a test that did not run in every run, or all of whose runs are +++++, is left out."""
    runs = [run for i, line in enumerate(lines) if isinstance(run := parse_line(line, i + 1), ParsedRun)]
    found = []
    for index, test in enumerate(TESTS):
        results = [run.results[index] for run in runs]
        if all(r.status in (OK, TOO_FAST) for r in results) and any(r.status == OK for r in results):
            found.append(
                Series(
                    f"{test} rate",
                    [float(r.value) if r.status == OK and r.value is not None else None for r in results],
                    [r.status == TOO_FAST for r in results],
                )
            )
        latencies = [r.latency_us for r in results]
        if all(latency is not None and latency > 0 for latency in latencies):
            found.append(Series(f"{test} latency", [float(v) for v in latencies if v is not None], [False] * len(runs)))
    return found


# tests/data/history/: folders of one setup run again and again, but this one, whose throttle stepped at run 21
STEPPED = "throttle-step"
STEP_INDEX = 20  # its run 21, the first at 8 MiB/s


def real_sets() -> dict[str, list[Series]]:
    """The committed real series of one unchanged setup each, by file."""
    files = sorted((DATA / "aa").glob("*.csv")) + sorted((DATA / "aa_censored").glob("*.csv"))
    files += [path for path in sorted((DATA / "history").glob("*/lines.csv")) if path.parent.name != STEPPED]
    return {str(path.relative_to(DATA)): real_series(path.read_text().splitlines()) for path in files}


def real_step() -> list[Series] | None:
    """The series of tests/data/history/throttle-step/ (the throttle halved from run 21), when committed."""
    path = DATA / "history" / STEPPED / "lines.csv"
    return real_series(path.read_text().splitlines()) if path.exists() else None


# ==== Replays: what the checks and bench/history_replay.py count ====


def measure_of(one: Series) -> str:
    return LATENCY if one.name.endswith(LATENCY) else RATE


def analysed(one: Series, family: dict[str, float] | None = None, setup_changes: Sequence[int] = ()) -> Analysis:
    """analyse() as app/history/changes.py runs it on a machine of one configuration (PER_MEASURE series of each
    measure), with detect.FAMILY_P or the `family` given, and the runs whose setup changed."""
    measure = measure_of(one)
    max_p = (family or detect.FAMILY_P)[measure] / PER_MEASURE
    return analyse(
        one.values,
        one.censored,
        max_p=max_p,
        min_effect=detect.series_min_effect(DEFAULT_MIN_EFFECT, measure),
        setup_changes=setup_changes,
        by_rank=detect.series_by_rank(measure),
    )


def false_changes_per_100_runs(
    rng: np.random.Generator, noise: Noise, n: int, configurations: int, family: dict[str, float] | None = None
) -> float:
    """Changes found in `configurations` unchanged configurations of n runs (24 series each), per 100 runs of a
    configuration: every one is false."""
    found = sum(len(analysed(s, family).changes) for _ in range(configurations) for s in configuration(rng, noise, n))
    return 100 * found / (configurations * n)


def changes_ever_reported(one: Series, family: dict[str, float] | None = None, first: int = 2 * detect.MIN_RUNS) -> int:
    """The distinct changes reported while the runs of `one` arrive one at a time: the board analyses the series
    again after every upload, from `first` runs on, and a change it shows once is on /changes and in the feed even
    when a later run takes it back. A change is its run index (the first run of the new stretch), as the app keys its
    row: one that moves to another run counts again. The last prefix is the whole series (of `first` runs or more),
    so this counts at least the changes of its final analysis."""
    ever: set[int] = set()
    for k in range(first, len(one.values) + 1):
        ever.update(c.index for c in analysed(Series(one.name, one.values[:k], one.censored[:k]), family).changes)
    return len(ever)


def false_changes_ever_per_100_runs(
    rng: np.random.Generator, noise: Noise, n: int, configurations: int, family: dict[str, float] | None = None
) -> float:
    """false_changes_per_100_runs counted as users meet them: every change ever reported while each series is
    replayed run by run (changes_ever_reported), not only those of the final analysis. The same rng state draws the
    same configurations, so from equal seeds this is never below false_changes_per_100_runs."""
    found = sum(changes_ever_reported(s, family) for _ in range(configurations) for s in configuration(rng, noise, n))
    return 100 * found / (configurations * n)


@dataclass(frozen=True, slots=True)
class Found:
    share: float  # of the series where the step is found within one run, by the last run given
    located_exactly: float  # of those found: at the step's own run
    median_delay: float | None  # runs after the step when first found (given up to `after`), of those found
    wrong_way: int  # changes within one run of the step that go the other way


def found(
    rng: np.random.Generator,
    noise: Noise,
    ratio: float,
    before: int,
    after: int,
    trials: int,
    max_p: float,
    *,
    delays: bool = False,
    censorable: bool = False,
) -> Found:
    """A step of `ratio` after `before` runs: found within one run once `after` runs follow it? With `delays`,
    each series is also replayed run by run from the 3rd run after the step, for the first run at which it is.
    With `censorable`, runs above the level's bound (noise.censored_share of them before the step) are +++++."""
    hits = exact = wrong = 0
    first: list[int] = []
    for _ in range(trials):
        s = series(rng, noise, 50_000, before + after, censorable=censorable, step=(before, ratio))
        changes = analyse(s.values, s.censored, max_p=max_p).changes
        near = [c for c in changes if abs(c.index - before) <= 1]
        wrong += sum((c.ratio > 1) != (ratio > 1) for c in near)
        if near:
            hits += 1
            exact += near[0].index == before
        if delays:
            for k in range(3, after + 1):
                shown = analyse(s.values[: before + k], s.censored[: before + k], max_p=max_p).changes
                if any(abs(c.index - before) <= 1 for c in shown):
                    first.append(k)
                    break
    return Found(hits / trials, exact / hits if hits else 0.0, float(np.median(first)) if first else None, wrong)
