"""A run's result columns, defined once (issue #9).

Every test of `bonnie.TESTS` (the catalog, app/bonnie.py) has the parts of a `parsing.Result` (status, value, cpu_pct,
latency_us), stored as the column `{test}_{part}` of the `run` table. The models, the ingest
writers, the API's schemas and the comparison queries derive their result columns from here and
select them by name, never by position.
"""

from app.bonnie import TESTS
from app.ingest.parsing import FileTest, Result

RESULT_PARTS: tuple[str, ...] = Result._fields


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

# The file test's columns, in FileTest's order: num_files, max_size, min_size, num_dirs, link.
FILE_TEST_COLUMNS: tuple[str, ...] = ("num_files", *(f"file_{part}" for part in FileTest._fields[1:]))
