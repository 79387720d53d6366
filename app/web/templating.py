"""The one Jinja2 environment, its filters, and rendering of full pages or htmx partials."""

from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates
from jinja2 import pass_context

from app import bonnie
from app.compare.comparison import json_default
from app.paths import TEMPLATES_DIR
from app.units import format_latency, format_rate
from app.web.urls import site_url

templates = Jinja2Templates(directory=TEMPLATES_DIR)


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


def render(request: Request, name: str, context: dict[str, Any], status_code: int = 200):
    response = templates.TemplateResponse(request, name, context, status_code=status_code)
    # The same URL answers with a whole page or a fragment, depending on HX-Request.
    response.headers["Vary"] = "HX-Request"
    return response


templates.env.filters["rate"] = format_rate
templates.env.filters["latency"] = format_latency
# `tojson` as Jinja writes it (keys sorted), and a comparison's dataclasses as orjson writes them (the matrix page
# embeds its configurations).
templates.env.policies["json.dumps_kwargs"] = {"sort_keys": True, "default": json_default}
# The catalog of bonnie++'s tests, for what every page says of them (e.g. bonnie.TOO_FAST_TITLE).
templates.env.globals["bonnie"] = bonnie


@pass_context
def url_for(context: dict[str, Any], name: str, /, **path_params: Any) -> str:
    """A path on this site, never an absolute URL: the Host header must not choose where our assets
    come from, and behind an HTTPS proxy an http:// URL would not load."""
    request: Request = context["request"]
    return request.scope.get("root_path", "") + str(request.app.url_path_for(name, **path_params))


templates.env.globals["url_for"] = url_for


@pass_context
def static_url(context: dict[str, Any], name: str, /) -> str:
    """The versioned path of the static file `name` (app/web/static_assets.py): its URL changes with its bytes,
    so browsers may keep it for a year. Under the ASGI root_path, as url_for."""
    request: Request = context["request"]
    return request.app.state.static_assets.url(url_for(context, "static", path="").rstrip("/"), name)


templates.env.globals["static_url"] = static_url

# Every link and form action of a page: site_url('/compare?runs=1') is the board's path under the root path.
templates.env.globals["site_url"] = site_url
