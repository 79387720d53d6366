"""The same migrations on SQLite and PostgreSQL: an empty database upgrades to head with no drift from the
models, and 0002 (api tokens) goes down and up again. Each test migrates a database of its own."""

import os

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from app.db import make_engine
from app.migrate import alembic_config, upgrade
from app.models import Base
from tests.conftest import selected_databases


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_database(request, tmp_path):
    if request.param not in selected_databases(request.config):
        pytest.skip("database not selected by --db")
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    postgres = request.getfixturevalue("postgres")
    name = f"bb_migrations_{os.getpid()}"
    yield postgres.create_database(name)
    postgres.drop_database(name)


def schema_state(url: str) -> tuple[str | None, set[str], list]:
    engine = make_engine(url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection)
        state = context.get_current_revision(), set(inspect(connection).get_table_names()), compare_metadata(context, Base.metadata)
    engine.dispose()
    return state


def test_migrations_upgrade_to_head_with_no_drift_and_0002_goes_down_and_up(empty_database):
    head = ScriptDirectory.from_config(alembic_config(empty_database)).get_current_head()
    upgrade(empty_database)
    revision, tables, drift = schema_state(empty_database)
    assert revision == head and {"upload", "run", "tag", "api_token"} <= tables and drift == []

    command.downgrade(alembic_config(empty_database), "0001")
    revision, tables, _ = schema_state(empty_database)
    assert revision == "0001" and "api_token" not in tables and {"upload", "run", "tag"} <= tables

    upgrade(empty_database)
    assert schema_state(empty_database)[0] == head
