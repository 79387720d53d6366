"""HTML pages. Each renders a whole page, or only its partial when htmx asks (HX-Request)."""

import functools
from dataclasses import dataclass
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, BackgroundTasks, Depends, Path, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from markupsafe import Markup
from sqlalchemy.orm import Session
from starlette.datastructures import FormData, UploadFile

from app import bonnie
from app.bonnie import STATUS_TOO_FAST, TESTS, UNITS
from app.compare import matrix
from app.compare import page as comparisons
from app.compare.request import (
    ABSOLUTE,
    ComparisonRequest,
    of_runs,
    parse_run_ids,
    permalink,
    read_page_request,
    read_request,
)
from app.config import get_settings
from app.errors import BadRequest, InvalidUpload
from app.ingest.documents import limiters_of, line_facts
from app.ingest.upload import store_upload
from app.ingest.validation import check_filename, check_filter_text, check_label, check_name_pattern, tags_of_rows
from app.limits import MAX_ID, MAX_TAG_CHARS
from app.store import runs as run_store
from app.store import samples
from app.tags import parse_tag_filters, parse_tag_params, split_tag_terms
from app.web import cache, heat_html
from app.web.deps import PageAuthDep, SessionDep, check_machine_text, csrf_form, page_access
from app.web.detection import detect_after_upload
from app.web.document_view import document_view
from app.web.request_body import FormLimits
from app.web.schemas import RunDetailOut
from app.web.templating import is_htmx, render, templates
from app.web.upload_lines import lines_at
from app.web.urls import app_path, redirect, site_url

router = APIRouter(include_in_schema=False, dependencies=[Depends(page_access)])

PAGE_SIZE = 50


def wants_partial(request: Request) -> bool:
    """An htmx request for a fragment. History restores (Back after a pushed URL) and requests
    that target <body> get the whole page."""
    return (
        is_htmx(request)
        and request.headers.get("hx-request-type") != "full"
        and request.headers.get("hx-history-restore-request") != "true"
    )


@router.get("/", response_class=HTMLResponse)
def runs_page(
    request: Request,
    machine: str | None = None,
    tag: Annotated[list[str], Query()] = [],  # noqa: B006 - FastAPI copies the default per request
    format: str | None = None,
    page: Annotated[int, Query(ge=1, le=MAX_ID)] = 1,
    runs: str = "",
    run: Annotated[list[str], Query()] = [],  # noqa: B006 - FastAPI copies the default per request
    sort: str = "newest",
    before: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
    after: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
    at_machine: str | None = None,
    skip: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
):
    # The filter form's one text box holds "raid=5 fs=xfs"; links repeat tag= instead.
    tag_terms = [term for value in tag for term in split_tag_terms(value)]
    run_filter, filter_error = _read_filter(machine, tag_terms, format, at_machine)
    # The ticked runs, in the order they were ticked (static/runs.js keeps `runs=`; the boxes' run= add
    # to it without script): they survive filter changes, and the first one is the comparison's baseline.
    try:
        chosen = parse_run_ids([runs, *run], limit=None)
    except BadRequest as exc:
        chosen, filter_error = [], exc.detail
    if sort not in run_store.RUN_ORDERS:
        sort, filter_error = "newest", f"sort must be one of {', '.join(run_store.RUN_ORDERS)}"
    # "older" (newest first) and "newer" (oldest first) links carry a keyset cursor, before= or after= the last
    # id shown: page 20,000 costs what page 1 does. By name, "next" carries the last machine shown and how many
    # of its runs were shown (at_machine=, skip=): a page skips whole machines through their index and sorts the
    # runs of the machines it shows, not all those before it. page= still works (deep by name, it starts from
    # the machine its position falls in: run_store.list_runs), and so does page= with a cursor.
    cursor = {"newest": before, "oldest": after, "name": at_machine}[sort]
    # Each order reads its own cursor only (run_store.list_runs); skip counts within at_machine's runs.
    offset = (page - 1) * PAGE_SIZE + (skip if sort == "name" and at_machine is not None else 0)
    listing = _Listing(run_filter, sort, page, offset, before, after, at_machine, wants_partial(request))
    context = {
        "chosen": chosen,
        "sort": sort,
        "sorts": {"newest": "newest first", "oldest": "oldest first", "name": "by name"},
        "filtered": run_filter != run_store.RunFilter(),
        "page": page,
        "cursor": cursor,
        "filter": {"machine": machine or "", "tag": " ".join(tag_terms), "tags": tag_terms, "format": format or ""},
        "filter_error": filter_error,
        "key_tests": bonnie.HEADLINE_TESTS,
        "units": UNITS,
        "too_fast": STATUS_TOO_FAST,
    }
    if filter_error:
        empty: dict[str, Any] = {"samples": None, "runs": [], "total": 0, "total_is_estimate": False, "pages": 1}
        return _with_vary(render(request, listing.template, context | empty, status_code=400))
    # Kept as the comparisons are (app/compare/page.py's cached(): per worker, under the data's stamp, which every
    # write replaces), keyed by all it is made from: what the URL asks and whether htmx asks a part.
    asked = (machine, tuple(tag_terms), format, page, tuple(chosen), sort, before, after, at_machine, skip)
    key = ("/", listing.partial, request.scope.get("root_path", ""), asked)
    # Not re-made after each write, as comparisons are: a list costs its first reader tens of milliseconds, and
    # remaking the last views served after every upload would be work for pages nobody may read again.
    made = functools.partial(_runs_list_body, request, listing, context)
    body = comparisons.cached(key, made, cache.Body.size_bytes, rewarm=False)
    gzipped = cache.accepts_gzip(request.headers.get("accept-encoding"))
    return _with_vary(HTMLResponse(body.gzipped() if gzipped else body.data, headers=cache.encoding_headers(gzipped)))


def _read_filter(
    machine: str | None, tag_terms: list[str], format: str | None, at_machine: str | None
) -> tuple[run_store.RunFilter, str | None]:
    """The runs a list's URL asks for, and what is wrong with it (the page then lists nothing and says so)."""
    try:
        tags = parse_tag_filters(tag_terms)
        check_machine_text(machine, "machine")
        check_filter_text(format, "format")
        check_machine_text(at_machine, "at_machine")
    except BadRequest as exc:
        return run_store.RunFilter(machine=machine or None, format_version=format or None), exc.detail
    return run_store.RunFilter(machine=machine or None, tags=tags, format_version=format or None), None


@dataclass(frozen=True, slots=True)
class _Listing:
    """What a runs list page reads and in which order, from its URL."""

    run_filter: run_store.RunFilter
    sort: str
    page: int
    offset: int
    before: int | None
    after: int | None
    at_machine: str | None
    partial: bool  # htmx asks for the table only

    @property
    def template(self) -> str:
        return "_runs_table.html" if self.partial else "runs.html"


def _runs_list_body(request: Request, listing: _Listing, context: dict[str, Any], session: Session) -> cache.Body:
    """The runs list page (or its table) as kept: rendered for a request that holds only the root path."""
    listed = run_store.list_run_rows(
        session=session,
        run_filter=listing.run_filter,
        limit=PAGE_SIZE + 1,
        offset=listing.offset,
        before=listing.before,
        after=listing.after,
        at_machine=listing.at_machine,
        order=listing.sort,
    )
    comparisons.reads_beyond_named_runs()  # a list shows the newest runs: every write changes it
    found, total, sort = listed.runs[:PAGE_SIZE], listed.total, listing.sort
    more = len(listed.runs) > PAGE_SIZE
    by_name_cursor = more and sort == "name" and (listing.at_machine is not None or listing.page == 1)
    # The way in for a new board: what the sample data is, and a comparison of each of its studies.
    first_screen = not listing.partial and listing.run_filter == run_store.RunFilter() and context["cursor"] is None
    sample = samples.sample_data(session=session) if first_screen and listing.page == 1 else None
    shown = context | {
        "samples": sample,
        "study_urls": {study.name: _study_url(study) for study in sample.studies} if sample else {},
        "runs": found,
        "total": total,
        "total_is_estimate": listed.total_is_estimate,
        "older_before": found[-1].id if more and sort == "newest" else None,
        "newer_after": found[-1].id if more and sort == "oldest" else None,
        "next_by_name": _next_by_name(found, listing.at_machine, listing.offset) if by_name_cursor else None,
        # Offset paging: page=N was typed (the runs of the last machine on the pages before are not known).
        "next_page": listing.page + 1 if more and sort == "name" and not by_name_cursor else None,
        "pages": max(1, -(-total // PAGE_SIZE)),
    }
    html = templates.get_template(listing.template).render(shown, request=_layout_request(request, "/"))
    return cache.Body(html.encode())


def _with_vary(response: Response) -> Response:
    # The same URL answers with a whole page or a fragment, depending on HX-Request.
    response.headers["Vary"] = "HX-Request"
    return response


def _layout_request(request: Request, path: str) -> Request:
    """A request that holds only what the layout's links need (the app and the root path), never the browser's
    cookies or headers: a page rendered with it may be kept and served to every reader."""
    scope = {"type": "http", "method": "GET", "app": request.app, "path": path, "headers": []}
    return Request(scope | {"root_path": request.scope.get("root_path", "")})


def _study_url(study: samples.Study) -> str:
    return permalink(of_runs(study.run_ids, study.group_keys))


def _next_by_name(found: list[run_store.ListedRun], at_machine: str | None, skipped: int) -> dict[str, str | int]:
    """The next page's cursor by name: the last machine shown, and how many of its runs have been shown (the
    page's last ones, and the `skipped` before it when the page began with at_machine's)."""
    machine = found[-1].machine
    shown = next((i for i, run in enumerate(reversed(found)) if run.machine != machine), len(found))
    return {"at_machine": machine, "skip": shown + (skipped if machine == at_machine else 0)}


@router.get("/compare", response_class=HTMLResponse)
async def compare_page(
    request: Request,
    runs: str = "",
    run: Annotated[list[str], Query(description="a run id; repeated, as the runs list's checkboxes send it")] = [],  # noqa: B006 - FastAPI copies the default per request
    add: str = "",
    remove: str = "",
    baseline: str = "",
    mode: str = ABSOLUTE,
    group: str = "",
    min_effect: str = "",
):
    """Everything shown is in the URL: /compare?runs=1,2,3&baseline=1&mode=relative&group=fs,raid&min_effect=1.1
    (app/compare/request.py reads it, as it does for /api/compare). Other forms of it (the runs
    list's run=1&run=2, the page's own add=/remove=) are answered with that URL: a redirect for a
    browser, HX-Push-Url for htmx."""
    read = read_page_request(
        runs=[runs, *run], add=add, remove=remove, mode=mode, baseline=baseline, group=group, min_effect=min_effect
    )
    # One thread hop for the database work (whose result is cached until the data changes) and the response.
    return await run_in_threadpool(_compare_response, request, read.asked, read.notice)


def _compare_response(request: Request, asked: ComparisonRequest, notice: str | None) -> Response:
    shown = _compare_fragment(asked, notice)
    partial = wants_partial(request)
    if (
        not partial
        and not shown.notice
        and app_path(request.scope) + (f"?{request.url.query}" if request.url.query else "") != shown.url
    ):
        return redirect(shown.url)
    head = tail = b""
    headers = {"HX-Push-Url": site_url(shown.url)} if partial else {}
    if not partial:
        # The page around the cached fragment is rendered per request (it is the request's: root path,
        # and whatever the layout may one day show of a session); the fragment's bytes go in untouched,
        # as a copy through Jinja and str.encode cost more than the rest of the request (non-ASCII text).
        shell = templates.get_template("compare.html").render(
            request=request, fragment=Markup(FRAGMENT_SLOT), url=shown.url, count=shown.count
        )
        head_text, tail_text = shell.split(FRAGMENT_SLOT)
        head, tail = head_text.encode(), tail_text.encode()
    gzipped = cache.accepts_gzip(request.headers.get("accept-encoding"))
    body = shown.html.gzipped(head, tail) if gzipped else b"".join((head, shown.html.data, tail))
    headers |= cache.encoding_headers(gzipped)
    # The same URL answers with a whole page or a fragment, depending on HX-Request.
    headers["Vary"] += ", HX-Request"
    return HTMLResponse(body, headers=headers)


FRAGMENT_SLOT = "<!-- the comparison -->"


@dataclass(frozen=True, slots=True)
class CompareFragment:
    """The /compare page's content (templates/_compare.html) for one request, the same for every reader."""

    url: str  # the view's permalink
    settled: ComparisonRequest  # the request that permalink spells
    notice: str | None
    count: int  # runs found
    html: cache.Body  # UTF-8


def _compare_fragment(asked: ComparisonRequest, notice: str | None) -> CompareFragment:
    root = site_url("/")  # the fragment's links are under the root path
    return comparisons.cached(
        ("/compare", asked, notice, root),
        lambda session: _render_compare(session, asked, notice),
        lambda fragment: fragment.html.size_bytes() + len(fragment.url),
        # A link spelt otherwise is redirected to the permalink, whose request renders the same fragment: it is
        # kept under that request too, so the redirect costs no second comparison.
        also=lambda fragment: None if fragment.notice else ("/compare", fragment.settled, None, root),
    )


def _render_compare(session: Session, asked: ComparisonRequest, notice: str | None) -> CompareFragment:
    shown = comparisons.page_data(session, asked, strict=False)
    notice = shown.missing_notice or notice
    context = comparisons.page_context(shown, notice)
    if "chart_data" in context:
        context["embedded"] = script_json(context.pop("chart_data"))
    html = templates.get_template("_compare.html").render(context)
    return CompareFragment(shown.url, shown.request, notice, len(shown.figures), cache.Body(html.encode()))


# The compare page's big tables, fetched when their fold opens (templates/_compare.html): path -> template, title.
COMPARE_TABLES = {
    "setup": ("_compare_setup.html", "Setup of the runs compared"),
    "figures": ("_compare_figures.html", "Every figure of the comparison"),
}


@router.get("/compare/setup", response_class=HTMLResponse)
async def compare_setup(
    request: Request, runs: str = "", baseline: str = "", mode: str = ABSOLUTE, group: str = "", min_effect: str = ""
):
    """The setup table of the /compare view with this query: the fragment its fold loads (htmx), or a page."""
    asked = read_request(runs=[runs], mode=mode, baseline=baseline, group=group, min_effect=min_effect)
    return await run_in_threadpool(_compare_table_response, request, "setup", asked)


@router.get("/compare/figures", response_class=HTMLResponse)
async def compare_figures(
    request: Request, runs: str = "", baseline: str = "", mode: str = ABSOLUTE, group: str = "", min_effect: str = ""
):
    """The tables of every figure of the /compare view with this query: the fragment its fold loads (htmx), or a
    page of its own (the fold's link without JavaScript)."""
    asked = read_request(runs=[runs], mode=mode, baseline=baseline, group=group, min_effect=min_effect)
    return await run_in_threadpool(_compare_table_response, request, "figures", asked)


def _compare_table_response(request: Request, table: str, asked: ComparisonRequest) -> Response:
    shown = comparisons.cached(
        (f"/compare/{table}", asked, site_url("/")),  # the fragment's links are under the root path
        lambda session: _render_compare_table(session, table, asked),
        lambda fragment: fragment.html.size_bytes() + len(fragment.url),
    )
    head = tail = b""
    if not wants_partial(request):
        shell = templates.get_template("compare_table.html").render(
            request=request,
            fragment=Markup(FRAGMENT_SLOT),
            url=shown.url,
            notice=shown.notice,
            title=COMPARE_TABLES[table][1],
        )
        head_text, tail_text = shell.split(FRAGMENT_SLOT)
        head, tail = head_text.encode(), tail_text.encode()
    gzipped = cache.accepts_gzip(request.headers.get("accept-encoding"))
    body = shown.html.gzipped(head, tail) if gzipped else b"".join((head, shown.html.data, tail))
    headers = cache.encoding_headers(gzipped)
    headers["Vary"] += ", HX-Request"
    return HTMLResponse(body, headers=headers)


def _render_compare_table(session: Session, table: str, asked: ComparisonRequest) -> CompareFragment:
    shown = comparisons.page_data(session, asked, strict=False)
    context = comparisons.table_context(shown, table)
    if "table" in context:
        context["heat_cells"] = [
            heat_html.section_cells(context["table"], part) for part in context["table"]["sections"]
        ]
    html = templates.get_template(COMPARE_TABLES[table][0]).render(context)
    return CompareFragment(
        shown.url, shown.request, shown.missing_notice, len(shown.figures), cache.Body(html.encode())
    )


# What may not appear as such inside <script>: "</script>", "<!--"; & and ' for good measure (as Jinja's tojson).
_SCRIPT_ESCAPES = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"), (b"'", b"\\u0027"))


def script_json(value: Any) -> Markup:
    """`value` as JSON for a <script type="application/json"> block: compact (Jinja's tojson puts a space
    after every comma and colon, 15 % of a comparison's bytes) and safe inside the element."""
    text = orjson.dumps(value)
    for character, escaped in _SCRIPT_ESCAPES:
        text = text.replace(character, escaped)
    return Markup(text.decode())


@router.get("/matrix", response_class=HTMLResponse)
async def matrix_page(
    request: Request,
    rows: str = "",
    cols: str = "",
    test: str = matrix.DEFAULT_TEST,
    runs: str = "",
    baseline: str = "",
    min_effect: str = "",
    tag: Annotated[list[str], Query()] = [],  # noqa: B006 - FastAPI copies the default per request
):
    """/matrix?rows=raid&cols=fs&test=put_block[&runs=...|&tag=study=x&baseline=RUN&min_effect=1.1]: the sweep as a
    table of configurations (app/compare/matrix.py builds it, as for /api/matrix), with one small chart per row."""
    context: dict = {"tests": TESTS, "rows": rows, "cols": cols, "test": test, "error": None, "m": None, "tags": tag}
    if not (rows or cols):
        return render(request, "matrix.html", context)
    try:
        asked = matrix.read_request(
            rows=rows, cols=cols, test=test, runs=[runs], baseline=baseline, min_effect=min_effect, tags=tag
        )
        # One thread hop for the stamp, the cache and, on a miss, the database and the rendering.
        body = await run_in_threadpool(_matrix_page_body, request, asked, context)
    except BadRequest as exc:
        return render(request, "matrix.html", context | {"error": exc.detail}, status_code=400)
    gzipped = cache.accepts_gzip(request.headers.get("accept-encoding"))
    return HTMLResponse(body.gzipped() if gzipped else body.data, headers=cache.encoding_headers(gzipped))


def _matrix_page_body(request: Request, asked: matrix.MatrixRequest, context: dict[str, Any]) -> cache.Body:
    """The whole matrix page, cached as the comparisons are: it is rendered for a request that holds only the
    root path (the layout's links need it), never the browser's cookies or headers, so every reader may get it."""
    layout_request = _layout_request(request, "/matrix")

    def make(session: Session) -> cache.Body:
        shown = context | comparisons.matrix_context(session, asked)
        return cache.Body(templates.get_template("matrix.html").render(shown, request=layout_request).encode())

    return comparisons.cached(("/matrix", asked, layout_request.scope["root_path"]), make, cache.Body.size_bytes)


# The newest runs, offered when adding runs to a comparison.
RECENT_RUNS = 30


@router.get("/compare/recent", response_class=HTMLResponse)
def compare_recent(request: Request, session: SessionDep, runs: str = ""):
    """The newest runs not in the comparison of `runs`: the options of its "Add runs" box, which the page loads
    (htmx) apart from the cached comparison, as a new upload changes them and not the comparison."""
    exclude = parse_run_ids([runs])
    recent = run_store.recent_runs(session=session, limit=RECENT_RUNS, exclude=exclude)
    return render(request, "_recent_runs.html", {"recent": recent})


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(
    run_id: Annotated[int, Path(ge=1, le=MAX_ID)], request: Request, session: SessionDep, page_auth: PageAuthDep
):
    run = run_store.get_run(session=session, run_id=run_id)
    return render(request, "run_detail.html", _run_context(RunDetailOut.from_run(run), page_auth))


def _run_context(run: RunDetailOut, page_auth, **extra) -> dict:
    document = run.document
    this_line = line_facts(document.get("runs"), run.raw_line) if isinstance(document, dict) else None
    # The runner's evidence of what limited each test of this line, beside its result.
    limiters = limiters_of(this_line.get("tests")) if this_line else {}
    context = {
        "run": run,
        "tests": TESTS,
        "auth": page_auth,
        "document_view": None if document is None else document_view(document, this_line),
        "compare_url": permalink(of_runs([run.id])),
        "limiters": limiters,
        "form": None,
        "message": None,
        "error": None,
    }
    return context | extra


# A run's tag form: a label, and key/value rows; a hostile form cannot make the page parse thousands.
MAX_TAG_ROWS = 100
TAG_FORM = FormLimits(max_bytes=MAX_TAG_ROWS * 2 * (MAX_TAG_CHARS * 4 + 32) + 8192, max_fields=MAX_TAG_ROWS * 2 + 5)
TagFormDep = Annotated[FormData, Depends(csrf_form(TAG_FORM))]
# The upload form: a file or pasted lines, up to BONNIEBOARD_MAX_UPLOAD_BYTES, and a few small fields. The page
# sends it as multipart; urlencoded (a script's) is parsed into an object per %XX escape, so it is kept small.
UPLOAD_FORM_URLENCODED_BYTES = 64 * 1024
UPLOAD_FORM = FormLimits(max_bytes=None, max_fields=20, max_files=1, max_urlencoded_bytes=UPLOAD_FORM_URLENCODED_BYTES)
UploadFormDep = Annotated[FormData, Depends(csrf_form(UPLOAD_FORM))]


# A plain function, run in a worker thread: the save may wait for the database's write lock (an upload holds it
# for seconds), and other requests must not wait with it.
@router.post("/runs/{run_id}/tags", response_class=HTMLResponse)
def run_tags_submit(
    run_id: Annotated[int, Path(ge=1, le=MAX_ID)],
    request: Request,
    session: SessionDep,
    page_auth: PageAuthDep,
    form: TagFormDep,
):
    """Replace a run's label and tag set from the run page's form (like PATCH /api/runs/{id})."""
    keys, values = [str(k) for k in form.getlist("key")], [str(v) for v in form.getlist("value")]
    label = str(form.get("label") or "").strip()
    error = None
    try:
        changes = {"label": check_label(label or None), "tags": tags_of_rows(keys, values)}
    except BadRequest as exc:
        error = exc.detail
    if error is None:
        run = run_store.update_run(session=session, run_id=run_id, changes=changes)
        session.commit()
        if not wants_partial(request):
            return redirect(f"/runs/{run_id}")
        context = _run_context(RunDetailOut.from_run(run), page_auth, message="Saved.")
        return render(request, "_run_tags.html", context)
    run_data = RunDetailOut.from_run(run_store.get_run(session=session, run_id=run_id))
    typed = {
        "label": label,
        "rows": [(k, v) for k, v in zip(keys, values, strict=False) if k.strip() or v.strip()],
    }
    context = _run_context(run_data, page_auth, form=typed, error=error)
    return render(request, "_run_tags.html" if wants_partial(request) else "run_detail.html", context, status_code=422)


@router.get("/upload", response_class=HTMLResponse)
def upload_page(request: Request, page_auth: PageAuthDep):
    return render(request, "upload.html", {"outcome": None, "auth": page_auth})


@router.post("/upload", response_class=HTMLResponse)
async def upload_submit(
    request: Request, background: BackgroundTasks, session: SessionDep, page_auth: PageAuthDep, form: UploadFormDep
):
    settings = get_settings()
    upload = form.get("file")
    data = await upload.read() if isinstance(upload, UploadFile) else b""
    filename = check_filename(upload.filename if isinstance(upload, UploadFile) else None)
    pasted = form.get("lines") or ""
    if not data and isinstance(pasted, str):
        data = pasted.encode("utf-8")
        filename = None
    partial = form.get("partial") == "true"
    typed = {key: str(form.get(key) or "") for key in ("tags", "label", "name_tags")}
    context: dict[str, Any] = {"outcome": None, "errors": [], "detail": None, "auth": page_auth, "typed": typed}
    status_code = 201
    try:
        # Checked before the upload is read, with the answer next to the form: a bad tag or pattern is
        # the person's typing, not the file's.
        tags = parse_tag_params(typed["tags"].split())
        name_pattern = check_name_pattern(typed["name_tags"])
        label = check_label(typed["label"])
        outcome = await store_upload(
            session=session,
            data=data,
            max_line_bytes=settings.max_line_bytes,
            partial=partial,
            source="page",
            filename=filename,
            label=label,
            tags=tags,
            name_pattern=name_pattern,
        )
        if outcome.created:
            background.add_task(detect_after_upload, outcome.upload_id)  # after the answer, as the API's
        run_ids = list(dict.fromkeys(outcome.created + outcome.duplicates))
        compare = await run_in_threadpool(comparisons.upload_links, session, run_ids)
        context.update(outcome=outcome, errors=outcome.errors, error_count=outcome.error_count, compare=compare)
    except InvalidUpload as exc:
        session.rollback()
        context.update(detail=exc.detail, errors=exc.errors, error_count=exc.error_count)
        status_code = 422
    except BadRequest as exc:
        session.rollback()
        context.update(detail=exc.detail, error_count=0)
        status_code = 400
    # Each refused line is shown back beside its error: the person sees which of the pasted lines it is.
    context["error_lines"] = lines_at(data, [error.line for error in context["errors"]])
    template = "_upload_result.html" if is_htmx(request) else "upload.html"
    return render(request, template, context, status_code=status_code)
