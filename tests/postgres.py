"""A PostgreSQL server for the tests and benchmarks: the one BONNIEBOARD_TEST_POSTGRES_URL names, or a
throwaway cluster started in a temporary directory from Debian's postgresql package.

The throwaway cluster listens on 127.0.0.1 only, trusts local connections, and runs with fsync off:
it holds nothing worth keeping and is deleted when the run ends. As root, its programs run as the
`postgres` user that the package creates (the server refuses to run as root); as anyone else, as that user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, Engine, make_url

APT_LINE = "apt-get install -y --no-install-recommends postgresql"
START_TIMEOUT_S = 60
# The connection the tests' fixture keeps open to empty the test database between tests (tests/conftest.py): a test
# that waits for a server's backends to go leaves it out by this name.
RESET_CONNECTION_NAME = "bonnieboard tests: emptying"


class PostgresMissing(RuntimeError):
    pass


class PostgresServer:
    """Creates and drops databases on a server through an admin URL (a role allowed to CREATE DATABASE)."""

    def __init__(self, admin_url: str):
        self.admin_url = make_url(admin_url)
        self._engine: Engine | None = None

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = create_engine(self.admin_url, isolation_level="AUTOCOMMIT", pool_size=1)
        return self._engine

    def url_for(self, database: str) -> str:
        url: URL = self.admin_url.set(database=database)
        return url.render_as_string(hide_password=False)

    def create_database(
        self, name: str, template: str | None = None, encoding: str | None = None, locale: str | None = None
    ) -> str:
        """A new, empty database named `name` (dropped first if it exists); an encoding other than the cluster's
        needs template="template0" (and a locale that fits it, unless the cluster's is C)."""
        clause = f' TEMPLATE "{template}"' if template else ""
        clause += f" ENCODING '{encoding}'" if encoding else ""
        clause += f" LOCALE '{locale}'" if locale else ""
        with self.engine.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            connection.execute(text(f'CREATE DATABASE "{name}"{clause}'))
        return self.url_for(name)

    def drop_database(self, name: str) -> None:
        with self.engine.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


def postgres_bin() -> Path:
    """The server programs' directory: $BONNIEBOARD_TEST_PG_BIN, `pg_config --bindir`, the newest
    /usr/lib/postgresql/<major>/bin (Debian, Ubuntu), or wherever initdb is on PATH (Fedora, Homebrew)."""
    candidates: list[Path] = []
    if os.environ.get("BONNIEBOARD_TEST_PG_BIN"):
        candidates.append(Path(os.environ["BONNIEBOARD_TEST_PG_BIN"]))
    if shutil.which("pg_config"):
        bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False).stdout.strip()
        if bindir:
            candidates.append(Path(bindir))
    versions = Path("/usr/lib/postgresql").glob("*/bin")
    candidates += sorted(
        versions, key=lambda p: [int(x) if x.isdigit() else 0 for x in p.parent.name.split(".")], reverse=True
    )
    if shutil.which("initdb"):
        candidates.append(Path(shutil.which("initdb")).parent)
    for directory in candidates:
        if (directory / "initdb").is_file() and (directory / "pg_ctl").is_file():
            return directory
    raise PostgresMissing(f"PostgreSQL's server programs are not installed; run: {APT_LINE}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    """Start a new cluster in a temporary directory; yield its admin URL; stop and delete it."""
    bin_dir = postgres_bin()
    as_user: list[str] = []
    directory = Path(tempfile.mkdtemp(prefix="bonnieboard-pg-"))
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            raise PostgresMissing(f"there is no 'postgres' user to run the server as; run: {APT_LINE}") from None
        os.chown(directory, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, log = directory / "data", directory / "server.log"
    port = _free_port()

    def run(*args: str) -> None:
        subprocess.run([*as_user, *args], check=True, capture_output=True, timeout=START_TIMEOUT_S)

    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={directory} "
        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
    )
    try:
        run(
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        run(
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-l",
            str(log),
            "-o",
            options,
            "-w",
            "-t",
            str(START_TIMEOUT_S),
            "start",
        )
    except subprocess.CalledProcessError as exc:
        output = (exc.stderr or b"").decode(errors="replace") + (
            log.read_text(errors="replace") if log.exists() else ""
        )
        shutil.rmtree(directory, ignore_errors=True)
        raise RuntimeError(f"could not start a throwaway PostgreSQL in {directory}:\n{output}") from None
    # Should this process be killed before it stops the cluster (a timeout, SIGKILL), a watcher does it.
    stop = " ".join([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"])
    subprocess.Popen(
        [
            "sh",
            "-c",
            f"while kill -0 {os.getpid()} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf {directory}",
        ],
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        stop_now = [*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]
        subprocess.run(stop_now, capture_output=True, timeout=START_TIMEOUT_S, check=False)
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def postgres_server(url: str | None) -> Iterator[PostgresServer]:
    """The server at `url` (BONNIEBOARD_TEST_POSTGRES_URL), or a throwaway cluster when it is None."""
    if url:
        server = PostgresServer(url)
        _wait_until_ready(server)
        try:
            yield server
        finally:
            server.close()
        return
    with throwaway_cluster() as admin_url:
        server = PostgresServer(admin_url)
        _wait_until_ready(server)
        try:
            yield server
        finally:
            server.close()


def _wait_until_ready(server: PostgresServer) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            with server.engine.connect() as connection:
                connection.execute(text("select 1"))
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
