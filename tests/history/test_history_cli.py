"""History from the shell: `bonnieboard ingest --time` places a file's runs in time and finds their changes once
they are stored; `bonnieboard detect` lists a machine's open changes; a time that is not ISO 8601 stores nothing."""

from __future__ import annotations

import random

from tests.helpers import LINE_198, run_cli, with_field

PUT_BLOCK = 11


def _night_file(tmp_path, name: str, levels: list[float]) -> str:
    rng = random.Random(11)
    lines = []
    for i, level in enumerate(levels):
        line = with_field(with_field(LINE_198, 2, "shell-box"), 4, str(9000 + i))
        lines.append(with_field(line, PUT_BLOCK, str(round(level * rng.lognormvariate(0, 0.01)))))
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return name


def test_ingest_finds_a_step_and_detect_lists_it(tmp_path):
    # One file, one time: its runs keep their line order on the history.
    name = _night_file(tmp_path, "week.csv", [400_000] * 8 + [240_000] * 6)
    stored = run_cli(tmp_path, "ingest", name, "--tag", "fs=ext4", "--time", "2026-11-01T02:00:00Z")
    assert stored.returncode == 0, stored.stderr
    assert (
        stored.stdout.splitlines()[-1]
        == "history: 1 open changes in these machines' runs over time (/changes lists them)"
    )
    listed = run_cli(tmp_path, "detect", "--machine", "shell-box")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "shell-box: put_block ×0.60 from run 9",
        "1 open changes in 1 machines",
    ]


def test_a_time_that_is_not_iso_8601_stores_nothing(tmp_path):
    name = _night_file(tmp_path, "one.csv", [400_000])
    refused = run_cli(tmp_path, "ingest", name, "--time", "last tuesday")
    assert refused.returncode == 2
    assert "--time: 'last tuesday' is not an ISO 8601 time" in refused.stderr
    assert run_cli(tmp_path, "detect").stdout.splitlines() == ["0 open changes in 0 machines"]
