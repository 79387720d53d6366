"""The answer at the top of /compare and /matrix: one row per family of tests a reader decides on
(docs/decisions.md, "An answer before the charts").

Pure: takes what app/compare/engine.compare() returned and gives back rows; the templates only print them.
Each row says, against the baseline configuration, which configuration is faster beyond the noise (the
page's own verdicts: Holm-adjusted, at least the minimum effect; a +++++ bound once its rank test holds on the
page), by what factor with its 95 % interval, or "no difference beyond noise" where the page could have seen the
change a reader cares about, "cannot tell with N runs a side" where it could not, or that it cannot tell — and,
in the same row, the caveat when what limited the result was not the disk: the page cache (the file is under
twice the RAM, or the runner's counters say so; or the RAM is unknown and the file small enough for a common
machine's), the CPU, other load, or +++++ (bonnie.TOO_FAST_MEANING). A result the cache or the CPU limited is
never a storage win: its row is `not_disk`, whatever its verdict. A caveat every row has is said once, above
them (`caveat_shared`).

Per-char tests have no row: they measure the C library and the CPU (app/compare/hints.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from app import bonnie
from app.compare.comparison import Cell, Comparison
from app.compare.stats import cared_effect_pct
from app.units import format_size_mib, gib_at_least

BETTER, WORSE, NOISE, UNKNOWN = "better", "worse", "within_noise", "unknown"
NOT_DISK = "not_disk"  # a better or worse verdict whose limiter was not the disk

# The limiter codes (line hints and the runner's evidence) that make a result not the disk's.
NOT_DISK_CODES = ("cached", "cpu_bound")
# Caveats in the order a row names them: the first found is the row's.
CAVEAT_ORDER = ("cached", "cpu_bound", "ram_unknown", "noisy", "too_fast", "too_short")
RAM_UNKNOWN = "ram_unknown"
# The block tests' working set is the file: where no run's RAM is known, a file under twice this much may have been
# the page cache's on a common machine (a 24 GiB server, a 32 GiB workstation).
COMMON_RAM_MIB = 32 * 1024
BLOCK_TESTS = tuple(t.name for t in bonnie.CATALOG if t.family == bonnie.BLOCK_IO and not t.per_char)
TOO_FAST_CODES = ("too_fast", "too_short")
MARK = {BETTER: "▲", WORSE: "▼", NOISE: "~", UNKNOWN: "?", NOT_DISK: "⚠"}


@dataclass(frozen=True, slots=True)
class Question:
    """What one answer row decides (block write, block read, ...): some tests of one of the catalog's families,
    drawn on that family's rate chart. Its key is the row's `family` in the API."""

    key: str
    title: str
    tests: tuple[str, ...]
    family: bonnie.Family

    @property
    def chart(self) -> str:
        return self.family.key  # the engine keys each family's rate chart by the family's key (engine.CHARTS)


QUESTIONS = (
    Question("block_write", "Block write", ("put_block",), bonnie.BLOCK_IO),
    Question("block_read", "Block read", ("get_block",), bonnie.BLOCK_IO),
    Question("rewrite", "Rewrite", ("rewrite",), bonnie.BLOCK_IO),
    Question("seeks", "Random seeks", ("seeks",), bonnie.SEEKS),
    Question("files", "File create, stat, delete", bonnie.family_tests(bonnie.METADATA), bonnie.METADATA),
)


def cells_by_test(data: Comparison, rate_charts: Sequence[str]) -> dict[int, dict[str, Cell]]:
    """configuration id -> test -> its rate cell."""
    found: dict[int, dict[str, Cell]] = {c.id: {} for c in data.configurations}
    for chart in data.charts:
        if chart.key not in rate_charts:
            continue
        for entry in chart.configurations:
            for cell in entry.tests:
                found[entry.configuration][cell.test] = cell
    return found


def _factor(cell: Cell) -> float | None:
    return _factor_of(cell.bound_ratio, cell.geo_ratio, cell.ratio)


def _factor_of(bound_ratio: float | None, geo_ratio: float | None, ratio: float | None) -> float | None:
    """The ratio to the baseline the verdict is about: the +++++ bound when it decided, else the geometric
    means' ratio (what the interval is built on), else the arithmetic one."""
    for value in (bound_ratio, geo_ratio, ratio):
        if value is not None:
            return float(value)
    return None


# Past this factor a detectable change is said as a floor: its exact size says nothing more to a reader.
LARGEST_SAID_FACTOR = 100


def change_text(pct: float) -> str:
    """A detectable change to two significant figures: "±18 %" below a doubling, "×2.4" or "×18" beyond (−90 % is
    ÷10, not −900 %)."""
    if pct < 100:
        return f"±{float(f'{pct:.2g}'):g} %"
    return f"×{float(f'{1 + pct / 100:.2g}'):,g}"


def could_have_seen(pct: float, n: int) -> str:
    """What a cell could have seen: "could have seen ×2.4 either way", or past ×100 "N = 2 cannot tell changes
    smaller than ×100 here"."""
    if 1 + pct / 100 > LARGEST_SAID_FACTOR:
        return f"N = {n} cannot tell changes smaller than ×{LARGEST_SAID_FACTOR} here"
    return f"could have seen {change_text(pct)} either way"


def times(x: float, *, floor: bool = False) -> str:
    """A factor ≥ 1 as ×N: two decimals under 10, whole above (×1.23, ×14); `floor` rounds down, as a lower
    bound must (×14.68 is "at least ×14")."""
    if x < 10:
        return f"×{math.floor(x * 100) / 100:.2f}" if floor else f"×{x:.2f}"
    return f"×{math.floor(x):,}" if floor else f"×{x:,.0f}"


def factor_text(cell: Cell) -> str:
    """One cell's factor against the baseline (factor_words)."""
    return factor_words(cell.bound_ratio, cell.geo_ratio, cell.ratio, cell.ratio_ci95)


def factor_words(
    bound_ratio: float | None, geo_ratio: float | None, ratio: float | None, ratio_ci95: Sequence[float] | None
) -> str:
    """A factor against the baseline, as a speed-up or a slow-down (never ×0.07), with its 95 % interval in the
    same direction, or "at least" for a +++++ bound. Of a comparison's cell (factor_text) or a matrix cell's
    figures."""
    bound = bound_ratio
    if bound is not None:
        return (
            f"at least {times(bound if bound >= 1 else 1 / bound, floor=True)} {'faster' if bound >= 1 else 'slower'}"
        )
    factor = _factor_of(bound_ratio, geo_ratio, ratio)
    if factor is None:
        return ""
    faster = factor >= 1
    text = f"{times(factor if faster else 1 / factor)} {'faster' if faster else 'slower'}"
    ci = ratio_ci95
    if ci:
        text += f" ({interval_text(ci, faster)})"
    return text


def interval_text(ci: Sequence[float], faster: bool) -> str:
    """A ratio's 95 % interval in the direction its factor is said: "95 % CI ×1.18 to ×1.22" of a speed-up, the
    inverses of a slow-down's (a bound under 1 keeps two decimals: ×0.97)."""
    low, high = (ci[0], ci[1]) if faster else (1 / ci[1], 1 / ci[0])
    return f"95 % CI {times(low) if low >= 1 else f'×{low:.2f}'} to {times(high)}"


def _range_text(cells: list[Cell], faster: bool) -> str:
    """Several cells' factors in one direction: their range, "at least" when a +++++ bound decided any."""
    if len(cells) == 1:
        return factor_text(cells[0])
    sizes = [(_factor(c) or 1.0) for c in cells]
    sizes = [s if faster else 1 / s for s in sizes]
    low, high = min(sizes), max(sizes)
    bounded = any(c.bound_ratio is not None for c in cells)
    low_text, high_text = times(low, floor=bounded), times(high, floor=bounded)
    span = low_text if low_text == high_text else f"{low_text} to {high_text}"
    return f"{'at least ' if bounded else ''}{span} {'faster' if faster else 'slower'}"


def caveat_text(code: str, tests: Sequence[str], setup: dict[str, int | None], where: str = "") -> str:
    """What a row says of a limiter: what it was, that it is not a disk result, and what to rerun with."""
    if code == RAM_UNKNOWN:
        size = setup.get("file_size_mib")
        file = f" (file {format_size_mib(size)})" if size else ""
        return f"RAM unknown: may be the page cache{file} — tag the runs ram_mib=<the machine's RAM in MiB>"
    if code == "cached":
        if all(bonnie.BY_NAME[t].option == bonnie.FILE_COUNT_OPTION for t in tests):
            # The file tests' working set is their files, not -s: more files, not a bigger file, reach the disk.
            return f"page cache held the files: not a disk result — raise {bonnie.FILE_COUNT_OPTION}"
        size, ram = setup.get("file_size_mib"), setup.get("ram_mib")
        if size and ram and size < 2 * ram:
            rerun = gib_at_least(2 * ram)
            return f"page cache (file {format_size_mib(size)} < 2 × RAM): not a disk result — rerun with -s {rerun}G"
        return "page cache (the runner's counters): not a disk result"
    if code == "cpu_bound":
        return "CPU-bound: measures the CPU, not the disk"
    if code == "noisy":
        return "other load competed (the runner's counters): rerun on a quiet machine"
    options = sorted({bonnie.BY_NAME[t].option for t in tests})
    return f"{bonnie.TOO_FAST_MARK}{where}: raise {' and '.join(options)}"


def _codes(cell: Cell) -> set[str]:
    codes = {h["code"] for h in cell.hints}
    if cell.n_too_fast:
        codes.add("too_fast")
    return codes


def _caveat(
    involved: list[tuple[Cell, bool]], tests: Sequence[str], setup: dict[str, int | None]
) -> tuple[str | None, str | None]:
    """The row's caveat (code, text) from the cells it rests on, each flagged whether it is the baseline's."""
    for code in CAVEAT_ORDER:
        if code == RAM_UNKNOWN:
            if _ram_unknown(tests, setup):
                return code, caveat_text(code, tests, setup)
            continue
        holders = [is_base for cell, is_base in involved if code in _codes(cell)]
        if holders:
            where = " in the baseline" if code in TOO_FAST_CODES and all(holders) else ""
            return code, caveat_text(code, tests, setup, where)
    return None, None


def _ram_unknown(tests: Sequence[str], setup: dict[str, int | None]) -> bool:
    """A block test's result may be the page cache's and nothing says so: a run's RAM is unknown (no runner
    document, no ram_mib tag) and the file fits twice a common machine's RAM."""
    size = setup.get("file_size_mib")
    return (
        bool(setup.get(RAM_UNKNOWN))
        and any(t in BLOCK_TESTS for t in tests)
        and size is not None
        and size < 2 * COMMON_RAM_MIB
    )


def _setup_of(data: Comparison) -> dict[str, int | None]:
    """The smallest file size and RAM of the compared runs: the most cached case decides the caveat; and whether a
    run with a file has no known RAM."""
    rows = data.setup
    sizes = [row.file_size_mib for row in rows if row.file_size_mib]
    rams = [row.ram_mib for row in rows if row.ram_mib]
    unknown = any(row.file_size_mib and not row.ram_mib for row in rows)
    return {
        "file_size_mib": min(sizes) if sizes else None,
        "ram_mib": min(rams) if rams else None,
        RAM_UNKNOWN: 1 if unknown else None,
    }


def _names(configs: list[str]) -> str:
    return configs[0] if len(configs) == 1 else f"{configs[0]} (and {len(configs) - 1} more)"


class _Said(NamedTuple):
    """What a row says before its caveat: its outcome, the cells it claims, the configurations its factor is about
    (the leader first when one leads), and its words."""

    outcome: str
    claims: list[tuple[int, str]]
    named: list[int]
    who: str
    factor: str
    leader: int | None = None


Cells = dict[int, dict[str, Cell]]


def answer_row(
    question: Question,
    cells: Cells,
    names: dict[int, str],
    base_id: int,
    setup: dict[str, int | None],
    min_effect: float,
) -> dict[str, Any] | None:
    """One question's row, or None when none of its tests ran in any configuration."""
    base = cells[base_id]
    others = [cid for cid in cells if cid != base_id]
    tests = [t for t in question.tests if any(cells[cid][t].status != "not_run" for cid in cells)]
    if not tests:
        return None
    by_verdict: dict[str, list[tuple[int, str]]] = {BETTER: [], WORSE: [], NOISE: [], UNKNOWN: []}
    for cid in others:
        for test in tests:
            verdict = cells[cid][test].verdict or UNKNOWN
            by_verdict.setdefault(verdict, []).append((cid, test))
    if by_verdict[BETTER]:
        said = _better(by_verdict[BETTER], cells, names, tests)
    elif by_verdict[WORSE]:
        said = _worse(by_verdict[WORSE], cells, names)
    elif by_verdict[NOISE]:
        said = _within_noise(by_verdict[NOISE], cells, base, names, min_effect)
    else:
        too_fast = any(_codes(cells[cid][t]) & set(TOO_FAST_CODES) for cid in cells for t in tests)
        factor = "" if too_fast or not others else "too few runs: repeat them, e.g. bonnie++ -x 5"
        said = _Said(UNKNOWN, [], [], "cannot tell", factor)
    if said.outcome in (NOISE, UNKNOWN):
        said = _with_bound(said, by_verdict[UNKNOWN], cells, base, names)
    # The caveat is of the cells the row's words are about: its claims, the results within noise it sums up, or,
    # when it cannot tell, every cell (the caveat may be why).
    about = said.claims or (by_verdict[NOISE] if said.outcome == NOISE else [])
    if about:
        involved = [(cells[cid][t], False) for cid, t in about] + [(base[t], True) for t in {t for _, t in about}]
    else:
        involved = [(cells[cid][t], cid == base_id) for cid in cells for t in tests]
    code, caveat = _caveat(involved, tests, setup)
    outcome = NOT_DISK if said.outcome in (BETTER, WORSE) and code in NOT_DISK_CODES else said.outcome
    return {
        "family": question.key,
        "title": question.title,
        "tests": tests,
        "chart": question.chart,
        "outcome": outcome,
        "mark": MARK[outcome],
        "configuration": said.leader,
        "named": said.named,
        "who": said.who,
        "factor": said.factor,
        "caveat_code": code,
        "caveat": caveat,
        "caveat_shared": False,
    }


def _better(found: list[tuple[int, str]], cells: Cells, names: dict[int, str], tests: list[str]) -> _Said:
    """The configuration better in the most tests leads (the smaller least factor breaks a tie); the others
    better somewhere are named after it."""
    counts: dict[int, list[str]] = {}
    for cid, test in found:
        counts.setdefault(cid, []).append(test)
    leader = max(counts, key=lambda c: (len(counts[c]), min(_factor(cells[c][t]) or 1 for t in counts[c])))
    claims = [(leader, t) for t in counts[leader]]
    who = _names([names[leader]] + [names[c] for c in counts if c != leader])
    factor = _range_text([cells[leader][t] for t in counts[leader]], faster=True)
    if len(tests) > 1:
        factor += f" in {len(claims)} of {len(tests)} tests"
    return _Said(BETTER, claims, [leader], who, factor, leader)


def _worse(found: list[tuple[int, str]], cells: Cells, names: dict[int, str]) -> _Said:
    named = list(dict.fromkeys(cid for cid, _ in found))
    slower = [names[cid] for cid in named]
    who = f"{', '.join(slower)} slower" if len(slower) <= 2 else f"{slower[0]} and {len(slower) - 1} more slower"
    return _Said(WORSE, found, named, who, _range_text([cells[cid][t] for cid, t in found], faster=False))


def _within_noise(
    found: list[tuple[int, str]],
    cells: Cells,
    base: dict[str, Cell],
    names: dict[int, str],
    min_effect: float,
) -> _Said:
    """The largest change seen, and "no difference" only where the page could have seen the change a reader cares
    about; else how many runs a side could not tell, and what they could have seen."""
    cid, test = max(found, key=lambda ct: abs(math.log(_factor(cells[ct[0]][ct[1]]) or 1)))
    ratio = _factor(cells[cid][test]) or 1.0
    size = times(max(ratio, 1 / ratio))
    direction = "faster" if ratio >= 1 else "slower"
    blind = [
        (cells[c][t], base[t]) for c, t in found if (cells[c][t].detectable_pct or 0) > cared_effect_pct(min_effect)
    ]
    if blind:
        runs = min(min(cell.n, base_cell.n) for cell, base_cell in blind)
        widest = max(cell.detectable_pct or 0 for cell, _ in blind)  # each is above the cared-for change
        seen = "no change" if size == "×1.00" else f"{size} {direction} ({names[cid]})"
        return _Said(
            NOISE,
            [],
            [cid],
            f"cannot tell with {runs} runs a side",
            f"{seen} in these runs; {could_have_seen(widest, runs)}",
        )
    factor = (
        "×1.00: no change seen" if size == "×1.00" else f"largest seen {size} {direction} ({names[cid]}), within noise"
    )
    return _Said(NOISE, [], [cid], "no difference beyond noise", factor)


def _with_bound(
    said: _Said, unknown: list[tuple[int, str]], cells: Cells, base: dict[str, Cell], names: dict[int, str]
) -> _Said:
    """Every run of one side beyond the other's with +++++ runs, as chance does with few runs: said, not claimed."""
    bounded = [(cid, t, bound) for cid, t in unknown if (bound := cells[cid][t].bound_ratio) is not None]
    if not bounded:
        return said
    cid, test, _ = max(bounded, key=lambda found: abs(math.log(found[2])))
    cell, base_cell = cells[cid][test], base[test]
    runs = f"{cell.n + cell.n_too_fast} v {base_cell.n + base_cell.n_too_fast} runs"
    if said.outcome == UNKNOWN:
        return said._replace(named=[cid], factor=f"{runs}; {factor_text(cell)} in these runs ({names[cid]})")
    return said._replace(
        factor=f"{said.factor}; {bonnie.TITLES[test]} cannot tell ({runs}; {factor_text(cell)} in these runs, {names[cid]})"
    )


def rows(data: Comparison, rate_charts: Sequence[str]) -> list[dict[str, Any]]:
    """The answer rows of a comparison (engine.compare()'s result); none with a single configuration."""
    if len(data.configurations) < 2:
        return []
    names = {c.id: c.name for c in data.configurations}
    cells = cells_by_test(data, rate_charts)
    setup = _setup_of(data)
    min_effect = data.min_effect
    found = (answer_row(f, cells, names, data.baseline_configuration, setup, min_effect) for f in QUESTIONS)
    answer = [row for row in found if row is not None]
    # a caveat every row has is said once, above the rows (the rows keep it for the charts' PNG)
    if len(answer) > 1 and answer[0]["caveat"] and all(row["caveat"] == answer[0]["caveat"] for row in answer):
        for row in answer:
            row["caveat_shared"] = True
    return answer


def shared_caveat(answer: list[dict[str, Any]]) -> str | None:
    """The caveat every row has, said once above them; None when the rows' caveats differ."""
    return answer[0]["caveat"] if answer and answer[0]["caveat_shared"] else None


def legend(data: Comparison) -> str:
    """What the marks claim, next to them: the minimum effect is of the estimate, and the page's verdicts are
    controlled together, so that a larger page needs a larger change (or more runs) for the same mark."""
    min_effect = data.min_effect
    return (
        f"▲/▼ hold with all this page's verdicts counted together (more configurations, larger changes needed) and "
        f"an estimate at least ×{min_effect:g} either way: the minimum effect is of the estimate, not its interval."
    )


def lead_chart(answer: list[dict[str, Any]]) -> str | None:
    """The chart to show first: that of the first row with a verdict beyond the noise, else the first row's."""
    decided = [row for row in answer if row["outcome"] in (BETTER, WORSE, NOT_DISK)]
    chosen = decided or answer
    return chosen[0]["chart"] if chosen else None


def lead(data: Comparison, answer: list[dict[str, Any]]) -> str:
    """The sentence above the rows: what they compare, and how many are not disk results."""
    base = next(c for c in data.configurations if c.id == data.baseline_configuration)
    counts = sorted({len(c.runs) for c in data.configurations})
    runs = f"N = {counts[0]} each" if len(counts) == 1 else f"N = {counts[0]} to {counts[-1]}"
    text = f"Each row against {base.name} ({len(data.configurations)} configurations, {runs})."
    limited = sum(1 for row in answer if row["caveat_code"] in NOT_DISK_CODES)
    if limited:
        text += (
            f" 1 of {len(answer)} rows is not a disk result: read its caveat."
            if limited == 1
            else f" {limited} of {len(answer)} rows are not disk results: read their caveats."
        )
    return text
