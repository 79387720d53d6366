"""A full disk, a read-only database file, a PostgreSQL short of resources or unreachable: the API answers 503 with
a JSON `detail`, pages an error page, both with the security headers; nothing of the request is stored; and once
the cause is gone, the next request works without a restart. Real causes: an immutable (or, without root,
read-only) file; a tmpfs filled to the last byte, holding the SQLite file or a PostgreSQL tablespace with every
table; errors of class 53 raised by the PostgreSQL server itself."""

import contextlib
import errno
import os
import pwd
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from app.ingest import upload as storing
from app.main import create_app
from app.store.migrate import upgrade
from tests.helpers import LINE_103, LINE_198, distinct_lines, post_csv, post_form, reset_caches, with_field

IS_ROOT = os.geteuid() == 0


@pytest.fixture
def client_on(monkeypatch) -> Iterator:
    """A TestClient for the app on a given database URL, its caches reset before and after."""

    @contextlib.contextmanager
    def open_client(url: str) -> Iterator[TestClient]:
        monkeypatch.setenv("BONNIEBOARD_DATABASE_URL", url)
        for setting in ("API_TOKEN", "PRIVATE_READS"):
            monkeypatch.delenv(f"BONNIEBOARD_{setting}", raising=False)
        reset_caches()
        try:
            with TestClient(create_app()) as client:
                yield client
        finally:
            # An upload's checkpoint runs after its answer, on a thread shared by the whole test run (app.ingest.upload).
            # A checkpoint still holding a lock while the dispose below closes the other connections makes SQLite
            # keep their read-write descriptors open for later opens of the same file to reuse, and a PATCH can
            # then answer 200 on the immutable file (seen in CI, not reproduced alone). So no connection may be
            # busy at the dispose: wait for the checkpoints first.
            storing._checkpoints.submit(lambda: None).result(timeout=60)
            reset_caches()

    return open_client


def assert_unavailable(response, *, page: bool = False) -> None:
    assert response.status_code == 503, response.text[:300]
    assert response.headers["content-security-policy"] and response.headers["x-frame-options"] == "DENY"
    assert response.headers["retry-after"]
    if page:
        assert "text/html" in response.headers["content-type"] and "Error 503" in response.text
    else:
        assert isinstance(response.json()["detail"], str) and "try again" in response.json()["detail"]


DISK_FULL = "the database's disk is full: nothing of this request was stored; try again once the disk has room"


def assert_disk_full(response, *, page: bool = False) -> None:
    assert_unavailable(response, page=page)
    assert (escape(DISK_FULL) in response.text) if page else response.json()["detail"] == DISK_FULL


def post_csv_once_writable(client):
    """The first write after the file is writable again. As root that is the next request. Without root the
    file was read-only by its mode, and SQLite (3.40) can give the next connection that opens the file the
    descriptor an earlier connection opened read-only, kept open while another connection holds a lock: that
    request is a 503 too (its connection is dropped like the others) and the one after it goes through."""
    response = post_csv(client, LINE_103)
    if not IS_ROOT and response.status_code == 503:
        assert_unavailable(response)
        response = post_csv(client, LINE_103)
    return response


def set_read_only(path: Path, read_only: bool) -> None:
    """The file cannot be written, even by root: immutable (chattr +i) as root, mode 0444 otherwise."""
    if IS_ROOT:
        subprocess.run(["chattr", "+i" if read_only else "-i", path], check=True)
    else:
        path.chmod(0o444 if read_only else 0o644)


def test_a_read_only_database_is_503_until_it_is_writable_again(tmp_path, client_on):
    path = tmp_path / "bonnieboard.db"
    upgrade(f"sqlite:///{path}")
    with client_on(f"sqlite:///{path}") as client:
        assert post_csv(client, LINE_198).status_code == 201
    set_read_only(path, True)
    try:
        with client_on(f"sqlite:///{path}") as client:
            assert client.get("/api/runs").json()["total"] == 1  # reads still work
            assert_unavailable(post_csv(client, LINE_103))
            assert_unavailable(post_form(client, "/upload", {"lines": LINE_103}), page=True)
            assert_unavailable(client.patch("/api/runs/1", json={"label": "x"}))
            assert_unavailable(client.delete("/api/runs/1"))
            set_read_only(path, False)
            # The same server, no restart: the connection that met the read-only file was dropped.
            assert post_csv_once_writable(client).status_code == 201
            assert client.patch("/api/runs/1", json={"label": "x"}).status_code == 200
    finally:
        set_read_only(path, False)


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str, owner: pwd.struct_passwd | None = None) -> Iterator[Path]:
    where.mkdir(exist_ok=True)
    options = f"size={size},mode=0700" + (f",uid={owner.pw_uid},gid={owner.pw_gid}" if owner else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", where], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "--lazy", where], check=True)


def fill(directory: Path) -> Path:
    """A file that takes every free byte of the file system."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as file:
        chunk = b"\0" * 65536
        while True:
            try:
                file.write(chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
                if len(chunk) == 1:
                    break
                chunk = chunk[: len(chunk) // 2]
    return filler


# Room for a few thousand runs with their tags on either database once the filler is gone.
SMALL_DISK = "24m"


@contextlib.contextmanager
def postgres_database_on(postgres, disk: Path) -> Iterator[str]:
    """A migrated database of its own whose every table and index lives in a tablespace on `disk` (the tests'
    shared database stays where it is); dropped with its tablespace afterwards."""
    name = f"bb_small_disk_{os.getpid()}"
    url = postgres.create_database(name)
    try:
        with postgres.engine.connect() as connection:
            connection.execute(text(f"CREATE TABLESPACE {name} LOCATION '{disk}'"))
        upgrade(url)
        engine = create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
        with engine.connect() as connection:
            connection.execute(text(f"ALTER TABLE ALL IN TABLESPACE pg_default SET TABLESPACE {name}"))
            connection.execute(text(f"ALTER INDEX ALL IN TABLESPACE pg_default SET TABLESPACE {name}"))
        engine.dispose()
        yield url
    finally:
        reset_caches()  # the app's connections go before the database does
        postgres.drop_database(name)
        with postgres.engine.connect() as connection:
            connection.execute(text(f"DROP TABLESPACE IF EXISTS {name}"))


@pytest.fixture
def database_on_small_disk(request, database_kind, tmp_path) -> Iterator[tuple[str, Path]]:
    """(URL, disk): a migrated database whose data lives on a small tmpfs of its own. SQLite: its file;
    PostgreSQL: a tablespace, whose directory the server (running as `postgres`) must own and reach."""
    if not IS_ROOT:
        pytest.skip("mounting a small tmpfs needs root")
    if database_kind == "sqlite":
        with small_tmpfs(tmp_path / "disk", SMALL_DISK) as disk:
            url = f"sqlite:///{disk / 'bonnieboard.db'}"
            upgrade(url)
            yield url, disk
        return
    if os.environ.get("BONNIEBOARD_TEST_POSTGRES_URL"):
        pytest.skip("a tablespace on a small tmpfs needs the throwaway cluster on this machine")
    postgres = request.getfixturevalue("postgres")
    # Not under tmp_path: pytest's base directory is private to root, and the server runs as postgres.
    mount_point = Path(tempfile.mkdtemp(prefix="bonnieboard-tablespace-"))
    try:
        with (
            small_tmpfs(mount_point, SMALL_DISK, owner=pwd.getpwnam("postgres")) as disk,
            postgres_database_on(postgres, disk) as url,
        ):
            yield url, disk
    finally:
        mount_point.rmdir()


def lines_103(prefix: str, count: int) -> list[str]:
    """`count` distinct format-1.03 lines: stored through the parsed-line writer (app.ingest.writers), never the
    compiled path of plain 1.98 lines."""
    return [with_field(LINE_103, 0, f"{prefix}{index}") for index in range(count)]


def run_count(client) -> int:
    return client.get("/api/runs").json()["total"]


@pytest.mark.root  # a small tmpfs
def test_a_full_disk_is_503_stores_nothing_and_passes_once_there_is_room(database_on_small_disk, client_on):
    # 6,000 lines: several insert batches (app.ingest.writers.BATCH_ROWS), so the disk fills in the middle of one;
    # that reached the client as a bare 500 through the parsed-line writer on SQLite.
    url, disk = database_on_small_disk
    plain = "\n".join(distinct_lines("full-disk", 6000))
    old_format = "\n".join(lines_103("full-disk-", 6000))
    with client_on(url) as client:
        assert post_csv(client, LINE_198).status_code == 201
        filler = fill(disk)
        assert_disk_full(post_csv(client, plain))
        assert_disk_full(post_csv(client, plain, name_tags="full-{what}"))
        assert_disk_full(post_csv(client, old_format))
        assert_disk_full(client.post("/api/runs", json={"csv": old_format, "document": {"schema": "x"}}))
        # As the page sends it: multipart (a script's urlencoded form is kept to 64 KiB).
        page = post_form(client, "/upload", files={"file": ("old.csv", old_format.encode())})
        assert_disk_full(page, page=True)
        # Nothing half-stored; the board still reads, and says so on HEAD too.
        assert run_count(client) == 1
        assert client.get("/").status_code == 200 and client.head("/").status_code == 200
        filler.unlink()
        created = post_csv(client, plain, name_tags="full-{what}")
        assert created.status_code == 201 and len(created.json()["created"]) == 6000
        assert post_form(client, "/upload", {"lines": "\n".join(lines_103("after-", 100))}).status_code == 201
        assert run_count(client) == 6101
        assert client.get("/api/runs", params={"tag": "what=disk"}).json()["total"] == 6000


def test_an_unreachable_postgresql_is_503(monkeypatch):
    # Port 1 on loopback: nothing listens, the connection is refused at once.
    monkeypatch.setenv("BONNIEBOARD_DATABASE_URL", "postgresql+psycopg://bonnieboard@127.0.0.1:1/bonnieboard")
    monkeypatch.delenv("BONNIEBOARD_API_TOKEN", raising=False)
    reset_caches()
    try:
        with TestClient(create_app()) as client:
            assert_unavailable(client.get("/api/runs"))
            assert_unavailable(post_csv(client, LINE_198))
            assert_unavailable(client.get("/"), page=True)
    finally:
        reset_caches()


@pytest.mark.databases("postgresql")
@pytest.mark.parametrize(
    ("sqlstate", "reason"),
    [
        ("53100", "the database's disk is full: nothing of this request was stored; try again once the disk has room"),
        ("53200", "the database server is out of memory; try again later"),
        ("53300", "the database server has too many connections; try again later"),
        ("53400", "the database server reached a configured limit; try again later"),
        ("53000", "the database server lacks the resources for this (SQLSTATE 53000); try again later"),
    ],
)
def test_postgresql_short_of_resources_is_503_and_stores_nothing(client, database_url, sqlstate, reason):
    # The server itself raises each error of class 53 ("insufficient resources") in the middle of an upload, past
    # its first insert batch: psycopg gives it the class a real shortage gets (DiskFull, OutOfMemory, ...).
    assert post_csv(client, LINE_198).status_code == 201
    engine = create_engine(database_url, poolclass=NullPool)
    with engine.begin() as connection:
        connection.execute(
            text(
                "CREATE FUNCTION bb_short_of_resources() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                f"IF NEW.seed = '1000002500' THEN RAISE EXCEPTION 'short of resources' USING ERRCODE = '{sqlstate}'; "
                "END IF; RETURN NEW; END $$"
            )
        )
        connection.execute(
            text(
                "CREATE TRIGGER bb_short_of_resources BEFORE INSERT ON run FOR EACH ROW EXECUTE FUNCTION bb_short_of_resources()"
            )
        )
        # ALWAYS: an upload runs as a replica would where its role may, and fires only such triggers.
        connection.execute(text("ALTER TABLE run ENABLE ALWAYS TRIGGER bb_short_of_resources"))
    lines = "\n".join(distinct_lines("short", 2600))
    try:
        refused = post_csv(client, lines)
        assert_unavailable(refused)
        assert refused.json()["detail"] == reason
        assert run_count(client) == 1
    finally:
        with engine.begin() as connection:
            connection.execute(text("DROP FUNCTION bb_short_of_resources() CASCADE"))
        engine.dispose()
    # The connection that met the error was dropped; the next upload takes a new one.
    assert post_csv(client, LINE_103).status_code == 201 and run_count(client) == 2
