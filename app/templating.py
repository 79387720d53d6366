"""The one Jinja2 environment, its filters, and rendering of full pages or htmx partials."""

from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates

from app.paths import TEMPLATES_DIR
from app.units import format_latency, format_rate

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
