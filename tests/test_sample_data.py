"""sample_data/ is what a new user sees first: every line must parse, and the sweep must be what its README says."""

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
