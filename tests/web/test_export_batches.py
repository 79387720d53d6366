"""The CSV export's batches (docs/decisions.md, "A small first export batch"): a small first batch, so the first body
bytes leave at once, then full ones; the streamed body is every matching run's stored line, byte for byte, on both
databases."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.store import runs as run_store
from app.store.models import run_table
from app.web.deps import own_session
from tests.helpers import CORPUS_DIR, post_csv


@pytest.fixture
def stored(client) -> list[int]:
    """The corpus, with a gap in the ids."""
    for path in sorted(CORPUS_DIR.glob("*.csv")):
        assert post_csv(client, path.read_bytes(), tag=["fs=xfs"], partial="true").status_code == 201
    ids = sorted(run["id"] for run in client.get("/api/runs", params={"limit": 1000}).json()["items"])
    assert client.delete(f"/api/runs/{ids[4]}").status_code == 204
    return [run_id for run_id in ids if run_id != ids[4]]


def test_the_first_batch_is_small_and_the_rest_full(stored, session, monkeypatch):
    monkeypatch.setattr(run_store, "EXPORT_FIRST_BATCH", 2)
    monkeypatch.setattr(run_store, "EXPORT_BATCH", 5)
    batches = list(run_store.export_batches(sessions=own_session, run_filter=run_store.RunFilter()))
    rest = len(stored) - 2
    assert [len(batch) for batch in batches] == [2] + [5] * (rest // 5) + ([rest % 5] if rest % 5 else [])
    lines = dict(session.execute(select(run_table.c.id, run_table.c.raw_line)).all())
    assert [line for batch in batches for line in batch] == [lines[run_id] for run_id in stored]


@pytest.mark.parametrize("sizes", [(2, 5), (100, 2000), (1, 1)], ids=str)
def test_streamed_export_is_the_stored_lines_byte_for_byte(client, stored, session, monkeypatch, sizes):
    monkeypatch.setattr(run_store, "EXPORT_FIRST_BATCH", sizes[0])
    monkeypatch.setattr(run_store, "EXPORT_BATCH", sizes[1])
    lines = dict(session.execute(select(run_table.c.id, run_table.c.raw_line)).all())
    export = client.get("/api/runs/export.csv")
    assert export.status_code == 200
    assert export.content == "".join(f"{lines[run_id]}\n" for run_id in stored).encode()


def test_an_export_with_fewer_runs_than_the_first_batch_and_with_none(client, stored, monkeypatch):
    monkeypatch.setattr(run_store, "EXPORT_FIRST_BATCH", 1000)
    whole = client.get("/api/runs/export.csv").content
    assert whole.count(b"\n") == len(stored)
    assert client.get("/api/runs/export.csv", params={"machine": "no-such-machine"}).content == b""
