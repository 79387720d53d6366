"""Format-1.98 lines into SQLite, with SQLite converting their cells.

Issue #2 asks that 100,000 lines be stored in at most 3x the time sqlite3 takes to `.import` them.
Converting 1.2 million result cells one by one in Python takes longer than that on its own. So for
the common line (format 1.98, fifty fields, every cell of its usual shape: parsing.PLAIN_198),
Python only splits it and stages the cells, and one INSERT ... SELECT turns them into a run row,
by the same rules as app/parsing.py; tests/test_sqlite_bulk.py holds the two to each other.
"""

from __future__ import annotations

import re

from app.parsing import TESTS

FIELD_COUNT = 50
_CELLS = [f"c{i}" for i in range(FIELD_COUNT)]

# Field positions in a format-1.98 line (docs: bonnie-csv-format.md §3.2).
_FIRST_IO, _FIRST_FILE, _FIRST_LATENCY = 9, 26, 38


def _int(cell: str) -> str:
    return f"CAST(NULLIF({cell}, '') AS INTEGER)"


def _result_columns() -> dict[str, str]:
    columns = {}
    for index, test in enumerate(TESTS):
        first = _FIRST_IO + 2 * index if index < 6 else _FIRST_FILE + 2 * (index - 6)
        value, cpu, latency = f"c{first}", f"c{first + 1}", f"c{_FIRST_LATENCY + index}"
        columns[f"{test}_status"] = f"CASE {value} WHEN '' THEN 'not_run' WHEN '+++++' THEN 'too_fast' ELSE 'ok' END"
        number_type = "REAL" if test == "seeks" else "INTEGER"
        columns[f"{test}_value"] = f"CASE WHEN {value} GLOB '[0-9]*' THEN CAST({value} AS {number_type}) END"
        columns[f"{test}_cpu_pct"] = f"CASE WHEN {cpu} GLOB '[0-9]*' THEN CAST({cpu} AS INTEGER) END"
        # CAST reads the leading digits of "117us", "228ms" or "105s".
        columns[f"{test}_latency_us"] = (
            f"CASE WHEN {latency} = '' THEN NULL WHEN {latency} GLOB '*us' THEN CAST({latency} AS INTEGER)"
            f" WHEN {latency} GLOB '*ms' THEN CAST({latency} AS INTEGER) * 1000 ELSE CAST({latency} AS INTEGER) * 1000000 END"
        )
    return columns


# Every run column, as an SQL expression over the staged cells c0..c49 and the upload's parameters.
COLUMN_SQL = {
    "id": "id",
    "upload_id": ":upload_id",
    "created_at": ":created_at",
    "line_hash": "line_hash",
    "raw_line": "raw_line",
    "machine": "c2",
    "format_version": "c0",
    "bonnie_version": "NULLIF(c1, '')",
    "concurrency": "CAST(c3 AS INTEGER)",
    "seed": "NULLIF(c4, '')",
    "file_size_mib": "CASE WHEN c5 = '' THEN NULL ELSE CAST(c5 AS INTEGER) * CASE WHEN c5 GLOB '*G' THEN 1024 ELSE 1 END END",
    "io_chunk_bytes": "NULL",
    "seek_count": _int("c7"),
    "seek_procs": _int("c8"),
    "num_files": _int("c21"),
    "file_max_size": "CASE WHEN c22 GLOB '[0-9]*' THEN CAST(c22 AS INTEGER) END",
    "file_min_size": _int("c23"),
    "file_num_dirs": _int("c25"),
    "file_link": "CASE WHEN c22 IN ('link', 'symlink') THEN c22 END",
    "label": ":label",
    "document": ":document",
    **_result_columns(),
}

# One INSERT per line with the conversion in its VALUES: the cells are numbered parameters
# (?4 is c0, ... ?53 is c49), each used as often as the rules need, bound once.
_PARAMS = (
    {"id": "?1", "line_hash": "?2", "raw_line": "?3"}
    | {cell: f"?{4 + index}" for index, cell in enumerate(_CELLS)}
    | {"upload_id": "?54", "created_at": "?55", "label": "?56", "document": "?57"}
)
_CELL_NAME = re.compile(r"\b(c\d+|id|line_hash|raw_line)\b|:(\w+)")


def _numbered(expression: str) -> str:
    return _CELL_NAME.sub(lambda m: _PARAMS[m[1] or m[2]], expression)


INSERT_RUN = (
    f"INSERT INTO run ({', '.join(COLUMN_SQL)}) VALUES ({', '.join(_numbered(e) for e in COLUMN_SQL.values())})"
    " ON CONFLICT (line_hash) DO NOTHING"
)


def row(run_id: int, line_hash: bytes, raw_line: str, upload: tuple) -> tuple:
    """A line's 57 parameters; `upload` is (upload_id, created_at, label, document) as the driver
    takes them: created_at and document already in the form SQLAlchemy stores in SQLite."""
    return (run_id, line_hash, raw_line, *raw_line.split(","), *upload)
