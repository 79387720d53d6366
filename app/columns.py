"""A run's result columns, defined once.

Every test of `bonnie.TESTS` (the catalog, app/bonnie.py) has the parts of a `parsing.Result` (status, value, cpu_pct,
latency_us), stored as the column `{test}_{part}` of the `run` table. The models, the ingest
writers, the API's schemas and the comparison queries derive their result columns from here and
select them by name, never by position.
"""

from app.bonnie import TESTS

# The parts of app.ingest.parsing.Result, in its field order (tests/test_columns.py holds them equal).
RESULT_PARTS: tuple[str, ...] = ("status", "value", "cpu_pct", "latency_us")


def result_column(test: str, part: str) -> str:
    """The name of the column holding `part` of `test`'s result, e.g. put_block_latency_us."""
    return f"{test}_{part}"


# In TESTS order, each test's parts in RESULT_PARTS order.
RESULT_COLUMNS: tuple[str, ...] = tuple(result_column(test, part) for test in TESTS for part in RESULT_PARTS)


# The columns of a line's own facts: ParsedRun's attributes of the same names.
RUN_LINE_COLUMNS: tuple[str, ...] = (
    "machine",
    "format_version",
    "bonnie_version",
    "concurrency",
    "seed",
    "file_size_mib",
    "io_chunk_bytes",
    "seek_count",
    "seek_procs",
)

# The file test's columns, in app.ingest.parsing.FileTest's order: num_files, max_size, min_size, num_dirs, link.
FILE_TEST_COLUMNS: tuple[str, ...] = ("num_files", "file_max_size", "file_min_size", "file_num_dirs", "file_link")

# What a comparison reads of a run besides its results (app.store.runs selects them, app.compare.figures reads them).
IDENTITY_COLUMNS: tuple[str, ...] = ("id", "machine", "label", "format_version", "bonnie_version")
SETUP_COLUMNS: tuple[str, ...] = ("file_size_mib", "io_chunk_bytes", "seek_count", "seek_procs", "concurrency")
RAM_BYTES = "ram_bytes"  # the runner document's system.ram_bytes, taken out at ingest (document.ram_bytes)
LIMITERS = "limiters"  # what the runner's document says limited each test of this line, taken out at ingest
