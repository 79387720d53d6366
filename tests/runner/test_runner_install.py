"""The runner as its users install it: `make -C runner install` into a DESTDIR, the manual page made from
--help (every option --help lists is in it, and man renders it), the example systemd units (checked by
systemd-analyze against the installed page), the resend line of a failed post that used a token file, and the
scratch directory checked before the file-size rules."""

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.runner.test_runner import FILES_ONLY, RUNNER_DIR, require_tool, run, runner  # noqa: F401 (runner: a fixture)

PROG = "bonnieboard-runner"


def help_options(binary: Path) -> set[str]:
    """Every option --help describes: the first word of each entry of its lists."""
    text = run([binary, "--help"]).stdout
    options = {m.group(1) for m in re.finditer(r"^  (-[A-Za-z]|--[a-z-]+)", text, re.MULTILINE)}
    assert len(options) > 25, text  # bonnie++'s 18 and the runner's own
    return options


@pytest.fixture(scope="module")
def installed(runner, tmp_path_factory) -> Path:  # noqa: F811 (runner: the fixture imported above)
    """`make install DESTDIR=... PREFIX=/usr`: the staged tree, as a packager would use it."""
    destdir = tmp_path_factory.mktemp("destdir")
    made = run(["make", "-C", RUNNER_DIR, "install", f"DESTDIR={destdir}", "PREFIX=/usr"])
    assert made.returncode == 0, made.stdout + made.stderr
    return destdir


def test_install_puts_the_program_its_manual_and_the_examples_under_prefix(installed):
    files = sorted(str(p.relative_to(installed)) for p in installed.rglob("*") if p.is_file())
    assert files == [
        f"usr/bin/{PROG}",
        f"usr/share/doc/{PROG}/LICENSE",
        f"usr/share/doc/{PROG}/README.md",
        f"usr/share/doc/{PROG}/examples/{PROG}.service",
        f"usr/share/doc/{PROG}/examples/{PROG}.timer",
        f"usr/share/man/man1/{PROG}.1",
    ]
    binary = installed / "usr/bin" / PROG
    assert binary.stat().st_mode & 0o777 == 0o755
    assert (installed / f"usr/share/man/man1/{PROG}.1").stat().st_mode & 0o777 == 0o644
    assert run([binary, "--version"]).stdout.startswith("bonnieboard-runner ")


def test_the_manual_page_is_the_help_text_and_names_every_option(installed):
    page = installed / f"usr/share/man/man1/{PROG}.1"
    options = help_options(installed / "usr/bin" / PROG)
    require_tool("man", "man-db")
    rendered = subprocess.run(
        ["man", "--warnings", "-l", str(page)],
        capture_output=True,
        text=True,
        env={**os.environ, "MANWIDTH": "100", "MAN_KEEP_FORMATTING": "", "PAGER": "cat"},
        check=True,
    )
    assert rendered.stderr == "", rendered.stderr  # groff has no complaint about the page
    text = rendered.stdout
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "ENVIRONMENT", "EXIT STATUS", "SEE ALSO"):
        assert re.search(rf"^{heading}$", text, re.MULTILINE), heading
    missing = [option for option in sorted(options) if not re.search(rf"^ {{7}}{re.escape(option)}\b", text, re.M)]
    assert not missing, f"options --help lists that the page does not describe: {missing}"
    assert "4 post failed" in text and "BONNIEBOARD_TOKEN" in text


def test_the_manual_page_describes_sweep_its_plan_and_its_exit_codes(installed):
    """sweep's synopsis, its --help paragraph, every key of runner/README.md's plan table and the sweep's exit
    codes: the page is the one `man bonnieboard-runner` shows for both commands."""
    require_tool("man", "man-db")
    rendered = subprocess.run(
        ["man", "-l", str(installed / f"usr/share/man/man1/{PROG}.1")],
        capture_output=True,
        text=True,
        env={**os.environ, "MANWIDTH": "200", "MAN_KEEP_FORMATTING": "", "PAGER": "cat"},
        check=True,
    ).stdout
    synopsis = rendered[rendered.index("SYNOPSIS") : rendered.index("DESCRIPTION")]
    assert f"{PROG} sweep PLAN --yes-destroy DEVICE" in " ".join(synopsis.split())
    sweep = " ".join(rendered[rendered.index("\nSWEEP\n") : rendered.index("\nEXIT STATUS\n")].split())
    assert "Runs a configuration study" in sweep and "--dry-run" in sweep and "--resume" in sweep
    readme = (RUNNER_DIR / "README.md").read_text()
    plan_table = readme[readme.index("### The plan") : readme.index("### Each run's tags")]
    keys = re.findall(r"^\| `([a-z_]+)` \|", plan_table, re.M)
    assert len(keys) >= 9, keys
    missing = [key for key in keys if not re.search(rf"(^| ){key} \(", sweep)]
    assert not missing, f"plan keys the page does not describe: {missing}"
    exit_status = " ".join(rendered[rendered.index("\nEXIT STATUS\n") : rendered.index("\nSEE ALSO\n")].split())
    assert "sweep: 0 the study is done 1 usage" in exit_status and "4 every run ran" in exit_status


def test_the_example_units_run_the_installed_program_with_a_token_file(installed):
    examples = installed / f"usr/share/doc/{PROG}/examples"
    service = (examples / f"{PROG}.service").read_text()
    timer = (examples / f"{PROG}.timer").read_text()
    exec_start = re.search(r"^ExecStart=((?:[^\n]*\\\n)*[^\n]*)", service, re.MULTILINE).group(1).replace("\\\n", " ")
    argv = exec_start.split()
    assert argv[0] == f"/usr/bin/{PROG}"  # where this install (PREFIX=/usr) put it, not the default /usr/local
    assert "@BINDIR@" not in service
    assert "--token-file" in argv and "--token" not in argv and "--post" in argv
    used = {arg for arg in argv[1:] if arg.startswith("-")}
    assert used <= help_options(installed / "usr/bin" / PROG), used
    assert "OnCalendar=" in timer and "Persistent=true" in timer and "WantedBy=timers.target" in timer


def test_the_example_units_verify_where_they_are_installed(runner, tmp_path):  # noqa: F811
    """Installed under another prefix (no DESTDIR: the files are where they run), the units pass systemd-analyze
    verify as they are: every directive, ExecStart's program (the prefix's, not /usr/local's) and the man page."""
    prefix = tmp_path / "prefix"
    made = run(["make", "-C", RUNNER_DIR, "install", f"PREFIX={prefix}"])
    assert made.returncode == 0, made.stdout + made.stderr
    examples = prefix / f"share/doc/{PROG}/examples"
    assert f"ExecStart={prefix}/bin/{PROG} " in (examples / f"{PROG}.service").read_text()
    analyze = require_tool("systemd-analyze", "systemd")
    verified = subprocess.run(
        [analyze, "verify", f"{PROG}.service", f"{PROG}.timer"],
        cwd=examples,
        capture_output=True,
        text=True,
        env={**os.environ, "MANPATH": str(prefix / "share/man")},
        timeout=120,
    )
    assert verified.returncode == 0 and verified.stderr == "", verified.stderr


# The example run's sandbox (each setting's reason is a comment in the unit); systemd-analyze scores the unit
# before it 9.2 UNSAFE, with it 1.8 OK.
MAX_EXPOSURE = 2.0


def test_the_example_service_is_sandboxed(installed, tmp_path):
    analyze = require_tool("systemd-analyze", "systemd")
    service = tmp_path / f"{PROG}.service"
    service.write_text((installed / f"usr/share/doc/{PROG}/examples/{PROG}.service").read_text())
    scored = subprocess.run(
        [analyze, "security", "--offline=true", "--no-pager", service.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    exposure = re.search(r"Overall exposure level for \S+: (\d+\.\d+) (\w+)", scored.stdout + scored.stderr)
    assert exposure, scored.stdout + scored.stderr
    assert float(exposure.group(1)) <= MAX_EXPOSURE, scored.stdout
    text = service.read_text()
    for setting in ("ProtectSystem=strict", "PrivateTmp=yes", "NoNewPrivileges=yes", "ProtectHome=yes"):
        assert f"\n{setting}\n" in text, setting


def test_warnings_stop_the_build_only_when_asked():
    flags = run(["make", "-C", RUNNER_DIR, "-pn", PROG]).stdout
    assert re.search(r"^WARN := -Wall -Wextra -Wpedantic *$", flags, re.M), "a user's build must not use -Werror"
    flags = run(["make", "-C", RUNNER_DIR, "-pn", PROG, "WERROR=1"]).stdout
    assert re.search(r"^WARN := -Wall -Wextra -Wpedantic -Werror$", flags, re.M)
    top = (RUNNER_DIR.parent / "Makefile").read_text()
    assert re.search(r"^test: RUNNER_FLAGS = WERROR=1$", top, re.M), "make test builds the runner with -Werror"


def test_a_failed_post_prints_a_resend_line_that_reads_the_token_file(runner, tmp_path):  # noqa: F811
    secret = "bb_" + "s3cr3t" * 8
    token_file = tmp_path / "it's the token"
    token_file.write_text(secret + "\n")
    token_file.chmod(0o600)
    spool = tmp_path / "spool.json"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    # port 9 (discard) of loopback: nothing listens, the post fails at once
    failed = run(
        [runner, "-d", scratch, *FILES_ONLY, "-q", "--post", "http://127.0.0.1:9", "--token-file", token_file]
        + ["--spool", spool]
    )
    assert failed.returncode == 4, failed.stderr
    assert secret not in failed.stderr and secret not in spool.read_text()
    (line,) = [line.strip() for line in failed.stderr.splitlines() if line.strip().startswith("curl ")]
    quoted = "'" + str(token_file).replace("'", "'\\''") + "'"
    assert f'-H "Authorization: Bearer $(cat {quoted})" ' in line
    # The line is shell: sh expands it to the real header (curl itself is not run; echo shows its argv).
    expanded = subprocess.run(["sh", "-c", "echo " + line.removeprefix("curl ")], capture_output=True, text=True)
    assert f"Authorization: Bearer {secret} --data-binary @{spool}" in expanded.stdout


def test_a_missing_scratch_directory_is_named_before_the_file_size_rules(runner, tmp_path):  # noqa: F811
    missing = tmp_path / "not-made"
    # -s 1 with -r 1000 breaks the twice-the-RAM rule; the missing directory is the mistake to report
    refused = run([runner, "-d", missing, "-s", "1", "-r", "1000", "-n", "0"])
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.strip().splitlines() == [
        f'bonnieboard-runner: can\'t open directory "{missing}": No such file or directory'
    ]
    # a directory that exists: the size rule speaks (exit 1, a usage error)
    refused = run([runner, "-d", tmp_path, "-s", "1", "-r", "1000", "-n", "0"])
    assert refused.returncode == 1 and "less than twice the RAM" in refused.stderr


def system_call_group(analyze: str, group: str) -> set[str]:
    """The system calls of a systemd filter group (`@system-service`), its nested groups expanded."""
    listing = run([analyze, "syscall-filter", "--no-pager"]).stdout
    groups: dict[str, list[str]] = {}
    current = None
    for line in listing.splitlines():
        if line.startswith("@"):
            current = line.split()[0]
            groups[current] = []
        elif current and line.strip() and not line.strip().startswith("#"):
            groups[current].append(line.strip())

    def expand(name: str) -> set[str]:
        return set().union(*(expand(e) if e.startswith("@") else {e} for e in groups[name]))

    return expand(group)


def test_every_system_call_of_a_run_is_one_the_service_allows(runner, installed, tmp_path):  # noqa: F811
    """A run with each test kind, its document and a post (which fails: nothing listens), traced: every system call
    it makes is in the service's SystemCallFilter, which would otherwise kill it (-f: the per-character tests make
    the same calls as the block tests, a million times over under strace)."""
    strace = require_tool("strace", "strace")
    analyze = require_tool("systemd-analyze", "systemd")
    service = (installed / f"usr/share/doc/{PROG}/examples/{PROG}.service").read_text()
    (allowed_groups,) = re.findall(r"^SystemCallFilter=(\S+)$", service, re.M)
    allowed = system_call_group(analyze, allowed_groups)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    trace = tmp_path / "trace"
    traced = run(
        [strace, "-f", "-qq", "-o", trace, runner, "-d", scratch, "-s", "4:8192:64:2", "-f", "-n", "1", "-r", "0"]
        + ["-q", "--json", tmp_path / "doc.json", "--post", "http://127.0.0.1:9", "--spool", tmp_path / "spool.json"]
    )
    assert traced.returncode == 4, traced.stderr  # 4: the post failed, every test ran
    calls = set(re.findall(r"^\d+ +([a-z0-9_]+)\(", trace.read_text(), re.M))
    assert {"openat", "write", "fsync", "socket", "connect"} <= calls, calls
    assert calls <= allowed, sorted(calls - allowed)
