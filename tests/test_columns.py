"""One definition of a run's columns: app/columns.py. Everything that lists them derives from it."""

from dataclasses import fields
from pathlib import Path

from app.columns import (
    FILE_TEST_COLUMNS,
    NOT_FROM_A_FIELD,
    RESULT_COLUMNS,
    RESULT_PARTS,
    RUN_LINE_COLUMNS,
    STORED_COLUMNS,
    Conversion,
    result_column,
)
from app.ingest import columns_header, sqlite_bulk
from app.ingest.parsing import CONVERSIONS, TESTS, FileTest, ParsedRun, Result, parse_line
from app.ingest.writers import ROW_COLUMNS, run_values
from app.store.models import run_table
from app.web.schemas import FileTestOut, ResultOut, RunOut
from tests.helpers import LINE_198


def test_result_columns_are_tests_times_result_parts_in_order():
    assert RESULT_PARTS == Result._fields == ("status", "value", "cpu_pct", "latency_us")
    assert RESULT_COLUMNS[:4] == ("putc_status", "putc_value", "putc_cpu_pct", "putc_latency_us")
    assert len(RESULT_COLUMNS) == len(TESTS) * len(RESULT_PARTS) == len(set(RESULT_COLUMNS))
    assert tuple(c.name for c in run_table.c if c.name.endswith(RESULT_PARTS)) == RESULT_COLUMNS


def test_the_file_test_columns_follow_the_parsers_file_test():
    assert ("num_files", *(f"file_{part}" for part in FileTest._fields[1:])) == FILE_TEST_COLUMNS


def test_every_writer_fills_every_column_by_name():
    # limiters: set after the rows, for the lines the upload's document names (app.ingest.documents)
    assert set(ROW_COLUMNS) == {c.name for c in run_table.c} - {"id", "limiters"}
    assert len(ROW_COLUMNS) == len(set(ROW_COLUMNS))
    assert ("id", *ROW_COLUMNS) == sqlite_bulk.COLUMNS  # the C extension's column table
    assert set(RUN_LINE_COLUMNS) <= {f.name for f in fields(ParsedRun)}


def test_run_values_put_each_value_under_its_column():
    run = parse_line(LINE_198, 1)
    row = dict(zip(ROW_COLUMNS, run_values(run, b"h" * 16, (7, "now"), ("label", None)), strict=True))
    assert (row["upload_id"], row["created_at"], row["line_hash"], row["label"], row["document_id"]) == (
        7,
        "now",
        b"h" * 16,
        "label",
        None,
    )
    assert (row["machine"], row["seek_count"], row["num_files"], row["file_num_dirs"]) == ("vm", 8192, 16, None)
    for test, result in zip(TESTS, run.results, strict=True):
        assert tuple(row[result_column(test, part)] for part in RESULT_PARTS) == result


def test_the_api_shape_derives_from_the_same_names():
    assert set(ResultOut.model_fields) == {*RESULT_PARTS, "unit"}
    assert set(RUN_LINE_COLUMNS) <= set(RunOut.model_fields)
    assert len(FileTestOut.model_fields) == len(FILE_TEST_COLUMNS)


def test_the_c_readers_column_table_is_what_app_columns_generates():
    """app/ingest/_columns.h is committed; a change to STORED_COLUMNS without `python -m app.ingest.columns_header`
    would leave the C reader storing the old table."""
    assert columns_header.HEADER_PATH.read_text() == columns_header.render(), (
        "app/ingest/_columns.h is stale: run `python -m app.ingest.columns_header` and rebuild the extension"
    )


def test_every_conversion_has_one_rule_in_c():
    """The C reader converts each Conversion in one case of convert(), which both writers' sinks take."""
    source = (Path(columns_header.__file__).parent / "_plain_lines.c").read_text()
    for conversion in Conversion:
        assert source.count(f"case CONVERT_{conversion.name}:") >= 1, conversion
    assert source.count("convert(&STORED_COLUMNS[c]") == 2  # the SQLite parameter and the COPY cell


def test_the_stored_columns_are_the_writers_columns():
    assert tuple(column.name for column in STORED_COLUMNS) == ("id", *ROW_COLUMNS)
    assert {column.name for column in STORED_COLUMNS if column.field is None} == {
        "id",
        "upload_id",
        "created_at",
        "line_hash",
        "raw_line",
        "label",
        "document_id",
    }
    for column in STORED_COLUMNS:
        assert (column.field is None) == (column.conversion in NOT_FROM_A_FIELD), column


def test_the_parser_converts_a_lines_facts_and_file_test_by_the_same_table():
    """app/ingest/parsing.py has one function per Conversion of a line's facts and file test; a result's columns go
    through _parse_results, which reads a value with its %CPU (§1.1)."""
    used = {column.conversion for column in STORED_COLUMNS if column.field is not None}
    results = {conversion for conversion in Conversion if conversion.name.startswith("RESULT_")}
    assert set(CONVERSIONS) == used - results
