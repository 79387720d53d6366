"""create_app(): the FastAPI application assembled: its routers, static files and /docs, who may do what
(app.web.deps, wired router-wide), the error handlers (app.web.errors) and the middlewares (app.web.middleware)."""

import functools
import gc

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.routing import BaseRoute, Mount

from app.config import LOOPBACK_HOSTS, describe_invalid_settings, get_settings
from app.paths import STATIC_DIR
from app.web import auth
from app.web.errors import EXCEPTION_HANDLERS
from app.web.middleware import AllowedHosts, HeadAsGet, SecurityHeaders, SessionCookies
from app.web.routes import api, history, login, pages
from app.web.static_assets import StaticAssets
from app.web.templating import render
from app.web.urls import RootPath, site_url

# Vendored from the npm package swagger-ui-dist (`npm pack swagger-ui-dist@5.35.0`, files
# swagger-ui-bundle.js and swagger-ui.css renamed with the version): /docs works offline and under the CSP.
SWAGGER_UI_VERSION = "5.35.0"


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


@functools.cache
def _routes() -> tuple[BaseRoute, ...]:
    """Every route, built once per process and shared by every app made here. An app that included the routers
    (`include_router`) would build each route's handler again, its dependencies and its models' validators, when it
    first matched a request: about 100 ms of CPU a new app, which the tests make one of per test. Who may do what is
    wired router-wide, in each router (app.web.deps). The app is not these routes' provider of dependency overrides:
    `app.dependency_overrides` does not reach them."""
    docs = APIRoute("/docs", _swagger_ui, methods=["GET"], include_in_schema=False, response_class=HTMLResponse)
    return (
        Mount("/static", static_assets(), name="static"),
        docs,
        *api.router.routes,
        *history.api_router.routes,
        *pages.router.routes,
        *history.page_router.routes,
        *login.router.routes,
    )


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
        exception_handlers=EXCEPTION_HANDLERS,
        routes=list(_routes()),
    )
    app.openapi = _openapi(app)  # type: ignore[method-assign]  # FastAPI's documented way to extend the schema
    # Read once per process: every app made here (the tests make many) serves the same bytes under the same hashes.
    app.state.static_assets = static_assets()
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
