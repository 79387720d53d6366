"""A real `bonnieboard serve` (uvicorn, one or more workers) on a free loopback port, forked by the test process's
zygote (tests/zygote.py), for the load, crash and revocation tests and the concurrency benchmark."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests import zygote

START_TIMEOUT_S = 60
# httpx makes an SSL context for each client, reading a CA bundle (certifi's, or $SSL_CERT_FILE's): 22 ms of CPU a
# client here. The clients of a live server speak plain HTTP on loopback, and the load tests give each request a
# client (a connection) of its own: they share this context instead, which httpx takes as `verify`.
CLIENT_SSL = httpx.create_ssl_context()


@dataclass
class LiveServer:
    url: str
    process: zygote.ForkedProcess
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL the server and its workers at once, as a power cut or the OOM killer would."""
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def live_server(
    database_url: str,
    *,
    workers: int = 1,
    env: dict[str, str] | None = None,
    preload: str | None = None,
    host: str = "127.0.0.1",
    args: tuple[str, ...] = (),
) -> Iterator[LiveServer]:
    """Serve `database_url` until the block ends; the server's output is in server.log(). `preload` names
    a module the server process imports first (a test-only hook; one worker: workers are new processes). `host` is
    serve's --host (0.0.0.0 is still reached at 127.0.0.1); `args` are more of serve's options."""
    port = free_port()
    environment = os.environ | {"BONNIEBOARD_DATABASE_URL": database_url} | (env or {})
    assert preload is None or workers == 1, "a preloaded module reaches the serving process only with one worker"
    command = ["serve", "--host", host, "--port", str(port), "--workers", str(workers), *args]
    with tempfile.NamedTemporaryFile(prefix="bonnieboard-server-", suffix=".log") as log_file:
        log = Path(log_file.name)
        process = zygote.start(
            command, env=environment, cwd=os.getcwd(), stdout=log, stderr=log, session=True, preload=preload
        )
        server = LiveServer(f"http://127.0.0.1:{port}", process, log)
        try:
            _wait_until_serving(server, workers)
            yield server
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    server.kill()


def _wait_until_serving(server: LiveServer, workers: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    with httpx.Client(base_url=server.url, timeout=2, verify=CLIENT_SSL) as http:
        while True:
            if server.process.poll() is not None:
                raise RuntimeError(f"bonnieboard serve exited with {server.process.returncode}:\n{server.log()}")
            try:
                if http.get("/api/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"bonnieboard serve did not answer within {START_TIMEOUT_S} s:\n{server.log()}")
            time.sleep(0.1)
    # With several workers, the first one answers before the others have started: wait for them all.
    while server.log().count("Application startup complete") < workers:
        if time.monotonic() > deadline:
            raise RuntimeError(f"not all {workers} workers started within {START_TIMEOUT_S} s:\n{server.log()}")
        time.sleep(0.1)
