"""A sweep SIGKILLed after the board stored a run but before the sweep recorded it: the runner dies with it and
posts nothing more, and `--resume` unmounts the study's own leftover mount, asks the board which runs it
holds, skips that one and stores each (configuration, round) exactly once. A proxy between the runner and the
board holds the board's answer to the first post, so the kill lands in exactly that window."""

from __future__ import annotations

import http.client
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from tests.helpers import kernel_marks
from tests.live_server import live_server
from tests.runner.test_sweep import (
    _device_mounted,
    _get_json,
    _mounted,
    _plan,
    _start_sweep_until,
    _sweep,
)

pytestmark = kernel_marks("loop devices, mkfs and mounts")


@contextmanager
def answer_holding_proxy(upstream: str) -> Iterator[tuple[str, threading.Event, threading.Event]]:
    """A proxy to `upstream` that passes every request on and, for the first POST, holds the board's answer
    (already stored) until `release` is set: yields (its URL, answered: the board has answered, release)."""
    answered, release = threading.Event(), threading.Event()
    target = urlsplit(upstream)
    held = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def _forward(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            connection = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            connection.request(self.command, self.path, body=body or None, headers=headers)
            response = connection.getresponse()
            payload = response.read()
            if self.command == "POST" and held.acquire(blocking=False):
                answered.set()
                release.wait(timeout=120)
            try:
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("connection", "transfer-encoding", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the runner is gone: nobody waits for this answer

        do_GET = do_POST = _forward

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", answered, release
    finally:
        release.set()
        server.shutdown()
        server.server_close()


def _runner_processes(plan: Path) -> list[str]:
    """The command lines of every process of this study still alive (the sweep or a runner it started)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            words = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        text = " ".join(w.decode(errors="replace") for w in words)
        if "bonnieboard-runner" in text and (str(plan) in text or str(plan.parent / "mnt") in text):
            found.append(text)
    return found


def _assert_no_runner_outlives(plan: Path) -> None:
    """The sweep was killed: within seconds no runner of its study is left (the kernel's parent-death signal)."""
    deadline = time.monotonic() + 10
    while _runner_processes(plan) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _runner_processes(plan) == [], "the runner outlived the sweep"


def test_a_killed_sweep_resumes_without_storing_a_round_twice(runner_binary, loop_device, tmp_path):
    plan = _plan(tmp_path, loop_device, rounds="1")
    with live_server(f"sqlite:///{tmp_path / 'board.db'}") as server, answer_holding_proxy(server.url) as held:
        proxy_url, answered, release = held
        sweep = subprocess.Popen(
            [str(runner_binary), "sweep", str(plan), "--yes-destroy", loop_device, "--post", proxy_url],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert answered.wait(timeout=240), "the first run was never posted"
            # The board has stored the first run; the runner waits for the answer; the sweep has recorded nothing.
            progress = (tmp_path / "study.plan.sweep" / "progress").read_text()
            assert not re.search(r"^run ", progress, re.M)
            sweep.send_signal(signal.SIGKILL)
            sweep.wait(timeout=30)
        finally:
            if sweep.poll() is None:
                sweep.kill()
                sweep.wait()
        _assert_no_runner_outlives(plan)
        release.set()
        stored = _get_json(f"{server.url}/api/runs?tag=study=pytest-sweep")["items"]
        assert len(stored) == 1
        first = stored[0]
        # the sweep's own mount is left behind by the kill
        assert _mounted(tmp_path / "mnt")

        resumed = _sweep(runner_binary, plan, "--yes-destroy", loop_device, "--post", server.url, "--resume")
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        assert f"{loop_device} is still mounted on {tmp_path / 'mnt'} by the interrupted study: unmounting it" in (
            resumed.stderr
        )
        config = first["tags"]["config"]
        assert f"round 1, {config}: the board holds its run already (run {first['id']}): not run again" in (
            resumed.stderr
        )
        runs = _get_json(f"{server.url}/api/runs?tag=study=pytest-sweep")["items"]
        slots = sorted((run["tags"]["config"], run["tags"]["round"]) for run in runs)
        assert slots == [("ext4", "1"), ("xfs", "1")]
        assert len({run["tags"]["sweep_study"] for run in runs}) == 1
        # the compare link names both runs, the adopted one included
        compare = re.search(r"^Compare: (\S+)$", resumed.stdout, re.M)
        assert compare and str(first["id"]) in compare[1], resumed.stdout
    progress = (tmp_path / "study.plan.sweep" / "progress").read_text()
    assert sorted(re.findall(r"^run 1 (\S+) ", progress, re.M)) == ["ext4", "xfs"]
    assert not _mounted(tmp_path / "mnt") and not _device_mounted(loop_device)
    assert _runner_processes(plan) == []


def test_resume_leaves_a_mount_that_is_not_the_studys_own(runner_binary, loop_device, tmp_path):
    """Killed mid-run, the study leaves its mount; replaced by someone else's filesystem on the same mountpoint,
    that one is refused by --resume, not unmounted."""
    plan = _plan(tmp_path, loop_device, rounds="1")
    sweep, _ = _start_sweep_until(runner_binary, plan, loop_device, "Writing")
    try:
        sweep.send_signal(signal.SIGKILL)
        sweep.wait(timeout=30)
    finally:
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait()
    mountpoint = tmp_path / "mnt"
    progress = (tmp_path / "study.plan.sweep" / "progress").read_text()
    assert f"device {loop_device}\n" in progress and f"mountpoint {mountpoint}\n" in progress
    assert _mounted(mountpoint)
    _assert_no_runner_outlives(plan)
    assert subprocess.run(["umount", mountpoint]).returncode == 0
    assert subprocess.run(["mount", "-t", "tmpfs", "someone-elses", mountpoint]).returncode == 0
    try:
        resumed = _sweep(runner_binary, plan, "--yes-destroy", loop_device, "--resume")
        assert resumed.returncode == 2, resumed.stderr
        assert f"the mountpoint {mountpoint} has someone-elses mounted on it already" in resumed.stderr
        assert "unmounting" not in resumed.stderr and _mounted(mountpoint)
    finally:
        subprocess.run(["umount", mountpoint])
