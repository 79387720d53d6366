"""An upload sent again with its Idempotency-Key stores nothing and is answered with the first upload's runs,
in any form, and two sends at once with one key store one upload (a real second connection waits on the key)."""

from __future__ import annotations

import json
import threading

from sqlalchemy import text

from app.ingest.service import ingest_bytes
from app.store import db
from tests.helpers import LINE_197, LINE_198, with_field


def _post(client, body: str, key: str | bytes | None, content_type: str = "text/csv"):
    headers: dict[str, str | bytes] = {"Content-Type": content_type}
    if key is not None:
        headers["Idempotency-Key"] = key
    return client.post("/api/runs?tag=round=1", content=body.encode(), headers=headers)


def _total(client) -> int:
    return client.get("/api/runs").json()["total"]


def test_a_second_send_with_the_key_stores_nothing_and_answers_with_the_first_runs(client):
    first = _post(client, LINE_198 + "\n", "sweep:ab12:ext4:1")
    assert first.status_code == 201, first.text
    assert first.json()["replayed"] is False
    created = first.json()["created"]
    assert len(created) == 1
    # A new measurement of the same slot (another line), sent as the runner sends it: nothing stored.
    other = with_field(LINE_198, 8, "999")
    again = _post(
        client, json.dumps({"csv": other + "\n", "tags": {"x": "y"}}), "sweep:ab12:ext4:1", "application/json"
    )
    assert again.status_code == 200, again.text
    body = again.json()
    assert body == {
        "upload_id": first.json()["upload_id"],
        "created": [],
        "duplicates": created,
        "errors": [],
        "error_count": 0,
        "tagged": [],
        "converted": [],
        "skipped": [],
        "skipped_count": 0,
        "replayed": True,
    }
    assert _total(client) == 1
    assert client.get(f"/api/runs/{created[0]}").json()["tags"] == {"round": "1"}
    # Another key, or none, stores as before.
    assert _post(client, other + "\n", "sweep:ab12:ext4:2").status_code == 201
    assert _post(client, LINE_197 + "\n", None).status_code == 201
    assert _total(client) == 3


def test_a_key_that_is_not_printable_ascii_is_refused_by_name(client):
    for key in ("has space", "é".encode(), "x" * 201):
        refused = _post(client, LINE_198 + "\n", key)
        assert refused.status_code == 400, refused.text
        assert refused.json()["detail"].startswith("Idempotency-Key: 1 to 200 printable ASCII characters")
    assert _total(client) == 0


def test_two_sends_at_once_with_one_key_store_one_upload(database_url):
    """The first send holds its transaction open while a second connection sends the same key: the second waits
    (on PostgreSQL at the key's unique index, on SQLite at the write lock), then answers from the first."""
    maker = db.get_sessionmaker()
    answers: dict[str, object] = {}
    with maker() as first:
        stored = ingest_bytes(
            session=first, data=(LINE_198 + "\n").encode(), max_line_bytes=65536, source="api", idempotency_key="k1"
        )
        assert not stored.replayed and len(stored.created) == 1

        def second() -> None:
            with maker() as session:
                answers["outcome"] = ingest_bytes(
                    session=session,
                    data=(LINE_197 + "\n").encode(),
                    max_line_bytes=65536,
                    source="api",
                    idempotency_key="k1",
                )
                session.commit()

        thread = threading.Thread(target=second)
        thread.start()
        thread.join(timeout=1.0)
        assert thread.is_alive(), "the second send did not wait for the first"
        first.commit()
    thread.join(timeout=30)
    assert not thread.is_alive()
    outcome = answers["outcome"]
    assert outcome.replayed and outcome.duplicates == stored.created and outcome.created == []  # type: ignore[attr-defined]
    with maker() as session:
        assert session.execute(text("SELECT count(*) FROM run")).scalar_one() == 1
        assert session.execute(text("SELECT count(*) FROM upload")).scalar_one() == 1
