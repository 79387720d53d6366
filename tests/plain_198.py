"""The plain-line check as a regular expression: the specification app/ingest/_bulk198.c implements in C, which
tests/test_sqlite_bulk.py holds it to, line for line."""

from __future__ import annotations

import re

from app.limits import MAX_MACHINE_CHARS

# A format-1.98 line of fifty fields (no comma in the name) whose cells all have the shapes bonnie++
# writes, with the I/O tests, the file tests or both run, and no character JSON would need to
# escape. For such a line parse_line() can raise no error, so its cells can be converted elsewhere
# by the same rules: the C extension app/ingest/_bulk198.c keeps these lines (and only these) for itself.
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
