"""For the browser tests: a real bonnieboard server on a free loopback port and a temporary SQLite
file, and Debian's Chromium driven by Playwright (docs: browser-tests.md)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.live_server import CLIENT_SSL, live_server

ROOT = Path(__file__).resolve().parent.parent
# Debian's chromium-headless-shell first: the same Chromium (version and Blink) built as the old headless shell,
# which Playwright itself runs for headless tests. It has none of the full browser's UI processes: the browser
# tests take 22–34 % less CPU with it than with `chromium --headless` (docs/decisions.md, "The suite on two cores").
CHROMIUM_NAMES = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome-stable", "google-chrome")
# $CHROME_PATH, else the first Chromium on PATH (Debian: chromium-headless-shell, chromium; Ubuntu, Fedora:
# chromium-browser).
CHROMIUM = os.environ.get("CHROME_PATH") or next(filter(None, map(shutil.which, CHROMIUM_NAMES)), "chromium")


def chromium_path() -> str:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        raise RuntimeError(
            f"no Chromium found ({CHROMIUM!r}): install Debian's chromium-headless-shell, or set CHROME_PATH"
        )
    return CHROMIUM


# Without the background-networking flags Chromium keeps trying hosts these machines cannot reach.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def running_server(database_path: Path) -> Iterator[str]:
    """`bonnieboard serve` (which migrates first) on a fresh port; yields its base URL."""
    with live_server(f"sqlite:///{database_path}") as server:
        yield server.url


def upload(
    base_url: str, lines: list[str], *, tags: dict[str, str] | None = None, label: str | None = None
) -> list[int]:
    params = [("tag", f"{k}={v}") for k, v in (tags or {}).items()]
    if label:
        params.append(("label", label))
    response = httpx.post(
        f"{base_url}/api/runs",
        params=params,
        content="\n".join(lines) + "\n",
        headers={"Content-Type": "text/csv"},
        verify=CLIENT_SSL,
    )
    response.raise_for_status()
    return response.json()["created"]
