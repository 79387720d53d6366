"""An upload cut into lines, the one way every Python reader of it numbers them (the C reader, app/ingest/_plain_lines.c,
cuts the same lines: tests/ingest/test_sqlite_bulk.py holds the two to the same line numbers).

"\\n" ends a line; a "\\r" before it stays on the line, for its reader to drop. A byte order mark is left out at the
very start of an upload only: anywhere else it is part of a line (and an error there: app.ingest.parsing).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import AnyStr

BOM = "\ufeff"  # the byte order mark
BOM_UTF8 = BOM.encode()  # the same mark as UTF-8 bytes, for the readers of bytes


def iter_lines(data: AnyStr, start: int = 0, end: int | None = None, line_no: int = 1) -> Iterator[tuple[int, AnyStr]]:
    """(line number, line without its "\\n") for each line of data[start:end], the first numbered line_no. Lines are
    cut out one at a time: 32 MiB of one-character lines must not become a list of 16 million strings at once
    (docs/decisions.md, "Upload memory under 300 MB")."""
    if end is None:
        end = len(data)
    if start == 0 and data.startswith(BOM if isinstance(data, str) else BOM_UTF8):
        start = len(BOM) if isinstance(data, str) else len(BOM_UTF8)
    newline = "\n" if isinstance(data, str) else b"\n"
    find = data.find
    while True:
        cut = find(newline, start, end)
        if cut < 0:
            yield line_no, data[start:end]
            return
        yield line_no, data[start:cut]
        start = cut + 1
        line_no += 1
