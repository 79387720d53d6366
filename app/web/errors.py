"""The exception handlers: every error, the app's own (app.errors), the database's, FastAPI's and a bug's, answered
as JSON with a string `detail` under /api and as an error page elsewhere. app.main hands EXCEPTION_HANDLERS to
FastAPI."""

import logging
import sqlite3
from typing import Any
from urllib.parse import quote

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from app.config import get_settings
from app.errors import AppError, InvalidUpload
from app.store import db
from app.web import auth
from app.web.templating import render
from app.web.urls import app_path, redirect

_log = logging.getLogger("bonnieboard")


def wants_json(path: str) -> bool:
    return path.startswith("/api") or path == "/openapi.json"


def error_response(
    request: Request, status: int, detail: str, errors: list | None = None, error_count: int | None = None
):
    if wants_json(app_path(request.scope)):
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
    if wants_json(app_path(request.scope)):
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
    response = error_response(request, exc.status, exc.detail, errors, error_count)
    if exc.status == 401 and wants_json(app_path(request.scope)):
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
        return error_response(request, 503, detail)
    unavailable = db.unavailable(exc)
    if unavailable is None:
        raise exc  # to the 500 handler, with its logged traceback
    _log.warning("%s %s: 503, %s (%s)", request.method, request.url.path, unavailable.detail, orig)
    response = await _app_error(request, unavailable)
    response.headers["Retry-After"] = "10"
    return response


async def _http_error(request: Request, exc: StarletteHTTPException):
    detail = exc.detail if isinstance(exc.detail, str) else "request failed"
    response = error_response(request, exc.status_code, detail)
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
    return error_response(request, 422, "; ".join(problems) or "invalid request")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    AppError: _app_error,
    DBAPIError: _database_error,
    sqlite3.Error: _database_error,
    Exception: _server_error,
    StarletteHTTPException: _http_error,
    RequestValidationError: _validation_error,
}
