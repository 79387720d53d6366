"""The runs list's count (app/store/runs.py, CountCache): counted once per data generation and filter, and counted
again after any write: an upload, a tag edit, a deletion, another process's ingest."""

import re

import pytest

from app.store import runs as run_store
from tests.helpers import LINE_103, LINE_197, LINE_198, post_csv, run_cli


def shown_count(client, query: str = "") -> str:
    page = client.get(f"/{query}")
    assert page.status_code == 200, page.text
    return re.search(r'<p class="summary">([^<]*?) ?<button', page.text).group(1).strip()


@pytest.fixture
def counting(monkeypatch) -> list[object]:
    """The filters counted in the database (the real count, watched)."""
    counted: list[object] = []
    count_now = run_store._count_now

    def watched(session, run_filter, ids):
        counted.append(run_filter)
        return count_now(session, run_filter, ids)

    monkeypatch.setattr(run_store, "_count_now", watched)
    # No count kept from a test before in this process: every test's database is a copy of one migrated
    # template, so an empty database's count, kept under the template's stamp, would hold here too.
    monkeypatch.setattr(run_store, "COUNTS", run_store.CountCache())
    return counted


def test_the_count_is_kept_until_a_write_changes_it(client, counting, database_url, tmp_path):
    assert post_csv(client, f"{LINE_198}\n{LINE_197}\n").status_code == 201
    assert shown_count(client) == "2 runs"
    assert shown_count(client) == "2 runs" and client.get("/api/runs").json()["total"] == 2
    assert len(counting) == 1  # counted once, then kept

    # An upload that only adds runs: the count of all runs is carried to its stamp, not counted again; a
    # filter's is counted.
    assert post_csv(client, LINE_103, tag="disk=ssd").status_code == 201
    assert shown_count(client) == "3 runs" and len(counting) == 1
    assert shown_count(client, "?tag=disk%3Dssd") == "1 run" and len(counting) == 2
    assert post_csv(client, f"{LINE_103}\n{LINE_197}\n").status_code == 201  # duplicates only: nothing added
    assert shown_count(client) == "3 runs" and len(counting) == 2

    assert client.patch("/api/runs/1", json={"tags": {"disk": "ssd"}}).status_code == 200
    assert shown_count(client, "?tag=disk%3Dssd") == "2 runs"
    assert shown_count(client) == "3 runs"

    assert client.delete("/api/runs/3").status_code == 204
    assert shown_count(client) == "2 runs" and shown_count(client, "?tag=disk%3Dssd") == "1 run"
    assert client.get("/api/runs", params={"tag": "disk=ssd"}).json()["total"] == 1

    # Another process's write: the stamp it replaced is read by the next request.
    path = tmp_path / "line.csv"
    fields = LINE_198.split(",")
    fields[2] = "another-machine"
    path.write_text(",".join(fields) + "\n")
    assert run_cli(tmp_path, "ingest", "--tag", "disk=ssd", path, database_url=database_url).returncode == 0
    assert shown_count(client) == "3 runs" and shown_count(client, "?tag=disk%3Dssd") == "2 runs"


def test_uploads_one_after_another_each_carry_the_count(client, counting):
    assert post_csv(client, LINE_198).status_code == 201
    assert shown_count(client) == "1 run" and len(counting) == 1
    created = []
    for machine in ("next-1", "next-2"):  # no read between: each carries the count the one before carried
        fields = LINE_198.split(",")
        fields[2] = machine
        response = post_csv(client, ",".join(fields) + "\n")
        assert response.status_code == 201
        created += response.json()["created"]
    assert shown_count(client) == "3 runs" and len(counting) == 1
    assert client.delete(f"/api/runs/{created[0]}").status_code == 204  # not an upload: counted again
    assert shown_count(client) == "2 runs" and len(counting) == 2


def test_each_filter_has_its_own_count(client, counting):
    assert post_csv(client, LINE_198, tag="disk=ssd").status_code == 201
    assert post_csv(client, LINE_197, tag="disk=hdd").status_code == 201
    assert shown_count(client, "?tag=disk%3Dssd") == "1 run"
    assert shown_count(client, "?tag=disk%3Dhdd") == "1 run"
    assert shown_count(client, "?machine=nobody") == "0 runs"
    assert shown_count(client, "?tag=disk%3Dssd") == "1 run"
    assert len(counting) == 3


def test_a_count_is_carried_only_from_the_stamp_the_upload_replaced(client, counting, database_url, tmp_path):
    """Another process's ingest replaced the stamp in between: the server's upload must not add to the count it
    kept of the state before that."""
    assert post_csv(client, f"{LINE_198}\n{LINE_197}\n").status_code == 201
    assert shown_count(client) == "2 runs" and len(counting) == 1
    path = tmp_path / "line.csv"
    fields = LINE_198.split(",")
    fields[2] = "another-machine"
    path.write_text(",".join(fields) + "\n")
    assert run_cli(tmp_path, "ingest", path, database_url=database_url).returncode == 0
    assert post_csv(client, LINE_103).status_code == 201
    assert shown_count(client) == "4 runs" and len(counting) == 2  # counted again: 2 + 1 would be wrong
