"""`sweep` never erases blocks that are in use under another name, on real loop devices: a second loop device
on a mounted image, a loop device whose file lies on the named device's filesystem (mounted, and lazily
unmounted while that loop device keeps it alive), a btrfs of two devices mounted through the other one, and
a device another process holds open. Each is refused before anything is written, naming the other name and
who uses it; the filesystem in use reads back whole and its checker finds it clean. (md and device-mapper
holders are refused by the same sysfs check, which runner/tests/test_sweep_safety.c holds on a fixture tree:
this machine's kernel has neither.) Every mount and loop device is removed whatever happens."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from tests.helpers import kernel_marks
from tests.runner.test_runner import require_tool, run
from tests.runner.test_sweep import _device_mounted, _head_hash, _plan, _sweep

pytestmark = kernel_marks("loop devices, mkfs and mounts")


@contextmanager
def attached(backing: Path | str) -> Iterator[str]:
    """A loop device on `backing` (a file or a device), detached afterwards."""
    done = run([require_tool("losetup", "mount"), "--find", "--show", backing])
    assert done.returncode == 0, done.stderr
    device = done.stdout.strip()
    try:
        yield device
    finally:
        run(["losetup", "-d", device])


@contextmanager
def mounted(device: str, target: Path, *options: str) -> Iterator[Path]:
    target.mkdir(exist_ok=True)
    done = run(["mount", *options, device, target])
    assert done.returncode == 0, done.stderr
    try:
        yield target
    finally:
        run(["umount", target])


@contextmanager
def frozen(target: Path) -> Iterator[None]:
    """The filesystem mounted on `target` flushed and held still: a mounted ext4 writes its journal, bitmaps and
    inode tables back on its own a few seconds after a write, and those lie in the first MiB of the image, where
    `_head_hash` looks for what the runner might have written."""
    done = run([require_tool("fsfreeze", "util-linux"), "--freeze", target])
    assert done.returncode == 0, done.stderr
    try:
        yield
    finally:
        run(["fsfreeze", "--unfreeze", target])


def _image(tmp_path: Path, name: str = "disk.img", size: str = "400M") -> Path:
    image = tmp_path / name
    assert run(["truncate", "-s", size, image]).returncode == 0
    return image


def _refused(runner_binary: Path, tmp_path: Path, device: str) -> str:
    """The sweep of a plan naming `device`, refused with exit 2 before anything is made: its one-line message."""
    plan = _plan(tmp_path, device, rounds="1")
    refused = _sweep(runner_binary, plan, "--yes-destroy", device)
    assert refused.returncode == 2, refused.stderr
    assert "mkfs" not in refused.stderr and not (tmp_path / "study.plan.sweep").exists()
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1, refused.stderr
    return lines[0]


def test_a_second_loop_device_on_a_mounted_image_is_refused_and_the_filesystem_survives(runner_binary, tmp_path):
    image = _image(tmp_path)
    assert run(["mkfs.ext4", "-q", "-F", image]).returncode == 0
    with attached(image) as first, attached(image) as second, mounted(first, tmp_path / "in-use") as target:
        (target / "precious.txt").write_text("keep me\n")
        with frozen(target):
            before = _head_hash(second)
            message = _refused(runner_binary, tmp_path, second)
            assert _head_hash(second) == before
        assert message == (
            f"bonnieboard-runner sweep: refusing to erase {second}: {Path(first).name} (attached to the same "
            f"file {image}) is mounted on {target}: unmount it first if it is really scratch"
        )
        assert (target / "precious.txt").read_text() == "keep me\n"
    checked = run(["e2fsck", "-fn", image])
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_same_image_at_offsets_that_do_not_overlap_is_other_blocks(runner_binary, tmp_path):
    """Two loop devices on one file, one at 0 and one past the other's end: the one not mounted may be erased."""
    image = _image(tmp_path, size="800M")
    with ExitStack() as stack:
        low = run(["losetup", "--find", "--show", "--sizelimit", str(400 << 20), image]).stdout.strip()
        stack.callback(run, ["losetup", "-d", low])
        high = run(["losetup", "--find", "--show", "--offset", str(400 << 20), image]).stdout.strip()
        stack.callback(run, ["losetup", "-d", high])
        assert low and high
        assert run(["mkfs.ext4", "-q", "-F", low]).returncode == 0
        stack.enter_context(mounted(low, tmp_path / "in-use"))
        plan = _plan(tmp_path, high, rounds="1")
        dry = _sweep(runner_binary, plan, "--yes-destroy", high, "--dry-run")
        assert dry.returncode == 0, dry.stderr


def test_a_loop_device_on_a_file_inside_the_device_is_refused_even_after_a_lazy_unmount(runner_binary, tmp_path):
    image = _image(tmp_path)
    assert run(["mkfs.ext4", "-q", "-F", image]).returncode == 0
    with attached(image) as outer:
        target = tmp_path / "outer"
        target.mkdir()
        assert run(["mount", outer, target]).returncode == 0
        lazily_unmounted = False
        try:
            inner_file = _image(target, "inner.img", "40M")
            with attached(inner_file) as inner:

                def user(backing: Path | str) -> str:
                    return (
                        f"bonnieboard-runner sweep: refusing to erase {outer}: {Path(inner).name}'s backing file "
                        f"{backing} lies on the filesystem of {Path(outer).name}: detach it (losetup -d {inner}) if it "
                        "is really scratch"
                    )

                assert _refused(runner_binary, tmp_path, outer) == user(inner_file)
                # Unmounted lazily, the filesystem lives on for the loop device that holds its file: mountinfo no
                # longer shows it, the loop device does.
                assert run(["umount", "-l", target]).returncode == 0
                lazily_unmounted = True
                assert not _device_mounted(outer)
                # the path the kernel gives the file now, relative to the detached filesystem: /inner.img
                backing = (Path("/sys/block") / Path(inner).name / "loop" / "backing_file").read_text().strip()
                assert _refused(runner_binary, tmp_path, outer) == user(backing)
        finally:
            if not lazily_unmounted:
                run(["umount", target])
    checked = run(["e2fsck", "-fn", image])
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_btrfs_member_mounted_through_the_other_device_is_refused(runner_binary, tmp_path):
    require_tool("mkfs.btrfs", "btrfs-progs")
    with attached(_image(tmp_path, "a.img")) as first, attached(_image(tmp_path, "b.img")) as second:
        assert run(["mkfs.btrfs", "-q", "-f", "-d", "raid1", "-m", "raid1", first, second]).returncode == 0
        with mounted(first, tmp_path / "pool") as pool:
            (pool / "precious.txt").write_text("keep me\n")
            run(["sync"])
            message = _refused(runner_binary, tmp_path, second)
            assert message == (
                f"bonnieboard-runner sweep: refusing to erase {second}: {Path(second).name} is a device of the btrfs "
                f"filesystem mounted on {pool} (through {first}): unmount it first if it is really scratch"
            )
            assert (pool / "precious.txt").read_text() == "keep me\n"
        checked = run(["btrfs", "check", "--readonly", first])
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_device_another_process_holds_open_is_refused_by_its_pid(runner_binary, tmp_path):
    with attached(_image(tmp_path)) as device:
        with open(device, "rb") as held:
            holder = subprocess.Popen(["sleep", "60"], stdin=held)
        try:
            message = _refused(runner_binary, tmp_path, device)
            assert message.endswith(
                f"refusing to erase {device}: {Path(device).name} is open by pid {holder.pid} (sleep): stop it first "
                "if it is really scratch"
            )
        finally:
            holder.kill()
            holder.wait()
