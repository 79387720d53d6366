"""app/web/document_view.py: a document shaped into a bounded tree of display nodes, whatever its shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.ingest.documents import line_facts
from app.web import document_view as dv
from app.web.document_view import Entries, Items, Pairs, Scalar, Table, Text, Words, document_view
from tests.helpers import DATA_DIR
from tests.hostile_documents import HOSTILE_DOCUMENTS


def _runner_document() -> dict[str, Any]:
    return json.loads((DATA_DIR / "runner-document.json").read_text())


def _of(document: dict[str, Any]) -> dv.DocumentView:
    runs = document.get("runs")
    return document_view(document, line_facts(runs, runs[0]["csv"]) if runs else None)


def _walk(node: Any) -> tuple[int, int]:
    """(nodes, characters of text) a display node holds, itself included."""
    if isinstance(node, Text):
        return 0, len(node.text)
    children: list[Any]
    if isinstance(node, Scalar):
        children = [node.text]
    elif isinstance(node, Entries):
        children = [part for entry in node.entries for part in entry]
    elif isinstance(node, Items):
        children = list(node.items)
    elif isinstance(node, Words):
        return 1 + len(node.words), sum(len(word.text) for word in node.words)
    elif isinstance(node, Pairs):
        return 1 + len(node.pairs), sum(len(key.text) + len(value.text) for key, value in node.pairs)
    elif isinstance(node, Table):
        children = [*node.columns, *(part for row in node.rows for part in (row.name, *row.cells))]
    else:
        raise AssertionError(f"not a display node: {node!r}")
    counts = [_walk(child) for child in children]
    return 1 + sum(nodes for nodes, _ in counts), sum(chars for _, chars in counts)


def test_the_runners_per_test_facts_are_a_table_without_the_facts_shown_above():
    document = _runner_document()
    view = _of(document)
    assert isinstance(view.tests, Table)
    columns = [column.text for column in view.tests.columns]
    assert "rate_measured" in columns and "syscalls" in columns
    assert not set(columns) & set(dv.TEST_FACTS_SHOWN_ABOVE)
    assert [row.name.text for row in view.tests.rows] == list(document["runs"][0]["tests"])
    syscalls = view.tests.rows[1].cells[columns.index("syscalls")]
    assert isinstance(syscalls, Pairs) and ("write", "4096") in [(k.text, v.text) for k, v in syscalls.pairs]
    assert isinstance(view.evidence, Table) and not view.cut
    assert isinstance(view.system, Entries) and isinstance(view.parameters, Entries)
    assert isinstance(view.warnings, Items) and len(view.warnings.items) == len(document["warnings"])


def test_byte_counts_are_shown_as_sizes_too():
    view = document_view({"system": {"ram_bytes": 25276502016, "tiny_bytes": 10, "huge_bytes": 2**84}}, None)
    assert isinstance(view.system, Entries)
    sizes = {key.text: (value.text.text, value.size) for key, value in view.system.entries}
    assert sizes == {
        "ram_bytes": ("25276502016", "23.5 GiB"),
        "tiny_bytes": ("10", ""),
        "huge_bytes": (str(2**84), ""),
    }


def test_a_mapping_of_mappings_with_many_distinct_keys_is_no_table():
    rows = {f"r{row}": {f"k{row}.{column}": 1 for column in range(5)} for row in range(10)}
    view = document_view({"x": rows}, None)
    assert isinstance(view.rest, Entries)
    shown = view.rest.entries[0][1]
    assert isinstance(shown, Entries), "50 columns, each filled in one row of ten"


def test_a_wide_mapping_shows_its_first_entries_and_counts_the_rest():
    view = document_view({"x": {f"k{index}": index for index in range(250)}}, None)
    assert isinstance(view.rest, Entries)
    wide = view.rest.entries[0][1]
    assert isinstance(wide, Entries) and wide.collapsed and wide.summary == "250 keys"
    assert len(wide.entries) == dv.MAX_ENTRIES and wide.note == "… 150 more keys"
    assert view.cut


def test_a_long_string_is_one_string_cut_short():
    view = document_view({"warnings": "w" * 5000}, None)
    assert view.warnings is not None and len(view.warnings.items) == 1
    (warning,) = view.warnings.items
    assert isinstance(warning, Scalar)
    assert warning.text.text == "w" * dv.MAX_TEXT_CHARS and warning.text.note == "… 4,000 more characters"


def test_a_long_list_of_plain_values_is_inline_and_cut_short():
    view = document_view({"parameters": {"x": ["a b", "", 3, None] * 100}}, None)
    assert isinstance(view.parameters, Entries)
    words = view.parameters.entries[0][1]
    assert isinstance(words, Words)
    assert [word.text for word in words.words[:4]] == ["'a b'", "''", "3", "None"]
    assert words.note == f"… {400 - dv.MAX_ENTRIES} more items"


def test_containers_nested_past_the_display_depth_are_a_json_excerpt():
    document: dict[str, Any] = {"end": [1]}
    for _ in range(dv.MAX_DEPTH + 3):
        document = {"a": document}
    node = document_view({"x": document}, None).rest
    for _ in range(dv.MAX_DEPTH):
        assert isinstance(node, Entries)
        node = node.entries[0][1]
    assert isinstance(node, Scalar) and node.style == "json" and node.text.text.startswith('{"a": {"a":')


@pytest.mark.parametrize("name", list(HOSTILE_DOCUMENTS))
def test_every_hostile_document_is_shaped_within_the_budget(name):
    document = HOSTILE_DOCUMENTS[name]()
    view = _of(document)
    parts = [view.warnings, view.tests, view.evidence, view.system, view.parameters, view.rest, view.run_index]
    counts = [_walk(part) for part in parts if part is not None]
    # A table reserves its row's cells before filling them, and a cell's pairs come on top: one row's worth over.
    assert sum(nodes for nodes, _ in counts) <= dv.MAX_NODES + dv.MAX_TABLE_COLUMNS * (dv.MAX_PAIRS + 1)
    assert sum(chars for _, chars in counts) <= dv.MAX_VIEW_CHARS
    assert view.cut
