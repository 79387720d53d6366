"""Who may read and write (issue #5): API tokens, browser sessions and CSRF.

Tokens are in use once BONNIEBOARD_API_TOKEN is set or a token has ever been created with
`bonnieboard token create`. Then every API write needs `Authorization: Bearer <token>` (401 when it is
missing, 403 when it is wrong or revoked), and with BONNIEBOARD_PRIVATE_READS reads need it too.

The browser asks for a token once (/login, or the upload page) and keeps a signed, HttpOnly session
cookie that names the token by its hash; every request checks that hash against the database, so a
revoked token ends its sessions at once, in every worker. Forms that write carry the session's CSRF
token, as the X-CSRF-Token header (htmx, hx-headers) or the `csrf_token` field (plain HTML).

No check is cached: a token check is one indexed lookup, and a cache would let a revoked token work on.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

from fastapi import Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app.config import Settings, get_settings
from app.db import begin_write, get_sessionmaker
from app.errors import AppError, BadRequest, Forbidden, Unauthorized
from app.models import ApiToken
from app.request_body import read_body

SESSION_COOKIE = "bonnieboard_session"
SESSION_MAX_AGE_S = 7 * 24 * 3600
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# What a load balancer polls must answer without a token; it tells nothing about the runs.
PUBLIC_API_PATHS = frozenset({"/api/health"})
TOKEN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
ENV_TOKEN_NAME = "BONNIEBOARD_API_TOKEN"

bearer_scheme = HTTPBearer(
    auto_error=False,
    description="BONNIEBOARD_API_TOKEN or a token from `bonnieboard token create NAME`; needed for writes once "
    "tokens are in use, and for reads too with BONNIEBOARD_PRIVATE_READS.",
)
BearerDep = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)]

# Used when BONNIEBOARD_SECRET_KEY is unset and this process was not started by `bonnieboard serve`
# (which shares one random key with its workers through the environment).
_PROCESS_SECRET_KEY = secrets.token_urlsafe(32)


class LoginRequired(AppError):
    """A page that needs a token was asked for without a session: app.main redirects to /login."""

    status = 303

    def __init__(self, next_url: str):
        super().__init__("sign in with a token to see this page")
        self.next_url = next_url


# ==== Tokens (services: they take a session, the caller commits) ====


def secret_sha256(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


def tokens_in_use(*, session: Session, settings: Settings) -> bool:
    return settings.api_token is not None or bool(session.scalar(select(exists().select_from(ApiToken))))


def token_name(*, session: Session, settings: Settings, digest: bytes) -> str | None:
    """The name of the live token whose secret hashes to `digest`, or None."""
    if settings.api_token is not None and hmac.compare_digest(digest, secret_sha256(settings.api_token)):
        return ENV_TOKEN_NAME
    return session.scalar(
        select(ApiToken.name).where(ApiToken.secret_sha256 == digest, ApiToken.revoked_at.is_(None))
    )


def create_token(*, session: Session, name: str) -> str:
    """A new token's secret, the only time it is known. A revoked name may be used again."""
    if not TOKEN_NAME.fullmatch(name):
        raise BadRequest("a token name is 1 to 100 letters, digits, '.', '_' or '-', starting with a letter or digit")
    begin_write(session)
    secret = "bb_" + secrets.token_urlsafe(32)
    token = session.scalar(select(ApiToken).where(ApiToken.name == name))
    if token is not None and token.revoked_at is None:
        raise BadRequest(f"a token named {name!r} exists; revoke it first or choose another name")
    if token is None:
        token = ApiToken(name=name)
        session.add(token)
    token.secret_sha256 = secret_sha256(secret)
    token.created_at = datetime.now(UTC)
    token.revoked_at = None
    session.flush()
    return secret


def list_tokens(*, session: Session) -> list[ApiToken]:
    return list(session.scalars(select(ApiToken).order_by(ApiToken.name)))


def revoke_token(*, session: Session, name: str) -> None:
    begin_write(session)
    token = session.scalar(select(ApiToken).where(ApiToken.name == name, ApiToken.revoked_at.is_(None)))
    if token is None:
        raise BadRequest(f"no live token is named {name!r}")
    token.revoked_at = datetime.now(UTC)
    session.flush()


@contextmanager
def _own_session() -> Iterator[Session]:
    # Not the request's session: on SQLite a read here would start a deferred transaction that the
    # route's write would then have to upgrade, which fails at once under contention.
    with get_sessionmaker()() as session:
        yield session


# ==== Browser sessions ====


@dataclass(frozen=True, slots=True)
class BrowserSession:
    token_sha256: bytes
    csrf_token: str


def _serializer(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.secret_key or _PROCESS_SECRET_KEY, salt="bonnieboard-session")


def read_browser_session(request: Request, settings: Settings) -> BrowserSession | None:
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    try:
        data = _serializer(settings).loads(cookie, max_age=SESSION_MAX_AGE_S)
        return BrowserSession(token_sha256=bytes.fromhex(data["t"]), csrf_token=str(data["c"]))
    except (BadSignature, KeyError, TypeError, ValueError):
        return None


def start_browser_session(response: Response, request: Request, settings: Settings, digest: bytes) -> None:
    value = _serializer(settings).dumps({"t": digest.hex(), "c": secrets.token_urlsafe(24)})
    response.set_cookie(
        SESSION_COOKIE, value, max_age=SESSION_MAX_AGE_S, path="/", httponly=True, samesite="strict",
        secure=request.url.scheme == "https",
    )  # fmt: skip


def end_browser_session(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")


@dataclass(frozen=True, slots=True)
class PageAuth:
    """What a page needs to know: must the visitor give a token, and the CSRF token for its forms."""

    tokens_in_use: bool
    signed_in_as: str | None = None
    csrf_token: str | None = None

    @property
    def needs_token(self) -> bool:
        return self.tokens_in_use and self.signed_in_as is None


def _page_auth(request: Request) -> PageAuth:
    settings = get_settings()
    browser = read_browser_session(request, settings)
    with _own_session() as session:
        if not tokens_in_use(session=session, settings=settings):
            return PageAuth(tokens_in_use=False)
        name = browser and token_name(session=session, settings=settings, digest=browser.token_sha256)
    if not name:
        return PageAuth(tokens_in_use=True)
    return PageAuth(tokens_in_use=True, signed_in_as=name, csrf_token=browser.csrf_token)


async def page_auth(request: Request) -> PageAuth:
    """For pages that show forms: computed once per request (the dependency may have done it)."""
    cached = getattr(request.state, "page_auth", None)
    if cached is None:
        cached = request.state.page_auth = await run_in_threadpool(_page_auth, request)
    return cached


async def check_csrf(request: Request, auth: PageAuth) -> None:
    """The header, or else the form field, must equal the session's CSRF token."""
    sent = request.headers.get(CSRF_HEADER)
    if sent is None:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
            # Size-limited like every upload; the route then reads the same cached body and form.
            request._body = await read_body(request, get_settings().max_upload_bytes)
            # Starlette keeps the first parse of a form: allow pasted lines up to the upload limit here.
            form = await request.form(max_files=1, max_fields=20, max_part_size=get_settings().max_upload_bytes)
            sent = form.get(CSRF_FIELD)
    if not isinstance(sent, str) or not auth.csrf_token or not hmac.compare_digest(sent, auth.csrf_token):
        raise Forbidden("the form's CSRF token is missing or stale: reload the page and send it again")


# ==== Dependencies (wired router-wide in app.main) ====


def _api_check(request: Request, credentials: HTTPAuthorizationCredentials | None, write: bool) -> None:
    settings = get_settings()
    with _own_session() as session:
        if not tokens_in_use(session=session, settings=settings):
            return
        if credentials is not None:
            if token_name(session=session, settings=settings, digest=secret_sha256(credentials.credentials)) is None:
                raise Forbidden("the token is wrong or has been revoked")
            return
        if not write:
            # Reads also accept the browser's session, so pages' scripts can read what the page shows.
            browser = read_browser_session(request, settings)
            if browser and token_name(session=session, settings=settings, digest=browser.token_sha256):
                return
    what = "writes" if write else "reads"
    raise Unauthorized(f"this bonnieboard needs 'Authorization: Bearer <token>' for {what}")


async def api_access(request: Request, credentials: BearerDep) -> None:
    """Every /api route: writes need a token once tokens are in use; reads only with private_reads."""
    if request.url.path in PUBLIC_API_PATHS:
        return
    write = request.method not in READ_METHODS
    if not write and not get_settings().private_reads:
        return
    await run_in_threadpool(_api_check, request, credentials, write)


async def page_access(request: Request) -> None:
    """Every HTML page: the same rules, with the session cookie for a token and CSRF for writes."""
    write = request.method not in READ_METHODS
    if not write and not get_settings().private_reads:
        return
    auth = await page_auth(request)
    if auth.needs_token:
        if write:
            raise Unauthorized("sign in with a token first (the upload page asks for it)")
        if request.url.path != "/upload":  # the upload page asks for the token itself
            query = f"?{request.url.query}" if request.url.query else ""
            raise LoginRequired(request.url.path + query)
        return
    if write and auth.tokens_in_use:
        await check_csrf(request, auth)


def safe_next(url: object) -> str:
    """Where to go after signing in: only a path on this site, never another host."""
    if isinstance(url, str) and url.startswith("/") and not url.startswith(("//", "/\\")):
        return url
    return "/upload"


PageAuthDep = Annotated[PageAuth, Depends(page_auth)]
