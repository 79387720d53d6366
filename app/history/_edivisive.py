"""E-divisive means with a significance test, windowed split then merge (Fleming et al., "Hunter",
doi 10.1145/3578244.3583719, as Apache Otava 0.8.0 runs it), in numpy, the test left to the caller.

- `split()`: Matteson and James's divisive search (the split maximising the energy statistic Q over the split
  and the end of its right part) inside windows of `window` runs that advance by half a window, each window's
  splits kept while the caller's test gives p ≤ the first-pass threshold: the "weak" change points.
- `merge()`: the weak points are dropped one at a time, the weakest p first while one is at or above `max_p`,
  then the smallest effect while one is too small; each drop re-tests the two neighbours, whose stretches grew.

Differences from Otava, all off at `min_runs=1`: a split leaves at least `min_runs` runs on its left, and Q
is maximised only over right parts of at least `min_runs` runs, so a spike of fewer runs is never a part of
its own. The test sees global indices (start, split, stop) so it can look at anything it keeps about the series.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True, slots=True)
class Comparison:
    """What the caller's test says of runs [start, split) against [split, stop)."""

    p_value: float
    magnitude: float  # how far from no change (|log ratio|): the merge drops the smallest first
    large_enough: bool  # at least the minimum effect


# (start, split, stop) in indices of the whole series -> the test of [start, split) against [split, stop)
Compare = Callable[[int, int, int], Comparison]


def first_pass_p(max_p: float) -> float:
    """Otava's threshold for weak change points: 10x max_p below 0.05, 2x below 0.5."""
    return max_p * 10 if max_p < 0.05 else (max_p * 2 if max_p < 0.5 else max_p)


def _prefix(window: NDArray[np.float64]) -> NDArray[np.float64]:
    """P[i, j] = sum of |z_a - z_b| over a < i, b < j: every block sum of the distances in four lookups."""
    distances = np.abs(window[:, None] - window[None, :])
    prefix = np.zeros((len(window) + 1, len(window) + 1))
    prefix[1:, 1:] = distances.cumsum(axis=0).cumsum(axis=1)
    return prefix


def best_split(prefix: NDArray[np.float64], start: int, stop: int, min_runs: int) -> tuple[int, float] | None:
    """The split tau of [start, stop) (window indices) maximising Q(tau, kappa) over kappa, and that Q:
    Q = 2/(m+n) S_xy - 2m/((m+n)(n-1)) S_xx - 2n/((m+n)(m-1)) S_yy for X = [start, tau), Y = [tau, kappa),
    n = |X|, m = |Y| (a within-sum term is 0 for a part of one run). Ties go to the smallest tau, then kappa,
    as numpy's argmax over Otava's matrix does. None when no split leaves min_runs a side."""
    taus = np.arange(start + min_runs, stop - min_runs + 1)
    if len(taus) == 0:
        return None
    kappas = np.arange(start + 2 * min_runs, stop + 1)
    diagonal = prefix.diagonal()
    p_tau_tau = diagonal[taus][:, None]
    p_tau_kappa = prefix[taus[:, None], kappas[None, :]]
    s_xy = p_tau_kappa - p_tau_tau - prefix[start, kappas][None, :] + prefix[start, taus][:, None]
    s_xx = (p_tau_tau - 2 * prefix[start, taus][:, None] + prefix[start, start]) / 2
    s_yy = (diagonal[kappas][None, :] - 2 * p_tau_kappa + p_tau_tau) / 2
    n = (taus - start)[:, None].astype(np.float64)
    m = (kappas[None, :] - taus[:, None]).astype(np.float64)
    total = m + n
    with np.errstate(divide="ignore", invalid="ignore"):
        x_weight = np.where(n > 1, 2 * m / (total * (n - 1)), 0.0)
        y_weight = np.where(m > 1, 2 * n / (total * (m - 1)), 0.0)
    q = 2 / total * s_xy - x_weight * s_xx - y_weight * s_yy
    q[m < min_runs] = -np.inf
    row, column = divmod(int(np.argmax(q)), q.shape[1])
    return int(taus[row]), float(q[row, column])


def divisive(z: NDArray[np.float64], offset: int, max_p: float, min_runs: int, compare: Compare) -> list[int]:
    """Matteson and James's divisive search in one window (z = the series' window starting at `offset`):
    the best split of every stretch between the splits kept so far, the best of them tested in its stretch,
    kept while p ≤ max_p. Window indices, sorted."""
    prefix = _prefix(z)
    kept: list[int] = []
    known: dict[tuple[int, int], tuple[int, float] | None] = {}
    while True:
        bounds = [0, *kept, len(z)]
        best: tuple[float, int, int, int] | None = None  # q, tau, start, stop
        for start, stop in zip(bounds, bounds[1:], strict=False):
            if (start, stop) not in known:
                known[start, stop] = best_split(prefix, start, stop, min_runs) if stop - start > 1 else None
            found = known[start, stop]
            if found is not None and (best is None or found[1] > best[0]):
                best = (found[1], found[0], start, stop)
        if best is None:
            return kept
        _, tau, start, stop = best
        if not compare(offset + start, offset + tau, offset + stop).p_value <= max_p:
            return kept
        kept = sorted([*kept, tau])


def split(z: NDArray[np.float64], window: int, max_p: float, min_runs: int, compare: Compare) -> list[int]:
    """The weak change points: `divisive` in windows of `window` runs, each starting half a window after the
    last, or at the last point it found if that is later. Sorted indices of the series."""
    if window < 2:
        raise ValueError("window must be at least 2")
    step = window // 2
    found: set[int] = set()
    start = 0
    while start < len(z):
        stop = min(start + window, len(z))
        points = divisive(z[start:stop], start, max_p, min_runs, compare)
        last = points[-1] + start if points else 0
        found.update(point + start for point in points)
        start = max(last, start + step)
    return sorted(found)


def merge(points: list[int], n: int, max_p: float, compare: Compare) -> list[tuple[int, Comparison]]:
    """Drop weak points until every one left has p < max_p and is large enough: the largest p first while
    one is at or above max_p, then the smallest magnitude. Each point is tested between its neighbours."""
    kept = list(points)
    bounds = [0, *kept, n]
    tests = [compare(bounds[i], bounds[i + 1], bounds[i + 2]) for i in range(len(kept))]
    while kept:
        weakest = max(range(len(kept)), key=lambda i: tests[i].p_value)
        if tests[weakest].p_value < max_p:
            weakest = min(range(len(kept)), key=lambda i: tests[i].magnitude)
            if tests[weakest].large_enough:
                break
        del kept[weakest], tests[weakest]
        bounds = [0, *kept, n]
        for i in (weakest - 1, weakest):
            if 0 <= i < len(kept):
                tests[i] = compare(bounds[i], bounds[i + 1], bounds[i + 2])
    return list(zip(kept, tests, strict=True))
