"""sample_data/ is what a new user sees first: every line must parse, and the sweep must be what its README says."""

import json
from pathlib import Path

import pytest

from app.bonnie import STATUS_OK, TESTS
from app.ingest.name_tags import compile_name_pattern
from tests.parsing_oracle import parse_text

SAMPLES = Path(__file__).resolve().parent.parent / "sample_data"
SWEEP = sorted(SAMPLES.glob("sweep-*.csv"))


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*.csv")), ids=lambda path: path.name)
def test_every_sample_line_parses(path):
    parsed = parse_text(path.read_text())
    assert parsed.errors == []
    assert parsed.runs


def test_the_sweep_is_six_configurations():
    names = [path.stem for path in SWEEP]
    assert names == [
        f"sweep-{fs}-{dev}-{mode}"
        for fs, dev in (("ext4", "loop"), ("tmpfs", "ram"), ("xfs", "loop"))
        for mode in ("async", "sync")
    ]


@pytest.mark.parametrize("path", SWEEP, ids=lambda path: path.name)
def test_each_sweep_file_is_one_configuration_run_three_times(path):
    runs = parse_text(path.read_text()).runs
    assert len(runs) == 3
    assert {run.machine for run in runs} == {path.stem}
    # -x 3 repeats one invocation: same parameters and seed, the measurements differ.
    assert len({(run.seed, run.file_size_mib, run.seek_count, run.seek_procs, run.file_test) for run in runs}) == 1
    assert runs[0].file_size_mib == 3072 and runs[0].seek_count == 262144 and runs[0].file_test.num_files == 8
    assert len({run.results[TESTS.index("put_block")].value for run in runs}) == 3
    # The block tests are measured on every medium, not +++++ (the README's reason for -s 3g:8k:256k).
    for test in ("put_block", "rewrite", "get_block", "seeks"):
        assert all(run.results[TESTS.index(test)].status == STATUS_OK for run in runs), test


@pytest.mark.parametrize("path", SWEEP, ids=lambda path: path.name)
def test_sweep_names_give_the_tags_the_readme_lists(path):
    tags = compile_name_pattern("sweep-{fs}-{dev}-{mode}").parse(path.stem)
    row = f"| `{path.name}` |"
    readme_row = next(line for line in (SAMPLES / "README.md").read_text().splitlines() if line.startswith(row))
    assert f"`fs={tags['fs']} dev={tags['dev']} mode={tags['mode']}`" in readme_row


HISTORY = SAMPLES / "history" / "nightly-loop"
NIGHTS, STEP_NIGHT, MOUNT_NIGHT = 22, 9, 15  # sample_data/history/make_history.sh's defaults, as its README says
MiB = 1024 * 1024


def _nightly(fs: str) -> list[tuple[object, dict]]:
    """(parsed run, document) of each night of one configuration, night 1 first."""
    found = []
    for night in range(1, NIGHTS + 1):
        stem = HISTORY / f"n{night:02d}-{fs}"
        parsed = parse_text(stem.with_suffix(".csv").read_text())
        assert parsed.errors == [] and len(parsed.runs) == 1, stem
        found.append((parsed.runs[0], json.loads(stem.with_suffix(".json").read_text())))
    return found


def test_the_nightly_history_is_appended_to_the_manifest_one_line_per_run_with_its_document():
    lines = [line for line in (SAMPLES / "manifest").read_text().splitlines() if line and not line.startswith("#")]
    expected = [
        f"history/nightly-loop/n{night:02d}-{fs}.csv --document history/nightly-loop/n{night:02d}-{fs}.json "
        f"--tag set=nightly --tag fs={fs}"
        for night in range(1, NIGHTS + 1)
        for fs in ("ext4", "xfs")
    ]
    # last, so that the run ids of everything loaded before stay what pages and tests link to
    assert lines[-len(expected) :] == expected
    assert sorted(path.name for path in HISTORY.glob("n*")) == sorted(
        name for line in expected for name in (line.split()[0].split("/")[-1], line.split()[2].split("/")[-1])
    )


@pytest.mark.parametrize("fs", ["ext4", "xfs"])
def test_the_nightly_history_has_one_run_a_night_and_the_kernel_throttle_step_its_readme_names(fs):
    runs = _nightly(fs)
    assert {run.machine for run, _ in runs} == {"nightly-loop"}
    for night, (run, doc) in enumerate(runs, start=1):
        assert doc["started_at"].startswith(f"2026-10-{night:02d}T02:00:"), (night, doc["started_at"])
        assert doc["finished_at"] > doc["started_at"]
        assert doc["runs"][0]["csv"].split(",")[2] == run.machine
        (limit,) = doc["system"]["cgroup"]["io_limits"]
        throttle = 32 * MiB if night < STEP_NIGHT else 16 * MiB
        assert limit["read_bps"] == limit["write_bps"] == throttle, (night, limit)
        assert doc["system"]["filesystem"]["type"] == fs
    # the throttle halves the block rates: every night after the step is below the median before it
    for test in ("put_block", "get_block"):
        rates = [run.results[TESTS.index(test)].value for run, _ in runs]
        before = sorted(rates[: STEP_NIGHT - 1])[(STEP_NIGHT - 1) // 2]
        assert all(rate < 0.8 * before for rate in rates[STEP_NIGHT - 1 :]), (test, rates)


def test_the_ext4_mount_change_shows_in_its_documents_and_slows_its_creates():
    for night, (run, doc) in enumerate(_nightly("ext4"), start=1):
        filesystem = doc["system"]["filesystem"]
        create = run.results[TESTS.index("seq_create")]
        if night < MOUNT_NIGHT:
            assert "relatime" in filesystem["mount_options"].split(","), (night, filesystem)
            assert "dirsync" not in filesystem["super_options"].split(",")
            assert create.status != STATUS_OK  # 2,048 files in under 0.5 s: +++++
        else:
            assert "noatime" in filesystem["mount_options"].split(","), (night, filesystem)
            assert "dirsync" in filesystem["super_options"].split(",")
            assert create.status == STATUS_OK and create.value < 10_000, (night, create)
