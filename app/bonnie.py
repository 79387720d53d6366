"""bonnie++'s twelve tests, defined once: the parser, the charts, the heat tables, the matrix,
the hints and the templates read them from here and select tests by what they are, never by position.

Imports nothing of the app. The facts come from bonnie++'s own README (the "Summary of tests" and "Test
Details" sections) and from docs/bonnie-csv-format.md (§1.1 for +++++, §4 for the options).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

# bonnie.h's MinTime: a test that ran for less than this prints +++++ and +++ instead of its rate and
# %CPU (§1.1; 1.00f lowered it from 1 s).
MIN_TIME_S = 0.5
TOO_FAST_MARK = "+++++"  # in the rate column; the %CPU column then holds TOO_FAST_CPU_MARK
TOO_FAST_CPU_MARK = "+++"

# What +++++ means, in the words every page, hint and tooltip uses: one wording, so no two places differ.
TOO_FAST = "too fast to measure"
TOO_FAST_WHY = f"under {MIN_TIME_S:g} s: {TOO_FAST}"
TOO_FAST_STATUS = f"{TOO_FAST_MARK} {TOO_FAST}"  # a result's status, said in words
TOO_FAST_TITLE = f"the test took {TOO_FAST_WHY}"  # the tooltip of a +++++ cell
TOO_FAST_MEANING = f"{TOO_FAST_MARK} ({TOO_FAST_WHY}, not zero)"  # in a hint's text
TOO_FAST_EXPLANATION = f"bonnie++ prints {TOO_FAST_MARK} when a test took {TOO_FAST_WHY}, not zero."

# A result's status: measured, +++++ (too fast to measure) or not run (an empty cell, or a test bonnie++ skipped).
# The parser sets it, the database stores it, the comparisons read it: all of them take the words from here.
STATUS_OK, STATUS_TOO_FAST, STATUS_NOT_RUN = "ok", "too_fast", "not_run"


class Result(NamedTuple):
    """One test's outcome. value/cpu_pct are set only when status is STATUS_OK; latency_us is independent.

    A NamedTuple rather than a dataclass: twelve are made per line, and ingest makes 100,000 lines.
    """

    status: str
    value: int | float | None
    cpu_pct: int | None
    latency_us: int | None


# The options that size the tests (§4), and what each one sets: a larger one makes a +++++ test long enough
# to measure. -s 0 (or -n 0) skips that option's tests; -f skips the per-char ones.
FILE_SIZE_OPTION, FILE_COUNT_OPTION = "-s", "-n"
OPTION_TEXT = {FILE_SIZE_OPTION: "file size", FILE_COUNT_OPTION: "number of files"}

# The file tests come in two rounds (bonnie++'s report: "Sequential Create" and "Random Create"), each
# creating, stat()ing (the report's "Read") and deleting the files.
SEQUENTIAL, RANDOM = "sequential", "random"
CREATE, STAT, DELETE = "create", "stat", "delete"


@dataclass(frozen=True, slots=True)
class Family:
    """Tests of one kind of work, measured in one unit: their figures and ratios may be put side by side
    and averaged together (the matrix's family summaries); never across families."""

    key: str
    title: str
    unit: str


BLOCK_IO = Family("block_io", "Block I/O", "KiB/s")
SEEKS = Family("seeks", "Seeks", "seeks/s")
METADATA = Family("metadata", "Metadata (create, stat, delete)", "files/s")
FAMILIES = (BLOCK_IO, SEEKS, METADATA)


@dataclass(frozen=True, slots=True)
class Test:
    """One of bonnie++'s tests. `name` is the CSV header's (and the database's, the API's); `option` is
    the bonnie++ option whose size decides how long it runs."""

    name: str
    title: str
    family: Family
    option: str
    per_char: bool = False  # putc()/getc() one byte at a time: -f skips them
    order: str | None = None  # a file test's round: SEQUENTIAL or RANDOM
    operation: str | None = None  # a file test's work: CREATE, STAT or DELETE

    @property
    def unit(self) -> str:
        return self.family.unit

    @property
    def raise_option(self) -> str:
        """The option to raise when the test printed +++++, e.g. "-s (file size)"."""
        return f"{self.option} ({OPTION_TEXT[self.option]})"


# In bonnie++'s order: the CSV line's, the text report's and the database's.
CATALOG = (
    Test("putc", "per-char write", BLOCK_IO, FILE_SIZE_OPTION, per_char=True),
    Test("put_block", "block write", BLOCK_IO, FILE_SIZE_OPTION),
    Test("rewrite", "rewrite", BLOCK_IO, FILE_SIZE_OPTION),
    Test("getc", "per-char read", BLOCK_IO, FILE_SIZE_OPTION, per_char=True),
    Test("get_block", "block read", BLOCK_IO, FILE_SIZE_OPTION),
    Test("seeks", "random seeks", SEEKS, FILE_SIZE_OPTION),
    Test("seq_create", "seq. create", METADATA, FILE_COUNT_OPTION, order=SEQUENTIAL, operation=CREATE),
    Test("seq_stat", "seq. stat", METADATA, FILE_COUNT_OPTION, order=SEQUENTIAL, operation=STAT),
    Test("seq_del", "seq. delete", METADATA, FILE_COUNT_OPTION, order=SEQUENTIAL, operation=DELETE),
    Test("ran_create", "random create", METADATA, FILE_COUNT_OPTION, order=RANDOM, operation=CREATE),
    Test("ran_stat", "random stat", METADATA, FILE_COUNT_OPTION, order=RANDOM, operation=STAT),
    Test("ran_del", "random delete", METADATA, FILE_COUNT_OPTION, order=RANDOM, operation=DELETE),
)
BY_NAME = {test.name: test for test in CATALOG}

TESTS = tuple(test.name for test in CATALOG)
IO_TESTS = tuple(test.name for test in CATALOG if test.option == FILE_SIZE_OPTION)  # on the -s file
FILE_TESTS = tuple(test.name for test in CATALOG if test.option == FILE_COUNT_OPTION)
PER_CHAR_TESTS = tuple(test.name for test in CATALOG if test.per_char)
# The tests a list of runs shows: the block ones, seeks and the creates (stat and delete follow create's lead).
HEADLINE_TESTS = tuple(test.name for test in CATALOG if not test.per_char and test.operation in (None, CREATE))
UNITS = {test.name: test.unit for test in CATALOG}
TITLES = {test.name: test.title for test in CATALOG}


def family_tests(family: Family) -> tuple[str, ...]:
    """The names of the family's tests, in bonnie++'s order."""
    return tuple(test.name for test in CATALOG if test.family == family)


def raise_option(test: str) -> str:
    """The option to raise when `test` printed +++++, e.g. "-n (number of files)"."""
    return BY_NAME[test].raise_option


def too_fast_above(test: str, file_size_mib: int | None, num_files: int | None) -> float | None:
    """The rate a +++++ result of `test` is above: its work done in MIN_TIME_S. A file test creates, stats or
    deletes num_files × 1024 files (files/s); a block I/O test moves the file size, file_size_mib × 1024 KiB
    (KiB/s). None for seeks (their work is the seekers', not a size of the line) and without the size."""
    spec = BY_NAME[test]
    if spec.option == FILE_COUNT_OPTION:
        work = num_files
    elif spec.family == BLOCK_IO:
        work = file_size_mib
    else:
        return None
    return work * 1024 / MIN_TIME_S if work else None
