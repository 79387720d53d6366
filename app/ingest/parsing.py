"""bonnie++ CSV lines -> ParsedRun values, or LineError values naming the line and field.

Pure: no database, no HTTP. Follows docs/bonnie-csv-format.md (copied from the team's spec);
section numbers in comments refer to it.

Two families exist:
* 1.0x (1.02-1.04): 27 fields, starting with the machine name (§2);
* 1.9x/2.0x: starting with the CSV format and the bonnie++ version: formats 1.93c, 1.96, 1.97
  (48 fields; 47 for the `-s 0` lines of 1.93c/1.96) and 1.98 (50 fields) (§3).
The machine name is written raw, so a name with commas makes the line longer than its format;
every other column is counted from the end of the line (§1.4).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from app.bonnie import FILE_TESTS, IO_TESTS, STATUS_NOT_RUN, STATUS_OK, STATUS_TOO_FAST, TESTS, Result
from app.columns import FILE_TEST_COLUMNS, RUN_LINE_COLUMNS, STORED_COLUMNS, Conversion
from app.errors import LineError as LineError  # re-exported: the parser's results carry it
from app.ingest.lines import BOM, iter_lines
from app.limits import MAX_MACHINE_CHARS

# The 50 columns of format 1.98, named as bonnie++'s header names them, with the two columns its
# header forgot (§3.2) called seek_count and seek_proc_count. Errors name fields by these names.
COLUMNS_198 = (
    (
        "format_version",
        "bonnie_version",
        "name",
        "concurrency",
        "seed",
        "file_size",
        "io_chunk_size",
        "seek_count",
        "seek_proc_count",
    )
    + tuple(name for test in IO_TESTS for name in (test, f"{test}_cpu"))
    + ("num_files", "max_size", "min_size", "num_dirs", "file_chunk_size")
    + tuple(name for test in FILE_TESTS for name in (test, f"{test}_cpu"))
    + tuple(f"{test}_latency" for test in TESTS)
)
COLUMNS_103 = (
    ("name", "file_size")
    + tuple(name for test in IO_TESTS for name in (test, f"{test}_cpu"))
    + ("num_files",)
    + tuple(name for test in FILE_TESTS for name in (test, f"{test}_cpu"))
)

FORMAT_103 = "1.03"
# Fields a line of each 1.9x format has (§3.1, §3.2).
FIELD_COUNTS_9X = {"1.93c": 48, "1.96": 48, "1.97": 48, "1.98": 50}
# Formats whose `-s 0` lines are one field short (§3.3-3).
SHORT_NO_IO_FORMATS = ("1.93c", "1.96")

HEADER_PREFIXES = ("name,file_size,", "format_version,bonnie_version,")
# The header line bonnie++ 2.00a prints before the lines of a repeated run (`-q -x 3`), as it spells it:
# without the two seek columns. bon_csv2html, bon_csv2txt and this board's ingest skip it.
HEADER_198 = ",".join(name for name in COLUMNS_198 if name not in ("seek_count", "seek_proc_count"))
DEFAULT_MAX_LINE_BYTES = 4096

# A rate or %CPU larger than this is not a measurement; it also keeps values inside a 64-bit column.
MAX_NUMBER = 10**15

_VERSION_RE = re.compile(r"\d+\.\d+[a-z]?", re.ASCII)
_SEEKS_RE = re.compile(r"\d{1,16}(?:\.\d{1,6})?", re.ASCII)
_SIZE_9X_RE = re.compile(r"(\d{1,12})([MG])", re.ASCII)
_CHUNK_9X_RE = re.compile(r"(\d{1,12})([km]?)", re.ASCII)
_CHUNK_FACTOR = {"": 1, "k": 1024, "m": 1024 * 1024}
_SIZE_103_RE = re.compile(r"(\d{1,12})([MG])(?::(\d{1,12})(k?))?", re.ASCII)
_FILES_103_RE = re.compile(r"(\d{1,12})(?::(?:(link|symlink)|(\d{1,12}):(\d{1,12})))?(?:/(\d{1,12}))?", re.ASCII)


class FileTest(NamedTuple):
    num_files: int  # bonnie++'s -n number: units of 1024 files
    max_size: int | None
    min_size: int | None
    num_dirs: int | None
    link: str | None  # "link", "symlink" or None


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ costs 3x, per line
class ParsedRun:
    line_no: int
    raw_line: str
    format_version: str
    bonnie_version: str | None
    machine: str
    concurrency: int | None
    seed: str | None
    file_size_mib: int | None
    io_chunk_bytes: int | None
    seek_count: int | None
    seek_procs: int | None
    file_test: FileTest | None
    results: tuple[Result, ...]  # twelve, in TESTS order


class _FieldError(Exception):
    def __init__(self, field: str | None, error: str):
        super().__init__(error)
        self.field = field
        self.error = error


_NOT_RUN = Result(STATUS_NOT_RUN, None, None, None)


def iter_parse_bytes(data: bytes, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[ParsedRun | LineError]:
    """Like iter_parse, for bytes: a line that is not UTF-8 is an error of its own."""
    for line_no, raw in iter_lines(data):
        item = parse_raw_line(raw, line_no, max_line_bytes)
        if item is not None:
            yield item


def parse_raw_line(raw: bytes, line_no: int, max_line_bytes: int) -> ParsedRun | LineError | None:
    """One line as bytes (without its "\\n"); a line that is not UTF-8 is an error of its own."""
    size = len(raw) - raw.endswith(b"\r")
    if size > max_line_bytes:  # not decoded at all: a single 32 MiB line costs no 32 MiB string
        return LineError(line_no, None, f"line is {size} bytes long; the limit is {max_line_bytes}")
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start]
        return LineError(line_no, None, f"not UTF-8 text: byte 0x{bad:02x} at byte {exc.start + 1} of the line")
    return parse_line(line, line_no, max_line_bytes=max_line_bytes)


def iter_parse(text: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[ParsedRun | LineError]:
    """Yield a ParsedRun or a LineError for each line that is neither blank, a comment nor a header."""
    for line_no, line in iter_lines(text):
        item = parse_line(line, line_no, max_line_bytes=max_line_bytes)
        if item is not None:
            yield item


def parse_line(
    line: str, line_no: int, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> ParsedRun | LineError | None:
    """One physical line (its "\\n" removed) -> ParsedRun, LineError, or None when it is skipped."""
    line = line.removesuffix("\r")
    # len() counts characters; only a line that might be over the limit pays for encoding.
    # Before the skips: a comment or header line is held to the limit too.
    if len(line) > max_line_bytes // 4 and (size := len(line.encode("utf-8", "surrogatepass"))) > max_line_bytes:
        return LineError(line_no, None, f"line is {size} bytes long; the limit is {max_line_bytes}")
    if not line or line.isspace() or line.startswith("#") or line.startswith(HEADER_PREFIXES):
        return None
    if "\x00" in line:
        return LineError(line_no, None, "line contains a NUL byte")
    if BOM in line:
        # Never part of a machine name: an editor's byte order mark belongs before the first line only.
        return LineError(
            line_no,
            None,
            "line contains a byte order mark (U+FEFF), which is allowed only at the very start of the upload",
        )
    fields = line.split(",")
    if len(fields) < len(COLUMNS_103):
        # Too short for any format: said without raising, as a junk upload brings millions.
        return LineError(line_no, None, _too_few_fields(fields[0], len(fields)))
    try:
        return _parse_fields(fields, line, line_no)
    except _FieldError as exc:
        return LineError(line_no, exc.field, exc.error)


def _parse_fields(fields: list[str], line: str, line_no: int) -> ParsedRun:
    count = len(fields)
    first = fields[0]
    if not _VERSION_RE.fullmatch(first) or count == len(COLUMNS_103):
        return _parse_103(fields, line, line_no)
    if count >= _FEWEST_9X_FIELDS:  # §7.3
        if first not in FIELD_COUNTS_9X:
            raise _FieldError(
                "format_version",
                f"unsupported CSV format {first!r}: bonnieboard reads 1.03, 1.93c, 1.96, 1.97 and 1.98",
            )
        return _parse_9x(fields, line, line_no)
    # Too short for the 1.9x family: a 1.03 line whose name looks like a version and holds commas,
    # or else a cut-short 1.9x line, which is the more useful thing to say.
    try:
        return _parse_103(fields, line, line_no)
    except _FieldError:
        if first in FIELD_COUNTS_9X:
            raise _FieldError(None, _too_few_fields(first, count)) from None
        raise


def _check_machine_length(machine: str) -> None:
    if len(machine) > MAX_MACHINE_CHARS:
        raise _FieldError("name", f"the machine name is {len(machine)} characters; the limit is {MAX_MACHINE_CHARS}")


def _check_text(text: str, field: str) -> str:
    bad = control_or_separator(text)
    if bad is not None:
        raise _FieldError(field, f"{field} {_show(text)} holds {describe_character(bad)}")
    return text


# What no text field (machine name, bonnie++ version, seed) may hold, whichever path the text came by: a CSV line,
# a text report (app.ingest.report_text) or the runner's -m (runner/src/options.c, the same set): the C0 and C1
# controls, DEL, and Unicode's line and paragraph separators. Each ends a line for some reader (str.splitlines,
# a terminal, a spreadsheet), so a name holding one is shown cut in two, and an exported line splits.
_CONTROL_OR_SEPARATOR = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def control_or_separator(text: str) -> str | None:
    """The first control or line/paragraph separator character of `text`, or None when it holds none."""
    if text.isprintable():  # the usual text, at C speed: printable means no control and no separator
        return None
    match = _CONTROL_OR_SEPARATOR.search(text)
    return None if match is None else match[0]


def describe_character(char: str) -> str:
    """`U+2028 (a line separator)`: how an error names a character control_or_separator() found."""
    kind = "a line or paragraph separator" if char in "\u2028\u2029" else "a control character"
    return f"U+{ord(char):04X} ({kind}), which no text field may hold"


def _too_few_fields(first: str, count: int) -> str:
    if first in FIELD_COUNTS_9X:
        return f"too few fields: a format {first} line has {FIELD_COUNTS_9X[first]}, this one has {count}"
    return f"too few fields: a bonnie++ 1.03 line has {len(COLUMNS_103)} and a 1.9x line starts with its format version; this one has {count}"


_FEWEST_9X_FIELDS = 47  # the -s 0 lines of 1.93c and 1.96


# ==== 1.9x / 2.0x family (§3) ====


def _parse_9x(fields: list[str], line: str, line_no: int) -> ParsedRun:
    fmt = fields[0]
    expected = FIELD_COUNTS_9X[fmt]
    count = len(fields)
    if fmt in SHORT_NO_IO_FORMATS and _is_short_no_io_line(fields):
        # §3.3-3: 13 empty fields instead of 14 after the seed; put the missing one back.
        name_end = count - (expected - 4)
        fields = fields[: name_end + 2] + [""] + fields[name_end + 2 :]
        count += 1
    if count < expected:
        raise _FieldError(None, f"too few fields: a format {fmt} line has {expected}, this one has {count}")
    # Everything after the name has a fixed length; extra fields are commas in the name.
    name_end = count - (expected - 3)
    tail = fields[name_end:]
    # The cells by meaning (app.columns' field names); 1.9x lines before 1.98 have no seek columns (§3.1).
    seeks = fmt == "1.98"
    at = 6 if seeks else 4
    cells = {
        "format_version": fmt,
        "bonnie_version": fields[1],
        "name": ",".join(fields[2:name_end]),
        "concurrency": tail[0],
        "seed": tail[1],
        "file_size": tail[2],
        "io_chunk_size": tail[3],
        "seek_count": tail[4] if seeks else "",
        "seek_proc_count": tail[5] if seeks else "",
    }
    io_cells = tail[at : at + 12]
    at += 12
    num_cell, max_cell, min_cell, always_empty, dirs_cell = tail[at : at + 5]
    at += 5
    file_results_cells = tail[at : at + 12]
    at += 12
    latency_cells = tail[at : at + 12]

    _check_machine_length(cells["name"])
    facts = _convert_facts(cells, _FACT_RULES)
    # Every 1.9x line has a concurrency; it and seek_proc_count go into 32-bit columns (MAX_COUNT).
    if facts["concurrency"] is None or facts["concurrency"] > MAX_COUNT:
        _parse_count(tail[0], "concurrency")
    if facts["seek_procs"] is not None and facts["seek_procs"] > MAX_COUNT:
        _parse_count(cells["seek_proc_count"], "seek_proc_count")
    file_cells = {"num_files": num_cell, "max_size": max_cell, "min_size": min_cell, "num_dirs": dirs_cell}
    if num_cell == "" and (always_empty or any(file_cells.values())):
        raise _FieldError("num_files", "num_files is empty but the file-test size fields are not")
    if always_empty != "":
        # §3.3-1: bonnie++ never fills this column; a value here means the columns are not bonnie++'s.
        raise _FieldError(
            "num_dirs",
            f"num_dirs holds {_show(always_empty)}, but bonnie++ always leaves it empty (num_dirs is written one column later)",
        )
    file_test = _convert_file_test(file_cells, _FILE_TEST_RULES_9X)
    results = _parse_results(io_cells + file_results_cells, latency_cells)
    _check_family_ran(facts["file_size_mib"] is not None, results, "file_size")
    _check_family_ran(file_test is not None, results, "num_files")
    return ParsedRun(line_no=line_no, raw_line=line, **facts, file_test=file_test, results=results)


def _is_short_no_io_line(fields: list[str]) -> bool:
    """A 47-field-layout `-s 0` line of 1.93c/1.96 (§3.3-3, §7.4): 13 empty fields between the seed and num_files.

    Counted from the end (§1.4), as the name may hold commas. The field before those 13 is the seed,
    which bonnie++ always writes (§3.1); in a 48-field `-s 0` line it is the empty file_size, the
    first of 14 empty fields. So `1.96,1.96,fslab3,1,12345,` + 14 empty fields is machine fslab3,
    seed 12345, not machine "fslab3,1" with concurrency 12345 and no seed.
    """
    count = len(fields)
    seed_at = count - 43
    num_files_at = count - 29
    if seed_at < 4:
        return False
    # With exactly 47 fields (no comma in the name) no 48-field reading exists, so an empty seed (a line
    # rebuilt from a text report, which never shows the seed: §8) is still the short layout.
    seed_known = fields[seed_at] != "" or count == _SHORT_NO_IO_FIELDS
    return seed_known and fields[num_files_at] != "" and all(cell == "" for cell in fields[seed_at + 1 : num_files_at])


_SHORT_NO_IO_FIELDS = 47


# ==== 1.0x family (§2) ====


def _parse_103(fields: list[str], line: str, line_no: int) -> ParsedRun:
    count = len(fields)
    expected = len(COLUMNS_103)
    if count < expected:
        raise _FieldError(None, _too_few_fields("", count))
    name_end = count - (expected - 1)
    tail = fields[name_end:]
    cells = {"format_version": FORMAT_103, "name": ",".join(fields[:name_end])}
    # The name is held to its rules before the cells after it are cut, as a 1.9x line's is: one line, one first error.
    _check_machine_length(cells["name"])
    _check_text(cells["name"], "name")
    cells |= _read_size_103(tail[0])
    file_cells = _read_file_test_103(tail[13])
    facts = _convert_facts(cells, _FACT_RULES)
    file_test = _convert_file_test(file_cells, _FILE_TEST_RULES_103)
    results = _parse_results(tail[1:13] + tail[14:26], None)
    _check_family_ran(facts["file_size_mib"] is not None, results, "file_size")
    _check_family_ran(file_test is not None, results, "num_files")
    return ParsedRun(line_no=line_no, raw_line=line, **facts, file_test=file_test, results=results)


def _read_size_103(cell: str) -> dict[str, str]:
    """§2's file_size, 300M, 2G or 2G:4k, cut into the cells of file_size and io_chunk_size."""
    if cell == "":
        return {}
    match = _SIZE_103_RE.fullmatch(cell)
    if match is None:
        raise _FieldError("file_size", f"file_size {_show(cell)} is not a size like 300M, 2G or 2G:4k")
    size, unit, chunk, chunk_unit = match.groups()
    return {"file_size": size + unit, "io_chunk_size": "" if chunk is None else chunk + chunk_unit}


def _read_file_test_103(cell: str) -> dict[str, str]:
    """§2's num_files, 16, 16:100000:16, 4:link or 64/8, cut into the cells of the 1.9x file-test fields."""
    if cell == "":
        return {}
    match = _FILES_103_RE.fullmatch(cell)
    if match is None:
        raise _FieldError(
            "num_files", f"num_files {_show(cell)} is not a file-test spec like 16, 16:100000:16, 4:link or 64/8"
        )
    num_files, link, max_size, min_size, num_dirs = match.groups()
    return {
        "num_files": num_files,
        "max_size": link or max_size or "",
        "min_size": min_size or "",
        "num_dirs": num_dirs or "",
    }


# ==== The line's facts and file test, by app.columns' table ====


def _text(cell: str, field: str) -> str:
    return _check_text(cell, field)


def _optional_text(cell: str, field: str) -> str | None:
    return _check_text(cell, field) or None


def _optional_int(cell: str, field: str) -> int | None:
    return None if cell == "" else _parse_uint(cell, field)


def _size_mib(cell: str, field: str) -> int | None:
    if cell == "":
        return None
    match = _SIZE_9X_RE.fullmatch(cell)
    if match is None:
        raise _FieldError(field, f"{field} {_show(cell)} is not a size like 512M or 2G")
    return int(match[1]) * (1024 if match[2] == "G" else 1)


def _chunk_bytes(cell: str, field: str) -> int | None:
    if cell == "":
        return None
    match = _CHUNK_9X_RE.fullmatch(cell)
    if match is None:
        raise _FieldError(field, f"{field} {_show(cell)} is not a size like 512, 4k or 1m")
    return int(match[1]) * _CHUNK_FACTOR[match[2]]


_LINKS = ("link", "symlink")


def _file_max_size(cell: str, field: str) -> int | None:
    return None if cell == "" or cell in _LINKS else _parse_uint(cell, field)


def _file_link(cell: str, field: str) -> str | None:
    return cell if cell in _LINKS else None


# One function per Conversion of a line's own facts and file test (app.columns.STORED_COLUMNS), given the cell and
# the field's name for its error. A result's four columns go through _parse_results, which reads a value with its
# %CPU (§1.1), by the same rules as the C reader's RESULT_* conversions.
CONVERSIONS: dict[Conversion, Callable[[str, str], object]] = {
    Conversion.TEXT: _text,
    Conversion.OPTIONAL_TEXT: _optional_text,
    Conversion.OPTIONAL_INT: _optional_int,
    Conversion.SIZE_MIB: _size_mib,
    Conversion.CHUNK_BYTES: _chunk_bytes,
    Conversion.FILE_MAX_SIZE: _file_max_size,
    Conversion.FILE_LINK: _file_link,
}
# A rule: (the ParsedRun attribute or FileTest field, the line field, the field's name in its errors, the conversion).
_Rule = tuple[str, str, str, Callable[[str, str], Any]]


def _rules(columns: tuple[str, ...], error_fields: dict[str, str]) -> tuple[_Rule, ...]:
    return tuple(
        (column.name, column.field, error_fields.get(column.field, column.field), CONVERSIONS[column.conversion])
        for column in STORED_COLUMNS
        if column.name in columns and column.field is not None
    )


# Where a layout's header names a field otherwise than app.columns does, its errors use the header's name: bonnie++
# 1.9x writes num_dirs under file_chunk_size (§3.3-1).
_FACT_RULES = _rules(RUN_LINE_COLUMNS, {})
_FILE_TEST_RULES_9X = _rules(FILE_TEST_COLUMNS, {"num_dirs": "file_chunk_size"})
_FILE_TEST_RULES_103 = _rules(FILE_TEST_COLUMNS, {})


def _convert_facts(cells: dict[str, str], rules: tuple[_Rule, ...]) -> dict[str, Any]:
    """ParsedRun's RUN_LINE_COLUMNS from the line's cells by meaning (a cell the layout lacks is empty)."""
    get = cells.get
    return {name: convert(get(field, ""), error_name) for name, field, error_name, convert in rules}


def _convert_file_test(cells: dict[str, str], rules: tuple[_Rule, ...]) -> FileTest | None:
    if not cells or cells["num_files"] == "":
        return None
    values: list[Any] = [convert(cells[field], error_name) for _, field, error_name, convert in rules]
    return FileTest(*values)


# ==== Results (§1.1-§1.3) ====


def _parse_results(cells: list[str], latency_cells: Sequence[str] | None) -> tuple[Result, ...]:
    """The 24 value/%CPU cells of the twelve tests (and their 12 latencies) -> twelve Results.

    The hot path of ingest (100,000 lines = 1.2 million results). When every cell is short ASCII,
    which one pass over the cells tells, each cell needs only isdigit() and int(); anything else
    goes to the careful per-cell functions, which name the field at fault.
    """
    if not latency_cells:
        latency_cells = _NO_LATENCIES
    plain = (
        max(map(len, cells)) <= _MAX_DIGITS
        and max(map(len, latency_cells)) <= _MAX_DIGITS
        and "".join(cells).isascii()
        and "".join(latency_cells).isascii()
        and max(map(len, cells[1::2])) <= _MAX_COUNT_DIGITS
    )
    results: list[Result] = []
    append = results.append
    for test, value_cell, cpu_cell, latency_cell in zip(TESTS, cells[0::2], cells[1::2], latency_cells, strict=True):
        if not latency_cell:
            latency_us = None
        elif plain and latency_cell[-2:] == "us" and latency_cell[:-2].isdigit():
            latency_us = int(latency_cell[:-2])
        else:
            latency_us = _parse_latency(latency_cell, test)
        if plain and value_cell.isdigit() and cpu_cell.isdigit():
            append(
                _new_result(
                    Result,
                    (STATUS_OK, int(value_cell) if test != "seeks" else float(value_cell), int(cpu_cell), latency_us),
                )
            )
        elif value_cell == "+++++" and cpu_cell == "+++":
            append(_new_result(Result, (STATUS_TOO_FAST, None, None, latency_us)))
        elif not value_cell and not cpu_cell:
            append(_NOT_RUN if latency_us is None else Result(STATUS_NOT_RUN, None, None, latency_us))
        else:
            append(_parse_unusual_result(test, value_cell, cpu_cell, latency_us))
    return tuple(results)


# Twice as fast as Result(...), which goes through a Python-level __new__.
_new_result = tuple.__new__


_NO_LATENCIES = ("",) * len(TESTS)


def _parse_unusual_result(test: str, value_cell: str, cpu_cell: str, latency_us: int | None) -> Result:
    """A decimal seeks rate, or a malformed pair: the precise error names the field at fault."""
    if value_cell == "+++++":
        raise _FieldError(
            f"{test}_cpu", f"{test} is +++++ (too fast to measure) but {test}_cpu is {_show(cpu_cell)}, not +++"
        )
    if not value_cell:
        raise _FieldError(test, f"{test} is empty but {test}_cpu is {_show(cpu_cell)}")
    if cpu_cell == "+++":
        raise _FieldError(test, f"{test}_cpu is +++ but {test} is {_show(value_cell)}, not +++++")
    if not cpu_cell:
        raise _FieldError(f"{test}_cpu", f"{test}_cpu is empty but {test} is {_show(value_cell)}")
    value = _parse_seeks(value_cell) if test == "seeks" else _parse_uint(value_cell, test)
    return Result(STATUS_OK, value, _parse_count(cpu_cell, f"{test}_cpu"), latency_us)


def _check_family_ran(ran: bool, results: tuple[Result, ...], size_field: str) -> None:
    if ran:
        return
    for test, result in zip(TESTS, results, strict=True):
        if (test in IO_TESTS) != (size_field == "file_size"):
            continue
        if result.status != STATUS_NOT_RUN:
            raise _FieldError(test, f"{test} has a result but {size_field} is empty, which says the test did not run")
        if result.latency_us is not None:
            raise _FieldError(
                f"{test}_latency",
                f"{test}_latency has a value but {size_field} is empty, which says the test did not run",
            )


def _parse_uint(cell: str, field: str) -> int:
    # isdigit() alone would accept "²" and other non-ASCII digits.
    if cell.isdigit() and cell.isascii() and len(cell) <= _MAX_DIGITS:
        return int(cell)
    if cell.startswith("-") and cell[1:].isdigit():
        raise _FieldError(field, f"{field} is {_show(cell)}: negative")
    if cell.isdigit() and cell.isascii():
        raise _FieldError(field, f"{field} is {_show(cell)}: too large")
    raise _FieldError(field, f"{field} is {_show(cell)}, not a whole number")


_MAX_DIGITS = len(str(MAX_NUMBER)) - 1  # 15 digits: below MAX_NUMBER


# %CPU, concurrency and seeker processes are stored in 32-bit INTEGER columns, which PostgreSQL
# keeps below 2**31 (a larger value is a server error there); nine digits is far beyond any real one.
_MAX_COUNT_DIGITS = 9
MAX_COUNT = 10**_MAX_COUNT_DIGITS - 1


def _parse_count(cell: str, field: str) -> int:
    value = _parse_uint(cell, field)
    if value > MAX_COUNT:
        raise _FieldError(field, f"{field} is {_show(cell)}: too large")
    return value


def _parse_seeks(cell: str) -> float:
    if _SEEKS_RE.fullmatch(cell) is None:
        raise _FieldError("seeks", f"seeks is {_show(cell)}, not a number of seeks per second like 262.3 or 1067")
    value = float(cell)
    if value >= MAX_NUMBER:
        raise _FieldError("seeks", f"seeks is {_show(cell)}: too large")
    return value


def _parse_latency(cell: str, test: str) -> int:
    if cell.endswith("us"):
        digits, factor_us = cell[:-2], 1
    elif cell.endswith("ms"):
        digits, factor_us = cell[:-2], 1_000
    elif cell.endswith("s"):
        digits, factor_us = cell[:-1], 1_000_000
    else:
        digits = ""
    if digits.isdigit() and digits.isascii() and len(digits) <= 12:
        return int(digits) * factor_us
    raise _FieldError(f"{test}_latency", f"{test}_latency is {_show(cell)}, not a latency like 117us, 228ms or 105s")


def _show(cell: str) -> str:
    """A cell quoted for an error message, cut short so a hostile line cannot flood the response."""
    return repr(cell if len(cell) <= 40 else cell[:40] + "...")
