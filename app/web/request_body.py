"""Reading a request's body: size-limited, time-limited, and a form parsed once per request with the
route's own limits (the CSRF check and the route share that one parse)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import FormParser, MultiPartException, MultiPartParser
from starlette.requests import Request

from app.config import get_settings
from app.errors import AppError, BadRequest, PayloadTooLarge
from app.ingest.name_tags import NamePattern
from app.ingest.validation import (
    MAX_DOCUMENT_VALUES,
    check_document,
    check_filename,
    check_label,
    check_name_pattern,
    check_run_time,
)
from app.limits import MAX_TAGS_PER_RUN
from app.tags import check_tag
from app.web.schemas import JsonUpload

FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


class BodyTimeout(AppError):
    """The client sent its body too slowly (BONNIEBOARD_BODY_TIMEOUT_S)."""

    status = 408


@dataclass(frozen=True, slots=True)
class FormLimits:
    """What one route's form may hold; a text field (a pasted CSV) may be as large as the whole body.
    max_bytes None is BONNIEBOARD_MAX_UPLOAD_BYTES, read when the form is. max_urlencoded_bytes (None: max_bytes)
    bounds the form sent as application/x-www-form-urlencoded, which is parsed into one object per %XX escape:
    32 MiB of escapes took 2.6 GB and 21 s of the event loop, against 154 MB and 0.3 s as multipart."""

    max_bytes: int | None
    max_fields: int
    max_files: int = 0
    max_urlencoded_bytes: int | None = None


@dataclass(slots=True)
class UploadInput:
    csv: bytes
    filename: str | None = None
    document: dict[str, Any] | None = None
    tags: dict[str, str] = field(default_factory=dict)
    label: str | None = None
    name_pattern: NamePattern | None = None
    run_time: datetime | None = None


def content_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def body_chunks(request: Request, max_bytes: int, what: str = "upload") -> AsyncGenerator[bytes, None]:
    """The body as it arrives: 413 as soon as it is known to exceed max_bytes (`what` names the body in the
    answer), 408 when the whole body has not arrived within BONNIEBOARD_BODY_TIMEOUT_S (a slow client holds no
    worker forever)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise PayloadTooLarge(f"{what} is {declared} bytes; the limit is {max_bytes}{_hint(what)}")
    timeout_s = get_settings().body_timeout_s
    deadline = asyncio.get_running_loop().time() + timeout_s
    size = 0
    stream = request.stream()
    try:
        while True:
            # Only the wait for the next chunk is timed: a timeout around the yield would cancel the reader.
            try:
                async with asyncio.timeout_at(deadline):
                    chunk = await anext(stream)
            except StopAsyncIteration:
                return
            except TimeoutError:
                raise BodyTimeout(f"the request body did not arrive within {timeout_s:g} s") from None
            size += len(chunk)
            if size > max_bytes:
                raise PayloadTooLarge(f"{what} is over the limit of {max_bytes} bytes{_hint(what)}")
            yield chunk
    finally:
        await stream.aclose()


URLENCODED_FORM = "a form sent as application/x-www-form-urlencoded"


def _hint(what: str) -> str:
    if what != URLENCODED_FORM:
        return ""
    return "; the page sends this form as multipart/form-data (curl -F), and lines may go to POST /api/runs"


async def read_body(request: Request, max_bytes: int) -> bytes:
    """The whole body, within the size and time limits of body_chunks."""
    return b"".join([chunk async for chunk in body_chunks(request, max_bytes)])


async def read_form(request: Request, limits: FormLimits) -> FormData:
    """The request's form, parsed once (later calls get the same FormData); an empty form for a body
    of another type, which is then not read."""
    cached = getattr(request.state, "form", None)
    if cached is not None:
        return cached
    kind = content_type(request)
    form = FormData()
    if kind in FORM_TYPES:
        max_bytes = get_settings().max_upload_bytes if limits.max_bytes is None else limits.max_bytes
        what = "upload"
        if kind != "multipart/form-data" and limits.max_urlencoded_bytes is not None:
            max_bytes = min(max_bytes, limits.max_urlencoded_bytes)
            what = URLENCODED_FORM
        chunks = body_chunks(request, max_bytes, what)
        try:
            if kind == "multipart/form-data":
                parser: MultiPartParser | FormParser = MultiPartParser(
                    request.headers,
                    chunks,
                    max_files=limits.max_files,
                    max_fields=limits.max_fields,
                    max_part_size=max_bytes,
                )
            else:
                parser = FormParser(request.headers, chunks, max_fields=limits.max_fields, max_part_size=max_bytes)
            form = await parser.parse()
        except MultiPartException as exc:
            raise BadRequest(f"the form cannot be read: {exc.message}") from None
    request.state.form = form
    return form


async def close_form(request: Request) -> None:
    """Close the files a form spooled to disk."""
    form = getattr(request.state, "form", None)
    if form is not None:
        await form.close()


UPLOAD_FORM_FIELDS = 20


async def read_upload(request: Request, max_bytes: int) -> UploadInput:
    """Multipart (file in field `file`), JSON (the runner's form), or anything else as raw CSV."""
    kind = content_type(request)
    if kind == "multipart/form-data":
        form = await read_form(request, FormLimits(max_bytes=max_bytes, max_fields=UPLOAD_FORM_FIELDS, max_files=1))
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise BadRequest("multipart upload has no file in the field 'file'")
        label = form.get("label")
        name_tags = form.get("name_tags")
        return UploadInput(
            csv=await upload.read(),
            filename=check_filename(upload.filename),
            label=check_label(label) if isinstance(label, str) else None,
            name_pattern=check_name_pattern(name_tags) if isinstance(name_tags, str) else None,
        )
    body = await read_body(request, max_bytes)
    if kind == "application/json":
        return _json_upload(body)
    return UploadInput(csv=body)


JSON_FORM = "{'csv': ..., 'document': ..., 'tags': ..., 'label': ..., 'name_tags': ..., 'time': ...}"
# A JSON string, to leave out when counting a body's values; possessive, so an unclosed one costs one pass.
_JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"')
# What a JSON upload holds besides its document: its own keys, csv, label, name_tags and at most 50 tags.
_UPLOAD_VALUES = 2 * MAX_TAGS_PER_RUN + 20


def _json_upload(body: bytes) -> UploadInput:
    """The runner's JSON form; an error names the field. A document's values are counted in the body before it
    is parsed: a million empty lists in 8 MB took 400 MB to read as Python objects."""
    # Every value but the first follows a ',' or opens a container: twice the count bounds an empty container's.
    outside_strings = _JSON_STRING.sub(b"", body)
    values = outside_strings.count(b",") + outside_strings.count(b"[") + outside_strings.count(b"{") + 1
    if values > 2 * MAX_DOCUMENT_VALUES + _UPLOAD_VALUES:
        raise BadRequest(f"JSON upload holds over {values // 2} values; a document may hold {MAX_DOCUMENT_VALUES}")
    try:
        raw = json.loads(body, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"JSON upload is not JSON: {_first_line(exc)}") from None
    if isinstance(raw, dict):  # before the model copies it
        check_document(raw.get("document"), max_bytes=get_settings().max_document_bytes)
    try:
        payload = JsonUpload.model_validate(raw)
    except ValidationError as exc:
        raise BadRequest(f"JSON upload is not of the form {JSON_FORM}: {_field_error(exc)}") from None
    for key, value in payload.tags.items():
        check_tag(key, value)
    return UploadInput(
        csv=payload.csv.encode("utf-8", "surrogatepass"),
        document=payload.document,
        tags=payload.tags,
        label=check_label(payload.label),
        name_pattern=check_name_pattern(payload.name_tags),
        run_time=check_run_time(payload.time),
    )


def _field_error(exc: ValidationError) -> str:
    """`tags.a: Input should be a valid string`: the first error, naming its field."""
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(part) for part in error["loc"]) or "the body"
    return f"{where}: {error['msg']}"[:200]


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200]
