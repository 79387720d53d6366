"""Posting the pages' forms as a browser does: with the CSRF token the session cookie goes with."""

from __future__ import annotations

import re
from typing import Any

CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(html: str) -> str:
    match = CSRF_INPUT.search(html)
    assert match, "the page has no form with a CSRF token"
    return match.group(1)


def csrf_token(client) -> str:
    """The client's CSRF token (a first visit sets the session cookie that holds it)."""
    return csrf_of(client.get("/login").text)


def post_form(client, url: str, data: dict[str, Any] | None = None, **kwargs: Any):
    """POST a page's form with the client's CSRF token in its csrf_token field."""
    return client.post(url, data={**(data or {}), "csrf_token": csrf_token(client)}, **kwargs)
