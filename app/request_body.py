"""Reading an upload out of a request: size-limited, in any of the forms the API accepts."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from starlette.datastructures import UploadFile
from starlette.requests import Request

from app.errors import BadRequest, PayloadTooLarge
from app.schemas import MAX_LABEL_CHARS, MAX_TAG_CHARS, JsonUpload

# The runner's document nests about six levels; far deeper ones could not be sent back (issue #5).
MAX_DOCUMENT_DEPTH = 32


@dataclass(slots=True)
class UploadInput:
    csv: bytes
    filename: str | None = None
    document: dict[str, Any] | None = None
    tags: dict[str, str] = field(default_factory=dict)
    label: str | None = None


async def read_body(request: Request, max_bytes: int) -> bytes:
    """The whole body, refused with 413 as soon as it is known to exceed max_bytes."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise PayloadTooLarge(f"upload is {declared} bytes; the limit is {max_bytes}")
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise PayloadTooLarge(f"upload is over the limit of {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def read_upload(request: Request, max_bytes: int) -> UploadInput:
    """Multipart (file in field `file`), JSON (the runner's form), or anything else as raw CSV."""
    body = await read_body(request, max_bytes)
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == "multipart/form-data":
        request._body = body  # Starlette's form parser then reads this instead of the spent stream.
        form = await request.form(max_files=1, max_fields=20, max_part_size=max_bytes)
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise BadRequest("multipart upload has no file in the field 'file'")
        label = form.get("label")
        return UploadInput(
            csv=await upload.read(),
            filename=check_filename(upload.filename),
            label=check_label(label) if isinstance(label, str) else None,
        )
    if content_type == "application/json":
        try:
            payload = JsonUpload.model_validate(json.loads(body, parse_constant=_no_constant))
            check_document(payload.document)
        except (ValueError, ValidationError, RecursionError) as exc:
            raise BadRequest(f"JSON upload is not of the form {{'csv': ..., 'document': ..., 'tags': ..., 'label': ...}}: {_first_line(exc)}") from None
        for key, value in payload.tags.items():
            check_tag(key, value)
        return UploadInput(
            csv=payload.csv.encode("utf-8", "surrogatepass"),
            document=payload.document,
            tags=payload.tags,
            label=check_label(payload.label),
        )
    return UploadInput(csv=body)


def parse_tag_params(values: list[str]) -> dict[str, str]:
    """`tag=KEY=VALUE` query parameters -> {KEY: VALUE}."""
    tags = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep:
            raise BadRequest(f"tag {item[:50]!r} is not of the form KEY=VALUE")
        check_tag(key, value)
        tags[key] = value
    return tags


def check_tag(key: str, value: str) -> None:
    if not key or len(key) > MAX_TAG_CHARS or len(value) > MAX_TAG_CHARS:
        raise BadRequest(f"a tag needs a key of 1 to {MAX_TAG_CHARS} characters and a value of at most {MAX_TAG_CHARS}")
    if "\x00" in key or "\x00" in value:
        raise BadRequest("a tag may not contain a NUL character")
    if not _is_unicode(key) or not _is_unicode(value):
        raise BadRequest("a tag may not contain a lone surrogate (\\ud800-\\udfff): it is not Unicode text")


def check_filter_text(value: str | None, name: str) -> str | None:
    """A free-text filter (machine, format): it goes to the database, which refuses NUL in text."""
    if value is None:
        return None
    if len(value) > MAX_LABEL_CHARS or "\x00" in value or not _is_unicode(value):
        raise BadRequest(f"{name} is at most {MAX_LABEL_CHARS} characters of Unicode text, with no NUL")
    return value


def check_filename(filename: str | None) -> str | None:
    """An uploaded file's name, kept for the upload's record: cut short, NUL and surrogates refused."""
    if not filename:
        return None
    if "\x00" in filename or not _is_unicode(filename):
        raise BadRequest("the uploaded file's name holds a NUL or is not Unicode text")
    return filename[:MAX_LABEL_CHARS]


def check_label(label: str | None) -> str | None:
    if label is None:
        return None
    if len(label) > MAX_LABEL_CHARS or "\x00" in label or not _is_unicode(label):
        raise BadRequest(f"a label is at most {MAX_LABEL_CHARS} characters of Unicode text, with no NUL")
    return label or None


def check_document(document: Any) -> None:
    """A document must be storable and sendable back: bounded nesting, Unicode text only."""
    if document is None:
        return
    stack = [(document, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > MAX_DOCUMENT_DEPTH:
            raise ValueError(f"the document nests deeper than {MAX_DOCUMENT_DEPTH} levels")
        stack.extend((child, depth + 1) for child in children)
    if not _is_unicode(json.dumps(document, ensure_ascii=False)):
        raise ValueError("the document holds a lone surrogate (\\ud800-\\udfff): it is not Unicode text")


def _is_unicode(text: str) -> bool:
    # JSON's \ud800 escapes decode to lone surrogates, which neither UTF-8 nor the databases take.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200]
