"""Runner documents that the API accepts (app/ingest/validation.py's check_document: at most 1 MiB of JSON, 20,000
values, 32 levels) built to be as costly as possible to draw on the run page: wide mappings of distinct keys,
long strings and lists, deep nesting, warnings of every shape. Text is apostrophes and angle brackets, which
HTML escaping makes four or five times longer. tests/web/test_document_render.py uploads them, and so does
bench/document_render.py, which times their run pages."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.helpers import LINE_198

DOCUMENT_BYTES = 1_048_576  # BONNIEBOARD_MAX_DOCUMENT_BYTES's default
DOCUMENT_VALUES = 20_000  # app.ingest.validation.MAX_DOCUMENT_VALUES
DOCUMENT_DEPTH = 32  # app.ingest.validation.MAX_DOCUMENT_DEPTH
ESCAPED = "'<"  # 5 and 4 characters each in HTML, 1 in JSON
SLACK_BYTES = 2_000  # room under the byte limit for the keys around the filled part


def json_bytes(document: Any) -> int:
    return len(json.dumps(document, ensure_ascii=False).encode())


def filler(length: int) -> str:
    return (ESCAPED * (length // 2 + 1))[:length]


def fill(document: dict[str, Any], key: str) -> dict[str, Any]:
    """`document` with document[key] a string as long as the byte limit leaves room for."""
    document[key] = ""
    document[key] = filler(DOCUMENT_BYTES - json_bytes(document) - SLACK_BYTES)
    return document


def wide_table() -> dict[str, Any]:
    """A mapping of 140 mappings of 140 distinct keys each: drawn as one table, 140 rows and 19,600 columns,
    each column found by a scan of those found before."""
    return {"x": {f"r{row}": {f"k{row}.{column}": 1 for column in range(140)} for row in range(140)}}


def wide_per_test_table() -> dict[str, Any]:
    """The same shape where the run page draws this line's per-test facts, and each test's limiter evidence."""
    tests = {
        f"t{row}": {f"k{row}.{column}": 1 for column in range(95)}
        | {"limiter": {"code": "x", "text": "y", "evidence": {f"e{row}.{column}": 1 for column in range(95)}}}
        for row in range(99)
    }
    return {"runs": [{"index": filler(200), "csv": LINE_198, "tests": tests}]}


def shared_columns_table() -> dict[str, Any]:
    """Rows that share their keys, as a real table does, but 600 of them with 30 long cells each."""
    return {"x": {f"r{row}": {f"c{column}": filler(40) for column in range(30)} for row in range(600)}}


def many_keys() -> dict[str, Any]:
    """One mapping of as many long keys as the limits allow."""
    count = DOCUMENT_VALUES - 10
    key_chars = (DOCUMENT_BYTES - SLACK_BYTES) // count - len('"": 1, ')
    return {"x": {f"{index:05d}{filler(key_chars - 5)}": 1 for index in range(count)}}


def long_key() -> dict[str, Any]:
    document = {"x": {"": 1}}
    document["x"] = {filler(DOCUMENT_BYTES - json_bytes(document) - SLACK_BYTES): 1}
    return document


def long_string() -> dict[str, Any]:
    return fill({"system": {}}, "notes")


def warnings_string() -> dict[str, Any]:
    """warnings as one string: iterated as a list, it becomes a list item per character."""
    return fill({}, "warnings")


def warnings_list() -> dict[str, Any]:
    count = DOCUMENT_VALUES - 10
    return {"warnings": [filler((DOCUMENT_BYTES - SLACK_BYTES) // count - 4) for _ in range(count)]}


def warnings_mapping() -> dict[str, Any]:
    count = DOCUMENT_VALUES - 10
    return {"warnings": {f"{index:05d}{filler(36)}": filler(3) for index in range(count)}}


def long_list() -> dict[str, Any]:
    """A list of strings with spaces, which the run page shows inline, each quoted."""
    count = DOCUMENT_VALUES - 10
    return {"parameters": {"x": [f"{filler(20)} {filler(20)}" for _ in range(count)]}}


def list_of_mappings() -> dict[str, Any]:
    count = DOCUMENT_VALUES // 2 - 10
    return {"x": [{"a": filler(90)} for _ in range(count)]}


def deep() -> dict[str, Any]:
    """Nested to the depth limit, each level with 600 siblings of long text."""
    siblings = (DOCUMENT_VALUES - 40) // (DOCUMENT_DEPTH - 1) - 1
    text_chars = (DOCUMENT_BYTES - SLACK_BYTES) // ((DOCUMENT_DEPTH - 1) * siblings) - len('"s000": "", ')
    level: dict[str, Any] = {"end": 1}
    for _ in range(DOCUMENT_DEPTH - 2):
        level = {"a": level} | {f"s{index:03d}": filler(text_chars) for index in range(siblings)}
    return {"x": level}


def big_numbers() -> dict[str, Any]:
    """Integers of 4,000 digits (JSON allows them; the board keeps them as they are)."""
    return {"system": {"disk_bytes": [int("9" * 4000)] * 250}}


HOSTILE_DOCUMENTS: dict[str, Callable[[], dict[str, Any]]] = {
    "wide-table": wide_table,
    "wide-per-test-table": wide_per_test_table,
    "shared-columns-table": shared_columns_table,
    "many-keys": many_keys,
    "long-key": long_key,
    "long-string": long_string,
    "warnings-string": warnings_string,
    "warnings-list": warnings_list,
    "warnings-mapping": warnings_mapping,
    "long-list": long_list,
    "list-of-mappings": list_of_mappings,
    "deep": deep,
    "big-numbers": big_numbers,
}
