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


def test_the_runners_evidence_is_listed_with_its_own_figures_where_they_were_measured():
    """Two tests limited by a CPU quota at 19 % and 20 % CPU, and two throttled tests with their own MiB: each text
    is listed where it holds, never one test's figures for both nor the ≥ 90 % CPU rule; a line rule whose figures
    differ is still said once by its general rule."""
    from app.compare.comparison import Chart, ConfigurationCells
    from app.compare.hints import GENERAL_TEXT, cpu_bound, hint
    from app.compare.view import hint_list
    from tests.compare_data import cell_of

    quota = "the CPU quota of 0.2 CPUs held the runner: CPU time was {} % of the wall time"
    read = "throttled to 16 MiB/s read: the {} MiB read there take 2.00 s at its read limit"
    measured = {
        "putc": [hint("cpu_bound", quota.format(19))],
        "getc": [hint("cpu_bound", quota.format(20))],
        "put_block": [hint("device_bound", read.format("0.0"))],
        "get_block": [hint("device_bound", read.format("32.0"))],
        "seq_create": [cpu_bound(95)],
        "ran_create": [cpu_bound(97)],
    }
    cells = [cell_of(test, hints=hints) for test, hints in measured.items()]
    chart = Chart("cpu", "%CPU", False, list(measured), [], [ConfigurationCells(1, cells)], [])
    listed = [(item["text"], item["where"]) for item in hint_list(chart, {1: "ext4"})]
    assert listed == [
        (quota.format(19), ["ext4: putc"]),
        (quota.format(20), ["ext4: getc"]),
        (read.format("0.0"), ["ext4: put_block"]),
        (read.format("32.0"), ["ext4: get_block"]),
        (GENERAL_TEXT["cpu_bound"], ["ext4: seq_create", "ext4: ran_create"]),
    ]
