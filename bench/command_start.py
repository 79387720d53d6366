"""What a test pays to start `bonnieboard`: a command (`ingest` of one line into a fresh SQLite file) and a server
(`serve` until /api/health answers, then SIGTERM), each started as a new process and forked by the tests' zygote
(tests/zygote.py), alternately in the same run, so that the host's load weighs on both alike.

CPU is the children's CPU (getrusage) a start adds; for a forked one, that of the command, which the zygote reaps,
read from the zygote's /proc stat. The zygote's own start, paid once per test process, is printed apart.

Usage: .venv/bin/python bench/command_start.py [--rounds 15]
Prints Markdown: median CPU-seconds and wall seconds per start, and their ratio.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import zygote
from tests.helpers import LINE_198
from tests.live_server import free_port

TICKS_S = os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def zygote_stat() -> list[str]:
    return Path(f"/proc/{zygote.pid()}/stat").read_text().rsplit(")", 1)[1].split()


def zygote_children_cpu_s() -> float:
    """The CPU of the commands the zygote has reaped (cutime + cstime of its /proc stat)."""
    stat = zygote_stat()
    return (int(stat[13]) + int(stat[14])) / TICKS_S


def ingest_fresh(directory: Path, env: dict[str, str]) -> None:
    completed = subprocess.run(
        [zygote.BONNIEBOARD, "ingest", directory / "line.csv"], env=env, cwd=directory, capture_output=True
    )
    assert completed.returncode == 0, completed.stderr


def ingest_forked(directory: Path, env: dict[str, str]) -> None:
    completed = zygote.run(["ingest", directory / "line.csv"], env=env, cwd=directory)
    assert completed.returncode == 0, completed.stderr


def serve_args() -> tuple[str, list[str]]:
    port = free_port()
    return f"http://127.0.0.1:{port}/api/health", ["serve", "--port", str(port)]


def until_healthy(url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.02)
    raise RuntimeError(f"no answer at {url}")


def serve_fresh(directory: Path, env: dict[str, str]) -> None:
    url, args = serve_args()
    with (directory / "log").open("a") as log:
        process = subprocess.Popen([zygote.BONNIEBOARD, *args], env=env, cwd=directory, stdout=log, stderr=log)
    until_healthy(url)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)


def serve_forked(directory: Path, env: dict[str, str]) -> None:
    url, args = serve_args()
    log = directory / "log"
    process = zygote.start(args, env=env, cwd=directory, stdout=log, stderr=log, session=True)
    until_healthy(url)
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


def measure(start: Callable[[Path, dict[str, str]], None], cpu: Callable[[], float]) -> tuple[float, float]:
    with tempfile.TemporaryDirectory(prefix="bonnieboard-bench-") as name:
        directory = Path(name)
        (directory / "line.csv").write_text(LINE_198 + "\n")
        env = os.environ | {"BONNIEBOARD_DATABASE_URL": f"sqlite:///{directory / 'b.db'}"}
        cpu_before, wall_before = cpu(), time.monotonic()
        start(directory, env)
        return cpu() - cpu_before, time.monotonic() - wall_before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    measure(ingest_forked, zygote_children_cpu_s)  # the zygote up, its imports done
    stat = zygote_stat()
    print(
        f"The zygote's own start (its imports), once per test process: {(int(stat[11]) + int(stat[12])) / TICKS_S:.2f} CPU-s\n"
    )
    cases = {
        "`bonnieboard ingest` (one line, a new SQLite file)": (ingest_fresh, ingest_forked),
        "`bonnieboard serve` until /api/health, then SIGTERM": (serve_fresh, serve_forked),
    }
    print(f"Medians of {rounds} rounds, alternating:\n")
    print("| start | new process CPU-s | forked CPU-s | ratio | new process wall s | forked wall s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (fresh, forked) in cases.items():
        samples: dict[str, list[tuple[float, float]]] = {"fresh": [], "forked": []}
        for _ in range(rounds):
            samples["fresh"].append(measure(fresh, children_cpu_s))
            samples["forked"].append(measure(forked, zygote_children_cpu_s))
        cpu = {kind: statistics.median(s[0] for s in values) for kind, values in samples.items()}
        wall = {kind: statistics.median(s[1] for s in values) for kind, values in samples.items()}
        print(
            f"| {name} | {cpu['fresh']:.2f} | {cpu['forked']:.2f} | {cpu['forked'] / cpu['fresh']:.2f} "
            f"| {wall['fresh']:.2f} | {wall['forked']:.2f} |"
        )


if __name__ == "__main__":
    main()
