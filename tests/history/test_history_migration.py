"""Migration 0011 on a database with runner documents stored before it: each document's start time and setup facts
are taken out once, a document without them is left as it was, and the way down drops what it added."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from alembic import command
from sqlalchemy import inspect, select, text

from app.store.db import make_engine
from app.store.migrate import alembic_config, upgrade
from app.store.models import document_table

RUNNER_DOCUMENT = {
    "started_at": "2026-11-26T16:58:15Z",
    "system": {
        "kernel": {"release": "6.18.44"},
        "ram_bytes": 25276510208,
        "filesystem": {"type": "ext4", "mount_options": "rw,relatime"},
        "block_device": {"md": {"level": "raid5", "chunk_bytes": 65536, "raid_disks": 4}},
        "cgroup": {"io_limits": [{"name": "loop1", "read_bps": 16777216, "write_bps": 16777216}]},
    },
}


def test_0011_takes_each_document_s_time_and_setup_out_and_back(empty_database):
    url = empty_database
    command.upgrade(alembic_config(url), "0010")
    engine = make_engine(url)
    with engine.begin() as connection:
        for id_, body in ((1, RUNNER_DOCUMENT), (2, {"runs": []})):
            connection.execute(
                text("INSERT INTO document (id, body_hash, body) VALUES (:id, :hash, :body)"),
                {"id": id_, "hash": id_.to_bytes(16, "big"), "body": json.dumps(body)},
            )
    upgrade(url)
    with engine.connect() as connection:
        rows = connection.execute(
            select(document_table.c.id, document_table.c.started_at, document_table.c.setup).order_by(
                document_table.c.id
            )
        ).all()
    started_at = rows[0].started_at.replace(tzinfo=rows[0].started_at.tzinfo or UTC)
    assert started_at == datetime(2026, 11, 26, 16, 58, 15, tzinfo=UTC)
    assert rows[0].setup == {
        "kernel": "6.18.44",
        "filesystem": "ext4",
        "mount_options": "rw,relatime",
        "raid": "raid5, 64 KiB chunk, 4 disks",
        "ram": "24105 MiB",
        "io_throttle": "read 16 MiB/s, write 16 MiB/s on loop1",
    }
    assert (rows[1].started_at, rows[1].setup) == (None, None)
    command.downgrade(alembic_config(url), "0010")
    tables = inspect(engine).get_table_names()
    assert "change" not in tables and "history_state" not in tables
    assert "started_at" not in {c["name"] for c in inspect(engine).get_columns("document")}
    assert "run_time" not in {c["name"] for c in inspect(engine).get_columns("upload")}
    engine.dispose()
