"""A run's result columns, defined once (issue #9).

Every test of `parsing.TESTS` has the parts of a `parsing.Result` (status, value, cpu_pct,
latency_us), stored as the column `{test}_{part}` of the `run` table. The models, the ingest
writers, the API's schemas and the comparison queries derive their result columns from here and
select them by name, never by position.
"""

from app.parsing import TESTS, Result

RESULT_PARTS: tuple[str, ...] = Result._fields


def result_column(test: str, part: str) -> str:
    """The name of the column holding `part` of `test`'s result, e.g. put_block_latency_us."""
    return f"{test}_{part}"


# In TESTS order, each test's parts in RESULT_PARTS order.
RESULT_COLUMNS: tuple[str, ...] = tuple(result_column(test, part) for test in TESTS for part in RESULT_PARTS)
