"""A real kernel step in a machine's history: short runs of the runner on ext4 on a loop device whose throttle
(the cgroup I/O controller, v1 blkio or v2 io.max) is halved partway, written to a fresh directory as CSV lines
and documents. `make_throttle_step_series` is what an end-to-end test posts to the board, to check that
/api/history finds the change at the first run under the new throttle; the test here checks the data itself.

Needs root. A kernel without the controller is a failure that names it, never a skip.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.browser_support import running_server
from tests.helpers import kernel_marks
from tests.runner.test_runner import run
from tests.runner.test_runner_limits import _hierarchy, cgroups, in_cgroups, mounted_ext4, oom_state

pytestmark = [pytest.mark.slow, *kernel_marks("cgroups, a loop device and a mount")]

MiB = 1024 * 1024
# A 32 MiB file takes 2 s per block test: never +++++ (over bonnie++'s 0.5 s), and slow enough that the throttle,
# not a loaded machine's CPU, sets the pace (at 32 MiB/s, under a load of 6-9, put_block ran at 13-34 MiB/s).
BEFORE_BPS = 16 * MiB
AFTER_BPS = 8 * MiB  # half: the block tests' rates halve, far outside this machine's run-to-run noise
FILE_MIB = 32
# The page cache must not hold the file, or get_block reads memory, not the throttled device.
MEMORY_LIMIT = 24 * MiB
# -D: put_block writes with O_DIRECT, because under cgroup v1 the kernel's flusher writes buffered pages back
# as the root cgroup, past the throttle. -f: per-character tests cannot run on an O_DIRECT file. -n 0: the
# file tests do not go through the throttle (their writes are the flusher's), and leaving them out keeps a run
# near 10 s at 16 MiB/s and 16 s at 8 MiB/s, most of it the block tests and the seek test's fixed 3 s.
RUNNER_OPTIONS = ("-s", f"{FILE_MIB}:8192:64", "-r", "16", "-n", "0", "-f", "-D")
BLOCK_TESTS = {"put_block": 11, "rewrite": 13, "get_block": 17}  # CSV column of each rate


@contextlib.contextmanager
def _loop_ext4_in_memory(tmp_path: Path) -> Iterator[dict]:
    """A fresh ext4 on a loop device, mounted in tmp_path, its image in memory (/dev/shm): on the machine's disk,
    other jobs' writes set the pace of put_block (11 MB/s under a 16 MiB/s throttle), and the step to measure is
    the throttle's."""
    image_dir = Path(tempfile.mkdtemp(dir="/dev/shm", prefix="bonnieboard-step-"))
    try:
        with mounted_ext4(image_dir, tmp_path / "mnt") as loop:
            yield loop
    finally:
        image_dir.rmdir()


def _set_throttle(procs: list[Path], majmin: str, bps: int) -> None:
    """Changes the read and write throttle of the cgroup (one of `procs`' directories) that holds the I/O
    controller; runs started afterwards are held to `bps`."""
    version, mount = _hierarchy("io")
    (group,) = (p.parent for p in procs if p.parent.parent == mount)
    if version == "v1":
        (group / "blkio.throttle.read_bps_device").write_text(f"{majmin} {bps}")
        (group / "blkio.throttle.write_bps_device").write_text(f"{majmin} {bps}")
    else:
        (group / "io.max").write_text(f"{majmin} rbps={bps} wbps={bps}")


def make_throttle_step_series(
    runner: Path, tmp_path: Path, before_runs: int, after_runs: int, *, machine: str = "kernel-step"
) -> list[tuple[str, dict]]:
    """`before_runs` runs at BEFORE_BPS, then `after_runs` at AFTER_BPS, one after another, on one fresh
    throttled loop device: the (CSV line, document) of each run in run order; run number before_runs + 1 (1-based)
    is the first under the new throttle. Also written to tmp_path/series/: lines.csv and docs/NNN.json."""
    out = tmp_path / "series"
    (out / "docs").mkdir(parents=True)
    series: list[tuple[str, dict]] = []
    with (
        _loop_ext4_in_memory(tmp_path) as loop,
        cgroups(memory_bytes=MEMORY_LIMIT, io_limit=(loop["majmin"], BEFORE_BPS)) as procs,
    ):
        for number in range(1, before_runs + after_runs + 1):
            if number == before_runs + 1:
                _set_throttle(procs, loop["majmin"], AFTER_BPS)
            doc_path = out / "docs" / f"{number:03d}.json"
            command = [runner, "-d", loop["mnt"], *RUNNER_OPTIONS, "-q", "-m", machine, "--json", doc_path]
            proc = run(in_cgroups(procs, command))
            assert proc.returncode == 0, f"run {number}: {proc.stderr or 'no message'} ({oom_state(procs)})"
            (line,) = proc.stdout.splitlines()
            series.append((line, json.loads(doc_path.read_text())))
    (out / "lines.csv").write_text("".join(line + "\n" for line, _ in series))
    return series


def test_halving_the_throttle_halves_the_block_rates_and_the_documents_say_so(runner_binary, tmp_path):
    """Five runs at 16 MiB/s, five at 8 MiB/s (about 2 min): every run after the step is slower in each block
    test than the median before it, by far more than noise, and each document names the throttle it ran under.
    Posted to a real board as the runner posts them, the history finds each block test's change at the 6th run,
    the first under the new throttle, and names it a setup change: the throttle, 16 → 8 MiB/s. Five a side: with
    three, a loaded machine's spread (a fifth of a rate) can leave a halving short of a machine's threshold."""
    before, after = 5, 5
    series = make_throttle_step_series(runner_binary, tmp_path, before, after)
    assert len(series) == before + after
    written = (tmp_path / "series" / "lines.csv").read_text().splitlines()
    assert written == [line for line, _ in series]
    assert sorted(p.name for p in (tmp_path / "series" / "docs").iterdir()) == [
        f"{n:03d}.json" for n in range(1, before + after + 1)
    ]
    for number, (line, doc) in enumerate(series, start=1):
        assert doc["runs"][0]["csv"] == line
        (limit,) = doc["system"]["cgroup"]["io_limits"]
        want = BEFORE_BPS if number <= before else AFTER_BPS
        assert limit["read_bps"] == limit["write_bps"] == want, (number, limit)
        assert doc["system"]["cgroup"]["memory_limit_bytes"] == MEMORY_LIMIT
    starts = [doc["started_at"] for _, doc in series]
    assert starts == sorted(starts)  # run order is time order: what a history plots
    for test, column in BLOCK_TESTS.items():
        rates = [int(line.split(",")[column]) for line, _ in series]  # a +++++ here fails: 1 s is over 0.5 s
        median_before = statistics.median(rates[:before])
        # the throttle halves the rate; what the device does besides (the journal, the other workers' load)
        # moves a run by a fifth at most here, so 0.8 is far from both
        assert all(rate < 0.8 * median_before for rate in rates[before:]), (test, rates)
        assert statistics.median(rates[before:]) < 0.7 * median_before, (test, rates)
    with running_server(tmp_path / "board.db") as base_url:
        ids = []
        for line, document in series:
            answer = httpx.post(
                f"{base_url}/api/runs", json={"csv": line, "document": document, "tags": {"fs": "ext4"}}
            )
            assert answer.status_code == 201, answer.text
            ids += answer.json()["created"]
        history = httpx.get(f"{base_url}/api/history", params={"machine": "kernel-step"}).json()
    (configuration,) = history["series"]
    for test in BLOCK_TESTS:
        (rate,) = [t for t in configuration["tests"] if t["test"] == test and t["measure"] == "rate"]
        (change,) = rate["changes"]
        assert change["run"] == ids[before], (test, change)
        assert (
            change["kind"] == "setup_change" and "16 MiB/s" in change["label"] and "→ read 8 MiB/s" in change["label"]
        )
