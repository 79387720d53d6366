"""Fixtures: a fresh, migrated database (SQLite file and PostgreSQL), a session on it, and an app client.

Every test that uses `database_url` (directly, or through `session` or `client`) runs once per database
named by `--db` (default: BONNIEBOARD_TEST_DB, else "sqlite,postgresql"); tests that touch no database
run once. PostgreSQL is the server BONNIEBOARD_TEST_POSTGRES_URL names (a role that may CREATE DATABASE),
or else a throwaway cluster started for the run (tests/postgres.py). Each SQLite test gets a copy of a file
migrated once per run (copying takes 0.4 ms, migrating 200-500 ms). The PostgreSQL tests share one database,
migrated once per run and emptied before each test through one kept connection (every table truncated, ids
restarted): 30-50 ms of the server's CPU, where copying a template database takes 200-400 ms. A test that changes
the schema makes a database of its own with `postgres.create_database`.
"""

import gc
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.orm import Session

from app import config as app_config
from app.ingest import sqlite_bulk
from app.main import create_app
from app.store import db
from app.store.migrate import upgrade
from tests.helpers import DATABASES, reset_caches, selected_databases, set_setting
from tests.postgres import RESET_CONNECTION_NAME, PostgresMissing, PostgresServer, postgres_server

SETTINGS_RESET = ("API_TOKEN", "PRIVATE_READS", "MAX_LINE_BYTES", "MAX_UPLOAD_BYTES", "SECRET_KEY", "ROOT_PATH")


def pytest_addoption(parser):
    parser.addoption(
        "--db",
        default=os.environ.get("BONNIEBOARD_TEST_DB", ",".join(DATABASES)),
        help="databases the database tests run on: sqlite, postgresql, or both comma-separated "
        "(default: $BONNIEBOARD_TEST_DB, else sqlite,postgresql)",
    )


def pytest_configure(config):
    # The test client's Host (TestClient sends "testserver") besides the live servers' loopback names, named
    # here rather than accepted by default: unset, BONNIEBOARD_ALLOWED_HOSTS is loopback names only.
    os.environ["BONNIEBOARD_ALLOWED_HOSTS"] = "testserver,127.0.0.1,localhost"
    reset_caches()
    config.addinivalue_line(
        "markers", "databases(*names): run this database test only on these databases (e.g. 'sqlite' for PRAGMAs)"
    )


# A full pass of the cyclic garbage collector walks every object the process holds, and a pytest worker holds the
# app, its libraries and 2,000 collected tests: that heap, there once the tests are collected, is frozen (never
# walked again), and a full pass waits for 1,000 passes of the middle generation rather than 10
# (docs/decisions.md, "Where the suite spent CPU on itself").
FULL_PASS_AFTER = 1000


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_PASS_AFTER)


def pytest_generate_tests(metafunc):
    if "database_url" in metafunc.fixturenames:
        databases = selected_databases(metafunc.config)
        marker = metafunc.definition.get_closest_marker("databases")
        if marker is not None:
            databases = [name for name in databases if name in marker.args]
        # A test limited to a database that --db leaves out still shows up, as skipped, not silently gone.
        metafunc.parametrize(
            "database_url",
            databases or [pytest.param("none", marks=pytest.mark.skip("database not selected by --db"))],
            indirect=True,
        )


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """The PostgreSQL server of this run."""
    try:
        with postgres_server(os.environ.get("BONNIEBOARD_TEST_POSTGRES_URL")) as server:
            yield server
    except PostgresMissing as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def postgres_test_database(postgres) -> Iterator[Engine]:
    """The run's PostgreSQL test database, migrated to head: an engine that keeps one connection for emptying it
    before each test (a new connection costs the server a backend each time: about 15 ms of CPU a test)."""
    name = f"bb_test_{os.getpid()}"
    url = postgres.create_database(name)
    upgrade(url)
    engine = create_engine(
        url,
        pool_size=1,
        max_overflow=0,
        pool_pre_ping=True,
        connect_args={"application_name": RESET_CONNECTION_NAME},
    )
    yield engine
    engine.dispose()
    postgres.drop_database(name)


def empty_postgres_database(engine: Engine) -> None:
    """Every table but alembic_version emptied and its ids restarted, as a freshly migrated database. TRUNCATE, not
    DELETE: it also resets the planner's row estimate that the runs list's count reads (runs.py)."""
    with engine.begin() as connection:
        # A server process a test started (and killed) may leave a backend behind holding locks.
        connection.execute(
            text(
                "select pg_terminate_backend(pid) from pg_stat_activity"
                " where datname = current_database() and pid <> pg_backend_pid()"
            )
        )
        tables = connection.scalars(
            text(
                "select quote_ident(tablename) from pg_tables where schemaname = 'public' and tablename <> 'alembic_version'"
            )
        ).all()
        connection.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE"))


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory) -> Path:
    """A SQLite file migrated to head once per run; each SQLite test gets a copy (0.4 ms, where migrating takes
    200-500 ms). Migrating closes the last connection, which checkpoints the WAL into the file."""
    path = tmp_path_factory.mktemp("sqlite-template") / "bonnieboard.db"
    upgrade(f"sqlite:///{path}")
    assert not path.with_name(path.name + "-wal").exists()
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_database(request, tmp_path) -> Iterator[str]:
    """The URL of a database with nothing in it, not even a schema: for tests of the migrations themselves."""
    if request.param not in selected_databases(request.config):
        pytest.skip("database not selected by --db")
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    postgres = request.getfixturevalue("postgres")
    name = f"bb_empty_{request.node.module.__name__.rsplit('.', 1)[-1]}_{os.getpid()}"
    yield postgres.create_database(name)
    postgres.drop_database(name)


@pytest.fixture
def database_url(request, tmp_path, monkeypatch) -> Iterator[str]:
    """A fresh, migrated database that the app's settings point at (its kind is the test's parameter)."""
    kind = getattr(request, "param", "sqlite")
    if kind == "postgresql":
        engine = request.getfixturevalue("postgres_test_database")
        empty_postgres_database(engine)
        url = engine.url.render_as_string(hide_password=False)
    else:
        path = tmp_path / "bonnieboard.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        url = f"sqlite:///{path}"
    monkeypatch.setenv("BONNIEBOARD_DATABASE_URL", url)
    for setting in SETTINGS_RESET:
        monkeypatch.delenv(f"BONNIEBOARD_{setting}", raising=False)
    reset_caches()
    yield url
    reset_caches()


@pytest.fixture
def database_kind(database_url) -> str:
    return "postgresql" if database_url.startswith("postgresql") else "sqlite"


@pytest.fixture
def session(database_url) -> Iterator[Session]:
    with db.get_sessionmaker()() as session:
        yield session


@pytest.fixture
def client(database_url) -> Iterator[TestClient]:
    with TestClient(create_app()) as client:
        yield client


@pytest.fixture(params=[sqlite_bulk.COMPILED, sqlite_bulk.PYTHON])
def ingest_path(request) -> Iterator[str]:
    """The test runs twice: uploads store their plain lines through the compiled extension, then every line goes
    through the parser (BONNIEBOARD_INGEST_PATH=python, as on an install without the extension)."""
    # Its own MonkeyPatch: the variable is gone before the cached settings are forgotten, after the test.
    with pytest.MonkeyPatch.context() as patch:
        set_setting(patch, "INGEST_PATH", request.param)
        if sqlite_bulk.ingest_path() != request.param:
            pytest.skip(f"the compiled ingest path is not available: {sqlite_bulk.extension_problem()}")
        yield request.param
    app_config.get_settings.cache_clear()


# The runner binary and scratch loop devices, for the sweep's tests (tests/runner/test_sweep*.py).


@pytest.fixture(scope="session")
def runner_binary() -> Path:
    from tests.runner.test_runner import RUNNER, RUNNER_DIR, run

    built = run(["make", "-C", RUNNER_DIR])
    assert built.returncode == 0, built.stdout + built.stderr
    return RUNNER


@pytest.fixture
def loop_device(tmp_path) -> Iterator[str]:
    """A 400 MiB loop device (xfs needs 300), detached whatever happens, unmounted first if a test left it so."""
    from tests.runner.test_runner import require_tool, run
    from tests.runner.test_sweep import _majmin

    if os.geteuid() != 0:
        pytest.skip("needs root")
    losetup = require_tool("losetup", "mount")
    require_tool("mkfs.ext4", "e2fsprogs")
    require_tool("mkfs.xfs", "xfsprogs")
    image = tmp_path / "disk.img"
    assert run(["truncate", "-s", "400M", image]).returncode == 0
    attached = run([losetup, "--find", "--show", image])
    assert attached.returncode == 0, attached.stderr
    device = attached.stdout.strip()
    try:
        yield device
    finally:
        for _ in range(20):
            mounts = [
                line.split()[4]
                for line in Path("/proc/self/mountinfo").read_text().splitlines()
                if line.split()[2] == _majmin(device)
            ]
            if not mounts:
                break
            for target in mounts:
                if run(["umount", target]).returncode != 0:
                    time.sleep(0.5)
        run([losetup, "-d", device])
