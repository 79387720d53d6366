"""The test process's end of tests/zygote_main.py: `bonnieboard` commands and servers forked from one process per
test process that has imported the command once, rather than each started by a new interpreter."""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import suppress
from pathlib import Path

BONNIEBOARD = Path(sys.executable).parent / "bonnieboard"
ZYGOTE_MAIN = Path(__file__).with_name("zygote_main.py")


class _Zygote:
    """One request and its answer at a time, from any thread."""

    def __init__(self) -> None:
        # No parent-death signal: the zygote ends when this process does, at the end of its standard input, so a
        # thread that starts it may end first.
        self.process = subprocess.Popen(
            [sys.executable, str(ZYGOTE_MAIN), str(BONNIEBOARD)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lock = threading.Lock()

    def ask(self, request: dict) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        with self.lock:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the zygote exited with {self.process.wait()}")
        return json.loads(answer)


_zygote: _Zygote | None = None
_zygote_lock = threading.Lock()


@atexit.register
def _stop_the_zygote() -> None:
    """Ends the zygote with this process and reaps it, so that its CPU and its commands' count as this process's."""
    if _zygote is not None and _zygote.process.stdin is not None:
        _zygote.process.stdin.close()
        with suppress(subprocess.TimeoutExpired):
            _zygote.process.wait(timeout=30)


def _the_zygote() -> _Zygote:
    global _zygote
    with _zygote_lock:
        if _zygote is None or _zygote.process.poll() is not None:
            _zygote = _Zygote()
        return _zygote


def pid() -> int:
    """This test process's zygote (started if it is not yet)."""
    return _the_zygote().process.pid


class ForkedProcess:
    """A command the zygote forked, with what the tests use of subprocess.Popen: args, pid, poll, wait, returncode."""

    def __init__(self, zygote: _Zygote, pid: int, args: list[str]):
        self.zygote = zygote
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.ask({"poll": self.pid})["returncode"]
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            # A pidfd reads as ready once the process ends, though it is the zygote's child: one wait in select()
            # rather than a question to the zygote every few milliseconds. The zygote has not reaped it yet (it
            # reaps only when asked), so the pid is still this process.
            pidfd = os.pidfd_open(self.pid)
            try:
                ended, _, _ = select.select([pidfd], [], [], timeout)
            finally:
                os.close(pidfd)
            if not ended:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        while (returncode := self.poll()) is None:  # ended: the zygote's waitpid sees it at once or very soon
            time.sleep(0.001)
        return returncode


def start(
    args: list[str],
    *,
    env: dict[str, str],
    cwd: Path | str,
    stdout: Path,
    stderr: Path,
    session: bool = False,
    preload: str | None = None,
) -> ForkedProcess:
    """`bonnieboard ARGS` with this environment and working directory, appending its output to these files;
    `session`: in a session and process group of its own; `preload`: a module imported first (a test-only hook)."""
    argv = [str(BONNIEBOARD), *map(str, args)]
    zygote = _the_zygote()
    request = {
        "argv": argv,
        "env": dict(env),
        "cwd": str(cwd),
        "stdout": str(stdout),
        "stderr": str(stderr),
        "session": session,
        "preload": preload,
    }
    return ForkedProcess(zygote, zygote.ask({"start": request})["pid"], argv)


def run(args: list, *, env: dict[str, str], cwd: Path | str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`bonnieboard ARGS` to its end, as subprocess.run(..., capture_output=True, text=True) runs it."""
    with tempfile.TemporaryDirectory(prefix="bonnieboard-command-") as directory:
        stdout, stderr = Path(directory) / "stdout", Path(directory) / "stderr"
        process = start(args, env=env, cwd=cwd, stdout=stdout, stderr=stderr)
        try:
            returncode = process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            raise
        return subprocess.CompletedProcess(process.args, returncode, stdout.read_text(), stderr.read_text())
