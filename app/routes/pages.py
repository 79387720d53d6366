"""HTML pages. Each renders a whole page, or only its partial when htmx asks (HX-Request)."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from app import queries
from app.auth import PageAuthDep
from app.config import get_settings
from app.db import SessionDep
from app.errors import InvalidUpload
from app.ingest import ingest
from app.parsing import TESTS, TOO_FAST, UNITS, iter_parse_bytes
from app.request_body import check_label, parse_tag_params, read_body
from app.templating import is_htmx, render

router = APIRouter(include_in_schema=False)

PAGE_SIZE = 50
# The figures the runs list shows; the run page shows all twelve.
KEY_TESTS = ("put_block", "rewrite", "get_block", "seeks", "seq_create", "ran_create")


@router.get("/", response_class=HTMLResponse)
def runs_page(
    request: Request,
    session: SessionDep,
    machine: str | None = None,
    tag: Annotated[list[str], Query()] = [],  # noqa: B006
    format: str | None = None,  # noqa: A002
    page: Annotated[int, Query(ge=1)] = 1,
):
    tags = parse_tag_params([t for t in tag if t])
    run_filter = queries.RunFilter(machine=machine or None, tags=tags, format_version=format or None)
    total, runs = queries.list_runs(session=session, run_filter=run_filter, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
    context = {
        "runs": [queries.run_as_dict(run) for run in runs],
        "total": total,
        "page": page,
        "pages": max(1, -(-total // PAGE_SIZE)),
        "filter": {"machine": machine or "", "tag": " ".join(tag), "format": format or ""},
        "key_tests": KEY_TESTS,
        "units": UNITS,
        "too_fast": TOO_FAST,
    }
    return render(request, "_runs_table.html" if is_htmx(request) else "runs.html", context)


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(run_id: int, request: Request, session: SessionDep):
    run = queries.get_run(session=session, run_id=run_id)
    return render(request, "run_detail.html", {"run": queries.run_as_dict(run, with_document=True), "tests": TESTS})


@router.get("/upload", response_class=HTMLResponse)
def upload_page(request: Request, page_auth: PageAuthDep):
    return render(request, "upload.html", {"outcome": None, "auth": page_auth})


@router.post("/upload", response_class=HTMLResponse)
async def upload_submit(request: Request, session: SessionDep, page_auth: PageAuthDep):
    settings = get_settings()
    request._body = await read_body(request, settings.max_upload_bytes)
    form = await request.form(max_files=1, max_fields=20)
    upload = form.get("file")
    data = await upload.read() if hasattr(upload, "read") else b""
    filename = getattr(upload, "filename", None) or None
    pasted = form.get("lines") or ""
    if not data and isinstance(pasted, str):
        data = pasted.encode("utf-8")
        filename = None
    tags = parse_tag_params(str(form.get("tags") or "").split())
    partial = form.get("partial") == "true"
    context = {"outcome": None, "errors": [], "detail": None, "auth": page_auth}
    status_code = 201
    try:
        outcome = ingest(
            session=session,
            items=iter_parse_bytes(data, max_line_bytes=settings.max_line_bytes),
            partial=partial,
            source="page",
            filename=filename,
            label=check_label(str(form.get("label") or "")),
            tags=tags,
        )
        session.commit()
        context.update(outcome=outcome, errors=outcome.errors)
    except InvalidUpload as exc:
        session.rollback()
        context.update(detail=exc.detail, errors=exc.errors)
        status_code = 422
    template = "_upload_result.html" if is_htmx(request) else "upload.html"
    return render(request, template, context, status_code=status_code)
