"""create_app(): the FastAPI application, its routers, static files, error handlers, who may do what
(app.web.deps, wired router-wide), the security headers of every response and a new browser's session cookie."""

import functools
import gc
import logging
import sqlite3
from typing import Any
from urllib.parse import quote

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import LOOPBACK_HOSTS, describe_invalid_settings, get_settings
from app.errors import AppError, InvalidUpload
from app.paths import STATIC_DIR
from app.store import db
from app.web import auth, deps
from app.web.routes import api, history, login, pages
from app.web.static_assets import StaticAssets
from app.web.templating import render
from app.web.urls import RootPath, app_path, redirect, site_url

# Vendored from the npm package swagger-ui-dist (`npm pack swagger-ui-dist@5.35.0`, files
# swagger-ui-bundle.js and swagger-ui.css renamed with the version): /docs works offline and under the CSP.
SWAGGER_UI_VERSION = "5.35.0"

_log = logging.getLogger("bonnieboard")

# Only our own scripts and styles (htmx, Chart.js and Swagger UI are vendored); no framing; data: images
# for Swagger UI's icons. JSON data blocks (<script type="application/json">) are not scripts to CSP.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


class SecurityHeaders:
    """Adds SECURITY_HEADERS to every HTTP response, errors and static files included."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in SECURITY_HEADERS if name not in present]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class HeadAsGet:
    """Answers HEAD as the same path's GET would, without the body: monitoring probes ask with HEAD, and FastAPI
    gives a route only the methods it names. Same status and headers (Content-Length included, when the GET has
    one). The answer ends as soon as its headers are sent; from then on the server tells the app that the client
    has gone (ASGI's http.disconnect), so a streamed export stops instead of reading every run for nobody."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        answered = False

        async def send_headers_only(message: Message) -> None:
            nonlocal answered
            if answered:
                return  # the GET's body, or anything after it
            if message["type"] == "http.response.start":
                await send({**message, "trailers": False})  # the answer ends right here
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                answered = True
            else:
                await send(message)

        # A copy: the server reads its own scope's method to know that this answer has no body.
        await self.app({**scope, "method": "GET"}, receive, send_headers_only)


class AllowedHosts:
    """Refuses (400) a request whose Host header is not one of BONNIEBOARD_ALLOWED_HOSTS: a page on
    evil.example whose name now resolves to this board (DNS rebinding) sends Host: evil.example, and its
    Origin then agrees with that Host, so app.web.auth's cross-site check alone would let it read and write.
    Starlette's TrustedHostMiddleware decides; this only words its answer."""

    def __init__(self, app: ASGIApp, allowed_hosts: tuple[str, ...]):
        self.app = app
        self.check = TrustedHostMiddleware(self._allowed, allowed_hosts=allowed_hosts, www_redirect=False)

    @staticmethod
    async def _allowed(scope: Scope, receive: Receive, send: Send) -> None:
        scope["state"]["host_allowed"] = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})

        async def discard(message: Message) -> None:
            pass  # TrustedHostMiddleware's own refusal ("Invalid host header"): ours says why

        await self.check(scope, receive, discard)
        if state.pop("host_allowed", False):
            await self.app(scope, receive, send)
            return
        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")[:100]
        # The allowed names are not listed: whoever sent this Host may be a rebinding page, not the operator.
        detail = (
            f"this bonnieboard does not answer to the host name {host!r}: it is not in BONNIEBOARD_ALLOWED_HOSTS. "
            "A page of another site whose name points here is refused; a name of this board belongs in that setting"
        )
        if _wants_json(app_path(scope)):
            response: Response = JSONResponse({"detail": detail}, status_code=400)
        else:
            response = PlainTextResponse(detail, status_code=400)
        await response(scope, receive, send)


class SessionCookies:
    """Sets the session cookie that app.web.deps made for a browser that had none (it holds the CSRF
    token the page's forms carry) on whatever response the request gets, errors included."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})

        async def send_with_cookie(message: Message) -> None:
            cookie = state.get("session_cookie")
            if message["type"] == "http.response.start" and cookie is not None:
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"set-cookie" for name, _ in headers):
                    headers.append(
                        auth.session_cookie_header(cookie, get_settings(), https=scope.get("scheme") == "https")
                    )
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def _wants_json(path: str) -> bool:
    return path.startswith("/api") or path == "/openapi.json"


def _error_response(
    request: Request, status: int, detail: str, errors: list | None = None, error_count: int | None = None
):
    if _wants_json(app_path(request.scope)):
        body: dict[str, Any] = {"detail": detail}
        if errors is not None:
            body["errors"] = errors
            body["error_count"] = error_count
        return JSONResponse(body, status_code=status)
    template = "errors/404.html" if status == 404 else "errors/error.html"
    context = {"status": status, "detail": detail, "errors": errors, "error_count": error_count}
    return render(request, template, context, status_code=status)


async def _server_error(request: Request, exc: Exception):
    # A bug: still a JSON answer with a string detail for the API, as the contract promises for every
    # error; Starlette logs the traceback.
    if _wants_json(app_path(request.scope)):
        return JSONResponse({"detail": "internal server error"}, status_code=500)
    return PlainTextResponse("Internal Server Error", status_code=500)


# PostgreSQL's SQLSTATE for a statement stopped by statement_timeout (or a cancel request).
QUERY_CANCELED = "57014"


async def _app_error(request: Request, exc: AppError):
    if isinstance(exc, auth.LoginRequired):
        return redirect(f"/login?next={quote(exc.next_url, safe='')}")
    errors = error_count = None
    if isinstance(exc, InvalidUpload):
        errors = [{"line": e.line, "field": e.field, "error": e.error} for e in exc.errors]
        error_count = exc.error_count
    response = _error_response(request, exc.status, exc.detail, errors, error_count)
    if exc.status == 401 and _wants_json(app_path(request.scope)):
        response.headers["WWW-Authenticate"] = 'Bearer realm="bonnieboard"'
    return response


async def _database_error(request: Request, exc: DBAPIError | sqlite3.Error):
    # A read past BONNIEBOARD_READ_TIMEOUT_S, a full disk, a read-only database or PostgreSQL down is 503
    # and passes (app.store.db.unavailable); the rest is a bug. SQLite's own errors come unwrapped from the writer
    # that drives the driver itself (app.ingest.writers): a full disk there is as much a 503.
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    if getattr(orig, "sqlstate", None) == QUERY_CANCELED:
        limit = get_settings().read_timeout_s
        detail = f"the database stopped this read after {limit:g} s (BONNIEBOARD_READ_TIMEOUT_S): ask for fewer runs or filters"
        return _error_response(request, 503, detail)
    unavailable = db.unavailable(exc)
    if unavailable is None:
        raise exc  # to the 500 handler, with its logged traceback
    _log.warning("%s %s: 503, %s (%s)", request.method, request.url.path, unavailable.detail, orig)
    response = await _app_error(request, unavailable)
    response.headers["Retry-After"] = "10"
    return response


async def _http_error(request: Request, exc: StarletteHTTPException):
    detail = exc.detail if isinstance(exc.detail, str) else "request failed"
    response = _error_response(request, exc.status_code, detail)
    if exc.headers:
        response.headers.update(exc.headers)
    if exc.status_code == 405:
        # Starlette names the methods of the first route whose path matched; a path served by
        # several routes (GET, PATCH and DELETE /api/runs/{id}) allows all of theirs.
        response.headers["Allow"] = ", ".join(_allowed_methods(request))
    return response


def _allowed_methods(request: Request) -> list[str]:
    allowed = [
        method
        for method in ("DELETE", "GET", "PATCH", "POST", "PUT")
        if any(
            route.matches({**request.scope, "method": method})[0] == Match.FULL for route in request.app.router.routes
        )
    ]
    return sorted([*allowed, "HEAD"] if "GET" in allowed else allowed)  # HeadAsGet answers HEAD wherever GET is


async def _validation_error(request: Request, exc: RequestValidationError):
    # The contract promises a string `detail`; FastAPI's default is a list of objects.
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error.get("loc", ()) if part not in ("body", "query", "path"))
        message = error.get("msg", "invalid")
        if error.get("type") == "int_parsing":  # a run id or cursor typed by hand: say what was wrong with it
            message = f"{str(error.get('input'))[:40]!r} is not a whole number"
        problems.append(f"{where}: {message}" if where else message)
    return _error_response(request, 422, "; ".join(problems) or "invalid request")


def _openapi(app: FastAPI):
    """FastAPI's schema, with reads marked as needing a token only optionally (BONNIEBOARD_PRIVATE_READS)."""

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, summary=app.summary, routes=app.routes)
            for path, operations in schema.get("paths", {}).items():
                for method, operation in operations.items():
                    if "security" in operation and (method in ("get", "head") or path in auth.PUBLIC_API_PATHS):
                        operation["security"] = [{}, *operation["security"]]
            app.openapi_schema = schema
        return app.openapi_schema

    return openapi


def _swagger_ui(request: Request) -> HTMLResponse:
    context = {"swagger_version": SWAGGER_UI_VERSION, "openapi_url": site_url(request.app.openapi_url)}
    return render(request, "swagger_ui.html", context)


@functools.cache
def static_assets() -> StaticAssets:
    return StaticAssets(STATIC_DIR)


def create_app() -> FastAPI:
    try:
        settings = get_settings()
    except ValidationError as exc:
        # Started as `uvicorn app.main:app`: one line naming the wrong variable, not a traceback of the import.
        raise SystemExit(f"bonnieboard: {describe_invalid_settings(exc)}") from None
    app = FastAPI(
        title="bonnieboard",
        summary="Store, compare and understand bonnie++ results",
        version="0.1.0",
        docs_url=None,  # FastAPI's own pages load Swagger UI and ReDoc from a CDN
        redoc_url=None,
        exception_handlers={
            AppError: _app_error,
            DBAPIError: _database_error,
            sqlite3.Error: _database_error,
            Exception: _server_error,
            StarletteHTTPException: _http_error,
            RequestValidationError: _validation_error,
        },
    )
    app.openapi = _openapi(app)  # type: ignore[method-assign]  # FastAPI's documented way to extend the schema
    # Read once per process: every app made here (the tests make many) serves the same bytes under the same hashes.
    app.state.static_assets = static_assets()
    app.mount("/static", app.state.static_assets, name="static")
    app.add_api_route("/docs", _swagger_ui, methods=["GET"], include_in_schema=False, response_class=HTMLResponse)
    app.include_router(api.router, dependencies=[Depends(deps.api_access)])
    app.include_router(history.api_router, dependencies=[Depends(deps.api_access)])
    app.include_router(pages.router, dependencies=[Depends(deps.page_access)])
    app.include_router(history.page_router, dependencies=[Depends(deps.page_access)])
    app.include_router(login.router)
    app.add_middleware(SessionCookies)
    # Unset outside `bonnieboard serve` (which sets it from its --host): only loopback names, the safe side.
    app.add_middleware(AllowedHosts, allowed_hosts=settings.allowed_hosts or LOOPBACK_HOSTS)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(HeadAsGet)  # every answer, errors and refusals included, loses its body
    app.add_middleware(RootPath)  # outermost: every part of the app sees the same root path
    return app


app = create_app()

# What is built by now lives as long as the process: frozen, out of the collector's sight, a full collection
# walks only what requests make. Unfrozen, a collection takes 50-180 ms with the GIL held during upload bursts
# (docs/decisions.md, "Frozen heap at start").
gc.freeze()
