"""For the browser tests: a real bonnieboard server on a free loopback port and a temporary SQLite
file, and Debian's Chromium driven by Playwright (docs: browser-tests.md)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags Chromium keeps trying hosts these machines cannot reach.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
SERVER_START_TIMEOUT_S = 30


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def running_server(database_path: Path, log_path: Path) -> Iterator[str]:
    """`bonnieboard serve` (which migrates first) on a fresh port; yields its base URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BONNIEBOARD_")}
    env["BONNIEBOARD_DATABASE_URL"] = f"sqlite:///{database_path}"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        base_url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + SERVER_START_TIMEOUT_S
            while True:
                if process.poll() is not None:
                    raise RuntimeError(f"the server exited with {process.returncode}: {log_path.read_text()[-2000:]}")
                try:
                    if httpx.get(f"{base_url}/api/health", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not answer in {SERVER_START_TIMEOUT_S} s: {log_path.read_text()[-2000:]}")
                time.sleep(0.1)
            yield base_url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def upload(base_url: str, lines: list[str], *, tags: dict[str, str] | None = None, label: str | None = None) -> list[int]:
    params = [("tag", f"{k}={v}") for k, v in (tags or {}).items()]
    if label:
        params.append(("label", label))
    response = httpx.post(f"{base_url}/api/runs", params=params, content="\n".join(lines) + "\n", headers={"Content-Type": "text/csv"})
    response.raise_for_status()
    return response.json()["created"]
