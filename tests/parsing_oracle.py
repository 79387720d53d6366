"""Whole-upload parses collected into lists: how the tests read what the parser makes of a text. The app itself
streams (app.ingest.parsing.iter_parse_bytes) and never holds an upload's runs and errors at once."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from app.errors import LineError
from app.ingest.parsing import DEFAULT_MAX_LINE_BYTES, ParsedRun, iter_parse, iter_parse_bytes


@dataclass(slots=True)
class ParseResult:
    runs: list[ParsedRun]
    errors: list[LineError]


def parse_text(text: str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> ParseResult:
    """Parse a whole upload; every physical line is numbered, skipped ones included."""
    return _collect(iter_parse(text, max_line_bytes=max_line_bytes))


def parse_bytes(data: bytes, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> ParseResult:
    return _collect(iter_parse_bytes(data, max_line_bytes=max_line_bytes))


def _collect(items: Iterator[ParsedRun | LineError]) -> ParseResult:
    result = ParseResult([], [])
    for item in items:
        if isinstance(item, ParsedRun):
            result.runs.append(item)
        elif isinstance(item, LineError):
            result.errors.append(item)
    return result
