"""Limiter hints: the runner's evidence, where a test has it, decides what limited it."""

from app.compare.hints import result_hints

DEVICE_BOUND = {"code": "device_bound", "text": "throttled to 20 MiB/s read by the cgroup: the device set the pace"}


def hints_of_get_block(evidence, cpu_pct=12.0):
    # -s 256M on a machine of 24 GiB: the line alone says the page cache held the file
    return result_hints(
        "get_block",
        measures_rate=True,
        n_runs=1,
        n_too_fast=0,
        cv_pct=None,
        cpu_pct=cpu_pct,
        file_size_mib=256,
        ram_mib=24_104,
        format_versions={"1.98"},
        evidence=evidence,
    )


def test_without_evidence_the_line_alone_says_cached():
    assert [h["code"] for h in hints_of_get_block(None)] == ["cached"]


def test_the_runners_device_bound_verdict_is_not_contradicted_by_the_line_only_guess():
    assert [h["code"] for h in hints_of_get_block([DEVICE_BOUND])] == ["device_bound"]


def test_nor_by_a_cpu_guess_from_the_lines_cpu_column():
    assert [h["code"] for h in hints_of_get_block([DEVICE_BOUND], cpu_pct=97.0)] == ["device_bound"]
    assert [h["code"] for h in hints_of_get_block(None, cpu_pct=97.0)] == ["cpu_bound", "cached"]
