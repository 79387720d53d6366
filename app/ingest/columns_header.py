"""app/ingest/_columns.h: app.columns.STORED_COLUMNS as C, for the plain-line reader app/ingest/_plain_lines.c.

The header is committed (a build needs no Python step before the compiler); tests/test_columns.py regenerates it and
fails when the file differs. `python -m app.ingest.columns_header` writes it.
"""

from __future__ import annotations

from pathlib import Path

from app.bonnie import TESTS
from app.columns import STORED_COLUMNS, Conversion

HEADER_PATH = Path(__file__).with_name("_columns.h")


def _cell(field: str | None) -> str:
    """The offset of the field's cell in _plain_lines.c's Line, whose members are named as the fields; a test's
    three fields are the arrays value, cpu and latency, in TESTS order."""
    if field is None:
        return "0"
    for index, test in enumerate(TESTS):
        for suffix, member in (("", "value"), ("_cpu", "cpu"), ("_latency", "latency")):
            if field == test + suffix:
                return f"offsetof(Line, {member}[{index}])"
    return f"offsetof(Line, {field})"


def render() -> str:
    conversions = "".join(f"    CONVERT_{conversion.name},\n" for conversion in Conversion)
    columns = "".join(
        f'    {{"{column.name}", CONVERT_{column.conversion.name}, {_cell(column.field)}}},\n'
        for column in STORED_COLUMNS
    )
    return (
        "/* Generated from app/columns.py (STORED_COLUMNS) by `python -m app.ingest.columns_header`: do not edit.\n"
        " * Included by app/ingest/_plain_lines.c after its Line. */\n"
        "\n"
        "enum Conversion {\n"
        f"{conversions}"
        "};\n"
        "\n"
        "typedef struct {\n"
        "    const char *name;   /* the run table's column */\n"
        "    int conversion;     /* enum Conversion */\n"
        "    size_t cell;        /* the offset of its field's Cell in Line (0 when not read from a field) */\n"
        "} StoredColumn;\n"
        "\n"
        f"#define STORED_COLUMN_COUNT {len(STORED_COLUMNS)}\n"
        "static const StoredColumn STORED_COLUMNS[STORED_COLUMN_COUNT] = {\n"
        f"{columns}"
        "};\n"
    )


if __name__ == "__main__":
    HEADER_PATH.write_text(render())
