"""The plain-line check as regular expressions: the specification app/ingest/_plain_lines.c implements in C, which
tests/ingest/test_sqlite_bulk.py holds it to, line for line. PLAIN is any of the layouts: PLAIN_198, PLAIN_19X (1.97,
1.96, 1.93c, the 47-field -s 0 lines included) and PLAIN_103."""

from __future__ import annotations

import re

from app.limits import MAX_MACHINE_CHARS

# A format-1.98 line of fifty fields (no comma in the name) whose cells all have the shapes bonnie++
# writes, with the I/O tests, the file tests or both run, and no character JSON would need to
# escape. For such a line parse_line() can raise no error, so its cells can be converted elsewhere
# by the same rules: the C extension app/ingest/_plain_lines.c keeps these lines (and only these) for itself.
_PLAIN_CHAR = r'[^,"\\\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]'
_PLAIN_TEXT = _PLAIN_CHAR + "*"
_PAIR = r"(?:\d{1,15},\d{1,9}|\+\+\+\+\+,\+\+\+|,)"
# 15 digits and a fraction can round up to MAX_NUMBER, which the parser refuses: such a cell is the parser's.
_SEEKS_PAIR = r"(?:(?:\d{1,15}|\d{1,14}\.\d{1,6}),\d{1,9}|\+\+\+\+\+,\+\+\+|,)"
_LATENCY = r"(?:\d{1,12}(?:us|ms|s))?"
_IO_RUN = ",".join([r"\d{1,12}[MG]", "", r"\d{0,15}", r"\d{0,9}", *[_PAIR] * 5, _SEEKS_PAIR])
_FILES_RUN = ",".join([r"\d{1,15}", r"(?:\d{1,15}|link|symlink)?", r"\d{0,15}", "", r"\d{0,15}", *[_PAIR] * 6])
_LATENCIES_RUN = ",".join([_LATENCY] * 6)
_IO_NOT_RUN, _FILES_NOT_RUN, _LATENCIES_NOT_RUN = "," * 15, "," * 16, "," * 5
PLAIN_198 = re.compile(
    rf"1\.98,{_PLAIN_TEXT},{_PLAIN_CHAR}{{0,{MAX_MACHINE_CHARS}}},\d{{1,9}},{_PLAIN_TEXT},(?:"
    + "|".join(
        ",".join(parts)
        for parts in (
            (_IO_RUN, _FILES_RUN, _LATENCIES_RUN, _LATENCIES_RUN),
            (_IO_RUN, _FILES_NOT_RUN, _LATENCIES_RUN, _LATENCIES_NOT_RUN),  # -n 0
            (_IO_NOT_RUN, _FILES_RUN, _LATENCIES_NOT_RUN, _LATENCIES_RUN),  # -s 0
        )
    )
    + ")",
    re.ASCII,  # \d is any Unicode digit otherwise ("٣"), which SQLite's CAST would read as 0
)

# 1.97, 1.96, 1.93c (§3.1): no seek_count or seek_proc_count; io_chunk_size is 8192 or empty (a 4k is the parser's).
_IO_RUN_9X = ",".join([r"\d{1,12}[MG]", r"\d{0,12}", *[_PAIR] * 5, _SEEKS_PAIR])
_IO_NOT_RUN_9X = "," * 13
_HEAD_9X = rf"{_PLAIN_TEXT},{_PLAIN_CHAR}{{0,{MAX_MACHINE_CHARS}}},\d{{1,9}},{_PLAIN_TEXT},"
PLAIN_19X = re.compile(
    # A 48-field -s 0 line of 1.93c or 1.96 with a size but no I/O cells the parser reads as the short layout
    # of a name with a comma (parsing._is_short_no_io_line): not plain.
    r"(?!(?:1\.93c|1\.96),[^,]*,[^,]*,[^,]*,[^,]*,[^,]+,{14}[^,])"
    + r"(?:(?:1\.97|1\.96|1\.93c),"
    + _HEAD_9X
    + "(?:"
    + "|".join(
        ",".join(parts)
        for parts in (
            (_IO_RUN_9X, _FILES_RUN, _LATENCIES_RUN, _LATENCIES_RUN),
            (_IO_RUN_9X, _FILES_NOT_RUN, _LATENCIES_RUN, _LATENCIES_NOT_RUN),
            (_IO_NOT_RUN_9X, _FILES_RUN, _LATENCIES_NOT_RUN, _LATENCIES_RUN),
        )
    )
    + ")"
    # §3.3-3: the -s 0 line of 1.93c and 1.96 with one empty field fewer (47)
    + r"|(?:1\.93c|1\.96),"
    + _HEAD_9X
    + "," * 13
    + ",".join((_FILES_RUN, _LATENCIES_NOT_RUN, _LATENCIES_RUN))
    + ")",
    re.ASCII,
)

# 1.03 (§2): name, file_size (2G or 2G:4k), twelve I/O cells, num_files (16, 16:100000:16, 4:link, each /8),
# twelve file-test cells; no latencies. A name starting with '#' makes a comment line.
_SIZE_103 = r"\d{1,12}[MG](?::\d{1,12}k?)?"
_FILES_103 = r"\d{1,12}(?::(?:link|symlink|\d{1,12}:\d{1,12}))?(?:/\d{1,12})?"
_CELLS_103_RUN = ",".join([*[_PAIR] * 5, _SEEKS_PAIR])
_CELLS_103_FILES_RUN = ",".join([_PAIR] * 6)
_CELLS_103_NOT_RUN = "," * 11
PLAIN_103 = re.compile(
    rf"(?!#){_PLAIN_CHAR}{{0,{MAX_MACHINE_CHARS}}},(?:"
    + "|".join(
        ",".join(parts)
        for parts in (
            (_SIZE_103, _CELLS_103_RUN, _FILES_103, _CELLS_103_FILES_RUN),
            (_SIZE_103, _CELLS_103_RUN, "", _CELLS_103_NOT_RUN),
            ("", _CELLS_103_NOT_RUN, _FILES_103, _CELLS_103_FILES_RUN),
        )
    )
    + ")",
    re.ASCII,
)

PLAIN = re.compile("|".join(f"(?:{pattern.pattern})" for pattern in (PLAIN_198, PLAIN_19X, PLAIN_103)), re.ASCII)
