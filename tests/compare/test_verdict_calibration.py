"""The page's verdicts are calibrated: where nothing changed, at most 5 % of pages show a rate ▲/▼; a real +20 % is
still found. Simulated pages (tests/aa_splits.py) with fixed seeds, a few hundred per case; the real A/A runs of
tests/data/aa/ split every way, and the partly +++++ ones of tests/data/aa_censored/ split at random (a +++++ bound
decides a verdict only once its rank test holds in the page's Holm family). bench/verdict_calibration.py measures
the same at a larger scale (bench/RESULTS.md, "Verdict calibration, after" and the sections after it)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from app.compare import engine
from app.compare.comparison import Cell, Comparison
from app.compare.grouping import Grouping
from app.ingest.parsing import TESTS
from tests.aa_splits import (
    CONFIG_TAG,
    Noise,
    load_aa_runs,
    page_of_groups,
    random_partitions,
    sampled_two_way_splits,
    simulated_page,
    two_way_splits,
)

pytestmark = pytest.mark.slow  # hundreds of simulated pages per case: make test-quick leaves them out

PAGE_GROUPING = Grouping(keys=(CONFIG_TAG,))
FLAGGED = ("better", "worse")
# The bound: a page of unchanged runs shows a rate ▲/▼ on at most 5 % of such pages.
FALSE_PAGE_SHARE = 0.05
PAGES = 200


def compare_page(page: list[Any]) -> Comparison:
    # verdicts only: the power figures a within-noise cell states are most of a compare's CPU and decide nothing
    # (test_verdicts_are_the_same_without_power_figures)
    return engine.compare(page, baseline=page[0].id, grouping=PAGE_GROUPING, power_figures=False)


def marks(comparison: Comparison, chart_keys: tuple[str, ...]) -> list[tuple[int, str, str]]:
    """(configuration, test, verdict) of every ▲/▼ in the charts `chart_keys` (the baseline has none)."""
    return [
        (entry.configuration, cell.test, cell.verdict)
        for chart in comparison.charts
        if chart.key in chart_keys
        for entry in chart.configurations
        for cell in entry.tests
        if cell.verdict in FLAGGED
    ]


def rate_marks(comparison: Comparison) -> list[tuple[int, str, str]]:
    return marks(comparison, engine.RATE_CHART_KEYS)


def cpu_per_work_marks(comparison: Comparison) -> list[tuple[int, str]]:
    """(configuration, test) of every CPU-per-work ▲/▼; %CPU itself never has one."""
    chart = next(c for c in comparison.charts if c.key == "cpu")
    found = []
    for entry in chart.configurations:
        for cell in entry.tests:
            assert cell.verdict is None
            if cell.cpu_per_work_verdict in FLAGGED:
                found.append((entry.configuration, cell.test))
    return found


NOISES = {
    "plain": Noise(0.05),
    "rounded": Noise(0.05, rounded=True),
    "+++++": Noise(0.05, censored=True),
    "rounded, +++++": Noise(0.05, rounded=True, censored=True),
}


@pytest.mark.parametrize("configurations", [2, 6])
@pytest.mark.parametrize("n", [3, 5])
@pytest.mark.parametrize("cv", [0.05, 0.30])
@pytest.mark.parametrize("values", ["plain", "rounded, +++++"])
def test_simulated_aa_pages_rarely_show_a_rate_mark(configurations, n, cv, values):
    check_simulated_pages(configurations, n, cv, values)


@pytest.mark.parametrize("n", [3, 5])
@pytest.mark.parametrize("cv", [0.05, 0.30])
@pytest.mark.parametrize("values", ["rounded", "+++++"])
def test_rounding_and_plus_runs_each_alone_keep_two_configuration_pages_calibrated(n, cv, values):
    # each of whole-number output and +++++ censoring on its own (the test above has them together), where a
    # page is cheapest: two configurations, so 1,000 pages a case (~3 s): at a true share of 2–4 % (the bench's
    # rows), 200 pages scatter by ±1.2 points and one case of these eight drew 12 of its first 200 (6 %) where
    # 2,000 pages of another seed gave 2.2 %. bench/verdict_calibration.py has the six-configuration rows too.
    check_simulated_pages(2, n, cv, values, pages=1_000)


def check_simulated_pages(configurations: int, n: int, cv: float, values: str, pages: int = PAGES) -> None:
    noise = Noise(cv, rounded=NOISES[values].rounded, censored=NOISES[values].censored)
    rng = random.Random(f"aa {configurations} {n} {cv} {values}")
    flagged = sum(bool(rate_marks(compare_page(simulated_page(rng, noise, configurations, n)))) for _ in range(pages))
    assert flagged / pages <= FALSE_PAGE_SHARE, f"{flagged} of {pages} A/A pages show a rate ▲/▼"


def test_a_real_change_of_20_percent_is_still_found():
    # CV 5 %, N = 5, two configurations, +20 % on block write the only difference: found on at least 80 % of pages
    # (bench/RESULTS.md gives N = 3 and six configurations too: power falls there, as the page-wide control costs).
    put_block = TESTS.index("put_block")
    rng = random.Random("power 2 5 put_block")
    found = wrong = 0
    for _ in range(PAGES):
        page_marks = rate_marks(compare_page(simulated_page(rng, Noise(0.05), 2, 5, effect=(1, put_block, 1.2))))
        found += ("put_block", "better") in [(test, verdict) for _, test, verdict in page_marks]
        wrong += ("put_block", "worse") in [(test, verdict) for _, test, verdict in page_marks]
    assert found / PAGES >= 0.80 and wrong == 0, f"found on {found} of {PAGES} pages, the wrong way on {wrong}"


@pytest.mark.parametrize("fs", ["tmpfs", "ext4"])
@pytest.mark.parametrize("size", [3, 5])
def test_real_aa_runs_split_every_way_rarely_show_a_rate_mark(fs, size):
    # 12 runs of one unchanged setup: every split into two configurations of `size` (9,240 or 8,316), deterministic.
    # CPU per unit of work (the %CPU chart's only verdict) is held to the same bound on the same pages.
    runs = load_aa_runs(fs)
    splits = flagged = cpu_flagged = 0
    for split in two_way_splits(len(runs), size):
        splits += 1
        comparison = compare_page(page_of_groups(runs, split))
        flagged += bool(rate_marks(comparison))
        cpu_flagged += bool(cpu_per_work_marks(comparison))
    assert splits in (9_240, 8_316)
    assert flagged / splits <= FALSE_PAGE_SHARE, f"{flagged} of {splits} splits show a rate ▲/▼"
    assert cpu_flagged / splits <= FALSE_PAGE_SHARE, f"{cpu_flagged} of {splits} splits show a CPU-per-work ▲/▼"


# ==== +++++ in some runs of a test, not all: the bound's verdicts inside the page's error control ====

# (configurations, runs each): the pages of the issue, 2 v 2, 3 v 3, 5 v 5 and a baseline + 5 configurations of 2
PAGE_SHAPES = [(2, 2), (2, 3), (2, 5), (6, 2)]


@pytest.mark.parametrize(("configurations", "n"), PAGE_SHAPES)
@pytest.mark.parametrize("cv", [0.05, 0.30])
def test_simulated_partly_censored_aa_pages_rarely_show_a_rate_mark(configurations, n, cv):
    # runs with a file size and -n, so that the page works out every +++++ bound, and 20-80 % of each bounded
    # test's runs +++++ (tests/aa_splits.py, PARTLY_CENSORED_SHARE); whole numbers as bonnie++ prints them. Before
    # the rank test, 17-70 % of two-configuration pages and 48-98 % of baseline + 5 × 2 showed a ▲/▼.
    noise = Noise(cv, rounded=True, partly_censored=True)
    rng = random.Random(f"partly censored aa {configurations} {n} {cv}")
    pages = [simulated_page(rng, noise, configurations, n) for _ in range(PAGES)]
    assert any(run.setup.file_test for run in pages[0])
    bounded = flagged = 0
    for page in pages:
        comparison = compare_page(page)
        flagged += bool(rate_marks(comparison))
        bounded += any(cell.bound_ratio is not None for cell in _rate_cells(comparison))
    assert flagged / PAGES <= FALSE_PAGE_SHARE, f"{flagged} of {PAGES} partly censored A/A pages show a rate ▲/▼"
    if n <= 3:  # the case of the issue is there: runs separated by chance, a bound worked out
        assert bounded >= PAGES // 4, f"only {bounded} of {PAGES} pages have a +++++ bound"


def _rate_cells(comparison: Comparison) -> list[Cell]:
    return [
        cell
        for chart in comparison.charts
        if chart.key in engine.RATE_CHART_KEYS
        for entry in chart.configurations
        for cell in entry.tests
    ]


@pytest.mark.parametrize(("configurations", "n"), PAGE_SHAPES)
@pytest.mark.parametrize("setup", ["n80", "n64"])
def test_real_partly_censored_aa_runs_rarely_show_a_rate_mark(setup, configurations, n):
    # 12 real runs of one setup whose creates and deletes are +++++ in some runs and measured in others
    # (tests/data/aa_censored/README.md), split at random into the page's configurations (seeded): before the rank
    # test 9-45 % of two-configuration pages and 74-85 % of baseline + 5 × 2 pages showed a ▲/▼.
    runs = load_aa_runs(setup)
    assert all(run.file_test for run in runs)
    if configurations == 2:
        groups: list[Any] = sampled_two_way_splits(len(runs), n, REAL_PAGES, seed=n)
    else:
        groups = random_partitions(len(runs), configurations, n, REAL_PAGES, seed=configurations)
    flagged = sum(bool(rate_marks(compare_page(page_of_groups(runs, g)))) for g in groups)
    assert flagged / len(groups) <= FALSE_PAGE_SHARE, f"{flagged} of {len(groups)} pages show a rate ▲/▼"


REAL_PAGES = 200


def test_a_large_change_on_a_partly_censored_test_is_found_with_six_runs_a_side():
    # the rank test's price: on a page of 12 rate verdicts a +++++ test is called from 6 runs a side (2 / C(12, 6)
    # = 0.0022, under 0.05 / 12). Block write halved at CV 5 %, where 20 % of the baseline's runs are +++++: the
    # slower side measures every run, below every run of the baseline; found on at least 80 % of pages (by the
    # bound where the baseline has +++++ runs, by Welch's t where it has none), never the wrong way.
    put_block = TESTS.index("put_block")
    rng = random.Random("power partly censored 6")
    pages = PAGES // 2
    found = wrong = 0
    for _ in range(pages):
        page = simulated_page(rng, Noise(0.05, partly_censored=True), 2, 6, effect=(1, put_block, 0.5))
        page_marks = [(test, verdict) for _, test, verdict in rate_marks(compare_page(page))]
        found += ("put_block", "worse") in page_marks
        wrong += ("put_block", "better") in page_marks
    assert found / pages >= 0.80 and wrong == 0, f"found on {found} of {pages} pages"
