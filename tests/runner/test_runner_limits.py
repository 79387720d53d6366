"""The runner's verdicts under limits the kernel enforces: a loop device throttled by the
cgroup's I/O controller with the runner in a memory cgroup too small for the file; the same file with
room in the page cache; a CPU quota on a tmpfs. Real cgroups (v1 or v2, whichever holds the controller),
a real loop device and a real ext4; every cgroup, mount and loop device is removed whatever happens.

Needs root. A kernel without a controller is a failure that names it, never a skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import kernel_marks
from tests.runner.test_runner import require_tool, run

pytestmark = [pytest.mark.slow, *kernel_marks("cgroups, a loop device and a mount")]

MiB = 1024 * 1024
# Slow enough that the throttle, not the loop device, sets the pace. Outside the throttle a block test waits for its
# fsync, which reaches the disk under the loop device's image, which the parallel tests keep busy: that can add 2 s
# to a test. At 8 MiB/s the throttle's 4 s a test still hold the majority of its time.
THROTTLE_BPS = 8 * MiB
THROTTLE = f"{THROTTLE_BPS // MiB} MiB/s read, {THROTTLE_BPS // MiB} MiB/s write"  # as the runner describes it
FILE_MIB = 32  # -s: the I/O tests take about 14 s at the throttle
MEMORY_LIMIT = 24 * MiB  # under the file: the page cache cannot hold it
CPU_QUOTA_US, CPU_PERIOD_US = 20_000, 100_000  # 0.2 CPU
BLOCK_TESTS = ("put_block", "rewrite", "get_block")
# controller name in v1 and in v2
CONTROLLERS = {"memory": ("memory", "memory"), "io": ("blkio", "io"), "cpu": ("cpu", "cpu")}


def _mounts() -> list[tuple[str, Path, set[str]]]:
    """(type, mount point, super options) of every cgroup mount."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        sep = fields.index("-")
        fstype = fields[sep + 1]
        if fstype in ("cgroup", "cgroup2"):
            point = Path(fields[4].replace("\\040", " "))
            found.append((fstype, point, set(fields[sep + 3].split(","))))
    return found


def _hierarchy(controller: str) -> tuple[str, Path]:
    """('v1' or 'v2', mount point) of the hierarchy that holds `controller`; fails naming it when none does."""
    v1_name, v2_name = CONTROLLERS[controller]
    for fstype, point, options in _mounts():
        if fstype == "cgroup" and v1_name in options:
            return "v1", point
    for fstype, point, _ in _mounts():
        if fstype == "cgroup2" and v2_name in (point / "cgroup.controllers").read_text().split():
            return "v2", point
    pytest.fail(
        f"this kernel has no {controller} cgroup controller (v1 '{v1_name}' or v2 '{v2_name}' in "
        "/proc/self/mountinfo): the runner's limits cannot be tested here"
    )


def _remove_cgroup(path: Path) -> None:
    """Moves any process left in the cgroup to its parent and removes it, retrying while the kernel
    still counts an exiting process."""
    if not path.exists():
        return
    for pid in (path / "cgroup.procs").read_text().split():
        with contextlib.suppress(OSError):
            (path.parent / "cgroup.procs").write_text(pid)
    for _ in range(50):
        try:
            path.rmdir()
            return
        except OSError:
            time.sleep(0.1)
    path.rmdir()  # the last try raises: a cgroup left behind is a failure


@contextlib.contextmanager
def cgroups(
    *, memory_bytes: int | None = None, io_limit: tuple[str, int] | None = None, cpu_quota: bool = False
) -> Iterator[list[Path]]:
    """New cgroups, one per hierarchy, holding the limits asked for: a memory limit, an I/O throttle
    (MAJ:MIN, bytes/s both ways), a CPU quota of CPU_QUOTA_US per CPU_PERIOD_US. Yields the cgroup.procs
    files a process writes its pid to; removes everything on the way out."""
    wanted = {"memory": memory_bytes is not None, "io": io_limit is not None, "cpu": cpu_quota}
    made: dict[Path, Path] = {}  # mount point -> the new cgroup
    enabled: list[tuple[Path, str]] = []  # v2 controllers this fixture enabled in a root's subtree_control
    try:
        for controller in (name for name, on in wanted.items() if on):
            version, mount = _hierarchy(controller)
            group = made.get(mount)
            if group is None:
                group = mount / f"bonnieboard-limits-{os.getpid()}"
                if version == "v2":
                    v2_name = CONTROLLERS[controller][1]
                    control = mount / "cgroup.subtree_control"
                    if v2_name not in control.read_text().split():
                        control.write_text(f"+{v2_name}")
                        enabled.append((control, v2_name))
                group.mkdir()
                made[mount] = group
            if controller == "memory":
                limit_file = "memory.limit_in_bytes" if version == "v1" else "memory.max"
                (group / limit_file).write_text(str(memory_bytes))
                if version == "v1":
                    # v1 keeps no dirty limit per cgroup: a buffered rewrite fills the cgroup with pages under a
                    # throttled writeback, and ext4's buffer heads (a GFP_NOFS charge, which cannot wait for
                    # writeback) then call the OOM killer on the runner. With it off, those charges go through
                    # and the rest wait for the writeback: the limit still keeps the file out of the page cache.
                    (group / "memory.oom_control").write_text("1")
            elif controller == "io":
                assert io_limit is not None
                device, bps = io_limit
                if version == "v1":
                    (group / "blkio.throttle.read_bps_device").write_text(f"{device} {bps}")
                    (group / "blkio.throttle.write_bps_device").write_text(f"{device} {bps}")
                else:
                    (group / "io.max").write_text(f"{device} rbps={bps} wbps={bps}")
            elif version == "v1":
                (group / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
                (group / "cpu.cfs_quota_us").write_text(str(CPU_QUOTA_US))
            else:
                (group / "cpu.max").write_text(f"{CPU_QUOTA_US} {CPU_PERIOD_US}")
        yield [group / "cgroup.procs" for group in made.values()]
    finally:
        for group in made.values():
            _remove_cgroup(group)
        for control, name in enabled:
            with contextlib.suppress(OSError):
                control.write_text(f"-{name}")


@contextlib.contextmanager
def throttled_writeback(device: str, bps: int) -> Iterator[list[Path]]:
    """A write throttle that holds the kernel's writeback of `device` (MAJ:MIN), whoever calls sync():
    under v1 the flusher writes as the root cgroup, so the rule goes on the root (for this device only,
    removed on the way out); under v2 writeback belongs to the cgroup that dirtied the pages, so the rule
    is a new cgroup's io.max. Yields the cgroup.procs files the process that dirties the pages joins."""
    version, mount = _hierarchy("io")
    if version == "v2":
        with cgroups(io_limit=(device, bps)) as procs:
            yield procs
        return
    rule = mount / "blkio.throttle.write_bps_device"
    rule.write_text(f"{device} {bps}")
    try:
        yield []
    finally:
        rule.write_text(f"{device} 0")  # 0 removes the device's rule


def oom_state(procs: list[Path]) -> str:
    """What the memory cgroup among `procs`' directories says of its OOM events, for a failure message."""
    for group in (p.parent for p in procs):
        for name in ("memory.oom_control", "memory.events"):
            if (group / name).exists():
                return f"{group / name}: " + " ".join((group / name).read_text().split())
    return "no memory cgroup"


def in_cgroups(procs: list[Path], command: list) -> list[str]:
    """`command` started inside the cgroups whose cgroup.procs files are given."""
    join = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 97; shift; done; shift; exec "$@"'
    return ["sh", "-c", join, "sh", *map(str, procs), "--", *map(str, command)]


@contextlib.contextmanager
def mounted_ext4(image_dir: Path, mnt: Path) -> Iterator[dict]:
    """A fresh 160 MiB ext4 whose image is in `image_dir`, on a loop device of its own, mounted at `mnt` (made
    here): its mount point, its device and MAJ:MIN. Unmounted, detached and its image removed on the way out."""
    losetup = require_tool("losetup", "mount")
    mkfs = require_tool("mkfs.ext4", "e2fsprogs")
    image = image_dir / "ext4.img"
    mnt.mkdir()
    assert run(["truncate", "-s", "160M", image]).returncode == 0
    made = run([mkfs, "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", image])  # no writes behind
    assert made.returncode == 0, made.stderr
    attached = run([losetup, "--find", "--show", image])
    assert attached.returncode == 0, attached.stderr
    device = attached.stdout.strip()
    try:
        mounted = run(["mount", device, mnt])
        assert mounted.returncode == 0, mounted.stderr
        try:
            majmin = (Path("/sys/class/block") / Path(device).name / "dev").read_text().strip()
            yield {"mnt": mnt, "device": device, "name": Path(device).name, "majmin": majmin}
        finally:
            if run(["umount", mnt]).returncode != 0:
                time.sleep(1)
                run(["umount", "-l", mnt])
    finally:
        run([losetup, "-d", device])
        image.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def loop_ext4(tmp_path_factory) -> Iterator[dict]:
    """An ext4 on a loop device: its mount point, its device and MAJ:MIN."""
    tmp = tmp_path_factory.mktemp("limits")
    with mounted_ext4(tmp, tmp / "mnt") as loop:
        yield loop


def run_io_tests(runner: Path, directory: Path, doc_path: Path, procs: list[Path], *extra: str) -> dict:
    """The I/O tests on a FILE_MIB file (no file tests), in the cgroups given; returns the run's tests."""
    command = [runner, "-d", directory, "-s", f"{FILE_MIB}:8192:64", "-r", "0", "-n", "0", *extra]
    proc = run(
        in_cgroups(procs, [*command, "-q", "--json", doc_path]) if procs else [*command, "-q", "--json", doc_path]
    )
    assert proc.returncode == 0, f"{proc.stderr or 'no message'} ({oom_state(procs)})"
    return json.loads(doc_path.read_text())


def test_a_throttled_loop_device_in_a_small_memory_cgroup_is_device_bound(runner_binary, loop_ext4, tmp_path):
    """Case 1 and 2 of the issue: the file (32 MiB) is under twice the memory cgroup's limit (24 MiB), which
    said `cached` before; the device read and wrote it at the throttle's rate, so the block tests are
    device_bound, naming the throttle, though the throttle holds the device's utilisation low.

    -D (O_DIRECT for put_block): under cgroup v1 the kernel's flusher writes a cgroup's dirty pages back as
    the root cgroup's, unthrottled, so how much of a buffered put_block the throttle sees depends on when
    the flusher ran (0.2 to 1.7 s here). A throttle on the root cgroup would catch the flusher too, but the
    dirty pages it then holds back fill the small memory cgroup, and v1 has the runner killed for it."""
    doc_path = tmp_path / "doc.json"
    with cgroups(memory_bytes=MEMORY_LIMIT, io_limit=(loop_ext4["majmin"], THROTTLE_BPS)) as procs:
        doc = run_io_tests(runner_binary, loop_ext4["mnt"], doc_path, procs, "-f", "-D")
    cgroup = doc["system"]["cgroup"]
    assert cgroup["memory_limit_bytes"] == MEMORY_LIMIT, cgroup
    (limit,) = cgroup["io_limits"]
    assert limit["device"] == loop_ext4["majmin"] and limit["name"] == loop_ext4["name"], limit
    assert limit["read_bps"] == limit["write_bps"] == THROTTLE_BPS, limit
    tests = doc["runs"][0]["tests"]
    for name in BLOCK_TESTS:
        limiter = tests[name]["limiter"]
        evidence = limiter["evidence"]
        # the whole verdict in a failure's message: pytest shortens a dict's repr past what tells why
        whole = f"{name}: {json.dumps(limiter, indent=1)}"
        assert limiter["code"] == "device_bound", whole
        assert limiter["text"].startswith(f"throttled to {THROTTLE} on {loop_ext4['name']}"), whole
        assert evidence["throttle"].startswith(THROTTLE), whole
        assert evidence["throttle_pct"] >= 50, whole
        assert evidence["file_vs_ram"] == pytest.approx(FILE_MIB * MiB / MEMORY_LIMIT), evidence
    get_block = tests["get_block"]["limiter"]["evidence"]
    # The device moved most of it, not the cache: rewrite leaves some of the file's pages in the cgroup's
    # 24 MiB (28 of the 32 MiB came from the device in one run under load, all 32 in most).
    assert get_block["device_read_bytes"] >= 0.75 * FILE_MIB * MiB, get_block
    assert get_block["cgroup_read_bytes"] >= 0.75 * FILE_MIB * MiB, get_block
    assert get_block["device_busiest"], get_block  # the loop device or the disk under its image (others use it too)


def test_the_same_file_with_room_in_the_page_cache_is_cached(runner_binary, loop_ext4, tmp_path):
    """No limit: the file fits the page cache, the device reads nothing during get_block."""
    doc = run_io_tests(runner_binary, loop_ext4["mnt"], tmp_path / "doc.json", [], "-f")
    assert doc["system"]["cgroup"]["io_limits"] == []
    limiter = doc["runs"][0]["tests"]["get_block"]["limiter"]
    assert limiter["code"] == "cached", limiter
    assert limiter["evidence"]["judged_on"] == "read" and limiter["evidence"]["device_share_pct"] < 50, limiter


def test_a_cpu_quota_on_tmpfs_makes_per_char_cpu_bound_naming_the_quota(runner_binary, tmp_path):
    """Case 4: a 0.2-CPU quota sets the pace of one byte per call; the verdict names the quota, not
    other tasks waiting for a CPU."""
    shm = Path("/dev/shm")
    assert run(["stat", "-f", "-c", "%T", shm]).stdout.strip() == "tmpfs"
    scratch = Path(tempfile.mkdtemp(dir=shm, prefix="runner-limits-"))
    try:
        with cgroups(cpu_quota=True) as procs:
            proc = run(
                in_cgroups(
                    procs,
                    [
                        runner_binary,
                        "-d",
                        scratch,
                        "-s",
                        "4:8192:64",
                        "-r",
                        "0",
                        "-n",
                        "0",
                        "-f1",
                        "-q",
                        "--json",
                        tmp_path / "doc.json",
                    ],
                )
            )
            assert proc.returncode == 0, proc.stderr
    finally:
        shutil.rmtree(scratch)
    doc = json.loads((tmp_path / "doc.json").read_text())
    assert doc["system"]["cgroup"]["cpu_quota_cores"] == pytest.approx(0.2), doc["system"]["cgroup"]
    tests = doc["runs"][0]["tests"]
    for name in ("putc", "getc"):
        limiter = tests[name]["limiter"]
        assert limiter["code"] == "cpu_bound", (name, limiter)
        assert limiter["text"].startswith("the CPU quota of 0.20 CPU"), limiter
        assert limiter["evidence"]["cpu_quota_cores"] == pytest.approx(0.2), limiter
        assert limiter["evidence"]["cpu_of_quota_pct"] >= 75, limiter


def test_a_tmpfs_create_that_waits_in_sync_for_another_disk_is_noisy_naming_it(runner_binary, loop_ext4, tmp_path):
    """Case 5: a file test on a tmpfs ends with sync(), which waits for every filesystem's dirty data. With
    24 MiB dirty on a loop device whose writeback is throttled to 8 MiB/s, seq_create spends most of its
    time in sync(): noisy, naming the loop device, not "no device is involved"."""
    shm = Path("/dev/shm")
    scratch = Path(tempfile.mkdtemp(dir=shm, prefix="runner-limits-"))
    dirty = loop_ext4["mnt"] / "dirty"
    try:
        with throttled_writeback(loop_ext4["majmin"], 8 * MiB) as procs:
            dd = ["dd", "if=/dev/zero", f"of={dirty}", "bs=1M", "count=24", "status=none"]  # no sync: stays dirty
            made = run(in_cgroups(procs, dd) if procs else dd)
            assert made.returncode == 0, made.stderr
            proc = run(
                [runner_binary, "-d", scratch, "-s", "0", "-r", "0", "-n", "1", "-q", "--json", tmp_path / "doc.json"]
            )
            assert proc.returncode == 0, proc.stderr
    finally:
        shutil.rmtree(scratch)
        dirty.unlink(missing_ok=True)
    limiter = json.loads((tmp_path / "doc.json").read_text())["runs"][0]["tests"]["seq_create"]["limiter"]
    assert limiter["code"] == "noisy", limiter
    assert "went to sync(), which waits for every filesystem's dirty data" in limiter["text"], limiter
    assert limiter["evidence"]["sync_pct"] >= 50, limiter
    # the loop device, and the disk under its image file that its writes reach too
    waited_for = limiter["evidence"]["sync_waited_for"]
    # another loop device named here is one some other test had attached: on failure, say which, and to what
    assert loop_ext4["name"] in waited_for.split(", not the test's device")[0], (
        limiter,
        run(["losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE"]).stdout,
    )
    assert waited_for.endswith("(the test's files are on no block device)"), limiter


def test_the_ram_warning_takes_the_memory_cgroups_limit_as_the_verdicts_do(runner_binary, tmp_path):
    """-r 16 lets a 32 MiB file through bonnie++'s rule; in a 24 MiB memory cgroup the page cache can hold 24 MiB,
    not the machine's RAM: the warning says so with the cgroup's figure (it named the physical RAM)."""
    doc_path = tmp_path / "doc.json"
    command = [runner_binary, "-d", tmp_path, "-s", f"{FILE_MIB}:8192", "-r", "16", "-n", "0", "-f", "-q"]
    with cgroups(memory_bytes=MEMORY_LIMIT) as procs:
        proc = run(in_cgroups(procs, [*command, "--json", doc_path]))
    assert proc.returncode == 0, proc.stderr
    warnings = json.loads(doc_path.read_text())["warnings"]
    assert (
        f"file size {FILE_MIB} MiB is less than twice the memory cgroup's limit (24 MiB; -r 16 was given): the I/O "
        "results may measure the page cache"
    ) in warnings, warnings
