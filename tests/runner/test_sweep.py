"""`bonnieboard-runner sweep` on real loop devices, with real mkfs.ext4 and mkfs.xfs, posting to a served
board: a study's runs arrive tagged, in a seeded interleaved order; every refusal leaves the device as it
was; an interrupted study leaves nothing mounted and resumes; bad plans and failing commands name what
failed. Every loop device and mount is removed whatever happens. The sample study in sample_data/ is
checked against its own progress file and the manifest that loads it."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from app.bonnie import STATUS_OK, TESTS
from tests.live_server import live_server
from tests.parsing_oracle import parse_text
from tests.runner.test_runner import require_tool, run

# Loop devices, mounts and cgroups are the kernel's, shared by every test process: `make test` runs the tests marked
# root in a process of their own, one at a time.
pytestmark = pytest.mark.root

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "sample_data" / "study-ext4-xfs"
SMALL = "-s 32M -r 0 -n 1"

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: loop devices, mkfs and mounts")


def _mounted(path: Path | str) -> bool:
    target = str(path).replace(" ", "\\040")
    return any(line.split()[4] == target for line in Path("/proc/self/mountinfo").read_text().splitlines())


def _majmin(device: str) -> str:
    return (Path("/sys/class/block") / Path(device).name / "dev").read_text().strip()


def _device_mounted(device: str) -> bool:
    majmin = _majmin(device)
    return any(line.split()[2] == majmin for line in Path("/proc/self/mountinfo").read_text().splitlines())


def _head_hash(device: str) -> str:
    """The first 1 MiB and the 64 KiB where btrfs and others keep their superblocks: what a mkfs rewrites."""
    with open(device, "rb") as disk:
        return hashlib.sha256(disk.read(1 << 20)).hexdigest()


def _plan(
    tmp_path: Path,
    device: str,
    *,
    rounds: str = "2",
    seed: str | None = "4242",
    runner: str = SMALL,
    ext4_mkfs: str = "mkfs.ext4 -q -F",
) -> Path:
    lines = [
        f"device = {device}   # the scratch device",
        f"mountpoint = {tmp_path / 'mnt'}",
        f"rounds = {rounds}",
        "order = interleaved",
        *([f"seed = {seed}"] if seed is not None else []),
        f"runner = {runner}",
        "tags = study=pytest-sweep raid=none",
        "",
        "[ext4]",
        f"mkfs = {ext4_mkfs}",
        "mount_options = noatime",
        "tags = fs=ext4 journal=ordered",
        "",
        "[xfs]",
        "mkfs = mkfs.xfs -q -f",
        "tags = fs=xfs journal=log",
    ]
    plan = tmp_path / "study.plan"
    plan.write_text("\n".join(lines) + "\n")
    return plan


def _sweep(runner: Path, plan: Path, *args, **kw) -> subprocess.CompletedProcess:
    return run([runner, "sweep", plan, *args], cwd=plan.parent, timeout=600, **kw)


def _get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def _progress_orders(progress: str) -> dict[int, list[str]]:
    return {int(m[1]): m[2].split() for m in re.finditer(r"^order (\d+) (.+)$", progress, re.M)}


@needs_root
def test_a_two_configuration_study_posts_four_tagged_runs_in_a_seeded_interleaved_order(
    runner_binary, loop_device, tmp_path
):
    plan = _plan(tmp_path, loop_device)
    with live_server(f"sqlite:///{tmp_path / 'board.db'}") as server:
        done = _sweep(runner_binary, plan, "--yes-destroy", loop_device, "--post", server.url)
        assert done.returncode == 0, done.stderr[-3000:]
        listed = _get_json(f"{server.url}/api/runs?tag=study=pytest-sweep")["items"]
        assert len(listed) == 4
        details = [_get_json(f"{server.url}/api/runs/{item['id']}") for item in listed]
        tags = sorted((d["tags"]["config"], d["tags"]["round"]) for d in details)
        assert tags == [("ext4", "1"), ("ext4", "2"), ("xfs", "1"), ("xfs", "2")]
        study_id = re.search(r"^study ([0-9a-f]{16})$", (tmp_path / "study.plan.sweep" / "progress").read_text(), re.M)
        assert study_id, "the progress file names the study"
        for d in details:
            fs = d["tags"]["config"]
            assert d["tags"] | {} == {
                "sweep_study": study_id[1],
                "study": "pytest-sweep",
                "raid": "none",
                "fs": fs,
                "journal": "ordered" if fs == "ext4" else "log",
                "config": fs,
                "round": d["tags"]["round"],
                "order_seed": "4242",
            }
        # The printed compare URL lists the four runs, groups by config, the first configuration the baseline.
        compare = re.search(r"^Compare: (\S+)$", done.stdout, re.M)
        assert compare, done.stdout
        url = compare[1]
        assert url.startswith(f"{server.url}/compare?runs=") and "&group=config&baseline=" in url
        ids = [int(i) for i in re.search(r"runs=([\d,]+)", url)[1].split(",")]
        assert sorted(ids) == sorted(item["id"] for item in listed)
        by_id = {d["id"]: d["tags"]["config"] for d in details}
        assert [by_id[i] for i in ids] == ["ext4", "ext4", "xfs", "xfs"]
        assert int(re.search(r"baseline=(\d+)", url)[1]) == ids[0]
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200
        # fs and journal vary between the configurations: the matrix of the two
        matrix = re.search(r"^Matrix: +(\S+)$", done.stdout, re.M)
        assert matrix and "/matrix?rows=fs&cols=journal&runs=" in matrix[1], done.stdout
    # The order is recorded, and it is the one the seed gives: run it again as a dry run with the same seed.
    progress = (tmp_path / "study.plan.sweep" / "progress").read_text()
    assert "seed 4242" in progress
    orders = _progress_orders(progress)
    assert set(orders) == {1, 2} and all(sorted(o) == ["ext4", "xfs"] for o in orders.values())
    ran = re.findall(r"^run (\d+) (\S+) exit=0 ids=\d+ csv=1\.98,", progress, re.M)
    assert [name for _, name in ran] == orders[1] + orders[2]
    # the progress shows each run's step, round and configuration, elapsed and time left
    assert re.search(r"sweep: round 2/2, \S+ \(2/2\), \d+:\d\d elapsed, about \d+:\d\d left: ", done.stderr)
    assert not _mounted(tmp_path / "mnt") and not _device_mounted(loop_device)
    # every run keeps its evidence document and CSV line
    for rnd, name in ran:
        doc = json.loads((tmp_path / "study.plan.sweep" / f"r0{rnd}-{name}.json").read_text())
        assert doc["system"]["filesystem"]["type"] == name, doc["system"]["filesystem"]
        assert f"--tag config={name}" in " ".join(doc["command_line"])


@needs_root
def test_the_same_seed_gives_the_same_order_and_a_dry_run_touches_nothing(runner_binary, loop_device, tmp_path):
    assert run(["mkfs.ext4", "-q", "-F", loop_device]).returncode == 0
    before = _head_hash(loop_device)
    plan = _plan(tmp_path, loop_device, rounds="3")
    dry = _sweep(runner_binary, plan, "--yes-destroy", loop_device, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"mkfs.xfs -q -f {loop_device}" in dry.stdout and f"mkfs.ext4 -q -F {loop_device}" in dry.stdout
    assert f"mount -o noatime {loop_device} {tmp_path / 'mnt'}" in dry.stdout
    assert f"-s 32M -r 0 -n 1 -d {tmp_path / 'mnt'}" in dry.stdout and "--tag order_seed=4242" in dry.stdout
    assert "signature (ext2/3/4 filesystem)" in dry.stderr
    rounds = [line.split()[3:] for line in dry.stdout.splitlines() if re.match(r"# round \d:", line)]
    assert len(rounds) == 3 and all(sorted(r) == ["ext4", "xfs"] for r in rounds)
    again = _sweep(runner_binary, plan, "--yes-destroy", loop_device, "--dry-run")
    assert again.stdout == dry.stdout
    # nothing was made, mounted or written
    assert _head_hash(loop_device) == before
    assert not (tmp_path / "mnt").exists() and not (tmp_path / "study.plan.sweep").exists()
    assert not _device_mounted(loop_device)


@needs_root
def test_a_device_mounted_elsewhere_is_refused_and_its_files_survive(runner_binary, loop_device, tmp_path):
    assert run(["mkfs.ext4", "-q", "-F", loop_device]).returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert run(["mount", loop_device, elsewhere]).returncode == 0
    try:
        (elsewhere / "precious.txt").write_text("keep me\n")
        plan = _plan(tmp_path, loop_device)
        refused = _sweep(runner_binary, plan, "--yes-destroy", loop_device)
        assert refused.returncode == 2, refused.stderr
        assert f"{Path(loop_device).name} is mounted on {elsewhere}" in refused.stderr
        assert "mkfs" not in refused.stderr
        assert (elsewhere / "precious.txt").read_text() == "keep me\n"
        assert not (tmp_path / "study.plan.sweep").exists()
    finally:
        run(["umount", elsewhere])
    # still the same filesystem with the file on it
    assert run(["mount", loop_device, elsewhere]).returncode == 0
    try:
        assert (elsewhere / "precious.txt").read_text() == "keep me\n"
    finally:
        run(["umount", elsewhere])


@needs_root
def test_a_device_with_an_ext4_signature_must_be_named_exactly(runner_binary, loop_device, tmp_path):
    assert run(["mkfs.ext4", "-q", "-F", loop_device]).returncode == 0
    before = _head_hash(loop_device)
    other_name = tmp_path / "the-scratch-disk"
    other_name.symlink_to(loop_device)
    plan = _plan(tmp_path, loop_device)
    refused = _sweep(runner_binary, plan, "--yes-destroy", other_name)
    assert refused.returncode == 1, refused.stderr
    assert f"--yes-destroy {other_name} is {loop_device} under another name" in refused.stderr
    assert "signature (ext2/3/4 filesystem)" in refused.stderr
    missing = _sweep(runner_binary, plan)
    assert missing.returncode == 1 and f"confirm with --yes-destroy {loop_device}" in missing.stderr
    assert _head_hash(loop_device) == before


def _start_sweep_until(runner: Path, plan: Path, device: str, pattern: str) -> tuple[subprocess.Popen, str]:
    """The sweep of `plan` started, once its stderr has shown a line matching `pattern` (or two minutes passed):
    the process (stdout and stderr piped, as text) and what it printed to stderr so far."""
    proc = subprocess.Popen(
        [str(runner), "sweep", str(plan), "--yes-destroy", device],
        cwd=plan.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen = ""
    deadline = time.monotonic() + 120
    while not re.search(pattern, seen) and time.monotonic() < deadline and proc.stderr is not None:
        seen += proc.stderr.readline()
    return proc, seen


@needs_root
def test_sigint_mid_run_unmounts_keeps_the_runs_and_resume_finishes(runner_binary, loop_device, tmp_path):
    plan = _plan(tmp_path, loop_device, rounds="1")
    # the second configuration's tests are under way: one run is kept, one interrupted
    proc, seen = _start_sweep_until(runner_binary, plan, loop_device, r"\(2/2\).*: Writing")
    try:
        assert _mounted(tmp_path / "mnt"), seen
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 3, err
    assert "interrupted: 1 runs kept" in err and "--resume" in err
    assert not _mounted(tmp_path / "mnt") and not _device_mounted(loop_device)
    progress = (tmp_path / "study.plan.sweep" / "progress").read_text()
    assert len(re.findall(r"^run 1 ", progress, re.M)) == 1
    # without --resume the study is not started over
    again = _sweep(runner_binary, plan, "--yes-destroy", loop_device)
    assert again.returncode == 1 and "add --resume" in again.stderr
    resumed = _sweep(runner_binary, plan, "--yes-destroy", loop_device, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    progress = (tmp_path / "study.plan.sweep" / "progress").read_text()
    assert sorted(re.findall(r"^run 1 (\S+) ", progress, re.M)) == ["ext4", "xfs"]
    assert "finished 1" in progress
    assert not _device_mounted(loop_device)
    # a changed plan is not resumed
    plan.write_text(plan.read_text().replace("raid=none", "raid=1"))
    changed = _sweep(runner_binary, plan, "--yes-destroy", loop_device, "--resume")
    assert changed.returncode == 1 and "changed since the study started" in changed.stderr


def test_a_bad_plan_line_names_its_line_and_key(runner_binary, tmp_path):
    plan = tmp_path / "bad.plan"
    plan.write_text("device = /dev/loop0\nmountpoint = /mnt/x\nrounds = lots\n[a]\nmkfs = mkfs.ext4\n")
    bad = _sweep(runner_binary, plan, "--yes-destroy", "/dev/loop0")
    assert bad.returncode == 1
    assert f'{plan}:3: key "rounds": a whole number 1..100 or auto, got "lots"' in bad.stderr
    plan.write_text("device = /dev/loop0\nmountpoint = /mnt/x\nrounds = 2\nrunner = -s 32M -r 0 -x 3\n[a]\nmkfs = m\n")
    bad = _sweep(runner_binary, plan, "--yes-destroy", "/dev/loop0")
    assert bad.returncode == 1 and f'{plan}:4: key "runner": -x is the sweep\'s' in bad.stderr
    # a key checked once the whole plan is read still names its own line, and each refusal is one line
    plan.write_text("device = loop0\nmountpoint = /mnt/x\nrounds = 2\n[a]\nmkfs = m\n")
    bad = _sweep(runner_binary, plan, "--yes-destroy", "loop0")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1
    assert f'{plan}:1: key "device": an absolute path like /dev/md0, got "loop0"' in bad.stderr


def test_a_token_file_that_is_a_fifo_is_refused_at_once(runner_binary, tmp_path):
    fifo = tmp_path / "token"
    os.mkfifo(fifo, 0o600)
    plan = tmp_path / "p.plan"
    plan.write_text("device = /dev/loop0\nmountpoint = /mnt/x\nrounds = 1\n[a]\nmkfs = m\n")
    refused = run(
        [
            runner_binary,
            "sweep",
            plan,
            "--yes-destroy",
            "/dev/loop0",
            "--post",
            "http://127.0.0.1:9",
            "--token-file",
            fifo,
        ],
        timeout=20,
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f'bonnieboard-runner sweep: --token-file: "{fifo}" is not a regular file (a FIFO, device or directory is '
        "refused)"
    )


@needs_root
def test_a_dry_run_quotes_every_path(runner_binary, loop_device, tmp_path):
    """A mountpoint and a plan whose paths hold a space: every command the dry run prints runs as printed."""
    spaced = tmp_path / "my study"
    spaced.mkdir()
    plan = _plan(spaced, loop_device, rounds="1")
    dry = _sweep(runner_binary, plan, "--yes-destroy", loop_device, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    mountpoint = f"'{spaced / 'mnt'}'"
    assert f"mkdir {mountpoint}\n" in dry.stdout and f"umount {mountpoint}\n" in dry.stdout
    assert f"mount -o noatime {loop_device} {mountpoint}\n" in dry.stdout
    outputs = [line.split(" > ")[1] for line in dry.stdout.splitlines() if " > " in line]
    assert len(outputs) == 2 and all(out.startswith(f"'{spaced}/study.plan.sweep/r01-") for out in outputs)


@needs_root
def test_a_failing_mkfs_names_the_command_and_its_stderr(runner_binary, loop_device, tmp_path):
    plan = _plan(tmp_path, loop_device, ext4_mkfs="mkfs.ext4 -q -F -O no_such_feature", seed="1")
    failed = _sweep(runner_binary, plan, "--yes-destroy", loop_device)
    assert failed.returncode == 2, failed.stderr
    assert f"`mkfs.ext4 -q -F -O no_such_feature {loop_device}` failed (exit 1):" in failed.stderr
    assert "Invalid filesystem option set: no_such_feature" in failed.stderr
    assert not _mounted(tmp_path / "mnt") and not _device_mounted(loop_device)


@needs_root
def test_a_failing_mount_names_the_command_and_leaves_nothing_mounted(runner_binary, loop_device, tmp_path):
    plan = _plan(tmp_path, loop_device, seed="1")
    plan.write_text(plan.read_text().replace("mount_options = noatime", "mount_options = no_such_option"))
    failed = _sweep(runner_binary, plan, "--yes-destroy", loop_device)
    assert failed.returncode == 2, failed.stderr
    assert re.search(
        rf"`mount -o no_such_option {loop_device} {tmp_path / 'mnt'}` failed \(exit \d+\):\n", failed.stderr
    )
    assert not _mounted(tmp_path / "mnt") and not _device_mounted(loop_device)


@needs_root
def test_a_swap_device_is_refused(runner_binary, loop_device, tmp_path):
    assert run([require_tool("mkswap", "util-linux"), loop_device]).returncode == 0
    swapon = run([require_tool("swapon", "mount"), loop_device])
    if swapon.returncode != 0:
        pytest.skip(f"swapon refused a loop device here: {swapon.stderr.strip()}")
    try:
        refused = _sweep(runner_binary, _plan(tmp_path, loop_device), "--yes-destroy", loop_device)
        assert refused.returncode == 2, refused.stderr
        assert f"{Path(loop_device).name} is in use as swap ({loop_device} in /proc/swaps)" in refused.stderr
    finally:
        run(["swapoff", loop_device])


@needs_root
def test_a_failed_post_spools_each_run_and_the_study_exits_4(runner_binary, loop_device, tmp_path):
    plan = _plan(tmp_path, loop_device, rounds="1", runner=SMALL + " -f")
    with live_server(f"sqlite:///{tmp_path / 'board.db'}") as server:
        dead = server.url
    posted = _sweep(runner_binary, plan, "--yes-destroy", loop_device, "--post", dead)
    assert posted.returncode == 4, posted.stderr[-2000:]
    assert posted.stderr.count("The results are kept in ") == 2
    spooled = sorted(tmp_path.glob("bonnieboard-spool-*.json"))
    assert len(spooled) == 2
    bodies = [json.loads(path.read_text()) for path in spooled]
    assert sorted(body["tags"]["config"] for body in bodies) == ["ext4", "xfs"]
    assert "2 runs could not be posted" in posted.stdout
    assert not _device_mounted(loop_device)


# ==== The sample study ====


def _study_runs() -> list[tuple[int, str, str]]:
    """(round, configuration, CSV line) of every run in the sample study's progress file."""
    progress = (STUDY / "study.plan.sweep" / "progress").read_text()
    return [(int(m[1]), m[2], m[3]) for m in re.finditer(r"^run (\d+) (\S+) exit=0 ids=\S+ csv=(.+)$", progress, re.M)]


def test_the_sample_study_is_what_its_progress_file_and_manifest_say():
    runs = _study_runs()
    rounds = max(r for r, _, _ in runs)
    assert 3 <= rounds <= 10 and len(runs) == 2 * rounds
    manifest = (ROOT / "sample_data" / "manifest").read_text()
    seed = re.search(r"^seed (\d+)$", (STUDY / "study.plan.sweep" / "progress").read_text(), re.M)[1]
    for rnd, name, csv in runs:
        path = STUDY / "study.plan.sweep" / f"r{rnd:02d}-{name}.csv"
        assert path.read_text() == csv + "\n"
        run = f"study-ext4-xfs/study.plan.sweep/r{rnd:02d}-{name}"
        line = f"{run}.csv --document {run}.json --tag study=ext4-xfs-device --tag fs={name} "
        line += f"--tag config={name} --tag round={rnd} --tag order_seed={seed}"
        assert line in manifest.splitlines(), line
        parsed = parse_text(csv + "\n").runs[0]
        # the block tests, seeks and the creates are measured, not +++++
        for test in ("put_block", "rewrite", "get_block", "seeks", "ran_create", "ran_del"):
            assert parsed.results[TESTS.index(test)].status == STATUS_OK, (path.name, test)
        doc = json.loads(path.with_suffix(".json").read_text())
        # the runner ran in a memory cgroup that cannot hold its 1 GiB file
        assert doc["system"]["cgroup"]["memory_limit_bytes"] == 256 * 1024 * 1024
        assert doc["parameters"]["file_size_mib"] == 1024


def test_the_sweeps_stopping_rule_is_the_boards_ci_on_the_sample_study():
    """The closing note the C code wrote after 10 rounds names the widest CI; the board's describe() on the same
    CSV lines finds the same test, configuration and width."""
    from app.compare.stats import describe

    progress = (STUDY / "study.plan.sweep" / "progress").read_text()
    note = re.search(
        r"^note .* is (\S+) (\S+), ±([\d.]+) % after 10 rounds: wider than ±5 %, not decided", progress, re.M
    )
    assert note, progress[-600:]
    counted = (
        "put_block",
        "rewrite",
        "get_block",
        "seq_create",
        "seq_stat",
        "seq_del",
        "ran_create",
        "ran_stat",
        "ran_del",
    )
    widest = (0.0, "", "")
    for config in ("ext4", "xfs"):
        runs = [parse_text(csv + "\n").runs[0] for _, name, csv in _study_runs() if name == config]
        for test in counted:
            values = [
                r.results[TESTS.index(test)].value for r in runs if r.results[TESTS.index(test)].status == STATUS_OK
            ]
            if len(values) < 2:
                continue
            described = describe(values)
            assert described.ci95 is not None and described.geo_mean is not None
            half = described.ci95[1] / described.geo_mean - 1
            widest = max(widest, (half, config, test))
    assert (note[1], note[2]) == (widest[1], widest[2])
    assert note[3] == f"{widest[0] * 100:.1f}"
