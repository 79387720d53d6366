"""Run Debian's real bonnie++ (2.00a, CSV format 1.98) with tiny sizes and check
that every line it writes parses, with the values the specification
(docs: bonnie-csv-format.md sections 3.2-4) says each configuration implies.

bonnie++ is required: if it is missing the tests FAIL (they never skip), so a
machine that cannot check the parser against the real program is noticed.
Install it with: apt-get install -y bonnie++
"""

import os
import shutil
import subprocess

import pytest

from app.ingest.parsing import FILE_TESTS, IO_TESTS, TESTS

pytestmark = pytest.mark.slow  # a real browser, server, runner or bonnie++: pytest -m 'not slow' skips it


# name -> (extra bonnie++ arguments, machine name expected or None for the host's nodename)
# -s 32M with -r 16 keeps every I/O run to a few seconds; -q sends the text
# report to stderr, so stdout's last line is the CSV line.
CONFIGS = {
    "default": (["-s", "32M", "-r", "16", "-n", "1"], None),
    "fast": (["-s", "32M", "-r", "16", "-n", "1", "-f", "-m", "fastmode"], "fastmode"),
    "no_file_tests": (["-s", "32M", "-r", "16", "-n", "0", "-m", "io-only"], "io-only"),
    "no_io_tests": (["-s", "0", "-n", "1", "-m", "files.only host"], "files.only host"),
    "file_sizes_and_dirs": (["-s", "32M", "-r", "16", "-n", "1:4096:1024:4", "-f", "-m", "dirs"], "dirs"),
    "comma_in_name": (["-s", "32M", "-r", "16", "-n", "1", "-f", "-m", "a,b"], "a,b"),
}


def _bonnie():
    path = shutil.which("bonnie++") or ("/usr/sbin/bonnie++" if os.path.exists("/usr/sbin/bonnie++") else None)
    if path is None:
        pytest.fail("bonnie++ is not installed; these tests need Debian's real bonnie++: apt-get install -y bonnie++")
    return path


def _run_bonnie(tmp_path, args):
    cmd = [_bonnie(), "-d", str(tmp_path), "-q"] + args
    if os.geteuid() == 0:
        cmd += ["-u", "root"]  # bonnie++ refuses to run as root without -u
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}:\n{proc.stderr}"
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    assert lines, f"{cmd} printed no CSV line; stderr:\n{proc.stderr}"
    return lines[-1]


@pytest.mark.parametrize("config", list(CONFIGS))
def test_real_bonnie_line_parses(config, tmp_path):
    args, machine = CONFIGS[config]
    line = _run_bonnie(tmp_path, args)
    assert line.startswith("1.98,2.00a,"), line

    from tests.parsing_oracle import parse_text

    result = parse_text(line + "\n")
    assert list(result.errors) == [], (line, result.errors)
    assert len(result.runs) == 1, line
    run = result.runs[0]

    assert run.machine == (machine if machine is not None else os.uname().nodename), line
    assert run.format_version == "1.98"
    assert run.bonnie_version == "2.00a"

    results = tuple(run.results)
    assert len(results) == 12
    by_name = dict(zip(TESTS, results, strict=True))

    no_io = "-s" in args and args[args.index("-s") + 1] == "0"
    no_files = "-n" in args and args[args.index("-n") + 1] == "0"
    fast = "-f" in args

    # --- I/O part
    if no_io:
        assert run.file_size_mib is None
        assert run.seek_count is None and run.seek_procs is None
        not_run = set(IO_TESTS)
    else:
        assert run.file_size_mib == 32
        assert run.seek_count == 8192
        assert run.seek_procs == 5
        not_run = {"putc", "getc"} if fast else set()

    # --- file-test part
    if no_files:
        assert run.file_test is None
        not_run |= set(FILE_TESTS)
    else:
        ft = run.file_test
        assert ft is not None
        assert ft.num_files == 1
        assert ft.link is None
        if config == "file_sizes_and_dirs":
            assert (ft.max_size, ft.min_size, ft.num_dirs) == (4096, 1024, 4), line
        else:
            assert (ft.max_size, ft.min_size, ft.num_dirs) == (None, None, None), line

    # --- every test: not run exactly where the options say so, measured otherwise
    for name, res in by_name.items():
        if name in not_run:
            assert res.status == "not_run", (name, line)
            assert res.value is None and res.cpu_pct is None, (name, line)
            assert res.latency_us is None, (name, line)
            continue
        assert res.status in ("ok", "too_fast"), (name, res.status, line)
        if res.status == "ok":
            assert isinstance(res.value, (int, float)) and not isinstance(res.value, bool), (name, line)
            assert res.value > 0, (name, line)
            assert isinstance(res.cpu_pct, int) and res.cpu_pct >= 0, (name, line)
        else:
            assert res.value is None and res.cpu_pct is None, (name, line)
        assert isinstance(res.latency_us, int) and not isinstance(res.latency_us, bool), (name, line)
        assert res.latency_us >= 0, (name, line)
