"""The FastAPI dependencies, in one place: the request's database session, who may read and write
(the rules are app.web.auth's), the CSRF-checked form of a page that writes, and the runs filter."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from typing import Annotated

from fastapi import Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import WithJsonSchema
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app.compare.request import parse_id_filter
from app.config import get_settings
from app.errors import Forbidden, Unauthorized
from app.ingest.validation import check_filter_text
from app.limits import MAX_ID
from app.store import runs as run_store
from app.store.db import get_sessionmaker, limit_read
from app.tags import MAX_TAG_FILTERS, parse_tag_filters
from app.web import auth
from app.web.request_body import FormLimits, close_form, read_form
from app.web.schemas import FILTER_TEXT_PARAM_SCHEMA, MACHINE_FILTER_PARAM_SCHEMA, TAG_FILTER_PARAM_SCHEMA
from app.web.urls import app_path

# ==== The database session ====


def _is_postgresql_read(request: Request, session: Session) -> bool:
    return request.method in auth.READ_METHODS and session.get_bind().dialect.name == "postgresql"


def get_session(request: Request) -> Iterator[Session]:
    """The request's session. A read on PostgreSQL is stopped after BONNIEBOARD_READ_TIMEOUT_S
    (statement_timeout, for this transaction only), however many filters it was given."""
    with get_sessionmaker()() as session:
        if _is_postgresql_read(request, session):
            limit_read(session)
        yield session


async def request_session(
    request: Request, session: Annotated[Session, Depends(get_session)]
) -> AsyncIterator[Session]:
    """get_session's session; a PostgreSQL read is also cancelled as soon as its client goes away."""
    if not _is_postgresql_read(request, session):
        yield session
        return
    # get_session's set_config holds the connection: its cancel stops whatever the read is running.
    dbapi_connection = session.connection().connection.dbapi_connection
    assert dbapi_connection is not None  # the session's connection was just checked out

    async def cancel_when_the_client_leaves() -> None:
        # A GET's body is empty: the next message after it is http.disconnect, when the client leaves.
        while (await request.receive())["type"] != "http.disconnect":
            pass
        await asyncio.to_thread(dbapi_connection.cancel)

    watcher = asyncio.create_task(cancel_when_the_client_leaves())
    try:
        yield session
    finally:
        # Before get_session hands the connection back to the pool, where a cancel would hit another request.
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


# Closed as soon as the route has made its response, before it is sent: after that, uvicorn answers
# every receive() with http.disconnect, and the connection is back in the pool.
SessionDep = Annotated[Session, Depends(request_session, scope="function")]


@contextmanager
def own_session() -> Iterator[Session]:
    """A session of the check's own, not the request's: on SQLite a read here would start a deferred
    transaction that the route's write would then have to upgrade, which fails at once under contention."""
    with get_sessionmaker()() as session:
        yield session


# ==== Who may read and write (wired router-wide, in each router of app/web/routes) ====

bearer_scheme = HTTPBearer(
    auto_error=False,
    description="BONNIEBOARD_API_TOKEN or a token from `bonnieboard token create NAME`; needed for writes once "
    "tokens are in use, and for reads too with BONNIEBOARD_PRIVATE_READS.",
)
BearerDep = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)]


def refuse_cross_site(request: Request) -> None:
    """A write a browser marks as coming from another origin is refused, tokens or not."""
    if request.method not in auth.READ_METHODS:
        reason = auth.cross_site_refusal(request.headers)
        if reason is not None:
            raise Forbidden(reason)


def _api_check(request: Request, credentials: HTTPAuthorizationCredentials | None, write: bool) -> None:
    settings = get_settings()
    with own_session() as session:
        if not auth.tokens_in_use(session=session, settings=settings):
            return
        if credentials is not None:
            digest = auth.secret_sha256(credentials.credentials)
            if auth.token_name(session=session, settings=settings, digest=digest) is None:
                raise Forbidden("the token is wrong or has been revoked")
            return
        if not write:
            # Reads also accept the browser's session, so pages' scripts can read what the page shows.
            cookie = auth.read_session_cookie(request.cookies, settings)
            login_id = cookie.login_id if cookie else None
            if login_id and auth.login_token_name(session=session, settings=settings, login_id=login_id):
                return
    what = "writes" if write else "reads"
    raise Unauthorized(f"this bonnieboard needs 'Authorization: Bearer <token>' for {what}")


async def request_secrets(credentials: BearerDep) -> tuple[str, ...]:
    """What a document posted with this request must not keep (app.ingest.secrets_scrub): BONNIEBOARD_API_TOKEN and the
    bearer token the request came with, whatever it is (a created token's secret is known here only as sent). Async
    though it waits for nothing: a sync dependency costs a thread hop."""
    sent = credentials.credentials if credentials is not None else None
    return tuple(secret for secret in (get_settings().api_token, sent) if secret)


RequestSecretsDep = Annotated[tuple[str, ...], Depends(request_secrets)]


async def api_access(request: Request, credentials: BearerDep) -> None:
    """Every /api route: writes need a token once tokens are in use; reads only with private_reads."""
    if app_path(request.scope) in auth.PUBLIC_API_PATHS:
        return
    refuse_cross_site(request)
    write = request.method not in auth.READ_METHODS
    if not write and not get_settings().private_reads:
        return
    await run_in_threadpool(_api_check, request, credentials, write)


def _page_auth(request: Request) -> auth.PageAuth:
    settings = get_settings()
    cookie = auth.read_session_cookie(request.cookies, settings)
    if cookie is None:
        cookie = auth.new_session_cookie()
        # app.web.middleware.SessionCookies adds it to whatever response this request gets.
        request.state.session_cookie = cookie
    with own_session() as session:
        in_use = auth.tokens_in_use(session=session, settings=settings)
        name = None
        if in_use and cookie.login_id:
            name = auth.login_token_name(session=session, settings=settings, login_id=cookie.login_id)
    return auth.PageAuth(
        tokens_in_use=in_use, csrf_token=cookie.csrf_token, signed_in_as=name, login_id=cookie.login_id
    )


async def page_auth(request: Request) -> auth.PageAuth:
    """For pages that show forms: computed once per request."""
    cached = getattr(request.state, "page_auth", None)
    if cached is None:
        cached = request.state.page_auth = await run_in_threadpool(_page_auth, request)
    return cached


PageAuthDep = Annotated[auth.PageAuth, Depends(page_auth)]


async def page_access(request: Request) -> None:
    """Every HTML page: the API's rules, with the session cookie for a token. A page that writes
    also takes its form through csrf_form, which checks the CSRF token."""
    refuse_cross_site(request)
    write = request.method not in auth.READ_METHODS
    if not write and not get_settings().private_reads:
        return
    page = await page_auth(request)
    if page.needs_token:
        if write:
            raise Unauthorized("sign in with a token first (the upload page asks for it)")
        path = app_path(request.scope)
        if path != "/upload":  # the upload page asks for the token itself
            query = f"?{request.url.query}" if request.url.query else ""
            raise auth.LoginRequired(path + query)


CSRF_REFUSAL = "the form's CSRF token is missing or stale: reload the page and send it again"


def csrf_form(limits: FormLimits) -> Callable[..., AsyncIterator[FormData]]:
    """The dependency of a route that writes from a form: the form, read once within `limits`, whose
    CSRF token (the X-CSRF-Token header or the csrf_token field) must be the session's, tokens or not."""

    async def form_dependency(request: Request, page: PageAuthDep) -> AsyncIterator[FormData]:
        # Refused before the body is read whenever the answer is known without it: a browser without a session
        # cookie (page_auth has just made one, which no token sent can match) or a wrong X-CSRF-Token header.
        header = request.headers.get(auth.CSRF_HEADER)
        fresh_cookie = getattr(request.state, "session_cookie", None) is not None
        if fresh_cookie or (header and not auth.csrf_matches(header, page.csrf_token)):
            raise Forbidden(CSRF_REFUSAL)
        try:
            form = await read_form(request, limits)
            if not header and not auth.csrf_matches(form.get(auth.CSRF_FIELD), page.csrf_token):
                raise Forbidden(CSRF_REFUSAL)
            yield form
        finally:
            await close_form(request)

    return form_dependency


# ==== Query parameters shared by routes ====

# parse_tag_filters answers more than MAX_TAG_FILTERS with 400; the schema says so too.
TAG_FILTERS_QUERY = Query(
    description=f"KEY=VALUE; repeatable (at most {MAX_TAG_FILTERS}), all must match",
    json_schema_extra={"maxItems": MAX_TAG_FILTERS},
)


RUN_IDS_FILTER_PATTERN = "^[ ,]*(?:[0-9]{1,10}(?:[ ,]+[0-9]{1,10})*[ ,]*)?$"


def check_machine_text(value: str | None, name: str) -> str | None:
    """A machine filter or cursor: as long as a line may be, since a name stored before
    limits.MAX_MACHINE_CHARS was the rule can be, and its own links must still work."""
    return check_filter_text(value, name, get_settings().max_line_bytes)


def run_filter(
    machine: Annotated[str | None, MACHINE_FILTER_PARAM_SCHEMA] = None,
    tag: Annotated[list[Annotated[str, TAG_FILTER_PARAM_SCHEMA]], TAG_FILTERS_QUERY] = [],  # noqa: B006 - FastAPI copies a default per request; Query needs the list
    format: Annotated[str | None, FILTER_TEXT_PARAM_SCHEMA] = None,
    upload: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
    runs: Annotated[
        str | None,
        WithJsonSchema({"type": "string", "pattern": RUN_IDS_FILTER_PATTERN}),
        Query(description="only these run ids, e.g. 1,2,3 (empty: all)"),
    ] = None,
) -> run_store.RunFilter:
    return run_store.RunFilter(
        machine=check_machine_text(machine, "machine"),
        tags=parse_tag_filters(tag),
        format_version=check_filter_text(format, "format"),
        upload_id=upload,
        run_ids=parse_id_filter(runs) if runs and runs.strip(" ,") else None,
    )


FilterDep = Annotated[run_store.RunFilter, Depends(run_filter)]
