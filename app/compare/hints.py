"""Limiter hints: what probably limited a result, read from its bonnie++ line alone.

Each hint is {"code", "text"}; the codes are stable (the API and the page use them). The rules, each
a reader can check against the line (README "Reading a comparison" repeats them):

- `cpu_bound` — the test's mean %CPU is ≥ 90, or above 100 (more than one core's worth): bonnie++
  was busy itself, so the figure measures the CPU (and the C library), not the disk. Not for the seeks of
  bonnie++ 1.9x and later: each seeker thread there reports the whole process's %CPU (274–375 % on a
  two-core machine), not the seekers' own (app/compare/comparability.py, seek_cpu_differs), so the figure
  says nothing of a limit; the runner's evidence, which counts the seekers' own CPU, still can.
- `cached` — the file size (-s) is under twice the RAM, when the RAM is known (the runner's document,
  or a `ram_mib` tag): much of the file can sit in the page cache (bonnie++'s own rule, -s ≥ 2 × RAM).
  Only for the tests that use that file (putc .. seeks).
- `too_fast` — some runs printed +++++ (bonnie.TOO_FAST_MEANING): not measured, raise -s (file-size
  tests) or -n (file tests). Counted, never averaged.
- `high_spread` — the configuration's runs disagree: CV above 5 % (HIGH_SPREAD_CV_PCT). The page's warning
  of the same name reads the same threshold.
- `per_char` — putc/getc go through stdio (bonnie++ 1.0x) or one-byte system calls (1.9x and later):
  they measure the C library or the system-call path and the CPU, not the disk.
- `worst_latency` (per chart) — bonnie++'s latency is the single slowest operation of a test, not a
  typical one: one stall sets it.

When the runner has recorded its own evidence for a test (document["tests"][test]["limiter"] =
{code, text, evidence}), that hint comes first and replaces the line-only guesses of a limiter.
"""

from __future__ import annotations

from app import bonnie

CPU_BOUND_PCT = 90
ONE_CORE_PCT = 100
CACHE_FACTOR = 2  # bonnie++ wants -s at least twice the RAM
# Phoronix flags 3.5 %; 5 % is where a bonnie++ rerun on the same machine typically stays.
HIGH_SPREAD_CV_PCT = 5.0
FILE_SIZE_TESTS = frozenset(bonnie.IO_TESTS)
PER_CHAR_TESTS = frozenset(bonnie.PER_CHAR_TESTS)
OLD_FORMAT = "1.03"  # the CSV format of bonnie++ 1.0x
SEEKS = "seeks"


def hint(code: str, text: str) -> dict[str, str]:
    return {"code": code, "text": text}


def too_fast(test: str, n_too_fast: int, n_runs: int) -> dict[str, str]:
    share = "all runs" if n_too_fast == n_runs else f"{n_too_fast} of {n_runs} runs"
    return hint("too_fast", f"{share} {bonnie.TOO_FAST_MEANING}: raise {bonnie.raise_option(test)}")


def cpu_bound(cpu_pct: float) -> dict[str, str]:
    if cpu_pct > ONE_CORE_PCT:
        return hint(
            "cpu_bound",
            f"CPU-bound: {cpu_pct:.0f} % CPU is more than one core's worth; this measures the CPU, not the disk",
        )
    return hint("cpu_bound", f"CPU-bound ({cpu_pct:.0f} % CPU): this measures the CPU, not the disk")


def cached(file_size_mib: int, ram_mib: int) -> dict[str, str]:
    return hint(
        "cached",
        f"probably cached: the file size ({file_size_mib} MiB) is under twice the RAM ({ram_mib} MiB); use -s {CACHE_FACTOR * ram_mib}M or more",
    )


def high_spread(cv_pct: float) -> dict[str, str]:
    return hint(
        "high_spread", f"runs disagree (CV {cv_pct:.1f} % > {HIGH_SPREAD_CV_PCT:g} %): run more, or find the noise"
    )


def per_char(format_versions: set[str]) -> dict[str, str]:
    if format_versions == {OLD_FORMAT}:
        how = "go through stdio putc()/getc() (bonnie++ 1.0x)"
    elif OLD_FORMAT in format_versions:
        how = "go through stdio in bonnie++ 1.0x and one-byte system calls in 1.9x"
    else:
        how = "make one system call per byte (bonnie++ 1.9x and later)"
    return hint(
        "per_char", f"per-char tests {how}: they measure the C library or system-call path and the CPU, not the disk"
    )


# A code's rule in general words, for a list that gathers the same hint from several results.
GENERAL_TEXT = {
    "cpu_bound": f"CPU-bound (≥ {CPU_BOUND_PCT} % CPU, or more than one core's worth): this measures the CPU, not the disk",
    "cached": f"probably cached: the file size is under {CACHE_FACTOR}× the RAM; raise -s",
    "too_fast": f"{bonnie.TOO_FAST_MEANING}: raise {' or '.join(f'{o} ({text})' for o, text in bonnie.OPTION_TEXT.items())}",
    "high_spread": f"runs disagree (CV > {HIGH_SPREAD_CV_PCT:g} %): run more, or find the noise",
    "per_char": "per-char tests measure the C library or system-call path and the CPU, not the disk",
}

# How each line rule's own text starts: a hint of one of these codes whose text starts otherwise is the runner's
# evidence (its limiter's words, with that test's figures: a quota's "CPU time was 19 % of the wall time"), which
# no general rule may stand for.
_LINE_RULE_STARTS = {
    "cpu_bound": "CPU-bound",
    "cached": "probably cached",
    "high_spread": "runs disagree",
    "per_char": "per-char tests",
}


def general_text(code: str, text: str) -> str | None:
    """The code's general rule for a line rule's hint, to say once where the hint's figures differ by place; None
    for the runner's evidence, whose words hold only where they were measured."""
    start = _LINE_RULE_STARTS.get(code)
    return GENERAL_TEXT[code] if start is not None and text.startswith(start) else None


WORST_LATENCY = hint(
    "worst_latency",
    "bonnie++'s latency is the single slowest operation of each test, not a typical one: one stall sets it",
)


# The limiters a line alone suggests: the runner's evidence, where a test has it, decides instead.
LINE_LIMITER_GUESSES = frozenset({"cached", "cpu_bound"})


def result_hints(
    test: str,
    *,
    measures_rate: bool,
    n_runs: int,
    n_too_fast: int,
    cv_pct: float | None,
    cpu_pct: float | None,
    file_size_mib: int | None,
    ram_mib: int | None,
    format_versions: set[str],
    evidence: list[dict[str, str]] | None = None,
    seek_cpu_of_process: bool = False,
) -> list[dict[str, str]]:
    """The hints of one configuration's result for `test` (its rate when measures_rate, else its
    %CPU or latency: only too_fast and high_spread apply there). The runner's evidence comes first
    and replaces the line-only guesses of a limiter. Runs for every cell of a comparison: no
    work beyond the rules' own tests when none applies."""
    found = []
    if n_too_fast:
        found.append(too_fast(test, n_too_fast, n_runs))
    if measures_rate:
        if cpu_pct is not None and cpu_pct >= CPU_BOUND_PCT and not (test == SEEKS and seek_cpu_of_process):
            found.append(cpu_bound(cpu_pct))
        if file_size_mib and ram_mib and test in FILE_SIZE_TESTS and file_size_mib < CACHE_FACTOR * ram_mib:
            found.append(cached(file_size_mib, ram_mib))
        if test in PER_CHAR_TESTS:
            found.append(per_char(format_versions))
    if cv_pct is not None and cv_pct > HIGH_SPREAD_CV_PCT:
        found.append(high_spread(cv_pct))
    if not evidence:
        return found
    # The runner judged the limiter from the device's and the process's own counters; the line-only guesses
    # of a limiter (RAM from the option, %CPU) would contradict it, so only the descriptive hints stay.
    return [hint(e["code"], e["text"]) for e in evidence] + [h for h in found if h["code"] not in LINE_LIMITER_GUESSES]
