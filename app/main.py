"""create_app(): the FastAPI application, its routers, static files and error handlers."""

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.errors import AppError, InvalidUpload
from app.paths import STATIC_DIR
from app.routes import api, pages
from app.templating import render


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api") or request.url.path == "/openapi.json"


def _error_response(request: Request, status: int, detail: str, errors: list | None = None):
    if _wants_json(request):
        body = {"detail": detail}
        if errors is not None:
            body["errors"] = errors
        return JSONResponse(body, status_code=status)
    template = "errors/404.html" if status == 404 else "errors/error.html"
    return render(request, template, {"status": status, "detail": detail, "errors": errors}, status_code=status)


async def _app_error(request: Request, exc: AppError):
    errors = None
    if isinstance(exc, InvalidUpload):
        errors = [{"line": e.line, "field": e.field, "error": e.error} for e in exc.errors]
    return _error_response(request, exc.status, exc.detail, errors)


async def _http_error(request: Request, exc: StarletteHTTPException):
    detail = exc.detail if isinstance(exc.detail, str) else "request failed"
    response = _error_response(request, exc.status_code, detail)
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def _validation_error(request: Request, exc: RequestValidationError):
    # The contract promises a string `detail`; FastAPI's default is a list of objects.
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error.get("loc", ()) if part not in ("body", "query", "path"))
        problems.append(f"{where}: {error.get('msg', 'invalid')}" if where else error.get("msg", "invalid"))
    return _error_response(request, 422, "; ".join(problems) or "invalid request")


def create_app() -> FastAPI:
    app = FastAPI(
        title="bonnieboard",
        summary="Store, compare and understand bonnie++ results",
        version="0.1.0",
    )
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    return app


app = create_app()
