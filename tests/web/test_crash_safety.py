"""Crash safety: SIGKILL the server while it is storing a large upload. Afterwards the database
is consistent (SQLite: PRAGMA integrity_check and foreign_key_check; PostgreSQL: amcheck on every index,
no orphan rows), the upload is whole or absent, what was stored before is intact, and the server serves again.

The upload stalls deterministically: tests/upload_stall.py, preloaded into the server, holds the insert of
the upload's last line (after every earlier batch is written, inside the transaction) until the kill."""

import threading
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from tests.helpers import distinct_lines, stored_lines
from tests.live_server import live_server
from tests.postgres import RESET_CONNECTION_NAME

pytestmark = pytest.mark.slow  # a real browser, server, runner or bonnie++: pytest -m 'not slow' skips it

BIG_UPLOAD_LINES = 10_000  # several insert batches (app.ingest.writers.BATCH_ROWS) are written before the stall
WAIT_FOR_STALL_S = 120
REPOSITORY = Path(__file__).resolve().parents[2]


def check_consistent(database_url: str, database_kind: str) -> int:
    """Check the database's integrity; the number of uploads stored."""
    engine = create_engine(database_url, poolclass=NullPool)
    with engine.connect() as connection:
        if database_kind == "sqlite":
            assert connection.exec_driver_sql("PRAGMA integrity_check").scalars().all() == ["ok"]
            assert connection.exec_driver_sql("PRAGMA foreign_key_check").all() == []
        else:
            deadline = time.monotonic() + 30  # the killed server's backends notice, roll back and go

            def others() -> int:
                connection.execute(text("select pg_stat_clear_snapshot()"))  # else one answer all transaction long
                return connection.execute(
                    text(
                        "select count(*) from pg_stat_activity where datname = current_database()"
                        " and pid <> pg_backend_pid() and application_name <> :kept"
                    ),
                    {"kept": RESET_CONNECTION_NAME},
                ).scalar_one()

            while others():
                assert time.monotonic() < deadline, "a killed server's backend outlived it by 30 s"
                time.sleep(0.1)
            connection.execute(text("create extension if not exists amcheck"))
            indexes = (
                connection.execute(
                    text(
                        "select c.oid::regclass::text from pg_index i join pg_class c on c.oid = i.indexrelid"
                        " join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public'"
                    )
                )
                .scalars()
                .all()
            )
            assert indexes
            for index in indexes:
                connection.execute(text("select bt_index_check(cast(:index as regclass), true)"), {"index": index})
            orphans = connection.execute(
                text(
                    "select (select count(*) from run where upload_id not in (select id from upload))"
                    " + (select count(*) from tag where run_id not in (select id from run))"
                )
            ).scalar()
            assert orphans == 0
        uploads = connection.execute(text("select count(*) from upload")).scalar()
    engine.dispose()
    return uploads


def test_sigkill_in_the_middle_of_a_large_upload(database_url, database_kind, tmp_path):
    before = distinct_lines("crash-before", 100)
    big = distinct_lines("crash-big", BIG_UPLOAD_LINES)
    body = ("\n".join(big) + "\n").encode()
    stalled = tmp_path / "stalled"
    stall = {
        "BONNIEBOARD_TEST_STALL_LINE": big[-1],
        "BONNIEBOARD_TEST_STALL_FILE": str(stalled),
        "PYTHONPATH": str(REPOSITORY),
    }

    with live_server(database_url, env=stall, preload="tests.upload_stall") as server:
        assert httpx.post(f"{server.url}/api/runs", content="\n".join(before), timeout=60).status_code == 201
        outcome: dict = {}

        def upload_big() -> None:
            try:
                outcome["response"] = httpx.post(f"{server.url}/api/runs", content=body, timeout=WAIT_FOR_STALL_S)
            except httpx.TransportError as exc:
                outcome["error"] = exc

        uploader = threading.Thread(target=upload_big)
        uploader.start()
        deadline = time.monotonic() + WAIT_FOR_STALL_S
        while not stalled.exists() and uploader.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stalled.exists(), f"the upload never reached its last line: {outcome}\n{server.log()}"
        server.kill()
        uploader.join(timeout=60)
    assert "error" in outcome, f"the upload was answered although its server was killed: {outcome}"

    uploads = check_consistent(database_url, database_kind)
    stored = stored_lines(database_url)
    assert set(stored) >= set(before) and max(stored.values()) == 1
    # Killed before its commit, the upload is absent: not one of its rows, nor its upload row.
    big_stored = len(set(stored) & set(big))
    assert big_stored == 0, f"{big_stored} of {len(big)} lines of an uncommitted upload survived"
    assert uploads == 1

    # The database serves again, and the same upload now goes through whole.
    with live_server(database_url) as server:
        response = httpx.post(f"{server.url}/api/runs", content=body, timeout=120)
        assert response.status_code == 201
        assert len(response.json()["created"]) + len(response.json()["duplicates"]) == len(big)
    assert set(stored_lines(database_url)) == set(before) | set(big)
    check_consistent(database_url, database_kind)
