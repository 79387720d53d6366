"""Checks on what a client sends besides CSV lines and tags (app/tags.py): labels, filters, file names, documents.
Pure (no HTTP, no database): the API, the pages and the CLI give the same answers."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any

from app.errors import BadRequest, PayloadTooLarge
from app.ingest.name_tags import NamePattern, NamePatternError, compile_name_pattern
from app.limits import IDEMPOTENCY_KEY_MAX_CHARS, MAX_LABEL_CHARS
from app.tags import check_tag, is_unicode

# The runner's document nests about six levels; far deeper ones cannot be sent back.
MAX_DOCUMENT_DEPTH = 32
# ... and holds a few hundred values; a million empty lists take 400 MB to read (see request_body.py).
MAX_DOCUMENT_VALUES = 20_000
# An ISO 8601 time with a zone and nanoseconds is 35 characters.
MAX_TIME_CHARS = 40
_ZONE_SPACE = re.compile(r" (\d\d(?::?\d\d)?)$")


def tags_of_rows(keys: list[str], values: list[str]) -> dict[str, str]:
    """A run's whole tag set from a form's key and value fields, row by row as typed: each stripped; a row with
    neither is no tag; a value without a key, a key given twice or a tag check_tag refuses is a 400."""
    if len(keys) != len(values):
        raise BadRequest("every tag needs a key and a value field")
    tags: dict[str, str] = {}
    for key, value in zip(keys, values, strict=True):
        key, value = key.strip(), value.strip()
        if not key:
            if value:
                raise BadRequest(f"the value {value[:40]!r} has no key")
            continue
        if key in tags:
            raise BadRequest(f"the key {key[:40]!r} is given twice")
        check_tag(key, value)
        tags[key] = value
    return tags


def check_name_pattern(pattern: str | None) -> NamePattern | None:
    """`name_tags=raid{raid}_{fs}` -> the compiled pattern; none for an absent or blank one."""
    if pattern is None or not pattern.strip():
        return None
    try:
        return compile_name_pattern(pattern.strip())
    except NamePatternError as exc:
        raise BadRequest(str(exc)) from None


def check_filter_text(value: str | None, name: str, max_chars: int = MAX_LABEL_CHARS) -> str | None:
    """A free-text filter (machine, format): it goes to the database, which refuses NUL in text. A machine
    filter is longer: app.web.deps.check_machine_text."""
    if value is None:
        return None
    if len(value) > max_chars or "\x00" in value or not is_unicode(value):
        raise BadRequest(f"{name} is at most {max_chars} characters of Unicode text, with no NUL")
    return value


def check_filename(filename: str | None) -> str | None:
    """An uploaded file's name, kept for the upload's record: cut short, NUL and surrogates refused."""
    if not filename:
        return None
    if "\x00" in filename or not is_unicode(filename):
        raise BadRequest("the uploaded file's name holds a NUL or is not Unicode text")
    return filename[:MAX_LABEL_CHARS]


def check_label(label: str | None) -> str | None:
    if label is None:
        return None
    if len(label) > MAX_LABEL_CHARS or "\x00" in label or not is_unicode(label):
        raise BadRequest(f"a label is at most {MAX_LABEL_CHARS} characters of Unicode text, with no NUL")
    return label or None


def check_run_time(value: str | None, field: str = "time") -> datetime | None:
    """`time=`: when an upload's runs were measured, ISO 8601 (a time without a zone is UTC), as an aware UTC time."""
    if value is None or value == "":
        return None
    # An unescaped "+" of a zone (curl '...?time=2026-11-28T02:00:00+01:00') arrives as a space.
    value = _ZONE_SPACE.sub(r"+\1", value)
    try:
        moment = datetime.fromisoformat(value) if len(value) <= MAX_TIME_CHARS else None
    except ValueError:
        moment = None
    if moment is None:
        raise BadRequest(f"{field}: {value[:MAX_TIME_CHARS]!r} is not an ISO 8601 time, e.g. 2026-11-28T02:00:00Z")
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def check_idempotency_key(key: str | None) -> str | None:
    """An Idempotency-Key header: 1 to IDEMPOTENCY_KEY_MAX_CHARS printable ASCII characters."""
    if key is None:
        return None
    if not 0 < len(key) <= IDEMPOTENCY_KEY_MAX_CHARS or not all(" " < c <= "~" for c in key):
        raise BadRequest(
            f"Idempotency-Key: 1 to {IDEMPOTENCY_KEY_MAX_CHARS} printable ASCII characters without spaces; "
            f"{len(key)} characters were given"
        )
    return key


def load_document(data: bytes, *, max_bytes: int) -> dict[str, Any]:
    """A document that comes alone (the CLI's --document FILE) rather than inside a JSON upload: read as the API
    reads an upload (no NaN or Infinity; too deep a nesting is the nesting rule's error, not Python's), then
    held to check_document. The caller bounds `data`: the CLI reads a file up to max_bytes and no further."""
    try:
        document = json.loads(data, parse_constant=_no_constant)
    except RecursionError:
        raise BadRequest(f"document nests deeper than {MAX_DOCUMENT_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise BadRequest(f"not a JSON document ({exc.msg} at line {exc.lineno})") from None
    except ValueError as exc:  # not UTF-8 (or -16, -32), or a NaN
        raise BadRequest(f"not a JSON document ({str(exc).splitlines()[0][:200]})") from None
    if document is None:
        raise BadRequest("document is null, not a JSON object ({...})")
    check_document(document, max_bytes=max_bytes)
    return document


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


# What a JSON value that is not an object is called in an error.
_JSON_KINDS = {list: "an array", str: "a string", bool: "true or false", int: "a number", float: "a number"}


def check_document(document: Any, *, max_bytes: int) -> None:
    """A document must be storable and sendable back: a JSON object, bounded in nesting, values and bytes; Unicode
    text without NUL (PostgreSQL cannot read a JSON value holding \\u0000, so every comparison with the run
    failed). None is no document."""
    if document is None:
        return
    if not isinstance(document, dict):
        raise BadRequest(f"document is {_JSON_KINDS.get(type(document), 'not an object')}, not a JSON object ({{...}})")
    values = 0
    stack: list[tuple[Any, str, int]] = [(document, "document", 1)]
    while stack:
        item, path, depth = stack.pop()
        values += 1
        if values > MAX_DOCUMENT_VALUES:
            raise BadRequest(f"document holds more than {MAX_DOCUMENT_VALUES} values")
        if isinstance(item, str):
            _check_document_text(item, path)
        elif isinstance(item, float) and not math.isfinite(item):
            # 1e400 reads as infinity: PostgreSQL refuses it in JSON (a 500), and SQLite stores text it cannot
            # read back, so every comparison with the run would fail.
            raise BadRequest(f"document holds a number too large for a double at {path}")
        elif isinstance(item, dict | list):
            if depth > MAX_DOCUMENT_DEPTH:
                raise BadRequest(f"document nests deeper than {MAX_DOCUMENT_DEPTH} levels (at {path})")
            # Paths are cut short as they are built: a long key must not be copied into every path under it.
            if isinstance(item, dict):
                for key, child in item.items():
                    _check_document_text(key, f"{path}.{key[:40]}")
                    stack.append((child, f"{path[:100]}.{key[:40]}", depth + 1))
            else:
                stack.extend((child, f"{path[:100]}[{index}]", depth + 1) for index, child in enumerate(item))
    size = len(json.dumps(document, ensure_ascii=False).encode())
    if size > max_bytes:
        raise PayloadTooLarge(
            f"document is {size} bytes of JSON; the limit is {max_bytes} (BONNIEBOARD_MAX_DOCUMENT_BYTES)"
        )


def _check_document_text(text: str, path: str) -> None:
    if "\x00" in text:
        raise BadRequest(f"{path!r} holds a NUL character (\\u0000), which the database cannot store")
    if not is_unicode(text):
        raise BadRequest(f"{path!r} holds a lone surrogate (\\ud800-\\udfff): it is not Unicode text")
