"""The ingest service: parsed lines -> one upload and its runs, duplicates found by the database.

It takes a session and never commits: the caller's one transaction makes an upload whole or absent.
How rows reach the database is a writer's job (app.ingest.writers); this module decides which lines
are stored: each valid line once, in line order, nothing at all when a line is invalid (unless partial).
"""

from __future__ import annotations

import hashlib
import heapq
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any, AnyStr

from sqlalchemy import bindparam, insert, literal, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.bonnie import IO_TESTS, STATUS_OK, TESTS
from app.errors import BadRequest, InvalidUpload
from app.ingest.documents import limiters_by_line, store_document
from app.ingest.lines import BOM_UTF8
from app.ingest.name_tags import NameMismatchError, NamePattern
from app.ingest.parsing import (
    COLUMNS_103,
    LineError,
    ParsedRun,
    iter_parse_bytes,
    parse_line,
    parse_raw_line,
)
from app.ingest.report_text import ConvertedRun, convert_report, looks_like_report
from app.ingest.secrets_scrub import scrub_document
from app.ingest.sqlite_bulk import PlainLines
from app.ingest.sqlite_bulk import scan as scan_plain_lines
from app.ingest.writers import BATCH_ROWS, LOOKUP_CHUNK, RunWriter, writer_class
from app.limits import MAX_TAGS_PER_RUN
from app.store.db import begin_write
from app.store.models import Tag, Upload, run_table
from app.tags import check_tag

# Errors reported per upload; the rest are only counted. 32 MiB of one-character lines are 16 million
# errors: kept, they take gigabytes and make a 76 MB answer per MiB (docs/decisions.md, "Upload memory under 300 MB").
MAX_REPORTED_ERRORS = 100
# With partial=true reading goes on past invalid lines, but not through any amount of junk: it stops once the
# invalid lines pass JUNK_ALLOWANCE_LINES plus JUNK_PER_VALID_LINE for each valid line before them, so an upload
# costs time in proportion to what it stores. 32 MiB of `a\n` took 273 s of a worker; 10,000 lines take 0.2 s.
JUNK_ALLOWANCE_LINES = 10_000
JUNK_PER_VALID_LINE = 10


@dataclass(slots=True)
class IngestOutcome:
    upload_id: int
    created: list[int] = field(default_factory=list)
    duplicates: list[int] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)  # the first MAX_REPORTED_ERRORS
    error_count: int = 0  # all of them
    tagged: list[int] = field(default_factory=list)  # runs already stored that this upload gave new tags
    converted: list[ConvertedOut] = field(default_factory=list)  # runs read from a text report
    skipped: list[SkippedOut] = field(default_factory=list)  # a paste's lines no reader took: the first stretches
    skipped_count: int = 0  # all of them
    run_ids: dict[bytes, int] = field(default_factory=dict, repr=False)  # line hash -> run id, for run_ids_of
    replayed: bool = False  # the upload of this Idempotency-Key was stored before: nothing was stored now


@dataclass(frozen=True, slots=True)
class ConvertedOut:
    """A run read from a text report: where it starts, the CSV line stored for it, what was not exact."""

    line: int
    run_id: int
    csv_line: str
    notes: list[str]
    stored_before: bool = False  # the report is of a run stored before as its CSV line: not stored again


@dataclass(frozen=True, slots=True)
class SkippedOut:
    """A stretch of a pasted text that neither a report nor a CSV line took: its first such line, how many of its
    lines were not read (blank lines and `#` comments left out), and the start of the first."""

    line: int
    count: int
    text: str


def ingest_bytes(
    *, session: Session, data: bytes, max_line_bytes: int, name_pattern: NamePattern | None = None, **options: Any
) -> IngestOutcome:
    """Parse an upload's bytes (CSV lines, or bonnie++'s text report) and ingest them; on SQLite the
    plain lines (formats 1.98, 1.9x and 1.03) never reach the parser (app.ingest.sqlite_bulk)."""
    report = _report_items(data, max_line_bytes, session)
    if report is not None:
        wanted = {line_hash(run.csv_line) for run in report.converted}
        wanted |= {line_hash(same.csv_line) for same in report.same_runs}
        wanted |= {line_hash(stored.csv_line) for stored in report.stored_runs}
        outcome = ingest(session=session, items=report.items, name_pattern=name_pattern, run_ids_of=wanted, **options)
        converted = [
            ConvertedOut(run.line, outcome.run_ids[line_hash(run.csv_line)], run.csv_line, run.notes)
            for run in report.converted
            if line_hash(run.csv_line) in outcome.run_ids
        ]
        converted += [
            ConvertedOut(same.run.line, outcome.run_ids[line_hash(same.csv_line)], same.csv_line, [same.note])
            for same in report.same_runs
            if line_hash(same.csv_line) in outcome.run_ids
        ]
        created = set(outcome.created)
        for stored in report.stored_runs:
            run_id = outcome.run_ids.get(line_hash(stored.csv_line))
            if run_id is not None:
                again = run_id in created  # its run was deleted between the look-up and this upload's write
                converted.append(
                    ConvertedOut(stored.run.line, run_id, stored.csv_line, [stored.note(run_id, again)], not again)
                )
        outcome.converted = sorted(converted, key=lambda run: run.line)
        # Only once the upload is stored: a refused one would pay for counting lines nobody is told about.
        outcome.skipped, outcome.skipped_count = _not_read(data.decode("utf-8"), report.spans)
        return outcome
    # Name tags need each line's machine name: the writer gets parsed lines only.
    plain = scan_plain_lines(session, data, max_line_bytes) if name_pattern is None else None
    return ingest(
        session=session,
        items=iter_parse_bytes(data, max_line_bytes=max_line_bytes) if plain is None else plain.other_items(),
        name_pattern=name_pattern,
        plain=plain,
        **options,
    )


# A CSV line has at least 26 commas; a report's row none. A line with this many that does not parse is a
# CSV line gone wrong, reported as such; other lines around a report (prose, progress messages) are not.
_CSV_LIKE_COMMAS = 10
_FEWEST_CSV_COMMAS = len(COLUMNS_103) - 1
# Possessive: a line with fewer commas fails in one pass, without backtracking.
_CSV_LIKE_LINE = re.compile(rb"^(?:[^,\n]*+,){%d}[^\n]*" % _CSV_LIKE_COMMAS, re.MULTILINE)
_CSV_LINE = re.compile(rb"^(?:[^,\n]*+,){%d}[^\n]*" % _FEWEST_CSV_COMMAS, re.MULTILINE)


@dataclass(frozen=True, slots=True)
class _SameRun:
    """A report's run left out because a CSV line of the paste is the same run (bonnie++ prints both)."""

    run: ConvertedRun
    csv_line_no: int
    csv_line: str

    @property
    def note(self) -> str:
        return (
            f"the same run as the CSV line on line {self.csv_line_no}, which is stored instead: every figure of "
            "the report equals that line's, within the report's rounding"
        )


@dataclass(frozen=True, slots=True)
class _StoredRun:
    """A report's run stored before as its CSV line (bonnie++'s line uploaded, then its report): that line goes in
    the report's place, so the upload finds it stored, as any duplicate line, and adds the upload's tags to it."""

    run: ConvertedRun
    csv_line: str

    @staticmethod
    def note(run_id: int, again: bool) -> str:
        if again:
            return (
                f"the text report of a run whose CSV line was stored, then deleted while this upload waited: that "
                f"line is stored again, as run {run_id}"
            )
        return (
            f"the text report of run {run_id}, stored before as its CSV line: not stored again (every figure the "
            "report shows equals that line's, within the report's rounding)"
        )


@dataclass(slots=True)
class _ReportUpload:
    items: Iterator[ParsedRun | LineError]  # the report's runs and errors and the paste's CSV lines, in line order
    converted: list[ConvertedRun]  # the report's runs that are stored
    same_runs: list[_SameRun]  # those left out for a CSV line of the same run
    stored_runs: list[_StoredRun]  # those left out for a stored run's CSV line
    spans: list[tuple[int, int]]  # where the report blocks read lie in the decoded text (ReportConversion.spans)


def _report_items(data: bytes, max_line_bytes: int, session: Session) -> _ReportUpload | None:
    """A pasted text report's runs as parsed lines, with the CSV lines among them, or None when the upload is not
    a report. Nothing is held per line of the paste: its CSV lines are read twice (to find a report's run that
    one of them is, then to store them), each time one at a time. A report's run that is neither one of the
    paste's CSV lines nor a stored run's (_stored_line) is stored as converted."""
    if b"Sequential" not in data:  # cheap: a 32 MiB CSV upload is never decoded and scanned twice
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not looks_like_report(text, max_line_bytes=max_line_bytes):
        return None
    conversion = convert_report(text, max_line_bytes=max_line_bytes)
    del text
    report_items: list[ParsedRun | LineError] = list(conversion.errors)
    runs: list[tuple[ConvertedRun, ParsedRun]] = []
    for run in conversion.runs:
        parsed = parse_line(run.csv_line, run.line, max_line_bytes=max_line_bytes)
        if isinstance(parsed, ParsedRun):
            runs.append((run, parsed))
        elif parsed is not None:
            report_items.append(parsed)
    same = _csv_lines_of_the_same_runs(data, runs, max_line_bytes)
    upload = _ReportUpload(iter(()), [], [], [], conversion.spans)
    for index, (run, parsed) in enumerate(runs):
        if index in same:
            upload.same_runs.append(_SameRun(run, *same[index]))
        elif (stored := _stored_line(session, run, parsed, max_line_bytes)) is not None:
            report_items.append(stored)
            upload.stored_runs.append(_StoredRun(run, stored.raw_line))
        else:
            report_items.append(parsed)
            upload.converted.append(run)
    report_items.sort(key=_line_of)
    upload.items = heapq.merge(_csv_like_items(data, max_line_bytes), report_items, key=_line_of)
    return upload


# The lines of a paste that no reader takes are those not blank, not a `#` comment and not CSV-like. They are
# counted a slice at a time with string methods and the regex engine's search for CSV-like lines, never matched one
# by one: 16 million one-letter lines after a report cost 3 s matched by a regex, 0.3 s so.
_CSV_LIKE_TEXT = re.compile(rf"^(?![^\S\n]*+#)(?:[^,\n]*+,){{{_CSV_LIKE_COMMAS}}}", re.MULTILINE)
_NOT_READ = re.compile(rf"^(?![^\S\n]*+#)(?!(?:[^,\n]*+,){{{_CSV_LIKE_COMMAS}}})[^\S\n]*+\S[^\n]*", re.MULTILINE)
_NO_SPACE = str.maketrans("", "", " \t\r\f\v")
_SLICE_CHARS = 1 << 20
MAX_SKIPPED_STRETCHES = 20
SKIPPED_TEXT_CHARS = 80


def _not_read(text: str, spans: list[tuple[int, int]]) -> tuple[list[SkippedOut], int]:
    """The stretches of `text` outside the report blocks read (`spans`) that hold lines no reader took: the first
    MAX_SKIPPED_STRETCHES, and how many such lines in all. A stretch is the text between two blocks (or before the
    first, or after the last); each starts at a line's start."""
    stretches: list[SkippedOut] = []
    count = 0
    line_no, counted_to = 1, 0
    starts = [0, *(end for _, end in spans)]
    ends = [*(start for start, _ in spans), len(text)]
    for start, end in zip(starts, ends, strict=True):
        if start >= end:
            continue
        first = next(_finditer(_NOT_READ, text, start, end), None)
        if first is None:
            continue
        lines = _count_not_read(text, start, end)
        count += lines
        if len(stretches) < MAX_SKIPPED_STRETCHES:
            line_no += text.count("\n", counted_to, first.start())
            counted_to = first.start()
            shown = first[0].strip()
            if len(shown) > SKIPPED_TEXT_CHARS:
                shown = shown[: SKIPPED_TEXT_CHARS - 1] + "…"
            stretches.append(SkippedOut(line_no, lines, shown))
    return stretches, count


def _count_not_read(text: str, start: int, end: int) -> int:
    """The lines of text[start:end] (which starts at a line's start) that are not blank, a comment or CSV-like."""
    count = 0
    while start < end:
        cut = text.find("\n", min(start + _SLICE_CHARS, end) - 1, end)
        cut = end if cut < 0 else cut + 1  # the slice ends after a newline, or at the stretch's end
        piece = text[start:cut]
        lines = piece.count("\n") + (not piece.endswith("\n"))
        bare = "\n" + piece.translate(_NO_SPACE)  # a blank line is now an empty one: two newlines in a row
        if not piece.endswith("\n") and bare.endswith("\n"):
            bare += "\n"  # a last line of only spaces, without its newline
        blank = 0
        while (shorter := bare.replace("\n\n", "\n")) != bare:  # each pass halves every run of newlines
            blank += len(bare) - len(shorter)
            bare = shorter
        comments = bare.count("\n#")
        csv_like = sum(1 for _ in _CSV_LIKE_TEXT.finditer(text, start, cut))
        count += lines - blank - comments - csv_like
        start = cut
    return count


# The regex engine holds the GIL for a whole search: one through 32 MiB of lines that never match stalled every
# other request of the worker for 1.3 s. A search is cut into windows of about 1 MiB, each ending after a newline.
_WINDOW = 1 << 20


def _finditer(
    pattern: re.Pattern[AnyStr], data: AnyStr, start: int = 0, end: int | None = None
) -> Iterator[re.Match[AnyStr]]:
    """pattern.finditer(data, start, end) for a pattern whose matches lie within a line, a window at a time."""
    end = len(data) if end is None else end
    newline = b"\n" if isinstance(data, bytes) else "\n"
    while start < end:
        cut = data.find(newline, min(start + _WINDOW, end) - 1, end)
        cut = end if cut < 0 else cut + 1
        yield from pattern.finditer(data, start, cut)
        start = cut


def _line_of(item: ParsedRun | LineError) -> int:
    return item.line if isinstance(item, LineError) else item.line_no


def _lines_matching(pattern: re.Pattern[bytes], data: bytes) -> Iterator[tuple[int, bytes]]:
    """(line number, the line's bytes) of each line `pattern` matches from its start, a leading BOM left out."""
    line_no, counted_to = 1, 0
    for match in _finditer(pattern, data):
        line_no += data.count(b"\n", counted_to, match.start())
        counted_to = match.start()
        raw = match[0]
        yield line_no, raw[len(BOM_UTF8) :] if match.start() == 0 and raw.startswith(BOM_UTF8) else raw


def _csv_like_items(data: bytes, max_line_bytes: int) -> Iterator[ParsedRun | LineError]:
    """The paste's CSV lines, and the errors of lines that look like CSV lines gone wrong."""
    for line_no, raw in _lines_matching(_CSV_LIKE_LINE, data):
        item = parse_raw_line(raw, line_no, max_line_bytes)
        if item is not None:
            yield item


# A CSV line is compared with at most this many of the report's runs that share its exact figures (below): a paste
# crafted to put thousands of each in one group would otherwise cost their product. Real runs differ in their
# latencies or %CPU, so a group holds one; past the bound a report's run is stored beside its CSV line.
_MAX_COMPARED = 16


def _csv_lines_of_the_same_runs(
    data: bytes, runs: list[tuple[ConvertedRun, ParsedRun]], max_line_bytes: int
) -> dict[int, tuple[int, str]]:
    """Index in `runs` -> (line number, text) of the paste's first CSV line that is the same run as that report's
    run: bonnie++ prints its report and then its CSV line, and a paste holds both. The same run, told by its
    figures (_same_run), not by its name and size: two runs of one machine pasted together are two runs."""
    by_key: dict[tuple[Any, ...], dict[str, list[int]]] = {}
    for index, (run, parsed) in enumerate(runs):
        by_key.setdefault(_exact_figures(parsed), {}).setdefault(run.csv_line, []).append(index)
    found: dict[int, tuple[int, str]] = {}
    if not by_key:
        return found
    for line_no, raw in _lines_matching(_CSV_LINE, data):
        csv = parse_raw_line(raw, line_no, max_line_bytes)
        if not isinstance(csv, ParsedRun):
            continue
        group = by_key.get(_exact_figures(csv))
        if group is None:
            continue
        for indexes in islice(group.values(), _MAX_COMPARED):
            run, parsed = runs[indexes[0]]
            if indexes[0] not in found and _same_run(run, parsed, csv):
                for index in indexes:
                    found[index] = (line_no, csv.raw_line)
    return found


def _stored_line(session: Session, report: ConvertedRun, converted: ParsedRun, max_line_bytes: int) -> ParsedRun | None:
    """The CSV line of a stored run that is the report's run (_same_run), parsed as if it stood at the report's
    line, or None. The database narrows the candidates to the runs of that machine (its index) with the report's
    parameters and every exact figure (_exact_figures: latencies, statuses, %CPU); at most _MAX_COMPARED are
    compared figure by figure: a machine's other runs differ in their latencies."""
    machine = run_table.c.machine
    candidates = select(run_table.c.raw_line).where(
        machine == converted.machine
        if not report.name_may_be_cut
        else machine.startswith(converted.machine, autoescape=True),
        run_table.c.format_version == converted.format_version,
        run_table.c.file_size_mib.is_not_distinct_from(converted.file_size_mib),
        run_table.c.io_chunk_bytes.is_not_distinct_from(converted.io_chunk_bytes),
    )
    for test, result in zip(TESTS, converted.results, strict=True):
        candidates = candidates.where(run_table.c[f"{test}_latency_us"].is_not_distinct_from(result.latency_us))
        if test not in report.not_the_rate:
            candidates = candidates.where(
                run_table.c[f"{test}_status"] == result.status,
                run_table.c[f"{test}_cpu_pct"].is_not_distinct_from(result.cpu_pct),
            )
    # The report's own line stored before (the same report uploaded twice) is a plain duplicate, not this.
    candidates = candidates.where(run_table.c.line_hash != line_hash(report.csv_line))
    for raw_line in session.scalars(candidates.order_by(run_table.c.id).limit(_MAX_COMPARED)):
        stored = parse_line(raw_line, converted.line_no, max_line_bytes=max_line_bytes)
        if isinstance(stored, ParsedRun) and _same_run(report, converted, stored):
            return stored
    return None


def _exact_figures(run: ParsedRun) -> tuple[Any, ...]:
    """What every text report layout shows exactly (§8): the parameters, the I/O tests' outcomes and %CPU, every
    latency. Equal for a report's run and its CSV line; a dict key that finds the candidates at once."""
    return (
        run.format_version,
        run.file_size_mib,
        run.io_chunk_bytes,
        run.file_test,
        tuple((result.status, result.cpu_pct) for result in run.results[: len(IO_TESTS)]),
        tuple(result.latency_us for result in run.results),
    )


def _same_run(report: ConvertedRun, converted: ParsedRun, csv: ParsedRun) -> bool:
    """The CSV line is the report's run: the machine names agree (the report's may be cut short) and every figure
    the report shows equals the line's, a rounded one within the report's rounding (ConvertedRun.bounds)."""
    name_agrees = csv.machine == converted.machine or (
        report.name_may_be_cut and csv.machine.startswith(converted.machine)
    )
    if not name_agrees:
        return False
    for column, mine, theirs in (
        ("concurrency", converted.concurrency, csv.concurrency),
        ("seek_count", converted.seek_count, csv.seek_count),
        ("seek_proc_count", converted.seek_procs, csv.seek_procs),
    ):
        if column not in report.assumed and mine != theirs:
            return False
    for test, ours, its in zip(TESTS, converted.results, csv.results, strict=True):
        if test in report.not_the_rate:  # 2.00a's file-test rates: the report's figure is not the rate
            continue
        if ours.status != its.status or ours.cpu_pct != its.cpu_pct:
            return False
        if ours.status != STATUS_OK or its.value is None:
            continue
        if test in report.bounds:
            low, high = report.bounds[test]
            # bonnie++ prints both from one measurement: the CSV's whole number may sit a fraction outside.
            if not math.floor(low) <= its.value <= math.ceil(high):
                return False
        elif ours.value != its.value:
            return False
    return True


def line_hash(raw_line: str) -> bytes:
    return hashlib.blake2b(raw_line.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _store_limiters(session: Session, upload_id: int, document: Any) -> None:
    """Each run this upload made for a line its document has an entry for: what limited each test, as a
    comparison reads it (run.limiters). One UPDATE per such entry, so bounded by the document, not by the lines;
    runs stored before this upload keep their own document's."""
    rows = [{"line": line_hash(csv), "found": limiters} for csv, limiters in limiters_by_line(document)]
    if rows:
        session.execute(
            update(run_table)
            .where(run_table.c.line_hash == bindparam("line"), run_table.c.upload_id == upload_id)
            .values(limiters=bindparam("found")),
            rows,
        )


def ingest(
    *,
    session: Session,
    items: Iterable[ParsedRun | LineError],
    partial: bool = False,
    source: str,
    filename: str | None = None,
    label: str | None = None,
    tags: dict[str, str] | None = None,
    name_pattern: NamePattern | None = None,
    document: Any = None,
    run_ids_of: set[bytes] | None = None,
    plain: PlainLines | None = None,
    idempotency_key: str | None = None,
    run_time: datetime | None = None,
) -> IngestOutcome:
    """Store every ParsedRun of `items`, and the lines of `plain` (the rest of the upload), under a new upload.

    Without `partial`, any LineError raises InvalidUpload and nothing must be committed, and reading stops at
    the first error past MAX_REPORTED_ERRORS (the rest could only be counted: 16 million junk lines took minutes);
    with it, the valid lines are stored and the errors returned. A line already stored (or repeated in this
    upload) is not stored again: its existing id is listed as a duplicate, and the tags it would have
    got that it lacks are added to it (never replacing a value: `tagged` lists those runs).

    With `name_pattern`, each line's machine name gives tags (explicit `tags` win on a shared key);
    a name that does not fit is an error of that line, field `name`. `run_ids_of`: line hashes whose run ids
    the outcome's `run_ids` gives.

    `run_time`: when the upload's runs were measured, as the client says (`time=`); a run's document's start
    time wins over it on history.

    With `idempotency_key`, an upload stored before with the same key is the answer: its runs are listed as
    duplicates, `replayed` is set, and nothing of this one is read or stored.
    """
    if tags and len(tags) > MAX_TAGS_PER_RUN:
        raise BadRequest(f"a run has at most {MAX_TAGS_PER_RUN} tags; {len(tags)} were given")
    begin_write(session, bulk=True)
    now = datetime.now(UTC)
    upload = Upload(
        created_at=now,
        source=source,
        filename=filename,
        label=label,
        idempotency_key=idempotency_key,
        run_time=run_time,
    )
    if idempotency_key is None:
        session.add(upload)
        session.flush()
    else:
        stored = _upload_of_key(session, idempotency_key, upload)
        if stored is not None:
            return _replayed(session, stored)
    # A runner that does not scrub its own argv posts it, --token SECRET included: the secret is never stored.
    document = scrub_document(document)
    # Stored once, however many lines refer to it (docs/decisions.md, "A document stored once").
    document_id = store_document(session, document)
    writer = writer_class(session)(session, upload.id, now, label, document_id, plain)
    tags = tags or {}
    read = _read(items, writer, partial=partial, tags=tags, name_pattern=name_pattern, plain=plain)
    created_ids, existing_ids = writer.finish()
    if document_id is not None:
        _store_limiters(session, upload.id, document)
    outcome = IngestOutcome(upload_id=upload.id, errors=read.errors, error_count=read.error_count)
    if run_ids_of:  # only those: 100,000 lines would be a second 100,000-entry dict
        outcome.run_ids = {
            digest: run_id
            for digest in run_ids_of
            if (run_id := created_ids.get(digest) or existing_ids.get(digest)) is not None
        }
    duplicates = _created_and_duplicates(outcome, read.line_hashes, created_ids, existing_ids, plain)
    existing_runs = {existing_ids[d]: read.tags_of.get(d, tags) for d in existing_ids}
    if plain is not None and plain.stored is not None:
        existing_runs |= dict.fromkeys(plain.stored.existing, tags)
    if tags or read.tags_of:
        duplicates = _tag_runs(session, outcome, read, tags, created_ids, existing_runs, duplicates, partial=partial)
    outcome.duplicates = [run_id for _, run_id in duplicates]
    return outcome


@dataclass(slots=True)
class _Read:
    """What reading an upload's items found: its first errors and their count, the valid lines (the plain ones
    included) and each parsed one's hash in order, and each line's own tags when a name pattern gives them."""

    errors: list[LineError]  # the first MAX_REPORTED_ERRORS
    error_count: int
    run_count: int
    line_hashes: list[tuple[int, bytes]]  # (line number, hash) of each valid parsed line, in order
    tags_of: dict[bytes, dict[str, str]]  # line hash -> its tags, when they differ per line

    @property
    def total(self) -> int:
        return self.run_count + self.error_count


def _read(
    items: Iterable[ParsedRun | LineError],
    writer: RunWriter,
    *,
    partial: bool,
    tags: dict[str, str],
    name_pattern: NamePattern | None,
    plain: PlainLines | None,
) -> _Read:
    """Hand each new valid line of `items` to `writer`, and count and keep the errors (ingest()'s rules); raise
    InvalidUpload when the upload is to store nothing."""
    errors: list[LineError] = []
    error_count = 0
    run_count = 0
    junk_bound = JUNK_ALLOWANCE_LINES  # raised as valid lines are found
    seen: set[bytes] = set()
    line_hashes: list[tuple[int, bytes]] = []
    tags_of: dict[bytes, dict[str, str]] = {}
    for item in items:
        if name_pattern is not None and isinstance(item, ParsedRun):
            line_tags = _name_tags(item, name_pattern, tags)
            if isinstance(line_tags, LineError):
                item = line_tags
            else:
                tags_of[line_hash(item.raw_line)] = line_tags
        if isinstance(item, LineError):
            error_count += 1
            if len(errors) < MAX_REPORTED_ERRORS:
                errors.append(item)
            elif not partial:
                raise InvalidUpload(
                    f"more than {MAX_REPORTED_ERRORS} lines are invalid; nothing was stored (reading stopped at "
                    f"line {item.line}; with partial=true reading goes on and the valid ones are stored)",
                    errors,
                    error_count,
                )
            if not partial:
                writer.discard()
            elif error_count > junk_bound:
                valid = _valid_before(item.line, run_count, plain)
                junk_bound = JUNK_ALLOWANCE_LINES + JUNK_PER_VALID_LINE * valid
                if error_count > junk_bound:
                    raise _too_much_junk(item, errors, error_count, valid)
            continue
        run_count += 1
        if errors and not partial:
            continue  # the upload has failed: nothing more is stored, the rest only counted
        digest = line_hash(item.raw_line)
        line_hashes.append((item.line_no, digest))
        if digest not in seen:
            seen.add(digest)
            writer.add(item, digest)

    if plain is not None:
        run_count += plain.count
    return _storable(_Read(errors, error_count, run_count, line_hashes, tags_of), partial=partial)


def _storable(read: _Read, *, partial: bool) -> _Read:
    """`read`, when the upload stores something; else InvalidUpload saying why not."""
    if read.run_count == 0:
        if not read.errors:
            detail = "no bonnie++ result line in the upload"
        elif read.total == 1:
            detail = "the upload's only line is invalid; nothing was stored"
        else:
            detail = f"all {read.total} lines are invalid; nothing was stored"
        raise InvalidUpload(detail, read.errors, read.error_count)
    if read.errors and not partial:
        raise _refused(read.errors, read.error_count, read.total)
    return read


def _created_and_duplicates(
    outcome: IngestOutcome,
    line_hashes: list[tuple[int, bytes]],
    created_ids: dict[bytes, int],
    existing_ids: dict[bytes, int],
    plain: PlainLines | None,
) -> list[tuple[int, int]]:
    """Fill outcome.created with the first sighting of each new line, in line order; return every other valid
    line as (line number, the run id it has). The plain lines' count as the parsed ones do."""
    reported: set[bytes] = set()
    duplicates: list[tuple[int, int]] = []
    for line_no, digest in line_hashes:
        if digest in created_ids and digest not in reported:
            outcome.created.append(created_ids[digest])
        else:
            duplicates.append((line_no, created_ids.get(digest) or existing_ids[digest]))
        reported.add(digest)
    if plain is not None and plain.stored is not None:
        # Runs are numbered in line order, so the created ids in order are the created lines in order.
        outcome.created = sorted(outcome.created + plain.stored.created) if outcome.created else plain.stored.created
        duplicates = sorted(duplicates + plain.stored.duplicates) if duplicates else plain.stored.duplicates
    return duplicates


def _tag_runs(
    session: Session,
    outcome: IngestOutcome,
    read: _Read,
    tags: dict[str, str],
    created_ids: dict[bytes, int],
    existing_runs: dict[int, dict[str, str]],
    duplicates: list[tuple[int, int]],
    *,
    partial: bool,
) -> list[tuple[int, int]]:
    """Tag the runs the upload made, and add to the runs it found stored the tags they lack; return the duplicates
    left once a run with too many tags to take these is an error of its line."""
    if read.tags_of:
        created_rows = (
            {"run_id": run_id, "key": key, "value": value}
            for digest, run_id in created_ids.items()
            for key, value in read.tags_of.get(digest, tags).items()
        )
        _insert_tags(session, created_rows)
    else:
        _tag_upload_runs(session, outcome.upload_id, tags)
    outcome.tagged, over_limit = _add_tags(session, existing_runs)
    if not over_limit:
        return duplicates
    # A line whose run is stored already with too many tags to take these: an error of that line, field `tags`;
    # with partial, the line is left out (its run keeps its tags), else nothing is stored.
    refused = [LineError(line_no, "tags", over_limit[run_id]) for line_no, run_id in duplicates if run_id in over_limit]
    errors = sorted(read.errors + refused, key=lambda error: error.line)
    error_count = read.error_count + len(refused)
    if not partial:
        raise _refused(errors[:MAX_REPORTED_ERRORS], error_count, read.total)
    outcome.errors, outcome.error_count = errors[:MAX_REPORTED_ERRORS], error_count
    return [(line_no, run_id) for line_no, run_id in duplicates if run_id not in over_limit]


def _upload_of_key(session: Session, key: str, upload: Upload) -> int | None:
    """The id of the upload stored before with `key`, or None after adding `upload` (which carries it).

    The key's unique index decides a race: on PostgreSQL a second upload with the key waits at its insert for the
    first to commit, then fails it, and reads the first's id (SQLite's write lock lets one upload in at a time)."""
    stored = session.scalar(select(Upload.id).where(Upload.idempotency_key == key))
    if stored is not None:
        return stored
    try:
        with session.begin_nested():
            session.add(upload)
            session.flush()
    except IntegrityError:
        return session.scalar(select(Upload.id).where(Upload.idempotency_key == key))
    return None


def _replayed(session: Session, upload_id: int) -> IngestOutcome:
    runs = session.scalars(select(run_table.c.id).where(run_table.c.upload_id == upload_id).order_by(run_table.c.id))
    return IngestOutcome(upload_id=upload_id, duplicates=list(runs), replayed=True)


def _valid_before(line: int, parsed_valid: int, plain: PlainLines | None) -> int:
    """The valid lines before `line`: the parser's so far, and the compiled path's plain lines before it."""
    return parsed_valid + (plain.distinct_before(line) if plain is not None else 0)


def _too_much_junk(stop: LineError, errors: list[LineError], error_count: int, valid: int) -> InvalidUpload:
    """An upload with partial=true that is mostly invalid lines: refused where reading stopped."""
    where = f"field {stop.field}: " if stop.field else ""
    return InvalidUpload(
        f"reading stopped at line {stop.line} ({where}{stop.error}): {error_count} lines are invalid and {valid} "
        f"valid before it; with partial=true an upload may hold {JUNK_ALLOWANCE_LINES} invalid lines, and "
        f"{JUNK_PER_VALID_LINE} more for each valid one; nothing was stored",
        errors,
        error_count,
    )


def _refused(errors: list[LineError], error_count: int, total: int) -> InvalidUpload:
    """An upload with invalid lines, partial not asked for: nothing is stored."""
    verb = "is" if error_count == 1 else "are"
    return InvalidUpload(f"{error_count} of {total} lines {verb} invalid; nothing was stored", errors, error_count)


def _tag_upload_runs(session: Session, upload_id: int, tags: dict[str, str]) -> None:
    """Every run this upload created gets `tags`: one INSERT ... SELECT per key, however many runs."""
    for key, value in tags.items():
        runs = select(run_table.c.id, literal(key), literal(value)).where(run_table.c.upload_id == upload_id)
        session.execute(insert(Tag).from_select(["run_id", "key", "value"], runs))


def _name_tags(item: ParsedRun, pattern: NamePattern, tags: dict[str, str]) -> dict[str, str] | LineError:
    """The line's tags: those its machine name gives, then the explicit ones (which win on a shared key)."""
    try:
        named = pattern.parse(item.machine)
        for key, value in named.items():
            check_tag(key, value)
    except (NameMismatchError, BadRequest) as exc:
        return LineError(item.line_no, "name", exc.detail if isinstance(exc, BadRequest) else str(exc))
    merged = named | tags
    if len(merged) > MAX_TAGS_PER_RUN:
        return LineError(
            item.line_no, "name", f"a run has at most {MAX_TAGS_PER_RUN} tags; this line would get {len(merged)}"
        )
    return merged


def _insert_tags(session: Session, rows: Iterable[dict[str, Any]]) -> None:
    # In batches: 100,000 runs with two tags would be 200,000 dicts at once.
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH_ROWS:
            session.execute(insert(Tag), batch)
            batch = []
    if batch:
        session.execute(insert(Tag), batch)


def _add_tags(session: Session, wanted: dict[int, dict[str, str]]) -> tuple[list[int], dict[int, str]]:
    """Give runs already stored the tags they lack (a key they have keeps its value): the runs changed, and
    those left as they were because the tags would pass MAX_TAGS_PER_RUN, each with why."""
    wanted = {run_id: tags for run_id, tags in wanted.items() if tags}
    run_ids = sorted(wanted)
    tagged: list[int] = []
    over_limit: dict[int, str] = {}
    for start in range(0, len(run_ids), LOOKUP_CHUNK):
        chunk = run_ids[start : start + LOOKUP_CHUNK]
        have: dict[int, set[str]] = {run_id: set() for run_id in chunk}
        for run_id, key in session.execute(select(Tag.run_id, Tag.key).where(Tag.run_id.in_(chunk))):
            have[run_id].add(key)
        rows = []
        for run_id in chunk:
            new = {key: value for key, value in wanted[run_id].items() if key not in have[run_id]}
            if not new:
                continue
            if len(have[run_id]) + len(new) > MAX_TAGS_PER_RUN:
                over_limit[run_id] = (
                    f"run {run_id} is already stored with {len(have[run_id])} tags; {len(new)} more would pass "
                    f"the limit of {MAX_TAGS_PER_RUN} per run"
                )
                continue
            tagged.append(run_id)
            rows += [{"run_id": run_id, "key": key, "value": value} for key, value in new.items()]
        _insert_tags(session, rows)
    return tagged, over_limit
