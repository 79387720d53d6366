"""Who may read and write: API tokens, browser sessions, CSRF and cross-site requests.
The FastAPI dependencies that apply these rules are in app.web.deps.

Tokens are in use once BONNIEBOARD_API_TOKEN is set or a token has ever been created with
`bonnieboard token create`. Then every API write needs `Authorization: Bearer <token>` (401 when it is
missing, 403 when it is wrong or revoked), and with BONNIEBOARD_PRIVATE_READS reads need it too.

Every browser gets a signed, HttpOnly, SameSite=Strict session cookie holding its CSRF token, tokens or
not: every form that writes carries that token, as the X-CSRF-Token header (htmx, hx-headers) or the
`csrf_token` field (plain HTML). Signing in with a token (/login, or the upload page) adds a random login
id to the cookie, whose hash names a `browser_login` row, whose token is checked on every request: a
revoked token ends its sessions at once, in every worker, and signing out deletes the row.

Whatever the tokens, a write that a browser marks as coming from another origin (Origin, Sec-Fetch-Site)
is refused; curl and the runner send neither header.

No check is cached: a token check is one indexed lookup, and a cache would let a revoked token work on.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy import delete, exists, select
from sqlalchemy.orm import Session
from starlette.responses import Response

from app.config import Settings
from app.errors import AppError, BadRequest
from app.store.db import begin_write
from app.store.models import ApiToken, BrowserLogin

SESSION_COOKIE = "bonnieboard_session"
SESSION_MAX_AGE_S = 7 * 24 * 3600
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# What a load balancer polls must answer without a token; it tells nothing about the runs.
PUBLIC_API_PATHS = frozenset({"/api/health"})
TOKEN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
ENV_TOKEN_NAME = "BONNIEBOARD_API_TOKEN"

# Used when BONNIEBOARD_SECRET_KEY is unset and this process was not started by `bonnieboard serve`
# (which shares one random key with its workers through the environment).
_PROCESS_SECRET_KEY = secrets.token_urlsafe(32)


class LoginRequired(AppError):
    """A page that needs a token was asked for without a session: app.web.errors redirects to /login."""

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
    return session.scalar(select(ApiToken.name).where(ApiToken.secret_sha256 == digest, ApiToken.revoked_at.is_(None)))


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


# ==== Browser sessions ====


@dataclass(frozen=True, slots=True)
class SessionCookie:
    """What the browser's cookie holds: its CSRF token, and the id of its login if it signed in."""

    csrf_token: str
    login_id: str | None = None


def _serializer(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.secret_key or _PROCESS_SECRET_KEY, salt="bonnieboard-session")


def read_session_cookie(cookies: Mapping[str, str], settings: Settings) -> SessionCookie | None:
    cookie = cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    try:
        data = _serializer(settings).loads(cookie, max_age=SESSION_MAX_AGE_S)
        login_id = data.get("l")
        return SessionCookie(csrf_token=str(data["c"]), login_id=str(login_id) if login_id else None)
    except (BadSignature, KeyError, TypeError, ValueError, AttributeError):
        return None


def new_session_cookie(login_id: str | None = None) -> SessionCookie:
    """A fresh CSRF token (also on signing in and out: a token an attacker planted does not survive)."""
    return SessionCookie(csrf_token=secrets.token_urlsafe(24), login_id=login_id)


def set_session_cookie(response: Response, cookie: SessionCookie, settings: Settings, *, https: bool) -> None:
    data = {"c": cookie.csrf_token} | ({"l": cookie.login_id} if cookie.login_id else {})
    value = _serializer(settings).dumps(data)
    # Under a root path the cookie is the board's alone, not every app's behind the same proxy.
    path = settings.root_path or "/"
    response.set_cookie(
        SESSION_COOKIE, value, max_age=SESSION_MAX_AGE_S, path=path, httponly=True, samesite="strict", secure=https
    )


def session_cookie_header(cookie: SessionCookie, settings: Settings, *, https: bool) -> tuple[bytes, bytes]:
    """The Set-Cookie header for `cookie`, for a response made elsewhere (app.web.middleware.SessionCookies adds it)."""
    response = Response()
    set_session_cookie(response, cookie, settings, https=https)
    return next((name, value) for name, value in response.raw_headers if name == b"set-cookie")


def start_login(*, session: Session, token_sha256: bytes) -> str:
    """A new login for the token: its id (the cookie keeps it; the database only its hash)."""
    begin_write(session)
    login_id = secrets.token_urlsafe(32)
    now = datetime.now(UTC)
    # Logins older than a cookie can be are useless: clear them out while writing anyway.
    session.execute(delete(BrowserLogin).where(BrowserLogin.created_at < now - timedelta(seconds=SESSION_MAX_AGE_S)))
    session.add(BrowserLogin(id_sha256=secret_sha256(login_id), token_sha256=token_sha256, created_at=now))
    session.flush()
    return login_id


def login_token_name(*, session: Session, settings: Settings, login_id: str) -> str | None:
    """The name of the live token a live login was made with, or None."""
    cutoff = datetime.now(UTC) - timedelta(seconds=SESSION_MAX_AGE_S)
    digest = session.scalar(
        select(BrowserLogin.token_sha256).where(
            BrowserLogin.id_sha256 == secret_sha256(login_id), BrowserLogin.created_at >= cutoff
        )
    )
    return None if digest is None else token_name(session=session, settings=settings, digest=digest)


def end_login(*, session: Session, login_id: str) -> None:
    begin_write(session)
    session.execute(delete(BrowserLogin).where(BrowserLogin.id_sha256 == secret_sha256(login_id)))


@dataclass(frozen=True, slots=True)
class PageAuth:
    """What a page needs to know: must the visitor give a token, and the CSRF token for its forms."""

    tokens_in_use: bool
    csrf_token: str
    signed_in_as: str | None = None
    login_id: str | None = None  # the cookie's, live or not: signing out deletes it either way

    @property
    def needs_token(self) -> bool:
        return self.tokens_in_use and self.signed_in_as is None


def csrf_matches(sent: object, expected: str) -> bool:
    return isinstance(sent, str) and bool(sent) and hmac.compare_digest(sent.encode(), expected.encode())


# ==== Cross-site requests ====

# Sec-Fetch-Site values of a request a page of this origin made, or a person (typing, a bookmark).
OWN_FETCH_SITES = frozenset({"same-origin", "none"})
DEFAULT_PORTS = {"http": "80", "https": "443"}


def cross_site_refusal(headers: Mapping[str, str]) -> str | None:
    """Why a write must be refused as coming from another origin, or None.

    Browsers send Sec-Fetch-Site and Origin with every POST; curl and the runner send neither and pass.
    Origin must name this host as the request's Host header does (its port included: another port is
    another origin). The scheme is not compared: behind an HTTPS proxy the server sees http.
    """
    site = headers.get("sec-fetch-site")
    if site is not None and site.lower() not in OWN_FETCH_SITES:
        return f"a request from another site ({site}) may not write here"
    origin = headers.get("origin")
    if origin is None:
        return None
    if _origin_authority(origin) != _host_authority(headers.get("host", ""), origin):
        return f"a request from {origin[:100]!r} may not write here"
    return None


def _origin_authority(origin: str) -> str | None:
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.path or parts.query:
        return None  # "null" (a sandboxed frame, a file:// page) and anything odd is no origin of ours
    return f"{parts.hostname}:{port or DEFAULT_PORTS[parts.scheme]}"


def _host_authority(host: str, origin: str) -> str | None:
    # The Host header omits the port its scheme implies; that scheme is the origin's as far as it can be known.
    try:
        parts = urlsplit(f"//{host}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    scheme = origin.split(":", 1)[0].lower()
    return f"{parts.hostname}:{port or DEFAULT_PORTS.get(scheme, '80')}"


def safe_next(url: object) -> str:
    """Where to go after signing in: only a path on this site, never another host."""
    if isinstance(url, str) and url.startswith("/") and not url.startswith(("//", "/\\")):
        return url
    return "/upload"
