"""bonnie++'s human text report -> the CSV line bonnie++ wrote with it, or errors naming the report's line.

Pure: text in, CSV lines (for app.ingest.parsing) and LineErrors out. Follows docs/bonnie-csv-format.md §8, which says
what each report layout (1.03x; 1.93c to 1.97; 1.98 to 2.00a) carries and what it rounds or leaves out:
* every 1.9x report lacks the random seed (the CSV's `seed` is left empty);
* 1.98-2.00a print rates as `1193k` (exact), `65.6m`/`342m`/`1.2g` (rounded: the value written here is the
  report's figure in KiB/s, and ConvertedRun.bounds holds the interval bonnie++'s own value lies in);
* 1.98-2.00a print a file-test rate that is not the rate (a printf of a double with %d, §3.3-5): those results
  are written as not run (value and %CPU empty: a CSV line has no %CPU without its rate), their latencies kept,
  and ConvertedRun.not_the_rate names them (shown, but wrongly: not "missing");
* 1.03x print seeks of 1000/s and more without the decimal the CSV has (bounds again);
* the machine name is cut to fit its column (ConvertedRun.name_may_be_cut).
bonnie++'s `bon_csv2txt` prints CSV lines in a table that looks like the report but is not the same (§8.1): its
size column is size:chunk:seeks:seek processes where the report has size:chunk:concurrency:seeks:seek processes,
and its file-test rates are the CSV's own. Each block is read as the layout its own features say it is; when
nothing tells, a row whose reading depends on it is an error.
A report may be pasted with other text around it (progress messages, prose, an indentation, tabs); only rows
under a report header are read, and a row there that cannot be read is an error naming its line. Lines are cut
out of the text one at a time and only a report's own lines are ever expanded: a 32 MiB paste is never held as
millions of strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from app.bonnie import FILE_TESTS, IO_TESTS
from app.ingest.parsing import DEFAULT_MAX_LINE_BYTES, LineError, control_or_separator, describe_character

# ---- what a report looks like (matched on the stripped line) ----

_IO_TITLE = re.compile(r"(?:Version\s+(?P<version>\S+)\s+)?-+Sequential Output-+\s+-+Sequential Input-+\s+-+Random-+")
_FILE_TITLE = re.compile(r"(?:Version\s+(?P<version>\S+)\s+)?-+Sequential Create-+\s+-+Random Create-+")
_TITLE_WORD = "Sequential "  # in every title: the text is searched for it, never split into lines
_IO_COLUMNS = re.compile(
    r"(?:Concurrency\s+(?P<concurrency>\d+)\s+)?-Per Chr-\s+--Block--\s+-Rewrite-\s+-Per Chr-\s+--Block--\s+--Seeks--"
)
_FILE_COLUMNS = re.compile(
    r"(?:(?P<name>.*\S)\s+)?-Create--\s+--Read---\s+-Delete--\s+-Create--\s+--Read---\s+-Delete--"
)
_IO_UNITS = re.compile(r"(?:Machine\s+Size(?::chnk)?|Name:Size etc)\s+(?:K/sec|/sec)\s+%CP\b.*")
_FILE_UNITS = re.compile(r"files(?::max(?::min)?)?\s+/sec\s+%CP\b.*")

# The name and size share a row's first 19 columns, in bonnie++'s report and in bon_csv2txt's table alike: the
# name is cut to 18 - the size's length. A 1.9x file block's header shows the name's first 19 characters.
_HEAD_WIDTH = 19
# Latency cells are "%9s" after a space, from column 17: a cell ends at column 27, 37, ... 77.
_LATENCY_START, _LATENCY_WIDTH = 17, 10

# A paste of text reports holds a few runs; bonnie++'s CSV lines are the way to send many. Bounding the rows
# bounds the memory and the answer's `converted` list (each run's CSV line and notes) of any paste.
MAX_REPORT_ROWS = 2000

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
# bon_csv2txt joins the CSV's size, io_chunk_size, seek_count and seek_proc_count with ':' and drops trailing ':'.
_SIZE_CSV2TXT = re.compile(r"(?P<size>\d{1,12}[MG])(?::(?P<chunk>[^:]*)(?::(?P<seeks>[^:]*)(?::(?P<procs>[^:]*))?)?)?")
_FILES_SPEC = re.compile(
    r"(?P<num>\d{1,12})(?::(?P<link>link|symlink)|:(?P<max>\d{1,15}):(?P<min>\d{1,15}))?(?:/(?P<dirs>\d{1,12}))?"
)
# bon_csv2txt's spec: num_files, then each of max_size, min_size and num_dirs that is not empty, after a ':'.
_FILES_SPEC_CSV2TXT = re.compile(r"\d{1,12}(?::(?:link|symlink|\d{1,15})){0,3}")
_FIGURE = re.compile(r"[-+]?[\d.+]+[kmg]?")  # how a row's cells look, to tell a row from prose after a report
_TOKEN = re.compile(r"\S+")

_RATE_FACTOR = {"k": 1, "m": 1024, "g": 1024 * 1024}
DEFAULT_SEEKS, DEFAULT_SEEK_PROCS = 8192, 5
# bonnie++ refuses -c outside 1..200 (S200 bonnie++.cpp:386): a larger number beside the size is no concurrency.
MAX_BONNIE_CONCURRENCY = 200

# The two layouts (§8.1).
BONNIE = "bonnie++"  # bonnie++'s own report
CSV2TXT = "bon_csv2txt"  # bonnie++'s bon_csv2txt table of CSV lines
# bon_csv2txt's file heading, as 2.00a's script prints it (bonnie++ and older scripts: "files:max:min        /sec").
_CSV2TXT_FILE_UNITS = "files:max:min  /sec %CP"


@dataclass(frozen=True, slots=True)
class ConvertedRun:
    """One report block's CSV line, and what the report did not carry exactly."""

    line: int  # the pasted text's line (1-based) where this run's report starts
    csv_line: str
    bonnie_version: str  # the version that wrote the report ("" when the text does not say it)
    format_version: str  # field 0 of csv_line ("1.03" for the 27-field family, which has none)
    # Column name -> (low, high): bonnie++'s own value lies in [low, high]; csv_line holds a value inside it.
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    # Columns the report does not show: left empty in csv_line.
    missing: tuple[str, ...] = ()
    # Columns the report does not show, written with bonnie++'s default (concurrency 1, 5 seeker processes).
    assumed: tuple[str, ...] = ()
    name_may_be_cut: bool = False  # the name filled its column: bonnie++ may have cut it short
    layout: str = BONNIE  # BONNIE or CSV2TXT
    # bon_csv2txt's I/O row and file-test row of one CSV line are in two tables; paired by their order there.
    paired_by_order: bool = False
    # Tests whose rate the report shows as a figure that is not the rate (2.00a, §3.3-5): written as not run, rate
    # and %CPU empty (the %CPU shown is right, but a CSV line holds no %CPU without its rate).
    not_the_rate: tuple[str, ...] = ()

    @property
    def notes(self) -> list[str]:
        """What a person should know about this conversion, in words."""
        notes = []
        if self.layout == CSV2TXT:
            notes.append(
                "read as bon_csv2txt's table (its size column is size:chunk:seeks:seek processes, and its "
                "'Version' is bon_csv2txt's own)"
            )
        if self.paired_by_order:
            notes.append(
                "bon_csv2txt prints the I/O and the file-test results in two tables: this run's two rows are paired "
                "by their order in them"
            )
        if self.missing:
            notes.append(f"not in the text report, so left empty: {', '.join(self.missing)}")
        if self.not_the_rate:
            notes.append(
                "shown in the text report, but as a figure that is not the rate (a bug of bonnie++ 2.00a's report), "
                f"so left empty with its %CPU: {', '.join(self.not_the_rate)}"
            )
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
    # Where each block read lies in the text: (offset of its title line, offset of the line after its last), in
    # order; the text outside them was not read as a report.
    spans: list[tuple[int, int]] = field(default_factory=list)


def looks_like_report(text: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> bool:
    """True when the text holds a bonnie++ report header (so an upload is a report, not CSV)."""
    return _Lines(text, max_line_bytes).next_title() is not None


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
    result = ReportConversion([], [])
    try:
        blocks = _read_blocks(_Lines(text, max_line_bytes))
        result.spans = [(block.start, block.end) for block in blocks]
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


class _Lines:
    """The text's lines, cut out one at a time as the reader moves on: a cursor, never a list of all of them."""

    def __init__(self, text: str, max_line_bytes: int):
        self.text, self.limit = text, max_line_bytes
        self.start = 0  # where the current line starts in text; past its end when every line is read
        self.index = 0  # the current line's 0-based number

    @property
    def ended(self) -> bool:
        return self.start > len(self.text)

    @property
    def line_no(self) -> int:
        """The current line's number, or the last line's when every line is read (an error names a real line)."""
        return self.index if self.ended else self.index + 1

    def raw(self) -> str:
        end = self.text.find("\n", self.start)
        return self.text[self.start :] if end < 0 else self.text[self.start : end]

    def read(self) -> str:
        """The current line with its tabs expanded; "" (never expanded or searched) when it is over the limit."""
        raw = self.raw()
        return "" if _over_limit(raw, self.limit) else raw.rstrip("\r").expandtabs(8)

    def check_length(self) -> None:
        """Inside a report, a line over the limit is an error."""
        size = _over_limit(self.raw(), self.limit)
        if size:
            raise _RowError(self.index + 1, None, f"line is {size} bytes long; the limit is {self.limit}")

    def advance(self) -> None:
        end = self.text.find("\n", self.start)
        self.start = len(self.text) + 1 if end < 0 else end + 1
        self.index += 1

    def next_title(self) -> re.Match[str] | None:
        """Move to the next line, from the current one on, that is a report block's title (None: there is none).
        Only lines holding the word every title has are looked at; a line over the limit is never a title."""
        text = self.text
        while not self.ended:
            found = text.find(_TITLE_WORD, self.start)
            if found < 0:
                self.start = len(text) + 1
                return None
            newline = text.rfind("\n", self.start, found)
            line_start = self.start if newline < 0 else newline + 1
            self.index += text.count("\n", self.start, line_start)
            self.start = line_start
            raw = self.raw()
            if _over_limit(raw, self.limit) is None:
                stripped = raw.strip()
                title = _IO_TITLE.fullmatch(stripped) or _FILE_TITLE.fullmatch(stripped)
                if title is not None:
                    return title
            self.advance()
        return None


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


@dataclass(frozen=True, slots=True)
class _Evidence:
    """A feature that only one layout has: the line and field that show it, and what it is, in words."""

    layout: str
    line: int
    field: str | None
    what: str


@dataclass(slots=True)
class _Block:
    kind: str  # "io" or "file"
    line: int  # the title's line
    version: str | None
    concurrency: str | None = None
    name: str | None = None  # a file block's header names the machine (1.9x; 1.03 with -s 0)
    rows: list[Any] = field(default_factory=list)  # _IORow in an "io" block, _FileRow in a "file" block
    evidence: list[_Evidence] = field(default_factory=list)
    # bon_csv2txt's file heading as 2.00a's script prints it: a table of format 1.98 lines, version or not.
    csv2txt_198: bool = False
    start: int = 0  # offset in the text of the title line
    end: int = 0  # offset of the line after the block's last (past the text's end when that was the last line)

    def layout(self) -> str | None:
        """BONNIE or CSV2TXT as the block's features say, None when none does; an error when they disagree."""
        found = {item.layout: item for item in self.evidence}
        if len(found) > 1:
            first, second = sorted(found.values(), key=lambda item: item.line)
            raise _RowError(
                second.line,
                second.field,
                f"{second.what}, but {first.what} (line {first.line}): the lines mix bonnie++'s report and "
                "bon_csv2txt's table, which write the same columns differently",
            )
        return next(iter(found), None)


@dataclass(slots=True)
class _Run:
    line: int
    version: str | None  # the title's version (None: a bon_csv2txt table without one)
    fmt: str  # the CSV format written
    layout: str
    io: _IORow | None
    concurrency: str | None
    files: _FileRow | None
    file_header_name: str | None
    paired_by_order: bool = False


def _read_blocks(lines: _Lines) -> list[_Block]:
    blocks: list[_Block] = []
    rows = 0
    while (title := lines.next_title()) is not None:
        expanded = lines.read()
        indent = len(expanded) - len(expanded.lstrip())
        kind = "io" if title.re is _IO_TITLE else "file"
        block = _Block(kind, lines.index + 1, title["version"], start=lines.start)
        _title_evidence(block, expanded.strip())
        lines.advance()
        _read_headers(lines, block)
        _read_rows(lines, indent, block, rows)
        block.end = lines.start
        rows += len(block.rows)
        blocks.append(block)
    return blocks


def _title_evidence(block: _Block, title: str) -> None:
    """bonnie++ prints `Version %5s` and 7 spaces before the dashes, bon_csv2txt `Version %9s` and 3 (S200
    bon_time.cpp:250, bon_csv2txt.in:27); with its spacing lost (a web page) the title tells neither."""
    if block.kind == "file":
        if block.version is not None:  # bon_csv2txt's file table has no version in its title
            block.evidence.append(_Evidence(BONNIE, block.line, None, "the file-test title names a version"))
        return
    match = re.match(r"Version +\S+", title)
    if match is None:
        return
    after = title[match.end() : match.end() + 8]
    if match.end() == 17 and after.startswith("   -"):
        block.evidence.append(_Evidence(CSV2TXT, block.line, None, "the title is spaced as bon_csv2txt's"))
    elif match.end() == 13 and after.startswith("       -"):
        block.evidence.append(_Evidence(BONNIE, block.line, None, "the title is spaced as bonnie++'s report"))


def _read_headers(lines: _Lines, block: _Block) -> None:
    """The column and unit lines under a title; leaves `lines` at the first row."""
    columns, units = (_IO_COLUMNS, _IO_UNITS) if block.kind == "io" else (_FILE_COLUMNS, _FILE_UNITS)
    for _ in range(2):
        if lines.ended:
            break
        lines.check_length()
        match = columns.fullmatch(lines.read().strip())
        if match is None:
            break
        if block.kind == "io":
            block.concurrency = match["concurrency"]
            if match["concurrency"] is not None:  # 1.93c-1.97 print -c's value there; bon_csv2txt never does
                block.evidence.append(_Evidence(BONNIE, lines.index + 1, None, "a 'Concurrency' heading"))
        elif match["name"]:
            block.name = match["name"]
            block.evidence.append(_Evidence(BONNIE, lines.index + 1, None, "the file-test heading names the machine"))
        lines.advance()
    if not lines.ended:
        lines.check_length()
    heading = "" if lines.ended else lines.read().strip()
    if not units.fullmatch(heading):
        what = "'Machine  Size K/sec %CP ...'" if block.kind == "io" else "'files  /sec %CP ...'"
        raise _RowError(lines.line_no, None, f"expected the report's column heading {what} here")
    if block.kind == "file" and heading.startswith(_CSV2TXT_FILE_UNITS):
        block.csv2txt_198 = True
        block.evidence.append(_Evidence(CSV2TXT, lines.index + 1, None, "the file-test heading is bon_csv2txt's"))
    lines.advance()


def _read_rows(lines: _Lines, indent: int, block: _Block, rows_before: int) -> None:
    """Rows (and their Latency lines) until a line that is neither; the first row must be there."""
    while not lines.ended:
        if not block.rows:
            lines.check_length()  # after a row, a long line (read as blank) ends the report
        line_no = lines.index + 1
        raw = lines.read()
        row = raw[indent:] if not raw[:indent].strip() else raw.lstrip()  # dedent as the title was
        stripped = row.strip()
        if stripped.startswith("Latency") and block.rows:
            if block.rows[-1].latencies is not None:
                break  # a row has one Latency line: another is not the report's (the answer names it, unread)
            _set_latencies(block.rows[-1], row, line_no)
        elif block.rows and not _looks_like_row(stripped):
            break  # the report has ended: prose, "[...]", a blank line, the next title or a CSV line
        elif rows_before + len(block.rows) >= MAX_REPORT_ROWS:
            raise _RowError(
                line_no,
                None,
                f"more than {MAX_REPORT_ROWS} rows of results in text reports in one upload; upload bonnie++'s "
                "CSV lines instead",
            )
        elif block.kind == "io":
            block.rows.append(_read_io_row(row, line_no, block))
        else:
            block.rows.append(_read_file_row(row, line_no, block))
        lines.advance()
    if not block.rows:
        raise _RowError(lines.line_no, None, "the report ends before its first row of results")


def _looks_like_row(stripped: str) -> bool:
    tokens = stripped.split()
    return len(tokens) >= 9 and sum(bool(_FIGURE.fullmatch(token)) for token in tokens) >= 8


def _read_io_row(row: str, line: int, block: _Block) -> _IORow:
    """The name, the size and the figures, told apart by the tokens themselves: the size is the last token that
    looks like one (a size has M or G, a figure k, m or g), the figures are the tokens after it (12, or 8 when the
    per-character tests were skipped), the name is the text before it. Never by columns: in a report re-spaced by
    hand or by a web page the size is anywhere, and a cut at column 19 put its digits into the name."""
    tokens = list(_TOKEN.finditer(row))
    at = next((at for at in range(len(tokens) - 1, -1, -1) if _looks_like_size(tokens[at][0])), None)
    if at is None:
        for count in (12, 8):
            if len(tokens) > count and tokens[-count - 1][0][:1].isdigit():
                raise _RowError(
                    line, "file_size", f"{tokens[-count - 1][0]!r} is not a file size like 512M, 2G or 96G:1m"
                )
        raise _RowError(line, None, "not a row of results: expected the machine name, the size and 12 figures")
    size_token = tokens[at]
    size = size_token[0]
    figures = len(tokens) - at - 1
    texts = [token[0] for token in tokens[at + 1 :]]
    if figures == 12:
        cells = [_Cell(texts[i], texts[i + 1]) for i in range(0, 12, 2)]
    elif figures == 8:  # -f: no per-character tests, the only way bonnie++ leaves I/O cells empty
        pairs = [_Cell(texts[i], texts[i + 1]) for i in range(0, 8, 2)]
        cells = [_Cell("", ""), pairs[0], pairs[1], _Cell("", ""), pairs[2], pairs[3]]
    else:
        raise _RowError(
            line, None, f"{figures} figures after the size; a row has 12 (8 when the per-character tests were skipped)"
        )
    _io_row_evidence(block, line, size, cells)
    return _IORow(line, row[: size_token.start()].strip(), size, cells)


def _io_row_evidence(block: _Block, line: int, size: str, cells: list[_Cell]) -> None:
    for test, cell in zip(IO_TESTS[:5], cells, strict=False):  # the rates bon_csv2txt prints with k, m or g
        if (cell.text, cell.cpu) == ("0k", "+++"):
            block.evidence.append(_Evidence(CSV2TXT, line, test, f"{test} is bon_csv2txt's '0k +++' for +++++"))
        elif (cell.text, cell.cpu) == ("+++++", "+++"):
            block.evidence.append(_Evidence(BONNIE, line, test, f"{test} is +++++, which bon_csv2txt prints as 0k"))
    parts = size.split(":")
    if len(parts) != 4 or parts[1] or not parts[2] or not parts[3]:
        # bon_csv2txt of any line bonnie++ or the runner wrote shows size::seeks:procs (both always written).
        block.evidence.append(_Evidence(BONNIE, line, "file_size", f"the size {size!r} is written as bonnie++'s"))
    elif parts[2].isdigit() and int(parts[2]) > MAX_BONNIE_CONCURRENCY:
        block.evidence.append(
            _Evidence(CSV2TXT, line, "file_size", f"{size!r} has {parts[2]} where bonnie++ shows its -c (1-200)")
        )


def _looks_like_size(token: str) -> bool:
    return bool(re.fullmatch(r"\d{1,12}[MG](?::\S*)?", token))


def _read_file_row(row: str, line: int, block: _Block) -> _FileRow:
    tokens = list(_TOKEN.finditer(row))
    if len(tokens) < 13:
        raise _RowError(line, None, f"{len(tokens)} items; a file-test row has the number of files and 12 figures")
    spec = tokens[-13][0]
    if not _FILES_SPEC.fullmatch(spec) and not _FILES_SPEC_CSV2TXT.fullmatch(spec):
        raise _RowError(line, "num_files", f"{spec!r} is not a file-test spec like 16, 16:4096:1024/4 or 4:link")
    name = row[: tokens[-13].start()].strip() or None
    if name is not None:  # bonnie++ names the machine in the file block's heading, bon_csv2txt on each row
        block.evidence.append(_Evidence(CSV2TXT, line, "name", "the file-test row begins with a machine name"))
    if "/" in spec:
        block.evidence.append(_Evidence(BONNIE, line, "num_files", f"the file-test spec {spec!r} is bonnie++'s"))
    elif spec.count(":") == 3:
        block.evidence.append(_Evidence(CSV2TXT, line, "num_files", f"the file-test spec {spec!r} is bon_csv2txt's"))
    figures = [token[0] for token in tokens[-12:]]
    return _FileRow(line, name, spec, [_Cell(figures[i], figures[i + 1]) for i in range(0, 12, 2)])


def _set_latencies(target: _IORow | _FileRow, row: str, line: int) -> None:
    tests = IO_TESTS if isinstance(target, _IORow) else FILE_TESTS
    slots = [""] * 6
    tokens = list(_TOKEN.finditer(row))[1:]
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
    """A file block right after an I/O block of the same layout with as many rows belongs to it, row by row."""
    runs: list[_Run] = []
    at = 0
    while at < len(blocks):
        block = blocks[at]
        following = blocks[at + 1] if at + 1 < len(blocks) else None
        if block.kind == "file":
            alone = _decided(block, block.layout())
            version, fmt = _known_version(block, alone)
            for row in block.rows:
                runs.append(_Run(row.line, version, fmt, alone, None, None, row, block.name))
            at += 1
            continue
        own = block.layout()
        files = follower = None
        if following is not None and following.kind == "file":
            follower = following.layout()
            if own is None or follower is None or own == follower:
                files = following
        found = own or (follower if files is not None else None)
        if files is not None and len(files.rows) != len(block.rows):
            if found == CSV2TXT:
                raise _RowError(
                    files.line,
                    None,
                    f"bon_csv2txt's two tables hold {len(block.rows)} I/O rows and {len(files.rows)} file-test "
                    "rows: which rows are one CSV line cannot be told; upload the CSV lines instead",
                )
            files, found = None, own
        layout = _decided(block, found)
        version, fmt = _known_version(block if block.version or files is None else files, layout)
        by_order = files is not None and layout == CSV2TXT
        for index, row in enumerate(block.rows):
            file_row = files.rows[index] if files else None
            if layout == CSV2TXT and file_row is not None:
                _check_same_machine(row, file_row)
            runs.append(
                _Run(
                    row.line,
                    version,
                    fmt,
                    layout,
                    row,
                    block.concurrency,
                    file_row,
                    files.name if files else None,
                    by_order,
                )
            )
        at += 2 if files else 1
    return runs


def _decided(block: _Block, layout: str | None) -> str:
    """The block's layout; when nothing tells and a row reads differently in each, an error naming that row."""
    if layout is not None:
        return layout
    if block.kind == "io":
        # Only a size:chunk:x:y with x at most 200 leaves an I/O block undecided (_io_row_evidence).
        row = block.rows[0]
        raise _RowError(
            row.line,
            "file_size",
            f"{row.size!r} reads as size:chunk:concurrency:seeks in bonnie++'s report and as size:chunk:seeks:"
            "seek processes in bon_csv2txt's table, and nothing else here tells which this is; upload the CSV "
            "line instead",
        )
    return BONNIE  # a file block without any feature of bon_csv2txt's: its version (or its lack) decides


def _check_same_machine(io: _IORow, files: _FileRow) -> None:
    """Rows paired by order must name one machine (each cut to its own width)."""
    io_name, file_name = io.name, files.name or ""
    if not (io_name.startswith(file_name) or file_name.startswith(io_name)):
        raise _RowError(
            files.line,
            "name",
            f"the file-test row names {file_name!r} and its I/O row (line {io.line}) {io_name!r}: bon_csv2txt's "
            "two tables cannot be paired; upload the CSV lines instead",
        )


def _known_version(block: _Block, layout: str) -> tuple[str | None, str]:
    """(the title's version, the CSV format to write) for a block of `layout`."""
    version = block.version
    if version is not None:
        if "," in version:
            raise _RowError(
                block.line,
                "bonnie_version",
                f"the version {version!r} holds a comma, which would move every later field of the CSV line",
            )
        char = control_or_separator(version)
        if char is not None:
            raise _RowError(block.line, "bonnie_version", f"the version {version!r} holds {describe_character(char)}")
    if layout == CSV2TXT:
        if version is None and block.csv2txt_198:
            return None, "1.98"
        if version is not None and csv_format_of(version) == "1.98":
            return version, "1.98"
        if version is not None:
            raise _RowError(
                block.line,
                None,
                f"bon_csv2txt's table titled 'Version {version}': bonnieboard reads the tables of bonnie++ 1.98 to "
                "2.00a's bon_csv2txt; upload the CSV lines instead",
            )
    if version is None:
        raise _RowError(
            block.line, None, "the report does not say which bonnie++ version wrote it (no 'Version ...' title)"
        )
    fmt = csv_format_of(version)
    if fmt is None:
        raise _RowError(
            block.line, None, f"'Version {version}': bonnieboard reads the reports of bonnie++ 1.0x and 1.93c to 2.00a"
        )
    return version, fmt


# ==== writing the CSV line ====


def _to_csv(run: _Run) -> ConvertedRun:
    fmt = run.fmt
    bounds: dict[str, tuple[float, float]] = {}
    missing: list[str] = []
    not_the_rate: list[str] = []
    assumed: list[str] = []
    io_cells = _io_cells(run, bounds)
    file_cells = _file_cells(run, not_the_rate)
    name, cut = _machine_name(run)
    char = control_or_separator(name)
    if char is not None:
        raise _RowError(run.line, "name", f"the machine name {name!r} holds {describe_character(char)}")
    if fmt == "1.03":
        size = run.io.size if run.io else ""
        if run.io and not _SIZE_103.fullmatch(size):
            raise _RowError(run.io.line, "file_size", f"{size!r} is not a bonnie++ 1.03 size like 2G or 2G:4k")
        spec = run.files.spec if run.files else ""
        fields = [name, size, *io_cells, spec, *file_cells]
        assert run.version is not None  # _known_version checked it
        version = run.version
    else:
        if run.layout == CSV2TXT:  # the title's version is bon_csv2txt's own, not that of what ran
            version = ""
            missing[:0] = ["bonnie_version", "seed"]
        else:
            assert run.version is not None  # _known_version checked it
            version = _csv_version(run.version)
            missing.insert(0, "seed")
        fields = [fmt, version, name, _concurrency(run, assumed), "", *_io_head(run, assumed)]
        fields += [*io_cells, *_file_head_9x(run), *file_cells, *_latencies(run)]
    return ConvertedRun(
        run.line,
        ",".join(fields),
        version,
        fmt,
        bounds,
        tuple(missing),
        tuple(assumed),
        cut,
        run.layout,
        run.paired_by_order,
        tuple(not_the_rate),
    )


def _machine_name(run: _Run) -> tuple[str, bool]:
    """The longest of the names the rows show, and whether it filled its column (so may have been cut): an I/O
    row's (and a bon_csv2txt file row's) is cut to 18 - the size's length, a 1.9x file heading's to 19."""
    candidates: list[tuple[str, int]] = []
    if run.file_header_name:
        candidates.append((run.file_header_name, _HEAD_WIDTH))
    if run.files is not None and run.files.name:
        candidates.append((run.files.name, _HEAD_WIDTH - 1 - len(run.files.spec)))
    if run.io is not None:
        candidates.append((run.io.name, _HEAD_WIDTH - 1 - len(run.io.size)))
    name, width = max(candidates, key=lambda candidate: len(candidate[0]), default=("", _HEAD_WIDTH))
    return name, len(name) >= width


def _concurrency(run: _Run, assumed: list[str]) -> str:
    if run.layout == CSV2TXT:
        assumed.append("concurrency")  # bon_csv2txt never shows it
        return "1"
    if run.fmt == "1.98" and run.io:
        conc = _size_parts(run)["conc"]
        if conc and not conc.isdigit():
            raise _RowError(run.io.line, "concurrency", f"{run.io.size!r}: the concurrency part is not a number")
        return conc or "1"  # 1.98+ shows it beside the size only when it is not 1
    if run.fmt != "1.98" and run.concurrency is not None:
        return run.concurrency
    assumed.append("concurrency")  # a -s 0 report does not show it; 1 is what nearly everyone runs
    return "1"


def _size_parts(run: _Run) -> dict[str, str | None]:
    assert run.io is not None
    pattern = _SIZE_CSV2TXT if run.layout == CSV2TXT else _SIZE_198 if run.fmt == "1.98" else _SIZE_9X
    match = pattern.fullmatch(run.io.size)
    if match is None:
        raise _RowError(
            run.io.line, "file_size", f"{run.io.size!r} is not a bonnie++ {run.version} size like 512M or 96G:1m"
        )
    return match.groupdict()


def _io_head(run: _Run, assumed: list[str]) -> list[str]:
    """The size columns before the I/O results (§3.1, §3.2), or the empty ones of a -s 0 line (§3.3-3)."""
    if run.io is None:
        return [""] * {"1.93c": 1, "1.96": 1, "1.97": 2, "1.98": 4}[run.fmt]
    parts = _size_parts(run)
    if run.fmt != "1.98":
        return [parts["size"] or "", parts["chunk"] or ""]
    for key, column in (("seeks", "seek_count"), ("procs", "seek_proc_count")):
        value = parts[key]
        if value and not value.isdigit():
            raise _RowError(run.io.line, column, f"{run.io.size!r}: the {column} part {value!r} is not a number")
    if run.layout == CSV2TXT:  # the CSV's own four columns, each as it was
        return [parts["size"] or "", parts["chunk"] or "", parts["seeks"] or "", parts["procs"] or ""]
    if not parts["procs"]:
        # 2.00a prints a seeker count other than 5 only when it has two digits (§8): 1-9 are lost too.
        assumed.append("seek_proc_count")
    return [parts["size"] or "", "", parts["seeks"] or str(DEFAULT_SEEKS), parts["procs"] or str(DEFAULT_SEEK_PROCS)]


def _io_cells(run: _Run, bounds: dict[str, tuple[float, float]]) -> list[str]:
    if run.io is None:
        return [""] * 12
    out: list[str] = []
    for test, cell in zip(IO_TESTS, run.io.cells, strict=True):
        if run.layout == CSV2TXT and test != "seeks" and (cell.text, cell.cpu) == ("0k", "+++"):
            out += ["+++++", "+++"]  # bon_csv2txt's rate of "+++++" (Perl reads it as 0), with its +++
            continue
        out += _pair_cells(test, cell, run.io.line, partial(_io_rate, test, run=run, bounds=bounds))
    return out


def _io_rate(test: str, text: str, run: _Run, bounds: dict[str, tuple[float, float]]) -> str:
    assert run.io is not None
    line = run.io.line
    if test == "seeks":
        if not _SEEKS.fullmatch(text):
            raise _RowError(line, test, f"seeks is {text!r}, not a number of seeks per second like 157.0 or 2636")
        if run.fmt == "1.03" and "." not in text:  # %5.0f in the report, %.1f in the CSV
            bounds[test] = (int(text) - 0.5, int(text) + 0.5)
        return text
    if run.fmt != "1.98":
        if not _NUMBER.fullmatch(text):
            raise _RowError(line, test, f"{test} is {text!r}, not a rate in K/sec")
        return text
    # bon_csv2txt's convSpd prints rates as the 1.98 report does (S200 bon_csv2txt.in:131-152).
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
    if run.layout == CSV2TXT:
        return _file_head_csv2txt(run.files)
    match = _FILES_SPEC.fullmatch(run.files.spec)
    if match is None:
        raise _RowError(
            run.files.line, "num_files", f"{run.files.spec!r} is not a file-test spec like 16, 16:4096:1024/4 or 4:link"
        )
    largest = match["link"] or (match["max"] if match["max"] not in (None, "0") else "")
    smallest = match["min"] if match["min"] not in (None, "0") and not match["link"] else ""
    dirs = match["dirs"] if match["dirs"] not in (None, "0", "1") else ""
    return [match["num"], largest, smallest, "", dirs]


def _file_head_csv2txt(files: _FileRow) -> list[str]:
    """bon_csv2txt's spec: num_files, then ':' and each of max_size, min_size and the num_dirs column that is not
    empty (S200 bon_csv2txt.in:70-88). With one of them empty, which one is not said: a spec is read only when
    bonnie++'s own rules leave one reading (it refuses -n with min_size above max_size)."""
    num, *rest = files.spec.split(":")
    if _FILES_SPEC_CSV2TXT.fullmatch(files.spec) is None:
        raise _RowError(
            files.line, "num_files", f"{files.spec!r} is not bon_csv2txt's file-test spec like 16:4096:1024"
        )
    if rest and rest[0] in ("link", "symlink"):
        if len(rest) > 2 or "link" in rest[1:] or "symlink" in rest[1:]:
            raise _RowError(files.line, "num_files", f"{files.spec!r} is not bon_csv2txt's file-test spec")
        return [num, rest[0], "", "", rest[1] if len(rest) > 1 else ""]
    if any(part in ("link", "symlink") for part in rest):
        raise _RowError(files.line, "num_files", f"{files.spec!r} is not bon_csv2txt's file-test spec")
    if not rest:
        return [num, "", "", "", ""]
    if len(rest) == 3:
        return [num, rest[0], rest[1], "", rest[2]]
    if len(rest) == 2 and int(rest[1]) > int(rest[0]):  # no smallest size above the largest: the directories
        return [num, rest[0], "", "", rest[1]]
    readings = (
        f"the largest file size or the number of directories ({rest[0]})"
        if len(rest) == 1
        else f"the largest and smallest file sizes or the largest size and the number of directories ({':'.join(rest)})"
    )
    raise _RowError(
        files.line,
        "num_files",
        f"bon_csv2txt's file-test spec {files.spec!r} leaves out its empty columns, so it reads as either {readings}; "
        "upload the CSV line instead",
    )


def _file_cells(run: _Run, not_the_rate: list[str]) -> list[str]:
    if run.files is None:
        return [""] * 12
    line = run.files.line
    garbage = run.fmt == "1.98" and run.layout == BONNIE and not _is_runner(run.version or "")
    out: list[str] = []
    for test, cell in zip(FILE_TESTS, run.files.cells, strict=True):
        if garbage and cell.text not in ("", "+++++"):
            # §3.3-5: 2.00a's report prints "%5d" of a double here; the figure is not the rate.
            if not _GARBAGE.fullmatch(cell.text) or not _NUMBER.fullmatch(cell.cpu):
                raise _RowError(line, test, f"{test} is {cell.text!r} with %CPU {cell.cpu!r}, not a figure and a %CPU")
            not_the_rate.append(test)
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
