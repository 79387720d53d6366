"""A run's columns, defined once: their names, and the rule that fills each from a bonnie++ line.

Every test of `bonnie.TESTS` (the catalog, app/bonnie.py) has the parts of a `parsing.Result` (status, value, cpu_pct,
latency_us), stored as the column `{test}_{part}` of the `run` table. The models, the ingest
writers, the API's schemas and the comparison queries derive their result columns from here and
select them by name, never by position.

STORED_COLUMNS is the table the ingest paths share: each column a writer fills, in the order the writers fill them,
with the line field it comes from (by meaning: docs/bonnie-csv-format.md's names, §2 and §3.2, whichever layout the
line has) and its Conversion. app/ingest/parsing.py converts a cell by its column's Conversion (CONVERSIONS there),
and the C reader app/ingest/_plain_lines.c walks the same table, generated into app/ingest/_columns.h
(app/ingest/columns_header.py; tests/test_columns.py fails when the header is not what the table generates).
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

from app.bonnie import TESTS

# The parts of app.ingest.parsing.Result, in its field order (tests/test_columns.py holds them equal).
RESULT_PARTS: tuple[str, ...] = ("status", "value", "cpu_pct", "latency_us")


def result_column(test: str, part: str) -> str:
    """The name of the column holding `part` of `test`'s result, e.g. put_block_latency_us."""
    return f"{test}_{part}"


class Conversion(StrEnum):
    """How a column's value comes from its line field's cell (§ = docs/bonnie-csv-format.md). An empty cell is NULL
    unless said otherwise. The first six are not read from a field: the writer or the upload gives them."""

    ID = "id"  # the run's id: the writer numbers the runs
    UPLOAD_ID = "upload_id"  # the upload's own four: the same for every run of an upload
    CREATED_AT = "created_at"
    LABEL = "label"
    DOCUMENT_ID = "document_id"
    LINE_HASH = "line_hash"  # the line's BLAKE2b digest (16 bytes)
    RAW_LINE = "raw_line"  # the line as uploaded, without its line end
    TEXT = "text"  # as written; an empty cell is the empty string
    OPTIONAL_TEXT = "optional_text"  # as written
    OPTIONAL_INT = "optional_int"  # a whole number
    SIZE_MIB = "size_mib"  # 512M or 2G (§3.4, §2), in MiB
    CHUNK_BYTES = "chunk_bytes"  # 8192, 4k or 1m (§3.4, §2's 2G:4k), in bytes
    FILE_MAX_SIZE = "file_max_size"  # a whole number; link or symlink (§3.3-1) is NULL here and goes to FILE_LINK
    FILE_LINK = "file_link"  # link or symlink; a number is NULL here
    RESULT_STATUS = "result_status"  # §1.1: ok, too_fast (+++++) or not_run (empty); never NULL
    RESULT_VALUE = "result_value"  # a whole number; +++++ is NULL
    RESULT_DECIMAL = "result_decimal"  # seeks/s, which may have decimals (§1.2): a float; +++++ is NULL
    RESULT_CPU = "result_cpu"  # %CPU, a whole number; +++ is NULL
    RESULT_LATENCY_US = "result_latency_us"  # §1.3: 117us, 228ms or 105s, in microseconds


# The conversions of the columns not read from a line field.
NOT_FROM_A_FIELD = frozenset(
    {
        Conversion.ID,
        Conversion.UPLOAD_ID,
        Conversion.CREATED_AT,
        Conversion.LABEL,
        Conversion.DOCUMENT_ID,
        Conversion.LINE_HASH,
        Conversion.RAW_LINE,
    }
)
# The upload's own columns: bound once per upload, not per line.
UPLOAD_CONVERSIONS = (Conversion.UPLOAD_ID, Conversion.CREATED_AT, Conversion.LABEL, Conversion.DOCUMENT_ID)


class StoredColumn(NamedTuple):
    name: str  # the run table's column
    field: str | None  # the line field it comes from, by meaning; None for what the writer or the upload gives
    conversion: Conversion


def _column(name: str, conversion: Conversion, field: str | None = None) -> StoredColumn:
    return StoredColumn(name, field, conversion)


# The columns of a line's own facts: ParsedRun's attributes of the same names.
_LINE_FACTS = (
    _column("machine", Conversion.TEXT, "name"),
    _column("format_version", Conversion.TEXT, "format_version"),  # 1.03 for a 27-field line (§2), which has none
    _column("bonnie_version", Conversion.OPTIONAL_TEXT, "bonnie_version"),
    _column("concurrency", Conversion.OPTIONAL_INT, "concurrency"),
    _column("seed", Conversion.OPTIONAL_TEXT, "seed"),
    _column("file_size_mib", Conversion.SIZE_MIB, "file_size"),
    _column("io_chunk_bytes", Conversion.CHUNK_BYTES, "io_chunk_size"),
    _column("seek_count", Conversion.OPTIONAL_INT, "seek_count"),
    _column("seek_procs", Conversion.OPTIONAL_INT, "seek_proc_count"),
)
# The file test's, in app.ingest.parsing.FileTest's order: num_files, max_size, min_size, num_dirs, link.
_FILE_TEST = (
    _column("num_files", Conversion.OPTIONAL_INT, "num_files"),
    _column("file_max_size", Conversion.FILE_MAX_SIZE, "max_size"),
    _column("file_min_size", Conversion.OPTIONAL_INT, "min_size"),
    _column("file_num_dirs", Conversion.OPTIONAL_INT, "num_dirs"),
    _column("file_link", Conversion.FILE_LINK, "max_size"),
)


def _result_columns(test: str) -> tuple[StoredColumn, ...]:
    """A test's four result columns, in RESULT_PARTS order; the fields are §3.2's: `putc`, `putc_cpu`, `putc_latency`."""
    value = Conversion.RESULT_DECIMAL if test == "seeks" else Conversion.RESULT_VALUE
    return (
        _column(result_column(test, "status"), Conversion.RESULT_STATUS, test),
        _column(result_column(test, "value"), value, test),
        _column(result_column(test, "cpu_pct"), Conversion.RESULT_CPU, f"{test}_cpu"),
        _column(result_column(test, "latency_us"), Conversion.RESULT_LATENCY_US, f"{test}_latency"),
    )


# Every column a writer fills, in the order the writers fill them (the SQLite writers' INSERT, and the COPY text's
# after id and the upload's four); the run table's others (limiters) are set after the rows.
STORED_COLUMNS: tuple[StoredColumn, ...] = (
    _column("id", Conversion.ID),
    _column("upload_id", Conversion.UPLOAD_ID),
    _column("created_at", Conversion.CREATED_AT),
    _column("line_hash", Conversion.LINE_HASH),
    _column("raw_line", Conversion.RAW_LINE),
    *_LINE_FACTS,
    *_FILE_TEST,
    _column("label", Conversion.LABEL),
    _column("document_id", Conversion.DOCUMENT_ID),
    *(column for test in TESTS for column in _result_columns(test)),
)

# In TESTS order, each test's parts in RESULT_PARTS order.
RESULT_COLUMNS: tuple[str, ...] = tuple(result_column(test, part) for test in TESTS for part in RESULT_PARTS)

RUN_LINE_COLUMNS: tuple[str, ...] = tuple(column.name for column in _LINE_FACTS)
FILE_TEST_COLUMNS: tuple[str, ...] = tuple(column.name for column in _FILE_TEST)

# What a comparison reads of a run besides its results (app.store.runs selects them, app.compare.figures reads them).
IDENTITY_COLUMNS: tuple[str, ...] = ("id", "machine", "label", "format_version", "bonnie_version")
SETUP_COLUMNS: tuple[str, ...] = ("file_size_mib", "io_chunk_bytes", "seek_count", "seek_procs", "concurrency")
RAM_BYTES = "ram_bytes"  # the runner document's system.ram_bytes, taken out at ingest (document.ram_bytes)
LIMITERS = "limiters"  # what the runner's document says limited each test of this line, taken out at ingest
