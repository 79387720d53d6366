"""/api: JSON endpoints. Thin: read the request, call one service, shape the answer."""

import logging
from collections.abc import Iterator
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, BackgroundTasks, Depends, Header, Path, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from pydantic import WithJsonSchema
from starlette.convertors import Convertor, register_url_convertor

from app.compare import export_csv, matrix
from app.compare import page as comparisons
from app.compare.comparison import api_answer
from app.compare.request import ComparisonRequest, read_request
from app.config import DEFAULT_MIN_EFFECT, MIN_EFFECT_RANGE, get_settings
from app.ingest.parsing import HEADER_198, TESTS
from app.ingest.secrets_scrub import scrub_document
from app.ingest.sqlite_bulk import ingest_path
from app.ingest.upload import store_upload
from app.ingest.validation import check_idempotency_key, check_label, check_name_pattern, check_run_time
from app.limits import MAX_ID
from app.store import runs as run_store
from app.tags import check_tag, parse_tag_params
from app.web import cache as response_cache
from app.web.deps import RUN_IDS_FILTER_PATTERN, FilterDep, RequestSecretsDep, SessionDep, api_access, own_session
from app.web.detection import detect_after_upload
from app.web.request_body import read_upload
from app.web.schemas import (
    LABEL_PARAM_SCHEMA,
    TAG_PARAM_SCHEMA,
    CompareOut,
    ErrorOut,
    MatrixOut,
    RunDetailOut,
    RunList,
    RunPatch,
    UploadOut,
    run_fields,
)
from app.web.urls import site_url

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api", tags=["runs"], dependencies=[Depends(api_access)])

ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorOut} for status in (400, 401, 403, 404, 408, 413, 422, 503)
}

UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "text/csv": {"schema": {"type": "string"}},
            "text/plain": {"schema": {"type": "string", "description": "CSV lines, or bonnie++'s text report"}},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "file": {"type": "string", "format": "binary"},
                        "label": {"type": "string"},
                        "name_tags": {"type": "string"},
                    },
                    "required": ["file"],
                }
            },
            "application/json": {"schema": {"$ref": "#/components/schemas/JsonUpload"}},
        },
    }
}


RunId = Annotated[int, Path(ge=1, le=MAX_ID)]


class RunIdConvertor(Convertor[int]):
    """`{run_id:run_id}`: at most twenty digits. Starlette's `int` takes any number, and int() of more than 4,300
    digits raises inside the router (a 500). Twenty digits is far past MAX_ID (a 422); a longer path is no run (a
    404)."""

    regex = "[0-9]{1,20}"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("run_id", RunIdConvertor())

# What app.compare.request accepts (it answers 400 itself with a message naming the parameter).
# Empty is allowed: the ids may come as repeated run= instead (one normaliser reads both).
RUN_IDS_SCHEMA = WithJsonSchema({"type": "string", "pattern": RUN_IDS_FILTER_PATTERN})
BASELINE_SCHEMA = WithJsonSchema({"type": "string", "pattern": "^[0-9]{0,10}$"})
MODE_SCHEMA = WithJsonSchema({"type": "string", "enum": ["absolute", "relative"], "default": "absolute"})
TAG_KEY_SCHEMA = WithJsonSchema({"type": "string", "pattern": "^[^ ,=\\x00]{1,200}$"})
GROUP_SCHEMA = WithJsonSchema({"type": "string", "default": "params", "examples": ["params", "none", "fs,raid"]})
# A string in the query (its 400 is the app's, naming the parameter); the default is BONNIEBOARD_MIN_EFFECT's.
MIN_EFFECT_SCHEMA = WithJsonSchema({"type": "string", "examples": [f"{DEFAULT_MIN_EFFECT:g}", "1.1"]})
MIN_EFFECT_QUERY = Query(
    description=f"the smallest ratio (either way, {MIN_EFFECT_RANGE[0]:g} to {MIN_EFFECT_RANGE[1]:g}) a verdict "
    f"calls better or worse; default BONNIEBOARD_MIN_EFFECT ({DEFAULT_MIN_EFFECT:g} unless set); asv uses 1.1"
)


@router.post(
    "/runs",
    status_code=201,
    response_model=UploadOut,
    responses={
        **ERRORS,
        200: {"model": UploadOut, "description": "the Idempotency-Key's upload, stored before: nothing stored now"},
    },
    openapi_extra=UPLOAD_BODY,
)
async def post_runs(
    request: Request,
    background: BackgroundTasks,
    session: SessionDep,
    secrets: RequestSecretsDep,
    tag: Annotated[list[Annotated[str, TAG_PARAM_SCHEMA]], Query(description="KEY=VALUE; repeatable")] = [],  # noqa: B006 - FastAPI copies the default per request
    label: Annotated[str | None, LABEL_PARAM_SCHEMA] = None,
    partial: bool = False,
    name_tags: Annotated[
        str | None, Query(description="a name pattern: each line's machine name gives tags, e.g. raid{raid}_{fs}")
    ] = None,
    time: Annotated[
        str | None,
        Query(
            description="when the runs were measured, ISO 8601 (e.g. 2026-11-28T02:00:00Z): their time on history "
            "when no runner document gives its start time; default: now"
        ),
    ] = None,
    idempotency_key: Annotated[
        str | None,
        Header(
            description="names this upload: sent again with the same key, it is answered with the runs stored "
            "the first time (200, replayed=true) and nothing is stored"
        ),
    ] = None,
):
    """Store bonnie++ CSV lines (or bonnie++'s text report, turned into them): raw text, multipart field
    `file`, or the runner's JSON form."""
    settings = get_settings()
    upload = await read_upload(request, settings.max_upload_bytes)
    tags = parse_tag_params(tag) | upload.tags
    name_pattern = upload.name_pattern or check_name_pattern(name_tags)
    # No token reaches the database, or the log of a failed write quoting the row. Off the event loop: a document
    # may hold 20,000 strings.
    document = None if upload.document is None else await run_in_threadpool(scrub_document, upload.document, secrets)
    # Parsing and storing take a while for a big upload: off the event loop, so this worker keeps
    # answering other requests meanwhile: a GET must not wait for an upload.
    outcome = await store_upload(
        session=session,
        data=upload.csv,
        max_line_bytes=settings.max_line_bytes,
        partial=partial,
        source="api",
        filename=upload.filename,
        label=upload.label or check_label(label),
        tags=tags,
        name_pattern=name_pattern,
        document=document,
        idempotency_key=check_idempotency_key(idempotency_key),
        run_time=upload.run_time or check_run_time(time),
    )
    # The answer is encoded off the event loop too: FastAPI would check and encode 100,000 run ids on it, 10-25 ms
    # in which every other request of this worker waits.
    body = await run_in_threadpool(_upload_json, outcome)
    if outcome.created:
        # After the answer: the upload is committed, and the client does not wait for the analysis.
        background.add_task(detect_after_upload, outcome.upload_id)
    return Response(body, status_code=200 if outcome.replayed else 201, media_type="application/json")


def _upload_json(outcome: Any) -> bytes:
    return UploadOut.model_validate(outcome, from_attributes=True).model_dump_json().encode()


@router.get("/runs", response_model=RunList, responses=ERRORS)
def get_runs(
    session: SessionDep,
    run_filter: FilterDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
    before: Annotated[
        int | None,
        Query(
            ge=1,
            le=MAX_ID,
            description="only runs with smaller ids: the next page "
            "starts before the last id of this one, as fast deep down as at the top",
        ),
    ] = None,
):
    """Stored runs, newest first. `total` is exact up to 10,000 matches; beyond, `total_is_estimate` is true
    and `total` is 10,000 for a filtered list (at least that many) or the database's estimate for all runs."""
    page = run_store.list_runs(session=session, run_filter=run_filter, limit=limit, offset=offset, before=before)
    listed = RunList.model_validate(
        {
            "total": page.total,
            "total_is_estimate": page.total_is_estimate,
            "items": [run_fields(dict(zip(run._fields, run, strict=True)), page.tags[run.id]) for run in page.runs],
        }
    )
    # Checked above; FastAPI would check and encode the page a second time.
    return Response(listed.model_dump_json(), media_type="application/json")


@router.get("/runs/export.csv", response_class=Response, responses=ERRORS)
def export_runs(
    run_filter: FilterDep,
    header: Annotated[
        bool,
        Query(
            description="1: bonnie++'s own header line first (format_version,bonnie_version,..., as bonnie++ 2.00a "
            "prints it before a -x run's lines; bon_csv2html and uploads skip it). Default: no header, only the "
            "lines exactly as uploaded"
        ),
    ] = False,
):
    """Every matching run's line exactly as uploaded, oldest first (`runs=1,2,3`: only those), streamed as
    it is read; with `header=1`, after bonnie++'s header line."""

    # Each batch in a session of its own (run_store.export_batches says why), without the read timeout: a
    # million lines take longer than a page.
    def body() -> Iterator[str]:
        if header:
            yield f"{HEADER_198}\n"
        for lines in run_store.export_batches(sessions=own_session, run_filter=run_filter):
            yield "".join(f"{line}\n" for line in lines)

    # A file to save, named as one: the lines are exactly as uploaded, so a spreadsheet must import them as text
    # (README, "Compare configurations": its exports).
    return StreamingResponse(
        body(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="bonnieboard-runs.csv"'},
    )


@router.get("/runs/{run_id:run_id}", response_model=RunDetailOut, responses=ERRORS)
def get_run(run_id: RunId, session: SessionDep):
    return RunDetailOut.from_run(run_store.get_run(session=session, run_id=run_id))


@router.patch("/runs/{run_id:run_id}", response_model=RunDetailOut, responses=ERRORS)
def patch_run(run_id: RunId, patch: RunPatch, session: SessionDep):
    changes = patch.model_dump(include=patch.model_fields_set)
    if "label" in changes:
        changes["label"] = check_label(changes["label"])
    for key, value in (changes.get("tags") or {}).items():
        check_tag(key, value)
    run = run_store.update_run(session=session, run_id=run_id, changes=changes)
    session.commit()
    return RunDetailOut.from_run(run)


@router.delete("/runs/{run_id:run_id}", status_code=204, responses=ERRORS)
def delete_run(run_id: RunId, session: SessionDep):
    run_store.delete_run(session=session, run_id=run_id)
    session.commit()
    return Response(status_code=204)


async def comparison_query(
    runs: Annotated[
        str | None, RUN_IDS_SCHEMA, Query(description="run ids separated by commas, e.g. 1,2,3 (at most 100)")
    ] = None,
    run: Annotated[list[str], Query(description="a run id; repeatable, as the runs list's checkboxes send it")] = [],  # noqa: B006 - FastAPI copies the default per request
    baseline: Annotated[
        str | None, BASELINE_SCHEMA, Query(description="one of the runs; its configuration is the baseline")
    ] = None,
    mode: Annotated[str | None, MODE_SCHEMA] = None,
    group: Annotated[
        str | None, GROUP_SCHEMA, Query(description="params (default), none, or tag keys: fs,raid")
    ] = None,
    min_effect: Annotated[str | None, MIN_EFFECT_SCHEMA, MIN_EFFECT_QUERY] = None,
) -> ComparisonRequest:
    """The query of /api/compare and /api/compare.csv, read by the normaliser the /compare page uses too.
    Async though it waits for nothing: a sync dependency costs a thread hop."""
    return read_request(runs=[runs or "", *run], mode=mode, baseline=baseline, group=group, min_effect=min_effect)


ComparisonQueryDep = Annotated[ComparisonRequest, Depends(comparison_query)]


def _compare_json(query: ComparisonRequest, gzipped: bool) -> bytes:
    # orjson directly: FastAPI's generic encoder, and even json.dumps, cost as much as the statistics
    # of a 100-run comparison (a few hundred KB of numbers).
    body = comparisons.cached(
        ("/api/compare", query),
        lambda session: response_cache.Body(
            orjson.dumps(api_answer(comparisons.page_data(session, query, strict=True).answer()))
        ),
        response_cache.Body.size_bytes,
    )
    return body.gzipped() if gzipped else body.data


@router.get("/compare", response_model=CompareOut, responses=ERRORS)
async def get_compare(request: Request, query: ComparisonQueryDep):
    """The numbers behind the comparison charts; the /compare page draws exactly these. Runs form
    configurations (`group`); per chart, test and configuration: N, mean, median, SD, CV %, 95 % CI,
    and against the baseline configuration the ratio of means, its 95 % CI and a verdict."""
    # One thread hop for the whole read (session, data generation, cache or computation), where a sync
    # route with SessionDep takes three; the answer (and its gzip) is cached until the data changes.
    gzipped = response_cache.accepts_gzip(request.headers.get("accept-encoding"))
    body = await run_in_threadpool(_compare_json, query, gzipped)
    return Response(body, media_type="application/json", headers=response_cache.encoding_headers(gzipped))


@router.get("/compare.csv", response_class=Response, responses=ERRORS)
def get_compare_csv(session: SessionDep, query: ComparisonQueryDep):
    """The numbers of GET /api/compare (same query) as CSV: one row per chart, test and configuration."""
    return Response(
        export_csv.compare_csv(comparisons.page_data(session, query, strict=True).answer()),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="bonnieboard-compare.csv"'},
    )


@router.get("/matrix", response_model=MatrixOut, responses=ERRORS)
async def get_matrix(
    http_request: Request,
    rows: Annotated[
        str,
        TAG_KEY_SCHEMA,
        Query(
            description="the tag key whose values are the rows, e.g. raid", openapi_examples={"raid": {"value": "raid"}}
        ),
    ],
    cols: Annotated[
        str,
        TAG_KEY_SCHEMA,
        Query(
            description="the tag key whose values are the columns, e.g. fs", openapi_examples={"fs": {"value": "fs"}}
        ),
    ],
    test: Annotated[
        str,
        WithJsonSchema({"type": "string", "enum": list(TESTS)}),
        Query(description="the bonnie++ test of the cells"),
    ] = matrix.DEFAULT_TEST,
    runs: Annotated[
        str | None, RUN_IDS_SCHEMA, Query(description="run ids; default: the newest 100 runs with both tags")
    ] = None,
    baseline: Annotated[str | None, BASELINE_SCHEMA, Query(description="a run; its cell is the baseline")] = None,
    min_effect: Annotated[str | None, MIN_EFFECT_SCHEMA, MIN_EFFECT_QUERY] = None,
    tag: Annotated[
        list[str],
        Query(
            description="without runs: only runs with this KEY=VALUE tag (repeatable). Without it the sample data "
            "(source=sample_data) is left out whenever other runs have both tags"
        ),
    ] = [],  # noqa: B006 - FastAPI copies the default per request
):
    """Configurations pivoted by two tag keys: per cell the mean of `test` with N, 95 % CI and the
    verdict against the baseline cell, and per family the geometric mean of the ratios to it."""
    request = matrix.read_request(
        rows=rows, cols=cols, test=test, runs=[runs or ""], baseline=baseline, min_effect=min_effect, tags=tag
    )
    gzipped = response_cache.accepts_gzip(http_request.headers.get("accept-encoding"))
    body = await run_in_threadpool(_matrix_json, request, gzipped)
    return Response(body, media_type="application/json", headers=response_cache.encoding_headers(gzipped))


def _matrix_json(request: matrix.MatrixRequest, gzipped: bool) -> bytes:
    # orjson, as /api/compare: MatrixOut documents the body (and the tests check it against the schema). Cached
    # as /api/compare is, until the data changes.
    body = comparisons.cached(
        ("/api/matrix", request, site_url("/")),
        lambda session: response_cache.Body(orjson.dumps(_matrix_answer(session, request))),
        response_cache.Body.size_bytes,
    )
    return body.gzipped() if gzipped else body.data


def _matrix_answer(session, request: matrix.MatrixRequest) -> dict:
    answer = comparisons.matrix_of(session, request)
    # A path on the board as this server is reached: under its root path.
    return {**answer, "compare_url": site_url(answer["compare_url"])}


@router.get("/health")
def health():
    """A trivial answer: the reference the benchmarks measure other endpoints against. `ingest_path` says whether
    uploads store their plain lines through the compiled extension or the Python parser (a cached setting
    and a module attribute read: nothing touched)."""
    return {"status": "ok", "ingest_path": ingest_path()}
