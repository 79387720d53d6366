"""A run's document (runner/README.md, "JSON document", or any JSON object) as the run page shows it: a tree of
display nodes that templates/_document.html draws as it is.

The page is public and a document is whatever an uploader sends, within app/ingest/validation.py's limits (1 MiB,
20,000 values, 32 levels). Drawn whole, such a document can be made to cost far more than its size: a mapping
of 140 mappings of 140 distinct keys is a table of 140 × 19,600 cells. So the view is bounded whatever the
document: each mapping or list shows at most MAX_ENTRIES entries, each string MAX_TEXT_CHARS characters, and the
whole view at most MAX_NODES nodes and MAX_VIEW_CHARS characters of text; each part left out is counted in a
"… N more" note. A mapping is a table only when its rows share most of at most MAX_TABLE_COLUMNS columns.
Shaping looks at what it shows, plus one JSON serialisation of each container shown as a JSON excerpt: time
linear in the document's size, and an HTML page well under 2 MB (tests/web/test_document_render.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import islice
from typing import Any, ClassVar

from jinja2.filters import do_filesizeformat

MAX_ENTRIES = 100  # entries of one mapping, list or table shown
MAX_PAIRS = 40  # key-value pairs of a mapping inside a table cell shown
COLLAPSE_ABOVE = 20  # a nested mapping or list with more entries is drawn collapsed, as a <details>
MAX_TABLE_COLUMNS = 48  # the runner's evidence of what limited a test has 37 keys; its per-test facts 19
MIN_TABLE_FILL = 0.5  # the share of a table's cells its rows must fill: rows that share most of their keys
MAX_TEXT_CHARS = 1_000  # characters of one string, number or JSON excerpt
MAX_KEY_CHARS = 200
MAX_DEPTH = 8  # a container nested deeper is shown as a JSON excerpt
MAX_NODES = 2_000
MAX_VIEW_CHARS = 100_000

# The per-test facts the run page's results table already shows (or shows better, as "Limited by").
TEST_FACTS_SHOWN_ABOVE = ("unit", "value", "cpu_pct", "latency_text", "limiter")
# The keys drawn in sections of their own; the others go to "Run".
SECTIONS = ("warnings", "system", "parameters", "runs")


def more_note(count: int, noun: str) -> str:
    """'… 1,234 more keys': what a display node leaves out; empty when nothing is."""
    if count <= 0:
        return ""
    return f"… {count:,} more {noun}{'' if count == 1 else 's'}"


@dataclass(frozen=True, slots=True)
class Text:
    """A string cut to a limit; `more_chars` were left out."""

    text: str
    more_chars: int = 0

    @property
    def note(self) -> str:
        return more_note(self.more_chars, "character")


@dataclass(frozen=True, slots=True)
class Scalar:
    """A plain value. `style`: "none" (JSON null, drawn as a muted dash), "number", "text", or "json" (a container
    shown as a JSON excerpt). `size` is a byte count in KiB/MiB/GiB, drawn beside the number."""

    kind: ClassVar[str] = "scalar"
    text: Text
    style: str = "text"
    size: str = ""


@dataclass(frozen=True, slots=True)
class Entries:
    """A mapping: <dl> of its first entries."""

    kind: ClassVar[str] = "entries"
    entries: tuple[tuple[Text, Node], ...]
    more: int
    collapsed: bool

    @property
    def note(self) -> str:
        return more_note(self.more, "key")

    @property
    def summary(self) -> str:
        return f"{len(self.entries) + self.more:,} keys"


@dataclass(frozen=True, slots=True)
class Items:
    """A list holding mappings (or the warnings): <ol> of its first items."""

    kind: ClassVar[str] = "items"
    items: tuple[Node, ...]
    more: int
    collapsed: bool

    @property
    def note(self) -> str:
        return more_note(self.more, "item")

    @property
    def summary(self) -> str:
        return f"{len(self.items) + self.more:,} items"


@dataclass(frozen=True, slots=True)
class Words:
    """A list of plain values, drawn inline; strings holding a space (or empty) are quoted."""

    kind: ClassVar[str] = "words"
    words: tuple[Text, ...]
    more: int

    @property
    def note(self) -> str:
        return more_note(self.more, "item")


@dataclass(frozen=True, slots=True)
class Pairs:
    """A mapping inside a table cell (the system-call counts), as 'key value, ...' without zeros and nulls."""

    kind: ClassVar[str] = "pairs"
    pairs: tuple[tuple[Text, Text], ...]
    more: int

    @property
    def note(self) -> str:
        return more_note(self.more, "key")


@dataclass(frozen=True, slots=True)
class Row:
    name: Text
    cells: tuple[Scalar | Pairs, ...]


@dataclass(frozen=True, slots=True)
class Table:
    """A mapping of mappings that share their keys (the per-test facts): a row per entry, a column per key."""

    kind: ClassVar[str] = "table"
    columns: tuple[Text, ...]
    rows: tuple[Row, ...]
    more: int

    @property
    def note(self) -> str:
        return more_note(self.more, "row")


Node = Scalar | Entries | Items | Words | Table


@dataclass(frozen=True, slots=True)
class DocumentView:
    """The run page's sections of a document; None where the document has no such part. `run_index` and
    `run_count` name this line's run among the document's runs; `cut` says some part was left out."""

    warnings: Items | None
    tests: Node | None
    evidence: Node | None
    system: Node | None
    parameters: Node | None
    rest: Node | None
    run_index: Node | None
    run_count: int
    cut: bool


def document_view(document: Any, this_line: dict[str, Any] | None) -> DocumentView:
    """`document` shaped for the run page; `this_line` is its entry for the run's CSV line (app.ingest.documents.line_facts).
    Its sections are shaped in the order a reader needs them most, so that a huge part leaves the budget to
    the per-test facts."""
    shaper = _Shaper()
    tests = this_line.get("tests") if this_line is not None else None
    if not isinstance(tests, dict):
        tests, this_line = None, None
    sections = document if isinstance(document, dict) else {}
    shaped_tests = shaper.node(tests, skip=TEST_FACTS_SHOWN_ABOVE) if tests is not None else None
    evidence = _evidence(tests) if tests is not None else {}
    shaped_evidence = shaper.node(evidence) if evidence else None
    warnings = shaper.warnings(sections.get("warnings"))
    system = shaper.node(sections["system"]) if "system" in sections else None
    parameters = shaper.node(sections["parameters"]) if "parameters" in sections else None
    rest = _rest(document, with_runs=this_line is None)
    runs = sections.get("runs")
    return DocumentView(
        warnings=warnings,
        tests=shaped_tests,
        evidence=shaped_evidence,
        system=system,
        parameters=parameters,
        rest=shaper.node(rest) if rest else None,
        run_index=shaper.node(this_line.get("index"), depth=MAX_DEPTH) if this_line is not None else None,
        run_count=len(runs) if isinstance(runs, list) else 0,
        cut=shaper.cut,
    )


def _evidence(tests: dict[str, Any]) -> dict[str, Any]:
    """{test: its limiter's evidence} for the tests whose facts hold one: what lay behind "Limited by"."""
    found = {}
    for name, facts in tests.items():
        limiter = facts.get("limiter") if isinstance(facts, dict) else None
        if isinstance(limiter, dict) and isinstance(limiter.get("evidence"), dict):
            found[name] = limiter["evidence"]
    return found


def _rest(document: Any, *, with_runs: bool) -> Any:
    """What no section of its own shows: the document itself when it is not a mapping; `runs` when this
    line's run is not among them (then none is drawn as the per-test facts)."""
    if not isinstance(document, dict):
        return document
    rest = {key: value for key, value in document.items() if key not in SECTIONS}
    if with_runs and "runs" in document:
        rest["runs"] = document["runs"]
    return rest


class _Shaper:
    """Shapes values into display nodes while the view's budget of nodes and characters lasts."""

    def __init__(self) -> None:
        self.nodes_left = MAX_NODES
        self.chars_left = MAX_VIEW_CHARS
        self.cut = False

    def node(self, value: Any, key: str = "", depth: int = 0, skip: tuple[str, ...] = ()) -> Node:
        """`value` as a display node; `key` is the name it has in its mapping (a byte count's unit); `skip`
        names columns left out if it is a table."""
        self.nodes_left -= 1
        if isinstance(value, dict | list) and depth >= MAX_DEPTH:
            return Scalar(self.json_excerpt(value), "json")
        if isinstance(value, dict):
            return self.table(value, skip) or self.entries(value, depth)
        if isinstance(value, list):
            if any(isinstance(item, dict) for item in islice(value, MAX_ENTRIES)):
                return self.items(value, key, depth)
            return self.words(value)
        return self.scalar(value, key)

    def scalar(self, value: Any, key: str = "") -> Scalar:
        if value is None:
            return Scalar(Text("—"), "none")
        if isinstance(value, bool):
            return Scalar(Text("yes" if value else "no"))
        if isinstance(value, int | float):
            # filesizeformat converts to float: a bigger integer (a document may hold one) is shown as it is.
            is_size = isinstance(key, str) and key.endswith("bytes") and 1024 <= value < 2**63
            size = do_filesizeformat(value, binary=True) if is_size else ""
            return Scalar(self.text(_number_text(value), MAX_TEXT_CHARS), "number", size)
        return Scalar(self.text(str(value), MAX_TEXT_CHARS))

    def entries(self, value: dict[Any, Any], depth: int) -> Entries:
        shown = []
        for key, child in islice(value.items(), MAX_ENTRIES):
            if self.nodes_left <= 0:
                break
            shown.append((self.text(str(key), MAX_KEY_CHARS), self.node(child, str(key), depth + 1)))
        return Entries(tuple(shown), self.left_out(len(value) - len(shown)), _collapsed(value, depth))

    def items(self, value: list[Any], key: str, depth: int) -> Items:
        shown = []
        for item in islice(value, MAX_ENTRIES):
            if self.nodes_left <= 0:
                break
            shown.append(self.node(item, key, depth + 1))
        return Items(tuple(shown), self.left_out(len(value) - len(shown)), _collapsed(value, depth))

    def words(self, value: list[Any]) -> Words:
        shown = []
        for item in islice(value, MAX_ENTRIES):
            if self.nodes_left <= 0:
                break
            self.nodes_left -= 1
            shown.append(self.word(item))
        return Words(tuple(shown), self.left_out(len(value) - len(shown)))

    def word(self, item: Any) -> Text:
        if isinstance(item, dict | list):
            return self.json_excerpt(item)
        if isinstance(item, str) and (" " in item or not item):
            quoted = self.text(item, MAX_TEXT_CHARS)
            self.chars_left -= 2  # the quotes
            return Text(f"'{quoted.text}'", quoted.more_chars)
        return self.text(item if isinstance(item, str) else _number_text(item), MAX_TEXT_CHARS)

    def table(self, value: dict[Any, Any], skip: tuple[str, ...]) -> Table | None:
        columns = _table_columns(value, skip)
        if columns is None:
            return None
        header = tuple(self.text(str(column), MAX_KEY_CHARS) for column in columns)
        rows = []
        for name, row in islice(value.items(), MAX_ENTRIES):
            if self.nodes_left < 1 + len(columns):
                break
            self.nodes_left -= 1 + len(columns)
            cells = tuple(self.cell(row.get(column), column) for column in columns)
            rows.append(Row(self.text(str(name), MAX_KEY_CHARS), cells))
        return Table(header, tuple(rows), self.left_out(len(value) - len(rows)))

    def cell(self, value: Any, column: str) -> Scalar | Pairs:
        if isinstance(value, dict):
            return self.pairs(value)
        if isinstance(value, list):
            return Scalar(self.json_excerpt(value), "json")
        return self.scalar(value, column)

    def pairs(self, value: dict[Any, Any]) -> Pairs:
        considered = list(islice(value.items(), MAX_PAIRS))
        shown = []
        for key, child in considered:
            if child in (0, None, False, ""):  # most system-call counts are 0: the others are the news
                continue
            self.nodes_left -= 1
            text = self.json_excerpt(child) if isinstance(child, dict | list) else self.text(str(child), MAX_TEXT_CHARS)
            shown.append((self.text(str(key), MAX_KEY_CHARS), text))
        return Pairs(tuple(shown), self.left_out(len(value) - len(considered)))

    def warnings(self, warnings: Any) -> Items | None:
        """The warnings, one item each; a single string or mapping is one warning (a string is no list of
        one-character warnings)."""
        if not warnings:
            return None
        listed = warnings if isinstance(warnings, list) else [warnings]
        return self.items(listed, "", depth=0)

    def json_excerpt(self, value: Any) -> Text:
        return self.text(json.dumps(value, ensure_ascii=False), MAX_TEXT_CHARS)

    def text(self, value: str, limit: int) -> Text:
        shown = value[: max(0, min(limit, self.chars_left))]
        self.chars_left -= len(shown)
        return Text(shown, self.left_out(len(value) - len(shown)))

    def left_out(self, count: int) -> int:
        if count > 0:
            self.cut = True
        return count


def _table_columns(value: dict[Any, Any], skip: tuple[str, ...]) -> list[str] | None:
    """The columns of `value` drawn as a table, or None when it is none: fewer than two rows, a row that is
    no mapping, more than MAX_TABLE_COLUMNS keys, or rows filling under MIN_TABLE_FILL of the cells. Looks at
    the rows shown and stops at the first key past the limit, so a row of 20,000 keys costs little."""
    if len(value) < 2:
        return None
    rows = list(islice(value.values(), MAX_ENTRIES))
    columns: dict[str, None] = {}
    filled = 0
    for row in rows:
        if not isinstance(row, dict):
            return None
        for key in row:
            if key in skip:
                continue
            columns[key] = None
            filled += 1
            if len(columns) > MAX_TABLE_COLUMNS:
                return None
    if filled < MIN_TABLE_FILL * len(rows) * len(columns):
        return None
    return list(columns)


def _collapsed(value: dict[Any, Any] | list[Any], depth: int) -> bool:
    """A long mapping or list inside another is drawn collapsed; a section's own stays open."""
    return depth > 0 and len(value) > COLLAPSE_ABOVE


def _number_text(value: Any) -> str:
    try:
        return str(value)
    except ValueError:  # an integer past Python's 4,300-digit conversion limit
        return f"an integer of {value.bit_length():,} bits"
