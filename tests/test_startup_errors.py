"""Starting bonnieboard with a wrong setting or a database it cannot use ends with one line saying which and why
(exit 1 or 2), never a traceback; `serve --help` shows the defaults; `python -m app` is the same command. Run as a
user runs it: the command's main() in a process of its own (forked by tests/zygote.py)."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests import zygote

ROOT = Path(__file__).resolve().parent.parent
IS_ROOT = os.geteuid() == 0
pytestmark = pytest.mark.slow  # the command in a process of its own, a dozen times


def start(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`bonnieboard ARGS` with these BONNIEBOARD_ settings on top of the test run's, in tmp_path."""
    environment = os.environ | {"BONNIEBOARD_DATABASE_URL": f"sqlite:///{tmp_path / 'bb.db'}"} | env
    return zygote.run(list(args), env=environment, cwd=tmp_path)


def one_line(process: subprocess.CompletedProcess, code: int) -> str:
    assert process.returncode == code, process.stderr
    assert "Traceback" not in process.stderr and process.stdout == "", process.stderr
    lines = process.stderr.splitlines()
    assert len(lines) == 1, process.stderr
    assert lines[0].startswith("bonnieboard: ")
    return lines[0]


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["migrate"], ["token", "list"]])
def test_a_short_secret_key_is_one_line_that_does_not_show_it(tmp_path, command):
    line = one_line(start(tmp_path, *command, BONNIEBOARD_SECRET_KEY="short-key"), 2)
    assert line == "bonnieboard: BONNIEBOARD_SECRET_KEY: must be at least 16 characters"
    assert not (tmp_path / "bb.db").exists()  # nothing was started


def test_every_wrong_setting_is_named_on_the_one_line(tmp_path):
    line = one_line(
        start(tmp_path, "migrate", BONNIEBOARD_MAX_LINE_BYTES="lots", BONNIEBOARD_ALLOWED_HOSTS="board:8000"), 2
    )
    assert "BONNIEBOARD_MAX_LINE_BYTES: " in line and "(it is 'lots')" in line
    assert "BONNIEBOARD_ALLOWED_HOSTS: 'board:8000': name a host without its port" in line


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["migrate"], ["--version"]])
def test_a_misspelt_setting_is_refused_by_name_with_the_setting_closest_to_it(tmp_path, command):
    # Read as unknown it would leave the default in force (a comparison at ×1.05), and nothing would say so.
    line = one_line(start(tmp_path, *command, BONNIEBOARD_MIN_EFECT="1.2"), 2)
    assert line == "bonnieboard: BONNIEBOARD_MIN_EFECT is not a setting: did you mean BONNIEBOARD_MIN_EFFECT?"
    assert not (tmp_path / "bb.db").exists()


def test_a_variable_like_no_setting_is_refused_with_the_list_of_settings(tmp_path):
    line = one_line(start(tmp_path, "migrate", BONNIEBOARD_XYZZY="1"), 2)
    assert line.startswith(
        "bonnieboard: BONNIEBOARD_XYZZY is not a setting: the settings are BONNIEBOARD_DATABASE_URL, "
    )
    assert "BONNIEBOARD_MIN_EFFECT" in line and "BONNIEBOARD_INGEST_PATH" in line


def test_the_runners_token_and_the_test_suites_variables_pass(tmp_path):
    started = start(tmp_path, "migrate", BONNIEBOARD_TOKEN="a-runner-token", BONNIEBOARD_TEST_ANYTHING="1")
    assert started.returncode == 0, started.stderr


def test_an_ingest_path_that_is_neither_is_one_line(tmp_path):
    # It used to start on the parser's path with /api/health "ok": every upload slow, and nothing said why.
    line = one_line(start(tmp_path, "serve", "--port", "0", BONNIEBOARD_INGEST_PATH="fast"), 2)
    assert line == "bonnieboard: BONNIEBOARD_INGEST_PATH: Input should be 'compiled' or 'python' (it is 'fast')"


def closed_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("command", [["serve", "--port", "0"], ["migrate"]])
def test_postgresql_down_is_one_line_without_the_password(tmp_path, command):
    url = f"postgresql+psycopg://bonnie:hunter2-secret@127.0.0.1:{closed_port()}/bonnieboard"
    line = one_line(start(tmp_path, *command, BONNIEBOARD_DATABASE_URL=url), 1)
    assert line.startswith("bonnieboard: cannot use the database postgresql+psycopg://bonnie:***@127.0.0.1:")
    assert "Connection refused" in line and "hunter2" not in line


def test_a_sqlite_file_in_a_missing_directory_is_one_line(tmp_path):
    path = tmp_path / "no-such-dir" / "bb.db"
    line = one_line(start(tmp_path, "serve", "--port", "0", BONNIEBOARD_DATABASE_URL=f"sqlite:///{path}"), 1)
    assert line == (
        f"bonnieboard: cannot use the SQLite database {path} (unable to open database file): the directory "
        f"{path.parent} does not exist; set BONNIEBOARD_DATABASE_URL to use another"
    )


def test_a_sqlite_file_in_a_directory_this_user_cannot_write_is_one_line_naming_the_uid(tmp_path):
    """What a root-owned bind mount on the image's /data gives its uid 10001. Root writes anywhere its mode
    forbids, so as root the directory is made immutable (chattr +i) as well."""
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o555)
    if IS_ROOT:
        subprocess.run(["chattr", "+i", data], check=True)
    try:
        url = f"sqlite:///{data / 'bonnieboard.db'}"
        line = one_line(start(tmp_path, "serve", "--port", "0", BONNIEBOARD_DATABASE_URL=url), 1)
    finally:
        if IS_ROOT:
            subprocess.run(["chattr", "-i", data], check=True)
        data.chmod(0o755)
    assert line == (
        f"bonnieboard: cannot use the SQLite database {data / 'bonnieboard.db'} (unable to open database file): "
        f"the directory {data} is not writable by uid {os.geteuid()} (make it so, or choose another path); "
        "set BONNIEBOARD_DATABASE_URL to use another"
    )


def test_a_sqlite_url_at_a_file_that_is_not_a_database_is_one_line(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("not a database, but the file the URL names\n" * 100)
    url = f"sqlite:///{path}"
    for command in (["migrate"], ["serve", "--port", "0"]):
        line = one_line(start(tmp_path, *command, BONNIEBOARD_DATABASE_URL=url), 1)
        assert line == (
            f"bonnieboard: cannot use the SQLite database {path} (file is not a database): the file is not a SQLite "
            "database bonnieboard can read (another file, or a damaged one); set BONNIEBOARD_DATABASE_URL to use "
            "another"
        )
    assert path.read_text().startswith("not a database")  # left as it was


@pytest.mark.parametrize("port", ["99999", "-1", "65536"])
def test_a_port_out_of_range_is_one_line(tmp_path, port):
    line = one_line(start(tmp_path, "serve", "--port", port), 2)
    assert line == f"bonnieboard: --port {port}: a TCP port is 0 to 65535 (0: any free one)"
    assert not (tmp_path / "bb.db").exists()  # refused before the database was touched


def test_a_port_in_use_is_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_line(start(tmp_path, "serve", "--port", str(port)), 1)
    assert line == (
        f"bonnieboard: cannot listen on 127.0.0.1:{port}: Address already in use: another program listens there "
        "(choose another --port)"
    )


def test_an_address_of_no_interface_is_one_line(tmp_path):
    line = one_line(start(tmp_path, "serve", "--host", "192.0.2.1", "--port", "0"), 1)  # TEST-NET-1: nobody's
    assert line == (
        "bonnieboard: cannot listen on 192.0.2.1:0: Cannot assign requested address: no interface of this machine "
        "has that address (check --host)"
    )


@pytest.mark.databases("postgresql")
@pytest.mark.parametrize("encoding", ["SQL_ASCII", "LATIN1"])
def test_a_postgresql_database_not_in_utf8_is_one_line_saying_how_to_make_one(
    tmp_path, database_url, postgres, encoding
):
    """SQL_ASCII is what Debian's PostgreSQL makes under a C or POSIX locale: SQLAlchemy could not even read the
    server's version from it (85 lines of traceback); LATIN1 would store most names and tags mangled or not at all.
    The line's advice, followed, gives a database the board takes."""
    name = f"bb_{encoding.lower()}_{os.getpid()}"
    url = postgres.create_database(name, template="template0", encoding=encoding)
    try:
        for command in (["migrate"], ["serve", "--port", "0"], ["token", "list"]):
            line = one_line(start(tmp_path, *command, BONNIEBOARD_DATABASE_URL=url), 1)
            assert line == (
                f"bonnieboard: the PostgreSQL database '{name}' is encoded {encoding}; bonnieboard needs UTF8: make "
                "a UTF8 database (createdb --encoding=UTF8 --locale=C.UTF-8 --template=template0 NAME) and set "
                "BONNIEBOARD_DATABASE_URL to it"
            )
        url = postgres.create_database(name, template="template0", encoding="UTF8", locale="C.UTF-8")
        migrated = start(tmp_path, "migrate", BONNIEBOARD_DATABASE_URL=url)
        assert migrated.returncode == 0, migrated.stderr
    finally:
        postgres.drop_database(name)


def test_serve_help_shows_the_defaults(tmp_path):
    shown = start(tmp_path, "serve", "--help")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "--host HOST the address to listen on (0.0.0.0: every IPv4 one) (default: 127.0.0.1)" in text
    assert "--port PORT the TCP port to listen on (default: 8000)" in text
    assert "(default: 1)" in text and "(default: None)" not in text


def test_python_dash_m_app_is_the_bonnieboard_command(tmp_path):
    version = subprocess.run([sys.executable, "-m", "app", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert version.returncode == 0 and version.stdout == start(tmp_path, "--version").stdout
    assert version.stdout.startswith("bonnieboard ")
    migrated = subprocess.run(
        [sys.executable, "-m", "app", "migrate"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=os.environ | {"BONNIEBOARD_DATABASE_URL": f"sqlite:///{tmp_path / 'm.db'}"},
    )
    assert migrated.returncode == 0, migrated.stderr
    assert (tmp_path / "m.db").stat().st_size > 0
