"""bonnie++'s human text report -> the CSV line bonnie++ wrote with it, or errors naming the report's line.

Pure: text in, CSV lines (for app.parsing) and LineErrors out. Follows docs/bonnie-csv-format.md §8, which says
what each report layout (1.03x; 1.93c to 1.97; 1.98 to 2.00a) carries and what it rounds or leaves out:
* every 1.9x report lacks the random seed (the CSV's `seed` is left empty);
* 1.98-2.00a print rates as `1193k` (exact), `65.6m`/`342m`/`1.2g` (rounded: the value written here is the
  report's figure in KiB/s, and ConvertedRun.bounds holds the interval bonnie++'s own value lies in);
* 1.98-2.00a print a file-test rate that is not the rate (a printf of a double with %d, §3.3-5): those results
  are written as not run (value and %CPU empty), their latencies kept, and ConvertedRun.missing names them;
* 1.03x print seeks of 1000/s and more without the decimal the CSV has (bounds again);
* the machine name is cut to fit its column (ConvertedRun.name_may_be_cut).
A report may be pasted with other text around it (progress messages, prose, an indentation, tabs); only rows
under a report header are read, and a row there that cannot be read is an error naming its line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from app.parsing import DEFAULT_MAX_LINE_BYTES, FILE_TESTS, IO_TESTS, LineError

# ---- what a report looks like (matched on the stripped line) ----

_IO_TITLE = re.compile(r"(?:Version\s+(?P<version>\S+)\s+)?-+Sequential Output-+\s+-+Sequential Input-+\s+-+Random-+")
_FILE_TITLE = re.compile(r"(?:Version\s+(?P<version>\S+)\s+)?-+Sequential Create-+\s+-+Random Create-+")
_IO_COLUMNS = re.compile(
    r"(?:Concurrency\s+(?P<concurrency>\d+)\s+)?-Per Chr-\s+--Block--\s+-Rewrite-\s+-Per Chr-\s+--Block--\s+--Seeks--"
)
_FILE_COLUMNS = re.compile(
    r"(?:(?P<name>.*\S)\s+)?-Create--\s+--Read---\s+-Delete--\s+-Create--\s+--Read---\s+-Delete--"
)
_IO_UNITS = re.compile(r"(?:Machine\s+Size(?::chnk)?|Name:Size etc)\s+(?:K/sec|/sec)\s+%CP\b.*")
_FILE_UNITS = re.compile(r"files(?::max(?::min)?)?\s+/sec\s+%CP\b.*")

# The name and size share the report's first 19 columns: the size right-aligned, the name cut to fit (§8).
_HEAD_WIDTH = 19
# Latency cells are "%9s" after a space, from column 17: a cell ends at column 27, 37, ... 77.
_LATENCY_START, _LATENCY_WIDTH = 17, 10

_NUMBER = re.compile(r"\d{1,15}")
_SEEKS = re.compile(r"\d{1,15}(?:\.\d)?")
_RATE_198 = re.compile(r"(?P<number>\d{1,15}(?:\.\d)?)(?P<unit>[kmg])")
_GARBAGE = re.compile(r"-?\d{1,15}")
_LATENCY = re.compile(r"\d{1,12}(?:us|ms|s)")
_SIZE_103 = re.compile(r"\d{1,12}[MG](?::\d{1,12}k?)?")
_SIZE_9X = re.compile(r"(?P<size>\d{1,12}[MG])(?::(?P<chunk>\d{1,12}[km]?))?")
_SIZE_198 = re.compile(
    r"(?P<size>\d{1,12}[MG])(?::(?P<chunk>[^:]*)(?::(?P<conc>[^:]*)(?::(?P<seeks>[^:]*)(?::(?P<procs>[^:]*))?)?)?)?"
)
_FILES_SPEC = re.compile(
    r"(?P<num>\d{1,12})(?::(?P<link>link|symlink)|:(?P<max>\d{1,15}):(?P<min>\d{1,15}))?(?:/(?P<dirs>\d{1,12}))?"
)
_FIGURE = re.compile(r"[-+]?[\d.+]+[kmg]?")  # how a row's cells look, to tell a row from prose after a report

_RATE_FACTOR = {"k": 1, "m": 1024, "g": 1024 * 1024}
DEFAULT_SEEKS, DEFAULT_SEEK_PROCS = 8192, 5


@dataclass(frozen=True, slots=True)
class ConvertedRun:
    """One report block's CSV line, and what the report did not carry exactly."""

    line: int  # the pasted text's line (1-based) where this run's report starts
    csv_line: str
    bonnie_version: str
    # Column name -> (low, high): bonnie++'s own value lies in [low, high]; csv_line holds a value inside it.
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    # Columns the report does not carry: left empty in csv_line.
    missing: tuple[str, ...] = ()
    # Columns the report does not show, written with bonnie++'s default (concurrency 1, 5 seeker processes).
    assumed: tuple[str, ...] = ()
    name_may_be_cut: bool = False  # the name filled its column: bonnie++ may have cut it short

    @property
    def notes(self) -> list[str]:
        """What a person should know about this conversion, in words."""
        notes = []
        if self.missing:
            notes.append(f"not in the text report, so left empty: {', '.join(self.missing)}")
        if self.assumed:
            notes.append(f"not shown in the text report, so bonnie++'s default is assumed: {', '.join(self.assumed)}")
        if self.bounds:
            notes.append(f"rounded in the text report: {', '.join(self.bounds)}")
        if self.name_may_be_cut:
            notes.append("the machine name filled its column in the report and may have been cut short")
        return notes


@dataclass(slots=True)
class ReportConversion:
    runs: list[ConvertedRun]
    errors: list[LineError]


def looks_like_report(text: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> bool:
    """True when the text holds a bonnie++ report header (so an upload is a report, not CSV)."""
    return any(
        _over_limit(line, max_line_bytes) is None
        and (_IO_TITLE.fullmatch(line.strip()) or _FILE_TITLE.fullmatch(line.strip()))
        for line in text.splitlines()
    )


def _over_limit(line: str, max_line_bytes: int) -> int | None:
    """The line's size in bytes when it is over the limit. A report's lines are about 100 bytes: a longer one is
    never searched (a regex over a 32 MiB line costs seconds) and, inside a report, it is an error."""
    if len(line) <= max_line_bytes // 4:  # cheap: a UTF-8 character is at most 4 bytes
        return None
    size = len(line.encode("utf-8", "surrogatepass"))
    return size if size > max_line_bytes else None


def csv_format_of(version: str) -> str | None:
    """The CSV format bonnie++ `version` writes (§0): "1.03" for the 27-field family, or None if unknown."""
    if re.fullmatch(r"1\.0[0-4][a-z]?", version):
        return "1.03"
    if version in ("1.93c", "1.94", "1.95"):
        return "1.93c"
    if version in ("1.96", "1.97"):
        return version
    if version in ("1.98", "2.00", "2.00a") or _is_runner(version):
        return "1.98"
    return None


def _is_runner(version: str) -> bool:
    """bonnieboard's runner titles its report with its own version (0.1.0), which no bonnie++ release has."""
    return version.startswith("bonnieboard-") or re.fullmatch(r"0\.\d+\.\d+", version) is not None


def _csv_version(version: str) -> str:
    """Field 1 of the CSV line: the runner writes `bonnieboard-<version>` there."""
    return f"bonnieboard-{version}" if _is_runner(version) and not version.startswith("bonnieboard-") else version


def convert_report(text: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> ReportConversion:
    """Every report block in `text` -> a ConvertedRun, or a LineError naming the line that could not be read."""
    raw_lines = text.split("\n")
    too_long = {at: size for at, line in enumerate(raw_lines) if (size := _over_limit(line, max_line_bytes))}
    # An over-long line is read as blank (never expanded or searched); inside a report _LongLines names it.
    lines = ["" if at in too_long else line.rstrip("\r").expandtabs(8) for at, line in enumerate(raw_lines)]
    result = ReportConversion([], [])
    try:
        blocks = _read_blocks(lines, _LongLines(too_long, max_line_bytes))
        if not blocks:
            raise _RowError(
                1, None, "no bonnie++ report here: expected a 'Version ...  ------Sequential Output------' header"
            )
        for run in _pair(blocks):
            result.runs.append(_to_csv(run))
    except _RowError as exc:
        result.errors.append(LineError(exc.line, exc.field, exc.error))
        result.runs.clear()
    return result


# ==== reading the blocks ====


class _RowError(Exception):
    def __init__(self, line: int, field: str | None, error: str):
        super().__init__(error)
        self.line, self.field, self.error = line, field, error


@dataclass(slots=True)
class _Cell:
    text: str  # as in the report: "", "+++++", "1193k", "65.6m", "157.0", ...
    cpu: str  # "", "+++", "12"


@dataclass(slots=True)
class _IORow:
    line: int
    name: str
    size: str
    cells: list[_Cell]  # six, in IO_TESTS order
    latencies: list[str] | None = None


@dataclass(slots=True)
class _FileRow:
    line: int
    name: str | None
    spec: str
    cells: list[_Cell]  # six, in FILE_TESTS order
    latencies: list[str] | None = None


@dataclass(slots=True)
class _Block:
    kind: str  # "io" or "file"
    line: int  # the title's line
    version: str | None
    concurrency: str | None = None
    name: str | None = None  # a file block's header names the machine (1.9x; 1.03 with -s 0)
    rows: list[Any] = field(default_factory=list)  # _IORow in an "io" block, _FileRow in a "file" block


@dataclass(slots=True)
class _Run:
    line: int
    version: str
    io: _IORow | None
    concurrency: str | None
    files: _FileRow | None
    file_header_name: str | None


@dataclass(frozen=True, slots=True)
class _LongLines:
    sizes: dict[int, int]  # line index -> its size in bytes, for the lines over the limit
    limit: int

    def check(self, at: int) -> None:
        if at in self.sizes:
            raise _RowError(at + 1, None, f"line is {self.sizes[at]} bytes long; the limit is {self.limit}")


def _read_blocks(lines: list[str], long_lines: _LongLines) -> list[_Block]:
    blocks: list[_Block] = []
    at = 0
    while at < len(lines):
        stripped = lines[at].strip()
        title = _IO_TITLE.fullmatch(stripped) or _FILE_TITLE.fullmatch(stripped)
        if title is None:
            at += 1
            continue
        kind = "io" if title.re is _IO_TITLE else "file"
        indent = len(lines[at]) - len(lines[at].lstrip())
        block = _Block(kind, at + 1, title["version"])
        at = _read_headers(lines, at + 1, block, long_lines)
        at = _read_rows(lines, at, indent, block, long_lines)
        blocks.append(block)
    return blocks


def _read_headers(lines: list[str], at: int, block: _Block, long_lines: _LongLines) -> int:
    """The column and unit lines under a title; returns the index of the first row."""
    columns, units = (_IO_COLUMNS, _IO_UNITS) if block.kind == "io" else (_FILE_COLUMNS, _FILE_UNITS)
    start = at
    while at < len(lines) and at - start < 2:
        long_lines.check(at)
        stripped = lines[at].strip()
        match = columns.fullmatch(stripped)
        if match is None:
            break
        if block.kind == "io":
            block.concurrency = match["concurrency"]
        elif match["name"]:
            block.name = match["name"]
        at += 1
    if at < len(lines):
        long_lines.check(at)
    if at >= len(lines) or not units.fullmatch(lines[at].strip()):
        what = "'Machine  Size K/sec %CP ...'" if block.kind == "io" else "'files  /sec %CP ...'"
        raise _RowError(min(at, len(lines) - 1) + 1, None, f"expected the report's column heading {what} here")
    return at + 1


def _read_rows(lines: list[str], at: int, indent: int, block: _Block, long_lines: _LongLines) -> int:
    """Rows (and their Latency lines) until a line that is neither; the first row must be there."""
    while at < len(lines):
        if not block.rows:
            long_lines.check(at)  # after a row, a long line (read as blank) ends the report
        raw = lines[at]
        row = raw[indent:] if not raw[:indent].strip() else raw.lstrip()  # dedent as the title was
        stripped = row.strip()
        if stripped.startswith("Latency") and block.rows:
            _set_latencies(block.rows[-1], row, at + 1)
        elif block.rows and not _looks_like_row(stripped):
            break  # the report has ended: prose, "[...]", a blank line, the next title or a CSV line
        elif block.kind == "io":
            block.rows.append(_read_io_row(row, at + 1))
        else:
            block.rows.append(_read_file_row(row, at + 1))
        at += 1
    if not block.rows:
        raise _RowError(at, None, "the report ends before its first row of results")
    return at


def _looks_like_row(stripped: str) -> bool:
    tokens = stripped.split()
    return len(tokens) >= 9 and sum(bool(_FIGURE.fullmatch(token)) for token in tokens) >= 8


def _read_io_row(row: str, line: int) -> _IORow:
    head = row[:_HEAD_WIDTH]
    if len(row) > _HEAD_WIDTH and row[_HEAD_WIDTH] == " " and head.strip():
        size = head.split()[-1]
        name = head[: _HEAD_WIDTH - len(size) - 1].rstrip()
        tokens = row[_HEAD_WIDTH:].split()
    else:  # the report's spacing was lost (pasted through a web page): the size is the token before the figures
        tokens = row.split()
        for count in (12, 8):
            if len(tokens) > count and _looks_like_size(tokens[-count - 1]):
                name, size, tokens = " ".join(tokens[: -count - 1]), tokens[-count - 1], tokens[-count:]
                break
        else:
            raise _RowError(line, None, "not a row of results: expected the machine name, the size and 12 figures")
    if not _looks_like_size(size):
        raise _RowError(line, "file_size", f"{size!r} is not a file size like 512M, 2G or 96G:1m")
    if len(tokens) == 12:
        cells = [_Cell(tokens[i], tokens[i + 1]) for i in range(0, 12, 2)]
    elif len(tokens) == 8:  # -f: no per-character tests, the only way bonnie++ leaves I/O cells empty
        pairs = [_Cell(tokens[i], tokens[i + 1]) for i in range(0, 8, 2)]
        cells = [_Cell("", ""), pairs[0], pairs[1], _Cell("", ""), pairs[2], pairs[3]]
    else:
        raise _RowError(
            line,
            None,
            f"{len(tokens)} figures after the size; a row has 12 (8 when the per-character tests were skipped)",
        )
    return _IORow(line, name, size, cells)


def _looks_like_size(token: str) -> bool:
    return bool(re.fullmatch(r"\d{1,12}[MG](?::\S*)?", token))


def _read_file_row(row: str, line: int) -> _FileRow:
    tokens = row.split()
    if len(tokens) < 13:
        raise _RowError(line, None, f"{len(tokens)} items; a file-test row has the number of files and 12 figures")
    name = " ".join(tokens[:-13]) or None  # bon_csv2txt's layout puts the machine name first
    spec = tokens[-13]
    if not _FILES_SPEC.fullmatch(spec):
        raise _RowError(line, "num_files", f"{spec!r} is not a file-test spec like 16, 16:4096:1024/4 or 4:link")
    figures = tokens[-12:]
    return _FileRow(line, name, spec, [_Cell(figures[i], figures[i + 1]) for i in range(0, 12, 2)])


def _set_latencies(target: _IORow | _FileRow, row: str, line: int) -> None:
    tests = IO_TESTS if isinstance(target, _IORow) else FILE_TESTS
    slots = [""] * 6
    tokens = list(re.finditer(r"\S+", row))[1:]
    ends = [(match.end() - _LATENCY_START) / _LATENCY_WIDTH for match in tokens]
    if all(end.is_integer() and 1 <= end <= 6 for end in ends):
        for match, end in zip(tokens, ends, strict=True):
            slots[int(end) - 1] = match[0]
    else:  # spacing lost: one latency per test that ran, in order
        ran = [index for index, cell in enumerate(target.cells) if cell.text]
        if len(tokens) != len(ran):
            raise _RowError(
                line, None, f"{len(tokens)} latencies for {len(ran)} tests that ran, and the columns are lost"
            )
        for index, match in zip(ran, tokens, strict=True):
            slots[index] = match[0]
    for test, latency in zip(tests, slots, strict=True):
        if latency and not _LATENCY.fullmatch(latency):
            raise _RowError(line, f"{test}_latency", f"{test} latency {latency!r} is not like 870us, 12ms or 101s")
    target.latencies = slots


# ==== pairing I/O rows with file rows ====


def _pair(blocks: list[_Block]) -> list[_Run]:
    """A file block right after an I/O block with as many rows belongs to it, row by row."""
    runs: list[_Run] = []
    at = 0
    while at < len(blocks):
        block = blocks[at]
        following = blocks[at + 1] if at + 1 < len(blocks) else None
        if block.kind == "io":
            files = (
                following if following and following.kind == "file" and len(following.rows) == len(block.rows) else None
            )
            version = block.version or (files.version if files else None)
            for index, row in enumerate(block.rows):
                runs.append(
                    _Run(
                        row.line,
                        _known_version(version, block.line),
                        row,
                        block.concurrency,
                        files.rows[index] if files else None,
                        files.name if files else None,
                    )
                )
            at += 2 if files else 1
        else:
            for row in block.rows:
                version = _known_version(block.version, block.line)
                runs.append(_Run(row.line, version, None, None, row, block.name))
            at += 1
    return runs


def _known_version(version: str | None, line: int) -> str:
    if version is None:
        raise _RowError(line, None, "the report does not say which bonnie++ version wrote it (no 'Version ...' title)")
    if csv_format_of(version) is None:
        raise _RowError(
            line, None, f"'Version {version}': bonnieboard reads the reports of bonnie++ 1.0x and 1.93c to 2.00a"
        )
    return version


# ==== writing the CSV line ====


def _to_csv(run: _Run) -> ConvertedRun:
    fmt = csv_format_of(run.version)
    assert fmt is not None  # _known_version checked it
    bounds: dict[str, tuple[float, float]] = {}
    missing: list[str] = []
    assumed: list[str] = []
    io_cells = _io_cells(run, fmt, bounds)
    file_cells = _file_cells(run, fmt, missing)
    name, cut = _machine_name(run)
    if any(ord(char) < 32 or ord(char) == 127 for char in name):
        raise _RowError(run.line, "name", f"the machine name {name!r} contains a control character")
    if fmt == "1.03":
        size = run.io.size if run.io else ""
        if run.io and not _SIZE_103.fullmatch(size):
            raise _RowError(run.io.line, "file_size", f"{size!r} is not a bonnie++ 1.03 size like 2G or 2G:4k")
        spec = run.files.spec if run.files else ""
        fields = [name, size, *io_cells, spec, *file_cells]
    else:
        missing.insert(0, "seed")
        fields = [
            fmt,
            _csv_version(run.version),
            name,
            _concurrency(run, fmt, assumed),
            "",
            *_io_head(run, fmt, assumed),
        ]
        fields += [*io_cells, *_file_head_9x(run), *file_cells, *_latencies(run)]
    return ConvertedRun(
        run.line, ",".join(fields), _csv_version(run.version), bounds, tuple(missing), tuple(assumed), cut
    )


def _machine_name(run: _Run) -> tuple[str, bool]:
    """The I/O row cuts the name to fit beside the size; a 1.9x file header shows its first 19 characters."""
    candidates = [name for name in (run.file_header_name, run.files.name if run.files else None) if name]
    if run.io:
        candidates.append(run.io.name)
    name = max(candidates, key=len, default="")
    if run.io and name == run.io.name:
        cut = len(name) >= _HEAD_WIDTH - len(run.io.size) - 1
    else:
        cut = len(name) >= _HEAD_WIDTH
    return name, cut


def _concurrency(run: _Run, fmt: str, assumed: list[str]) -> str:
    if fmt == "1.98" and run.io:
        conc = _size_parts(run)["conc"]
        if conc and not conc.isdigit():
            raise _RowError(run.io.line, "concurrency", f"{run.io.size!r}: the concurrency part is not a number")
        return conc or "1"  # 1.98+ shows it beside the size only when it is not 1
    if fmt != "1.98" and run.concurrency is not None:
        return run.concurrency
    assumed.append("concurrency")  # a -s 0 report does not show it; 1 is what nearly everyone runs
    return "1"


def _size_parts(run: _Run) -> dict[str, str | None]:
    assert run.io is not None
    pattern = _SIZE_198 if csv_format_of(run.version) == "1.98" else _SIZE_9X
    match = pattern.fullmatch(run.io.size)
    if match is None:
        raise _RowError(
            run.io.line, "file_size", f"{run.io.size!r} is not a bonnie++ {run.version} size like 512M or 96G:1m"
        )
    return match.groupdict()


def _io_head(run: _Run, fmt: str, assumed: list[str]) -> list[str]:
    """The size columns before the I/O results (§3.1, §3.2), or the empty ones of a -s 0 line (§3.3-3)."""
    if run.io is None:
        return [""] * {"1.93c": 1, "1.96": 1, "1.97": 2, "1.98": 4}[fmt]
    parts = _size_parts(run)
    if fmt != "1.98":
        return [parts["size"] or "", parts["chunk"] or ""]
    for key in ("seeks", "procs"):
        value = parts[key]
        if value and not value.isdigit():
            raise _RowError(run.io.line, "file_size", f"{run.io.size!r}: the {key} part is not a number")
    if not parts["procs"]:
        # 2.00a prints a seeker count other than 5 only when it has two digits (§8): 1-9 are lost too.
        assumed.append("seek_proc_count")
    return [parts["size"] or "", "", parts["seeks"] or str(DEFAULT_SEEKS), parts["procs"] or str(DEFAULT_SEEK_PROCS)]


def _io_cells(run: _Run, fmt: str, bounds: dict[str, tuple[float, float]]) -> list[str]:
    if run.io is None:
        return [""] * 12
    out: list[str] = []
    for test, cell in zip(IO_TESTS, run.io.cells, strict=True):
        out += _pair_cells(test, cell, run.io.line, partial(_io_rate, test, fmt=fmt, run=run, bounds=bounds))
    return out


def _io_rate(test: str, text: str, fmt: str, run: _Run, bounds: dict[str, tuple[float, float]]) -> str:
    assert run.io is not None
    line = run.io.line
    if test == "seeks":
        if not _SEEKS.fullmatch(text):
            raise _RowError(line, test, f"seeks is {text!r}, not a number of seeks per second like 157.0 or 2636")
        if fmt == "1.03" and "." not in text:  # %5.0f in the report, %.1f in the CSV
            bounds[test] = (int(text) - 0.5, int(text) + 0.5)
        return text
    if fmt != "1.98":
        if not _NUMBER.fullmatch(text):
            raise _RowError(line, test, f"{test} is {text!r}, not a rate in K/sec")
        return text
    match = _RATE_198.fullmatch(text)
    if match is None:
        raise _RowError(line, test, f"{test} is {text!r}, not a rate like 1193k, 65.6m or 342m")
    number, unit = match["number"], match["unit"]
    factor = _RATE_FACTOR[unit]
    if unit == "k":
        return number
    # bonnie++ prints %4.1f (or, from 100m, the MiB/s rounded to a whole number): half a last digit either way.
    half = 0.05 if "." in number else 0.5
    bounds[test] = ((float(number) - half) * factor, (float(number) + half) * factor)
    return str(round(float(number) * factor))


def _file_head_9x(run: _Run) -> list[str]:
    """num_files, max_size, min_size, the always-empty column, and num_dirs one column late (§3.3-1)."""
    if run.files is None:
        return [""] * 5
    match = _FILES_SPEC.fullmatch(run.files.spec)
    assert match is not None
    largest = match["link"] or (match["max"] if match["max"] not in (None, "0") else "")
    smallest = match["min"] if match["min"] not in (None, "0") and not match["link"] else ""
    dirs = match["dirs"] if match["dirs"] not in (None, "0", "1") else ""
    return [match["num"], largest, smallest, "", dirs]


def _file_cells(run: _Run, fmt: str, missing: list[str]) -> list[str]:
    if run.files is None:
        return [""] * 12
    line = run.files.line
    garbage = fmt == "1.98" and not _is_runner(run.version)
    out: list[str] = []
    for test, cell in zip(FILE_TESTS, run.files.cells, strict=True):
        if garbage and cell.text not in ("", "+++++"):
            # §3.3-5: 2.00a's report prints "%5d" of a double here; the figure is not the rate.
            if not _GARBAGE.fullmatch(cell.text) or not _NUMBER.fullmatch(cell.cpu):
                raise _RowError(line, test, f"{test} is {cell.text!r} with %CPU {cell.cpu!r}, not a figure and a %CPU")
            missing += [test, f"{test}_cpu"]
            out += ["", ""]
        else:
            out += _pair_cells(test, cell, line, partial(_file_rate, test, line=line))
    return out


def _file_rate(test: str, text: str, line: int) -> str:
    if not _NUMBER.fullmatch(text):
        raise _RowError(line, test, f"{test} is {text!r}, not a number of files per second")
    return text


def _pair_cells(test: str, cell: _Cell, line: int, rate: Callable[[str], str]) -> list[str]:
    """A result's value and %CPU: both empty (not run), +++++ with +++ (too fast), or a rate with its %CPU."""
    if cell.text == "" and cell.cpu == "":
        return ["", ""]
    if cell.text == "+++++" or cell.cpu == "+++":
        if (cell.text, cell.cpu) != ("+++++", "+++"):
            raise _RowError(line, test, f"{test} is {cell.text!r} with %CPU {cell.cpu!r}; +++++ goes with +++")
        return ["+++++", "+++"]
    if not _NUMBER.fullmatch(cell.cpu):
        raise _RowError(line, f"{test}_cpu", f"{test} %CPU is {cell.cpu!r}, not a whole number")
    return [rate(cell.text), cell.cpu]


def _latencies(run: _Run) -> list[str]:
    io = (run.io.latencies if run.io else None) or [""] * 6
    files = (run.files.latencies if run.files else None) or [""] * 6
    return [*io, *files]
