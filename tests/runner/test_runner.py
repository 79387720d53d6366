"""The native runner (runner/): build it, run it for real, and hold it to bonnie++ 2.00a.

- a tiny real run: its CSV line is read by our parser and by Debian's bon_csv2txt/bon_csv2html,
  its JSON document has the documented keys;
- per-character tests: the runner's own per-test system-call counts (N MiB => N*1048576 one-byte calls);
- fidelity: strace counts of write/read/lseek/creations/stat/unlink agree with Debian's bonnie++;
- end to end: the runner posts to a real server; with the server stopped the result is spooled.

Never skipped: a missing tool is a failure that names the apt-get line to run.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from app.errors import BadRequest
from app.ingest.parsing import COLUMNS_198, TESTS
from app.tags import check_tag
from app.web.schemas import MAX_LABEL_CHARS, MAX_TAGS_PER_RUN
from tests.live_server import live_server

pytestmark = pytest.mark.slow  # a real browser, server, runner or bonnie++: pytest -m 'not slow' skips it

ROOT = Path(__file__).resolve().parents[2]
RUNNER_DIR = ROOT / "runner"
RUNNER = RUNNER_DIR / "bonnieboard-runner"
README = RUNNER_DIR / "README.md"


# The documented keys of the JSON document (runner/README.md), checked both ways below.
DOC_KEYS = {"schema", "runner", "command_line", "started_at", "finished_at", "parameters", "system", "runs", "warnings"}
SYSTEM_KEYS = {"hostname", "kernel", "os", "cpu", "ram_bytes", "filesystem", "block_device", "cgroup"}
FILESYSTEM_KEYS = {
    "dir",
    "total_bytes",
    "free_bytes",
    "type",
    "device",
    "mount_point",
    "mount_root",
    "mount_source",
    "mount_options",
    "super_options",
}
TEST_KEYS = {
    "status",
    "unit",
    "value",
    "cpu_pct",
    "rate_measured",
    "wall_s",
    "user_s",
    "sys_s",
    "cpu_s",
    "latency_us",
    "latency_text",
    "ops",
    "bytes_read",
    "bytes_written",
    "bytes_moved",
    "avg_io_bytes",
    "syscalls",
    "limiter",
}
LIMITER_KEYS = {"code", "text", "evidence"}
EVIDENCE_KEYS = {
    "cpu_of_wall_pct",
    "run_delay_s",
    "run_delay_pct",
    "blocked_pct",
    "cpu_quota_cores",
    "cpu_of_quota_pct",
    "cpu_throttled_count",
    "cpu_throttled_s",
    "device_util_pct",
    "device_busiest",
    "device_reads",
    "device_writes",
    "device_read_bytes",
    "device_write_bytes",
    "device_avg_request_bytes",
    "judged_on",
    "device_share_pct",
    "throttle",
    "throttle_s",
    "throttle_pct",
    "cgroup_read_bytes",
    "cgroup_write_bytes",
    "cgroup_cpu_pressure_pct",
    "cgroup_io_pressure_pct",
    "steal_pct",
    "cpu_pressure_pct",
    "io_pressure_pct",
    "block_in",
    "block_out",
    "voluntary_switches",
    "involuntary_switches",
    "sync_s",
    "sync_pct",
    "sync_waited_for",
    "file_vs_ram",
    "suggestion",
    "seekers",
}
SEEKER_KEYS = {"seeks", "wall_s", "user_s", "sys_s", "cpu_pct", "run_delay_s", "blocked_s", "block_in", "block_out"}
CGROUP_KEYS = {
    "version",
    "memory_path",
    "memory_limit_bytes",
    "memory_limit_from",
    "cpu_quota_cores",
    "cpu_quota_us",
    "cpu_period_us",
    "cpu_quota_from",
    "io_limits",
    "pressure_from",
}
IO_LIMIT_KEYS = {"device", "name", "read_bps", "write_bps", "read_iops", "write_iops", "from"}
LIMITER_CODES = {"cpu_bound", "device_bound", "cached", "too_short", "noisy", "unknown"}
SYSCALL_KEYS = {
    "read",
    "write",
    "lseek",
    "open",
    "open_creat",
    "close",
    "fsync",
    "stat",
    "unlink",
    "mkdir",
    "rmdir",
    "getdents",
    "link",
    "symlink",
    "sync",
    "pipe_read",
    "pipe_write",
}


def require_tool(name: str, package: str) -> str:
    path = shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)), None
    )
    if not path:
        pytest.fail(f"{name} is missing: run `apt-get install -y {package}`")
    return path


# The quickest real run: no I/O tests, one file test (1024 files), no RAM size to check -s against.
FILES_ONLY = ("-s", "0", "-n", "1", "-r", "0")


def run_quick(runner, directory, *args, **kw) -> subprocess.CompletedProcess:
    """The quickest real run (FILES_ONLY, -q) in `directory`, with more arguments."""
    return run([runner, "-d", directory, *FILES_ONLY, "-q", *args], **kw)


def run(args, **kw) -> subprocess.CompletedProcess:
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 300)
    return subprocess.run([str(a) for a in args], **kw)


def _libcurl_headers_found() -> bool:
    """Ask pkg-config or curl-config (what runner/Makefile asks) where curl/curl.h lives, on any architecture."""
    for cmd in (["pkg-config", "--cflags", "libcurl"], ["curl-config", "--cflags"]):
        if not shutil.which(cmd[0]):
            continue
        found = run(cmd)
        if found.returncode == 0:
            dirs = [flag[2:] for flag in found.stdout.split() if flag.startswith("-I")]
            probe = run(["cc", *(f"-I{d}" for d in dirs), "-E", "-x", "c", "-"], input="#include <curl/curl.h>\n")
            return probe.returncode == 0
    return False


def bonnie_command(bonnie: str) -> list[str]:
    """bonnie++ refuses to run as root without -u; as anyone else -u would fail (it cannot change user)."""
    return [bonnie, "-u", "root"] if os.geteuid() == 0 else [bonnie]


@pytest.fixture(scope="module")
def runner() -> Path:
    require_tool("cc", "gcc")
    require_tool("make", "make")
    if not _libcurl_headers_found():
        pytest.fail("libcurl headers are missing: run `apt-get install -y libcurl4-openssl-dev`")
    built = run(["make", "-C", RUNNER_DIR])
    assert built.returncode == 0, built.stdout + built.stderr
    return RUNNER


@pytest.fixture(scope="module")
def tiny(runner, tmp_path_factory):
    """One small real run: 16 MiB file, 1 MiB per-char, 1024 files in 2 dirs with 1-2 KiB of data."""
    tmp = tmp_path_factory.mktemp("tiny")
    scratch = tmp / "scratch"
    scratch.mkdir()
    doc_path = tmp / "doc.json"
    proc = run(
        [
            runner,
            "-d",
            scratch,
            "-s",
            "16",
            "-r",
            "0",
            "-n",
            "1:2k:1k:2",
            "-f1",
            "-z",
            "42",
            "-m",
            "pytest-runner",
            "-q",
            "--json",
            doc_path,
        ]
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line]
    return {
        "line": lines[-1],
        "stdout": proc.stdout,
        "stderr": proc.stderr,
        "doc": json.loads(doc_path.read_text()),
        "scratch": scratch,
    }


def test_tiny_run_writes_one_50_field_line_and_cleans_up(tiny):
    fields = tiny["line"].split(",")
    assert len(fields) == 50
    assert fields[0] == "1.98"
    assert re.fullmatch(r"bonnieboard-\d+\.\d+\.\d+", fields[1])
    assert fields[2:9] == ["pytest-runner", "1", "42", "16M", "", "8192", "5"]
    assert fields[21:26] == ["1", "2048", "1024", "", "2"]  # num_dirs in the 5th file column, as bonnie++
    for latency in fields[38:50]:
        assert re.fullmatch(r"\d+(us|ms|s)", latency), latency
    assert list(tiny["scratch"].iterdir()) == []
    # -q: progress suppressed, the text report goes to stderr
    assert "Sequential Output" in tiny["stderr"] and "Writing intelligently" not in tiny["stderr"]


def test_bon_csv2txt_accepts_the_line(tiny):
    tool = require_tool("bon_csv2txt", "bonnie++")
    proc = run([tool], input=tiny["line"] + "\n")
    out = proc.stdout + proc.stderr
    assert "Can't process" not in out and "Expected 1.98" not in out, out
    assert re.search(r"^pytest-\S* 16M::8192:5 ", proc.stdout, re.M)  # it cuts the name to fit the size
    assert re.search(r"^pytes\S* 1:2048:1024:2 ", proc.stdout, re.M)  # num_dirs read as its chunk column


def test_bon_csv2html_accepts_the_line(tiny):
    tool = require_tool("bon_csv2html", "bonnie++")
    proc = run([tool], input=tiny["line"] + "\n")
    out = proc.stdout + proc.stderr
    assert "Can't process" not in out and "Expected 1.98" not in out, out
    assert "pytest-runner" in proc.stdout


def test_project_parser_reads_the_line(tiny):
    from tests.parsing_oracle import parse_text

    result = parse_text(tiny["line"] + "\n")
    assert result.errors == []
    assert len(result.runs) == 1
    parsed = result.runs[0]
    assert parsed.format_version == "1.98"
    assert parsed.machine == "pytest-runner"
    assert len(parsed.results) == 12
    fields = tiny["line"].split(",")
    for index, res in enumerate(parsed.results):
        cell = fields[9 + 2 * index] if index < 6 else fields[26 + 2 * (index - 6)]
        assert res.status == ("too_fast" if cell == "+++++" else "ok"), (TESTS[index], cell)
        assert res.latency_us is not None and res.latency_us >= 0
        if res.status == "ok":
            assert res.value is not None and res.cpu_pct is not None


def test_the_parser_skips_the_runners_header_line():
    # The runner's -x header names COLUMNS_198 (checked against the runner's output below).
    from tests.parsing_oracle import parse_text

    result = parse_text(",".join(COLUMNS_198) + "\n")
    assert result.runs == [] and result.errors == []


def test_json_document_has_the_documented_keys(tiny):
    doc = tiny["doc"]
    assert set(doc) == DOC_KEYS
    assert doc["schema"] == "bonnieboard-runner/1"
    assert set(doc["system"]) == SYSTEM_KEYS
    assert set(doc["system"]["filesystem"]) == FILESYSTEM_KEYS
    assert set(doc["system"]["cgroup"]) == CGROUP_KEYS
    assert doc["system"]["filesystem"]["type"]  # the scratch dir is on some mounted filesystem
    assert doc["system"]["cpu"]["count_online"] >= 1 and doc["system"]["ram_bytes"] > 0
    assert doc["command_line"][0].endswith("bonnieboard-runner")
    assert "-z" in doc["command_line"]
    assert doc["parameters"]["file_size_mib"] == 16 and doc["parameters"]["num_dirs"] == 2
    assert len(doc["runs"]) == 1 and doc["runs"][0]["csv"] == tiny["line"]
    tests = doc["runs"][0]["tests"]
    assert tuple(tests) == TESTS
    for name, facts in tests.items():
        assert set(facts) - {"cpu_pct_meaning"} == TEST_KEYS, name
        assert set(facts["syscalls"]) == SYSCALL_KEYS, name
        assert facts["wall_s"] > 0
        assert set(facts["limiter"]) == LIMITER_KEYS and set(facts["limiter"]["evidence"]) == EVIDENCE_KEYS, name
        assert facts["limiter"]["code"] in LIMITER_CODES and facts["limiter"]["text"], name
    assert tests["seeks"]["cpu_pct_meaning"] == "seekers_own"
    seekers = tests["seeks"]["limiter"]["evidence"]["seekers"]
    assert len(seekers) == 5 and all(set(seeker) == SEEKER_KEYS for seeker in seekers), seekers
    assert sum(seeker["seeks"] for seeker in seekers) == 8192
    assert tests["get_block"]["limiter"]["evidence"]["seekers"] is None
    # facts agree with the work: block tests move the whole file in 8 KiB calls
    put_block = tests["put_block"]
    assert put_block["bytes_written"] == 16 * 1048576
    assert put_block["syscalls"]["write"] == 16 * 1048576 // 8192
    assert put_block["avg_io_bytes"] == 8192
    assert tests["seeks"]["ops"] == 8192
    assert tests["seeks"]["syscalls"]["read"] == 8192
    assert tests["seq_create"]["syscalls"]["open_creat"] == 1024
    # a +++++ test is a warning, not a verdict
    for name, facts in tests.items():
        if facts["status"] == "too_fast":
            assert any(w.startswith(name + " took") for w in doc["warnings"]), name


def test_readme_documents_columns_keys_and_exit_codes():
    text = README.read_text()
    for column in set(COLUMNS_198):
        assert re.search(rf"\b{column}\b", text), f"column {column} missing from runner/README.md"
    for key in (
        DOC_KEYS
        | SYSTEM_KEYS
        | FILESYSTEM_KEYS
        | TEST_KEYS
        | SYSCALL_KEYS
        | LIMITER_KEYS
        | EVIDENCE_KEYS
        | SEEKER_KEYS
        | CGROUP_KEYS
        | IO_LIMIT_KEYS
        | LIMITER_CODES
    ):
        assert f"`{key}`" in text, f"JSON key {key} missing from runner/README.md"
    for code in ("1", "2", "3", "4"):
        assert re.search(rf"^\|\s*{code}\s*\|", text, re.M), f"exit code {code} not documented"


def test_per_char_tests_issue_one_byte_system_calls(tiny):
    tests = tiny["doc"]["runs"][0]["tests"]
    assert tests["putc"]["syscalls"]["write"] == 1 * 1048576
    assert tests["putc"]["bytes_written"] == 1048576
    assert tests["getc"]["syscalls"]["read"] == 1 * 1048576
    assert tests["getc"]["avg_io_bytes"] == 1


def test_stdio_char_mode_reproduces_the_setbuffer_experiment(runner, tmp_path):
    scratch = tmp_path / "s"
    scratch.mkdir()
    doc_path = tmp_path / "doc.json"
    proc = run(
        [
            runner,
            "-d",
            scratch,
            "-s",
            "4",
            "-r",
            "0",
            "-n",
            "0",
            "-f2",
            "-q",
            "--char-mode",
            "stdio",
            "--stdio-buffer",
            "4096",
            "--json",
            doc_path,
        ]
    )
    assert proc.returncode == 0, proc.stderr
    tests = json.loads(doc_path.read_text())["runs"][0]["tests"]
    assert tests["putc"]["syscalls"]["write"] == 2 * 1048576 // 4096
    assert tests["putc"]["avg_io_bytes"] == 4096
    assert tests["getc"]["syscalls"]["read"] == 2 * 1048576 // 4096
    assert tests["seq_create"]["status"] == "not_run"


def test_refuses_a_file_under_twice_the_ram(runner, tmp_path):
    proc = run([runner, "-d", tmp_path, "-s", "16", "-r", "1000"])
    assert proc.returncode == 1
    assert "twice the RAM" in proc.stderr and "-r" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def _strace_counts(trace: Path) -> Counter:
    counts: Counter = Counter()
    for line in trace.read_text(errors="replace").splitlines():
        m = re.match(r"^\d+\s+(\w+)\(", line)
        if not m or "resumed>" in line:
            continue
        name = m.group(1)
        counts[name] += 1
        if name == "creat" or (name in ("open", "openat") and "O_CREAT" in line):
            counts["CREATE"] += 1
        # The stat of a named file (the file tests' stats). Not an fstat of an open descriptor (glibc's fstat is
        # newfstatat with AT_EMPTY_PATH): the dynamic loader makes one per shared library and stdio one per
        # file it reads, so their count follows how a program is linked (libcurl brings ~30 libraries), what
        # system facts it reads and whom it looks up (-u root), not the tests.
        if name in ("stat", "lstat", "newfstatat", "statx") and "AT_EMPTY_PATH" not in line:
            counts["STAT"] += 1
    counts["UNLINK"] = counts["unlink"] + counts["unlinkat"]
    return counts


def test_system_calls_match_bonnie(runner, tmp_path):
    strace = require_tool("strace", "strace")
    bonnie = require_tool("bonnie++", "bonnie++")
    traced = "read,write,lseek,open,openat,creat,stat,lstat,fstat,newfstatat,statx,unlink,unlinkat"
    params = ["-s", "64", "-r", "32", "-n", "1", "-f", "-q", "-z", "4242"]
    counts = {}
    for who, cmd in (("bonnie", bonnie_command(bonnie)), ("runner", [runner])):
        scratch = tmp_path / who
        scratch.mkdir()
        trace = tmp_path / f"{who}.trace"
        proc = run([strace, "-f", "-qq", "-o", trace, "-e", f"trace={traced}", *cmd, "-d", scratch, *params])
        assert proc.returncode == 0, proc.stderr
        assert list(scratch.iterdir()) == []
        counts[who] = _strace_counts(trace)
    want, got = counts["bonnie"], counts["runner"]
    assert want["CREATE"] >= 2048 and want["lseek"] >= 16384  # bonnie++ really did the work
    for call in ("write", "read", "lseek", "CREATE", "STAT", "UNLINK"):
        tolerance = max(0.02 * want[call], 50)
        assert abs(got[call] - want[call]) <= tolerance, (call, got[call], want[call])
    # every file the runner creates is opened without following symlinks
    created = [
        line
        for line in (tmp_path / "runner.trace").read_text().splitlines()
        if "O_CREAT" in line and "resumed>" not in line
    ]
    assert created and all("O_NOFOLLOW" in line for line in created)
    # the same seed gives bonnie++'s file names, in bonnie++'s order (after its 8192 seek tickets)
    assert _created_names(tmp_path / "runner.trace") == _created_names(tmp_path / "bonnie.trace")


def _created_names(trace: Path) -> list[str]:
    names = []
    for line in trace.read_text(errors="replace").splitlines():
        m = re.match(r'^\d+\s+open(?:at)?\([^"]*"(?:[^"]*/)?([^"/]*)", [^)\n]*O_CREAT', line)
        if m and not m.group(1).startswith("Bonnie."):
            names.append(m.group(1))
    return names


def _get_json(url: str):
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def test_posts_to_a_real_server_and_spools_when_it_is_down(runner, tmp_path):
    with live_server(f"sqlite:///{tmp_path / 'board.db'}") as server:
        board = server.url
        scratch = tmp_path / "s"
        scratch.mkdir()
        proc = run(
            [
                runner,
                "-d",
                scratch,
                *FILES_ONLY,
                "-x",
                "2",
                "-m",
                "posted",
                "--post",
                board,
                "--tag",
                "suite=pytest",
                "--tag",
                "fs=test",
                "--label",
                "runner e2e",
            ]
        )
        assert proc.returncode == 0, proc.stderr
        # where the machine's runs show over time, after the server's answer
        assert proc.stderr.endswith(f"history: {board}/history?machine=posted\n"), proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0].split(",") == list(COLUMNS_198)  # -x N: a header naming all 50 columns
        assert len(lines) == 3 and all(len(line.split(",")) == 50 for line in lines[1:])
        listed = _get_json(f"{board}/api/runs?tag=suite=pytest")
        assert listed["total"] == 2, listed
        assert {item["raw_line"] for item in listed["items"]} == set(lines[1:])
        run_id = listed["items"][0]["id"]
        detail = _get_json(f"{board}/api/runs/{run_id}")
        assert detail["tags"] == {"suite": "pytest", "fs": "test"}
        assert detail["label"] == "runner e2e"
        assert detail["document"]["system"]["hostname"]
        assert detail["document"]["schema"] == "bonnieboard-runner/1"
    spool = tmp_path / "spool.json"
    proc = run(
        [runner, "-d", tmp_path / "s", *FILES_ONLY, "-q", "--post", board, "--spool", spool, "--tag", "suite=pytest"]
    )
    assert proc.returncode == 4, proc.stderr
    body = json.loads(spool.read_text())
    assert body["csv"].startswith("1.98,bonnieboard-") and body["tags"] == {"suite": "pytest"}
    assert body["document"]["runs"][0]["csv"] + "\n" == body["csv"]
    assert f"--data-binary @{spool}" in proc.stderr
    assert "history:" not in proc.stderr  # nothing was stored, so there is no history to look at


def test_token_opens_a_protected_board_and_a_missing_one_spools(runner, tmp_path):
    scratch = tmp_path / "s"
    scratch.mkdir()
    with live_server(f"sqlite:///{tmp_path / 'board.db'}", env={"BONNIEBOARD_API_TOKEN": "s3cret-token"}) as server:
        refused = run_quick(
            runner, scratch, "-m", "no-token", "--post", server.url, "--spool", tmp_path / "refused.json"
        )
        assert refused.returncode == 4, refused.stderr
        assert (tmp_path / "refused.json").exists()
        posted = run_quick(runner, scratch, "-m", "with-token", "--post", server.url, "--token", "s3cret-token")
        assert posted.returncode == 0, posted.stderr
        listed = _get_json(f"{server.url}/api/runs")
        assert [item["machine"] for item in listed["items"]] == ["with-token"]


def _assert_secret_absent(secret: str, **texts: str) -> None:
    for where, text in texts.items():
        assert secret not in text, f"the token leaked into {where}"


def test_the_token_is_written_nowhere(runner, tmp_path):
    """The token reaches the server's Authorization header and nothing else: not the stored
    document (API and page), not the --json file, not the spool file, not the printed resend command."""
    secret = "leak-canary-7f3a9c"
    scratch = tmp_path / "s"
    scratch.mkdir()
    doc_path = tmp_path / "doc.json"
    with live_server(f"sqlite:///{tmp_path / 'board.db'}", env={"BONNIEBOARD_API_TOKEN": secret}) as server:
        posted = run_quick(
            runner, scratch, "-m", "argv-token", "--post", server.url, "--token", secret, "--json", doc_path
        )
        assert posted.returncode == 0, posted.stderr
        inline = run(
            [runner, "-d", scratch, *FILES_ONLY, "-q", "-m", "inline-token", "--post", server.url, f"--token={secret}"]
        )
        assert inline.returncode == 0, inline.stderr
        from_env = run(
            [runner, "-d", scratch, *FILES_ONLY, "-q", "-m", "env-token", "--post", server.url],
            env=os.environ | {"BONNIEBOARD_TOKEN": secret},
        )
        assert from_env.returncode == 0, from_env.stderr
        token_file = tmp_path / "token"
        token_file.write_text(secret + "\n")
        token_file.chmod(0o644)
        refused = run_quick(runner, scratch, "--post", server.url, "--token-file", token_file)
        assert refused.returncode == 1 and "chmod 600" in refused.stderr, refused.stderr
        token_file.chmod(0o600)
        from_file = run_quick(runner, scratch, "-m", "file-token", "--post", server.url, "--token-file", token_file)
        assert from_file.returncode == 0, from_file.stderr
        listed = _get_json(f"{server.url}/api/runs")
        assert sorted(item["machine"] for item in listed["items"]) == sorted(
            ["argv-token", "inline-token", "env-token", "file-token"]
        )
        for item in listed["items"]:
            detail = urllib.request.urlopen(f"{server.url}/api/runs/{item['id']}", timeout=10).read().decode()
            page = urllib.request.urlopen(f"{server.url}/runs/{item['id']}", timeout=10).read().decode()
            _assert_secret_absent(secret, api=detail, page=page)
            command_line = json.loads(detail)["document"]["command_line"]
            if item["machine"] == "argv-token":
                assert command_line[command_line.index("--token") + 1] == "***"
            if item["machine"] == "inline-token":
                assert "--token=***" in command_line
        _assert_secret_absent(secret, json_file=doc_path.read_text(), stderr=posted.stderr + from_env.stderr)
    # the server is gone: the post fails, the body is spooled privately, the resend line names the variable
    spool = tmp_path / "spool.json"
    failed = run_quick(runner, scratch, "--post", server.url, "--token", secret, "--spool", spool)
    assert failed.returncode == 4, failed.stderr
    assert spool.stat().st_mode & 0o777 == 0o600
    _assert_secret_absent(secret, spool=spool.read_text(), stderr=failed.stderr)
    assert '-H "Authorization: Bearer $BONNIEBOARD_TOKEN"' in failed.stderr
    default_spool = run(
        [runner, "-d", scratch, *FILES_ONLY, "-q", "--post", server.url],
        cwd=tmp_path,
        env=os.environ | {"BONNIEBOARD_TOKEN": secret},
    )
    assert default_spool.returncode == 4, default_spool.stderr
    (made,) = tmp_path.glob("bonnieboard-spool-*.json")
    assert made.stat().st_mode & 0o777 == 0o600
    _assert_secret_absent(secret, default_spool=made.read_text(), stderr=default_spool.stderr)


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["--toke=SECRET"], "ambiguous option --toke: --token, --token-file"),
        (["--tokn=SECRET"], "unknown option --tokn"),
        (["--tokn", "SECRET"], "unknown option --tokn"),
        (["-m", "--tkoen", "SECRET"], 'unexpected argument "***"'),  # -m takes the typo as its value
        (["-s", "--token=SECRET"], '"--token=***"'),  # the token given as another option's value
        (["--jsn=SECRET"], "unknown option --jsn"),
        (["--help=SECRET"], "option --help takes no value"),
    ],
)
def test_a_mistyped_token_option_never_prints_its_value(runner, tmp_path, args, shown):
    """A usage error names the option it refuses, up to its '=', and never shows what follows a
    token-like name: the value of a mistyped --token is the token."""
    proc = run([runner, "-d", tmp_path, *args])
    assert proc.returncode == 1, proc.stderr
    assert "SECRET" not in proc.stdout + proc.stderr, proc.stderr
    assert shown in proc.stderr, proc.stderr


@pytest.mark.parametrize("size", ["9000000000000000:256", "4503599627370496:256", "2147483647:256"])
def test_huge_sizes_are_usage_errors(runner, tmp_path, size):
    """Sizes whose chunk arithmetic would overflow (UB, or a 0-chunk file and a division by zero in the
    seekers) are refused before anything runs, with exit 1."""
    proc = run([runner, "-d", tmp_path, "-s", size, "-r", "0", "-n", "0"], timeout=30)
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "-s" in proc.stderr and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["two\nlines", "a,b", "tab\there", "\ufeffbom", "x" * 201])
def test_machine_names_the_board_would_misread_are_refused(runner, tmp_path, name):
    proc = run([runner, "-d", tmp_path, *FILES_ONLY, "-m", name], timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert "-m: the machine name" in proc.stderr
    assert proc.stdout == "" and list(tmp_path.iterdir()) == []


def test_unwritable_outputs_are_reported_before_the_tests(runner, tmp_path):
    """A --json or --spool path that cannot be written stops the runner before the tests
    (exit 2, no CSV), instead of after a run of hours."""
    scratch = tmp_path / "s"
    scratch.mkdir()
    missing = tmp_path / "no-such-dir"
    for extra in (["--json", missing / "doc.json"], ["--post", "http://127.0.0.1:9", "--spool", missing / "sp.json"]):
        proc = run([runner, "-d", scratch, *FILES_ONLY, *extra], timeout=30)
        assert proc.returncode == 2, proc.stderr
        assert str(extra[-1]) in proc.stderr and "Create files" not in proc.stderr
        assert proc.stdout == "" and list(scratch.iterdir()) == []
    taken = tmp_path / "taken.json"
    taken.write_text("an earlier spool\n")
    proc = run(
        [runner, "-d", scratch, *FILES_ONLY, "--post", "http://127.0.0.1:9", "--spool", taken],
        timeout=30,
    )
    assert proc.returncode == 2 and "never overwrites" in proc.stderr, proc.stderr
    assert taken.read_text() == "an earlier spool\n"
    # opened early, written late: a run whose post fails still leaves its document in the --json file
    doc = tmp_path / "doc.json"
    proc = run(
        [
            runner,
            "-d",
            scratch,
            *FILES_ONLY,
            "--json",
            doc,
            "--post",
            "http://127.0.0.1:9",
            "--spool",
            tmp_path / "ok-spool.json",
            "-q",
        ],
        timeout=60,
    )
    assert proc.returncode == 4 and json.loads(doc.read_text())["schema"] == "bonnieboard-runner/1"


def _own_user() -> str:
    """What `-u` can name here: root as root (bonnie++'s usual `-u root`), else the user we are."""
    return "root" if os.geteuid() == 0 else str(os.geteuid())


def test_a_bonnie_command_line_runs_with_the_binary_name_changed(runner, tmp_path):
    """`bonnie++ -u root -d DIR ...` works as `bonnieboard-runner -u root -d DIR ...`."""
    proc = run([runner, "-u", _own_user(), "-d", tmp_path, *FILES_ONLY, "-q", "-z", "7"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("1.98,bonnieboard-")
    bad = run([runner, "-u", "no-such-user-xyz", "-d", tmp_path, *FILES_ONLY])
    assert bad.returncode == 1 and "can't find user no-such-user-xyz" in bad.stderr


def test_semaphores_synchronise_runners_and_bonnie(runner, tmp_path):
    """`-p 2` makes bonnie++'s semaphore set (key 4711); a runner and a bonnie++ started with
    `-y s` each wait for the other before every test, so both finish; `-p -1` removes the set."""
    bonnie = require_tool("bonnie++", "bonnie++")
    made = run([runner, "-p", "2"], timeout=30)
    assert made.returncode == 0 and "Creating semaphore for 2 procs." in made.stdout, made.stderr
    try:
        dirs = [tmp_path / "a", tmp_path / "b"]
        for d in dirs:
            d.mkdir()
            d.chmod(0o777)
        common = [*FILES_ONLY, "-q", "-y", "s"]
        started = [
            subprocess.Popen(
                [str(runner), "-d", str(dirs[0]), *common], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            ),
            subprocess.Popen(
                [*bonnie_command(bonnie), "-d", str(dirs[1]), *common],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            ),
        ]
        outputs = [p.communicate(timeout=120) for p in started]
        for p, (_out, err) in zip(started, outputs, strict=True):
            assert p.returncode == 0, err
        assert outputs[0][0].splitlines()[-1].startswith("1.98,bonnieboard-")
    finally:
        removed = run([runner, "-p", "-1"], timeout=30)
    assert removed.returncode == 0 and "Semaphore removed." in removed.stdout, removed.stderr
    alone = run([runner, "-d", tmp_path, *FILES_ONLY, "-y", "s"], timeout=30)
    assert alone.returncode == 2 and "-p N first" in alone.stderr


def test_random_file_gives_bonnies_file_names(runner, tmp_path):
    """`-Z FILE` takes the random numbers from FILE as bonnie++ does: the same names in the
    same order, and the file's name in the CSV's seed column."""
    strace = require_tool("strace", "strace")
    bonnie = require_tool("bonnie++", "bonnie++")
    random_file = tmp_path / "random.bin"
    random_file.write_bytes(os.urandom(4 * 4096))
    random_file.chmod(0o644)
    names = {}
    for who, cmd in (("bonnie", bonnie_command(bonnie)), ("runner", [runner])):
        scratch = tmp_path / who
        scratch.mkdir()
        scratch.chmod(0o777)
        trace = tmp_path / f"{who}.trace"
        proc = run(
            [
                strace,
                "-f",
                "-qq",
                "-o",
                trace,
                "-e",
                "trace=open,openat,creat",
                *cmd,
                "-d",
                scratch,
                *FILES_ONLY,
                "-q",
                "-Z",
                random_file,
            ]
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[-1].split(",")[4] == str(random_file)
        names[who] = _created_names(trace)
    assert len(names["bonnie"]) == 2048 and names["runner"] == names["bonnie"]


def test_many_directories_need_no_handle_each(runner, tmp_path):
    """Without -b the runner holds no open handle per directory (bonnie++ reaches files as NNNNN/name):
    with one per directory, 1000 directories under a 256-descriptor limit stop it at "Can't get directory
    handle"."""
    import resource

    def low_fd_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    proc = run([runner, "-d", tmp_path, "-s", "0", "-n", "1:0:0:1000", "-r", "0", "-q"], preexec_fn=low_fd_limit)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].split(",")[25] == "1000"
    assert list(tmp_path.iterdir()) == []


SLOW_GETDENTS = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>
ssize_t getdents64(int fd, void *buf, size_t n)
{
    static ssize_t (*real)(int, void *, size_t);
    if (!real)
        real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "getdents64");
    struct timespec pause = {0, 300000000};
    nanosleep(&pause, NULL);
    return real(fd, buf, n);
}
"""


def test_sequential_latency_counts_the_first_directory_read(runner, tmp_path):
    """bonnie++ times every readdir(), so a directory's first read (the one returning "." and
    ".." first) is in seq_stat's and seq_del's latency. Every getdents64 is made to take 0.3 s; each of the
    two directories fits in one read, so only a latency that counts the first read can reach 0.3 s."""
    shim = tmp_path / "slow_getdents.so"
    src = tmp_path / "slow_getdents.c"
    src.write_text(SLOW_GETDENTS)
    built = run(["cc", "-shared", "-fPIC", "-o", shim, src, "-ldl"])
    assert built.returncode == 0, built.stderr
    scratch = tmp_path / "s"
    scratch.mkdir()
    doc_path = tmp_path / "doc.json"
    proc = run(
        [runner, "-d", scratch, "-s", "0", "-n", "1:0:0:2", "-r", "0", "-q", "--json", doc_path],
        env=os.environ | {"LD_PRELOAD": str(shim)},
    )
    assert proc.returncode == 0, proc.stderr
    tests = json.loads(doc_path.read_text())["runs"][0]["tests"]
    for name in ("seq_stat", "seq_del"):
        assert tests[name]["syscalls"]["getdents"] == 4  # per directory: one read with everything, one at the end
        assert tests[name]["latency_us"] >= 300_000, (name, tests[name]["latency_us"])


def test_a_tiny_run_on_tmpfs_is_cached_and_per_char_is_cpu_bound(runner, tmp_path):
    """On a memory filesystem the reads are `cached`; one byte per system call is `cpu_bound`,
    unless the runner itself waited for a CPU for a quarter of the time (a busy machine): then `noisy`.
    /dev/shm is a tmpfs anyone may write to, so this runs as any user."""
    shm = Path("/dev/shm")
    assert run(["stat", "-f", "-c", "%T", shm]).stdout.strip() == "tmpfs"
    scratch = Path(tempfile.mkdtemp(dir=shm, prefix="runner-test-"))
    doc_path = tmp_path / "doc.json"
    try:
        proc = run([runner, "-d", scratch, "-s", "16", "-r", "0", "-n", "1", "-f2", "-q", "--json", doc_path])
        assert proc.returncode == 0, proc.stderr
    finally:
        shutil.rmtree(scratch)
    tests = json.loads(doc_path.read_text())["runs"][0]["tests"]
    codes = {name: facts["limiter"]["code"] for name, facts in tests.items()}
    for name in ("putc", "getc"):
        waited = tests[name]["limiter"]["evidence"]["run_delay_pct"]
        assert codes[name] == ("noisy" if waited >= 25 else "cpu_bound"), (name, waited, codes)
    for name in ("rewrite", "get_block", "seeks", "seq_stat", "ran_stat"):
        assert codes[name] == "cached", (name, codes)
    assert tests["get_block"]["limiter"]["evidence"]["device_util_pct"] is None  # no device under a tmpfs
    notes = proc.stderr[proc.stderr.index("Notes") :]
    assert re.search(rf"^  putc\s+{codes['putc']}\s+\S", notes, re.MULTILINE), notes


@pytest.mark.root  # a loop device, like the sweep's tests: run one at a time
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to attach a loop device and mount it")
@pytest.mark.parametrize("fs", ["ext4", "btrfs"])
def test_a_loop_device_shows_device_writes_and_its_backing_file(runner, tmp_path, fs):
    """On ext4 or btrfs (in a subvolume, whose files have an st_dev of their own) in a loop
    device, the file tests with -b show device writes in their evidence; the document names the filesystem,
    its mount, the loop device's backing file and the disks behind it."""
    image = tmp_path / f"{fs}.img"
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    assert run(["truncate", "-s", "200M", image]).returncode == 0
    mkfs = require_tool(f"mkfs.{fs}", "e2fsprogs" if fs == "ext4" else "btrfs-progs")
    made = run([mkfs, "-q", *(["-F"] if fs == "ext4" else []), image])
    assert made.returncode == 0, made.stderr
    loop = run(["losetup", "--find", "--show", image])
    assert loop.returncode == 0, loop.stderr
    device = loop.stdout.strip()
    try:
        mounted = run(["mount", device, mnt])
        assert mounted.returncode == 0, mounted.stderr
        try:
            target = mnt
            if fs == "btrfs":
                target = mnt / "sub"
                assert run([require_tool("btrfs", "btrfs-progs"), "subvolume", "create", target]).returncode == 0
            doc_path = tmp_path / "doc.json"
            proc = run([runner, "-d", target, "-s", "0", "-r", "0", "-n", "1", "-b", "-q", "--json", doc_path])
            assert proc.returncode == 0, proc.stderr
        finally:
            run(["umount", mnt])
    finally:
        run(["losetup", "-d", device])
    doc = json.loads(doc_path.read_text())
    filesystem = doc["system"]["filesystem"]
    assert filesystem["type"] == fs and filesystem["mount_point"] == str(mnt), filesystem
    assert filesystem["mount_source"] == device
    block = doc["system"]["block_device"]
    assert block["name"] == Path(device).name
    assert block["loop_backing_file"] == str(image)
    assert block["disks"], block  # the disks under the image's own filesystem
    evidence = doc["runs"][0]["tests"]["seq_create"]["limiter"]["evidence"]
    assert evidence["device_writes"] > 0 and evidence["device_write_bytes"] > 0, evidence
    assert evidence["sync_s"] >= 0


def _shape(value):
    """The keys of a JSON value, recursively (lists by their first element); scalars and null are leaves,
    and a test that did not run (fewer keys, documented) is a leaf too."""
    if isinstance(value, dict):
        if value.get("status") == "not_run":
            return None
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value and isinstance(value[0], (dict, list)) else []
    return None


def _same_keys(golden, fresh, where="document"):
    if isinstance(golden, dict) and isinstance(fresh, dict):
        assert set(golden) == set(fresh), (where, set(golden) ^ set(fresh))
        for key in golden:
            _same_keys(golden[key], fresh[key], f"{where}.{key}")  # a leaf on either side matches anything
    elif isinstance(golden, list) and isinstance(fresh, list) and golden and fresh:
        _same_keys(golden[0], fresh[0], f"{where}[0]")


def test_the_golden_document_has_the_runners_keys(tiny):
    """tests/data/runner-document.json (what the page tests render) has exactly the keys the runner
    writes today, so the board is tested against the document it will receive. Regenerate it with
    `runner/bonnieboard-runner -d DIR -s 32 -f -n 1 -r 0 -m docrun -q --json tests/data/runner-document.json`."""
    golden = json.loads((ROOT / "tests" / "data" / "runner-document.json").read_text())
    _same_keys(_shape(golden), _shape(tiny["doc"]))


@pytest.mark.parametrize(
    "tag",
    [
        "fs=xfs",
        "fs=my xfs",
        "fs=a\u00a0b",
        "k\u3000=v",
        "fs=a\u2028b",
        "fs=\x1cb",
        "fs=a\x01b",  # a control character that is no space: the board takes it
        "fs=",
        "k=" + "v" * 200,
        "k=" + "v" * 201,
        "ü" * 200 + "=v",  # 200 characters, 400 bytes
        "ü" * 201 + "=v",
        "fs=\udcff",  # the byte 0xff: not UTF-8, a lone surrogate to the board
    ],
    ids=repr,
)
def test_the_runner_refuses_before_the_run_the_tags_the_board_refuses(runner, tmp_path, tag):
    """One rule set (docs/api-contract.md "Tags and labels"): what app.ingest.validation refuses, the runner refuses up
    front (exit 1) instead of after hours of benchmark. An accepted tag reaches the next check: the bad -m name."""
    try:
        check_tag(*tag.split("=", 1))
        board_takes_it = True
    except BadRequest:
        board_takes_it = False
    proc = run([runner, "-d", tmp_path, *FILES_ONLY, "--tag", tag, "-m", "a,b"], timeout=30, errors="replace")
    assert proc.returncode == 1, proc.stderr
    assert ("--tag" not in proc.stderr) == board_takes_it, proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_runner_holds_tag_counts_and_labels_to_the_boards_limits(runner, tmp_path):
    def refusal(*args: str) -> str:
        proc = run([runner, "-d", tmp_path, *FILES_ONLY, *args, "-m", "a,b"], timeout=30, errors="replace")
        assert proc.returncode == 1, proc.stderr
        return proc.stderr

    tags = [arg for n in range(MAX_TAGS_PER_RUN) for arg in ("--tag", f"k{n}=v")]
    assert "-m:" in refusal(*tags, "--tag", "k0=again")  # a repeated key replaces its value
    assert f"at most {MAX_TAGS_PER_RUN} tags" in refusal(*tags, "--tag", "one=more")
    assert "-m:" in refusal("--label", "ü" * MAX_LABEL_CHARS)
    assert "--label is 501 characters long" in refusal("--label", "ü" * (MAX_LABEL_CHARS + 1))
    assert "--label is not UTF-8" in refusal("--label", "\udcff")
