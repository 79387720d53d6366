"""Alembic: an empty database upgrades to head, and the models match the migrations (no drift)."""

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from app.store.db import SQLITE_BUSY_TIMEOUT_S, SQLITE_PAGE_BYTES, make_engine
from app.store.migrate import alembic_config, upgrade
from app.store.models import Base


def test_upgrade_empty_database_to_head_and_no_drift(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    upgrade(url)
    engine = make_engine(url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection)
        head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
        assert context.get_current_revision() == head
        assert set(inspect(connection).get_table_names()) >= {"upload", "run", "tag", "alembic_version"}
        assert compare_metadata(context, Base.metadata) == []
    engine.dispose()


def test_upgrade_twice_is_harmless(tmp_path):
    url = f"sqlite:///{tmp_path / 'm.db'}"
    upgrade(url)
    upgrade(url)
    engine = make_engine(url)
    with engine.connect() as connection:
        head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
        assert MigrationContext.configure(connection).get_current_revision() == head
    engine.dispose()


@pytest.mark.databases("sqlite")
def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(database_url):
    engine = make_engine(database_url)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == SQLITE_BUSY_TIMEOUT_S * 1000
    engine.dispose()


def test_a_new_sqlite_database_gets_16_kib_pages_and_an_existing_one_keeps_its_own(tmp_path):
    """SQLite sets the page size only while a database is empty: a new board gets SQLITE_PAGE_BYTES; a board
    made before (4 KiB pages) keeps them, opens in WAL mode and takes uploads as before."""
    import sqlite3

    from sqlalchemy.orm import Session

    from app.ingest.service import ingest_bytes
    from tests.helpers import distinct_lines

    new = tmp_path / "new.db"
    upgrade(f"sqlite:///{new}")
    with sqlite3.connect(new) as connection:
        assert connection.execute("PRAGMA page_size").fetchone()[0] == SQLITE_PAGE_BYTES == 16384

    old = tmp_path / "old.db"
    with sqlite3.connect(old) as connection:
        connection.execute("PRAGMA page_size = 4096")
        connection.execute("CREATE TABLE made_before (x)")
    upgrade(f"sqlite:///{old}")
    engine = make_engine(f"sqlite:///{old}")
    try:
        with Session(engine) as session:
            data = ("\n".join(distinct_lines("pages", 500)) + "\n").encode()
            outcome = ingest_bytes(session=session, data=data, max_line_bytes=4096, source="test", tags={"a": "1"})
            session.commit()
            assert len(outcome.created) == 500
            connection = session.connection()
            assert connection.exec_driver_sql("PRAGMA page_size").scalar() == 4096
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
    finally:
        engine.dispose()


def test_sqlite_keeps_tags_without_rowid_from_migrations_and_models_alike(tmp_path):
    """Alembic's comparison does not see WITHOUT ROWID: checked here for a migrated database and one made from
    app.store.models."""
    from sqlalchemy import create_engine, text

    migrated = f"sqlite:///{tmp_path / 'migrated.db'}"
    upgrade(migrated)
    created = create_engine(f"sqlite:///{tmp_path / 'created.db'}")
    Base.metadata.create_all(created)
    for engine in (make_engine(migrated), created):
        with engine.connect() as connection:
            tag_sql = connection.scalar(text("SELECT sql FROM sqlite_master WHERE name = 'tag'"))
            assert tag_sql.rstrip().endswith("WITHOUT ROWID")
        engine.dispose()


def test_0007_keeps_every_tag_through_its_table_rebuild_down_and_up(tmp_path):
    """0007 rebuilds SQLite's tag table (WITHOUT ROWID): a database with runs and tags keeps them all both ways,
    with its keys, its foreign key's cascade and its filter index."""
    from alembic import command
    from sqlalchemy import text
    from sqlalchemy.orm import Session

    from app.ingest.parsing import DEFAULT_MAX_LINE_BYTES, iter_parse_bytes
    from app.ingest.service import ingest
    from tests.helpers import distinct_lines

    url = f"sqlite:///{tmp_path / 'data.db'}"
    upgrade(url)
    engine = make_engine(url)
    data = "\n".join(distinct_lines("migrated", 20)).encode()
    with Session(engine) as session:
        items = iter_parse_bytes(data, max_line_bytes=DEFAULT_MAX_LINE_BYTES)
        ingest(session=session, items=items, source="test", tags={"fs": "xfs", "raid": "5"})
        session.commit()

    def state() -> tuple:
        with engine.connect() as connection:
            tags = connection.exec_driver_sql("SELECT run_id, key, value FROM tag ORDER BY run_id, key").all()
            assert connection.exec_driver_sql("PRAGMA integrity_check").scalar_one() == "ok"
            assert connection.exec_driver_sql("PRAGMA foreign_key_check").all() == []
            indexes = {row[1] for row in connection.exec_driver_sql("PRAGMA index_list(tag)")}
            return tags, "ix_tag_key_value_run_id" in indexes

    at_head = state()
    assert len(at_head[0]) == 40 and at_head[1]
    command.downgrade(alembic_config(url), "0006")
    engine.dispose()
    assert state() == at_head
    upgrade(url)
    engine.dispose()
    assert state() == at_head
    with engine.begin() as connection:
        run_id = at_head[0][0][0]
        connection.execute(text("DELETE FROM run WHERE id = :id"), {"id": run_id})
        assert connection.scalar(text("SELECT count(*) FROM tag WHERE run_id = :id"), {"id": run_id}) == 0
    engine.dispose()
