"""Comparability: do the runs shown side by side measure the same thing?

`warnings()` names every bonnie++ parameter that differs between the runs compared (file size, chunk
size, file-test spec, seeks, concurrency, bonnie++ family, who measured seek %CPU, RAM), each {"code", "text"} with a stable
code; `setup_table()` is the table heading the compare page (one row per run).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app.compare.comparison import Note, SetupRow
from app.compare.figures import RunFigures
from app.compare.hints import OLD_FORMAT

MAX_IDS_NAMED = 6


def family(run: RunFigures) -> str:
    """bonnie++ 1.0x (CSV 1.03: stdio per-char tests, 3 seekers) or 1.9x and later (one-byte system
    calls, 5 seekers by default)."""
    return "1.0x" if run.format_version == OLD_FORMAT else "1.9x+"


def file_test_text(spec: tuple[Any, ...] | None) -> str:
    """bonnie++'s -n spelling: files (×1024)[:max[:min[:dirs]]], with ':link' / ':symlink'."""
    if spec is None:
        return ""
    num_files, max_size, min_size, num_dirs, link = spec
    parts = [str(num_files)]
    for part in (max_size, min_size, num_dirs):
        if part is None:
            break
        parts.append(str(part))
    return ":".join(parts) + (f" {link}" if link else "")


def seeks_text(run: RunFigures) -> str:
    count, procs = run.setup.seek_count, run.setup.seek_procs
    if count is None and procs is None:
        return ""
    return f"{count if count is not None else '?'} × {procs if procs is not None else '?'} seekers"


RUNNER_VERSION_PREFIX = "bonnieboard"  # the runner writes bonnie_version "bonnieboard-<version>"
# bonnie++ 1.9x and later: each seeker thread reports the whole process's %CPU (274–375 % on two cores)
BONNIE_SEEK_CPU = "bonnie++"


def seek_cpu_source(run: RunFigures) -> str | None:
    """Who measured the seek test's %CPU, when the runs' figures mean different things."""
    if run.format_version == OLD_FORMAT:
        return None  # the family warning already says 1.0x seeks differ
    return "bonnieboard-runner" if (run.bonnie_version or "").startswith(RUNNER_VERSION_PREFIX) else BONNIE_SEEK_CPU


# code, what differs, how to read a value, why it matters
_CHECKS: list[tuple[str, str, Callable[[RunFigures], Any], str]] = [
    (
        "file_size_differs",
        "file size (-s)",
        lambda r: f"{r.setup.file_size_mib} MiB" if r.setup.file_size_mib else None,
        "a file that fits in RAM is read from the cache",
    ),
    (
        "chunk_size_differs",
        "chunk size",
        lambda r: f"{r.setup.io_chunk_bytes} bytes" if r.setup.io_chunk_bytes else None,
        "block tests move data in chunks of this size",
    ),
    (
        "file_test_differs",
        "file-test spec (-n)",
        lambda r: file_test_text(r.setup.file_test) or None,
        "the file tests create, stat and delete different numbers and sizes of files",
    ),
    ("seeks_differs", "seeks", lambda r: seeks_text(r) or None, "the seek test does different work"),
    (
        "concurrency_differs",
        "concurrency (-c)",
        lambda r: r.setup.concurrency,
        "several copies share the disk and the CPU",
    ),
    (
        "family_differs",
        "bonnie++ family",
        family,
        (
            "1.0x per-char tests go through stdio putc()/getc() and use 3 seekers; 1.9x and later make one-byte system "
            "calls and use 5: per-char and seek figures measure different things"
        ),
    ),
    (
        "seek_cpu_differs",
        "seek %CPU source",
        seek_cpu_source,
        (
            "bonnie++ 1.9x and later report each seeker thread's %CPU as the whole process's; bonnieboard-runner "
            "reports the seekers' own (runner/README.md): compare seek figures, not their %CPU"
        ),
    ),
    (
        "ram_differs",
        "RAM",
        lambda r: f"{r.setup.ram_mib} MiB" if r.setup.ram_mib else None,
        "how much of the file the page cache can hold differs",
    ),
]


def _ids(run_ids: list[int]) -> str:
    named = ", ".join(f"#{i}" for i in run_ids[:MAX_IDS_NAMED])
    return named + (f" and {len(run_ids) - MAX_IDS_NAMED} more" if len(run_ids) > MAX_IDS_NAMED else "")


def warnings(runs: Sequence[RunFigures]) -> list[Note]:
    """A warning per parameter whose (known) values differ between the runs."""
    found = []
    for code, what, read, why in _CHECKS:
        by_value: dict[Any, list[int]] = {}
        for run in runs:
            value = read(run)
            if value is not None:
                by_value.setdefault(value, []).append(run.id)
        if len(by_value) > 1:
            spread = "; ".join(f"{value} ({_ids(ids)})" for value, ids in by_value.items())
            found.append(
                {
                    "code": code,
                    "text": f"The runs' {what} differs: {spread}. {why[0].upper()}{why[1:]}: compare like with like.",
                }
            )
    return found


def setup_table(
    runs: Sequence[RunFigures], sources: Callable[[RunFigures], str], configuration_of: dict[int, int]
) -> list[SetupRow]:
    """One row per run: its configuration, machine, bonnie++ version, size, -n spec, chunk, seeks, RAM
    if known, tags."""
    return [
        SetupRow(
            run=run.id,
            configuration=configuration_of[run.id],
            machine=run.machine,
            version=sources(run),
            file_size_mib=run.setup.file_size_mib,
            file_test=file_test_text(run.setup.file_test),
            io_chunk_bytes=run.setup.io_chunk_bytes,
            seeks=seeks_text(run),
            concurrency=run.setup.concurrency,
            ram_mib=run.setup.ram_mib,
            tags=run.tags,
        )
        for run in runs
    ]
