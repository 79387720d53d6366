"""Crash safety (issue #5): SIGKILL the server while it is storing a large upload. Afterwards the database
is consistent (SQLite: PRAGMA integrity_check and foreign_key_check; PostgreSQL: amcheck on every index,
no orphan rows), the upload is whole or absent, what was stored before is intact, and the server serves again."""

import sqlite3
import threading
import time

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from tests.helpers import distinct_lines, stored_lines
from tests.live_server import live_server

pytestmark = pytest.mark.slow  # a real browser, server, runner or bonnie++: pytest -m 'not slow' skips it

BIG_UPLOAD_LINES = 60_000  # about 15 MB: a few seconds of ingest, inside the 32 MiB limit
KILL_AFTER_WRITING_S = 0.1  # the transaction is open and storing rows; the whole upload takes seconds
WAIT_FOR_WRITER_S = 60


def sqlite_writer_active(path: str) -> bool:
    """True while another connection holds SQLite's write lock (an upload's transaction is open)."""
    connection = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc) or "busy" in str(exc), exc
        return True
    finally:
        connection.close()


def postgres_writers(engine) -> int:
    """Backends of this database, other than ours, inside a transaction that has written something."""
    with engine.connect() as connection:
        return connection.execute(text(
            "select count(*) from pg_stat_activity where datname = current_database()"
            " and pid <> pg_backend_pid() and backend_xid is not null"
        )).scalar()  # fmt: skip


def check_consistent(database_url: str, database_kind: str) -> None:
    engine = create_engine(database_url, poolclass=NullPool)
    with engine.connect() as connection:
        if database_kind == "sqlite":
            assert connection.exec_driver_sql("PRAGMA integrity_check").scalars().all() == ["ok"]
            assert connection.exec_driver_sql("PRAGMA foreign_key_check").all() == []
        else:
            deadline = time.monotonic() + 30  # the killed server's backends notice, roll back and go
            while connection.execute(text(
                "select count(*) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()"
            )).scalar() and time.monotonic() < deadline:  # fmt: skip
                time.sleep(0.1)
            connection.execute(text("create extension if not exists amcheck"))
            indexes = connection.execute(text(
                "select c.oid::regclass::text from pg_index i join pg_class c on c.oid = i.indexrelid"
                " join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public'"
            )).scalars().all()  # fmt: skip
            assert indexes
            for index in indexes:
                connection.execute(text("select bt_index_check(cast(:index as regclass), true)"), {"index": index})
            orphans = connection.execute(text(
                "select (select count(*) from run where upload_id not in (select id from upload))"
                " + (select count(*) from tag where run_id not in (select id from run))"
            )).scalar()  # fmt: skip
            assert orphans == 0
        uploads = connection.execute(text("select count(*) from upload")).scalar()
    engine.dispose()
    return uploads


def test_sigkill_in_the_middle_of_a_large_upload(database_url, database_kind):
    before = distinct_lines("crash-before", 100)
    big = distinct_lines("crash-big", BIG_UPLOAD_LINES)
    body = ("\n".join(big) + "\n").encode()
    probe_engine = create_engine(database_url, poolclass=NullPool) if database_kind == "postgresql" else None
    sqlite_path = database_url.removeprefix("sqlite:///")

    with live_server(database_url) as server:
        assert httpx.post(f"{server.url}/api/runs", content="\n".join(before), timeout=60).status_code == 201
        outcome: dict = {}

        def upload_big() -> None:
            try:
                outcome["response"] = httpx.post(f"{server.url}/api/runs", content=body, timeout=120)
            except httpx.TransportError as exc:
                outcome["error"] = exc

        uploader = threading.Thread(target=upload_big)
        uploader.start()
        deadline = time.monotonic() + WAIT_FOR_WRITER_S
        writing = False
        while not writing and "response" not in outcome and time.monotonic() < deadline:
            writing = sqlite_writer_active(sqlite_path) if database_kind == "sqlite" else postgres_writers(probe_engine) > 0
            time.sleep(0.005)
        assert writing, f"never saw the upload's transaction open: {outcome}"
        time.sleep(KILL_AFTER_WRITING_S)
        server.kill()
        uploader.join(timeout=60)
    assert "error" in outcome, f"the upload finished before the kill ({outcome}); make it larger"
    if probe_engine is not None:
        probe_engine.dispose()

    uploads = check_consistent(database_url, database_kind)
    stored = stored_lines(database_url)
    assert set(stored) >= set(before) and max(stored.values()) == 1
    big_stored = len(set(stored) & set(big))
    assert big_stored in (0, len(big)), f"{big_stored} of {len(big)} lines survived: the upload is neither whole nor absent"
    assert uploads == (1 if big_stored == 0 else 2)

    # The database serves again, and the same upload now goes through whole.
    with live_server(database_url) as server:
        response = httpx.post(f"{server.url}/api/runs", content=body, timeout=120)
        assert response.status_code == 201
        assert len(response.json()["created"]) + len(response.json()["duplicates"]) == len(big)
    assert set(stored_lines(database_url)) == set(before) | set(big)
    check_consistent(database_url, database_kind)
