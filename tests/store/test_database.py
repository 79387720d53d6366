"""The same migrations on SQLite and PostgreSQL: an empty database upgrades to head with no drift from the
models, and 0002 (api tokens) goes down and up again. Each test migrates a database of its own."""

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import JSON, column, inspect, select, table, text

from app.ingest.parsing import TESTS
from app.store.db import make_engine
from app.store.migrate import alembic_config, upgrade
from app.store.models import Base, run_table


def schema_state(url: str) -> tuple[str | None, set[str], list]:
    engine = make_engine(url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection)
        state = (
            context.get_current_revision(),
            set(inspect(connection).get_table_names()),
            compare_metadata(context, Base.metadata),
        )
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


TOKEN = "s3cr3t-t0ken-value"
COMMAND_LINES = [
    (
        ["bonnieboard-runner", "-d", "/tmp/x", "--token", TOKEN, "--post", "http://b"],
        ["bonnieboard-runner", "-d", "/tmp/x", "--token", "***", "--post", "http://b"],
    ),
    (["r", f"--token={TOKEN}"], ["r", "--token=***"]),
    (["r", "--tok", TOKEN, "--to", TOKEN, f"--toke={TOKEN}"], ["r", "--tok", "***", "--to", "***", "--toke=***"]),
    (f"bonnieboard-runner --token {TOKEN} -m host", "bonnieboard-runner --token *** -m host"),
    (f"bonnieboard-runner --token='{TOKEN} x' -s 0", "bonnieboard-runner --token=*** -s 0"),
    (["r", "--token-file", "/etc/bb-token", "--tag", "a=b"], ["r", "--token-file", "/etc/bb-token", "--tag", "a=b"]),
    (["r", "--token"], ["r", "--token"]),
]


def test_migration_0004_scrubs_tokens_from_stored_runner_documents(empty_database):
    """Documents from a runner that does not scrub its own argv hold its --token value in command_line."""
    config = alembic_config(empty_database)
    command.upgrade(config, "0002")
    engine = make_engine(empty_database)
    documents = [
        {"schema": "bonnieboard-runner/1", "command_line": before, "system": {"hostname": "h"}}
        for before, _ in COMMAND_LINES
    ]
    documents.append({"command_line": None})
    with engine.begin() as connection:
        connection.execute(text("insert into upload (id, created_at, source) values (1, '2026-01-01 00:00:00', 'api')"))
        # The run table of 0002-0008, which held each run's document.
        made_later = {"document_id", "limiters"}
        run = table("run", *[column(c.name) for c in run_table.c if c.name not in made_later], column("document", JSON))
        rows = [
            {c.name: None for c in run_table.c if c.name not in made_later}
            | {
                "id": n + 1,
                "upload_id": 1,
                "created_at": "2026-01-01 00:00:00",
                "line_hash": bytes([n]) * 16,
                "raw_line": f"line {n}",
                "machine": "m",
                "format_version": "1.98",
                "document": document,
            }
            | {f"{test}_status": "not_run" for test in TESTS}
            for n, document in enumerate([*documents, None])
        ]
        connection.execute(run.insert(), rows)
    engine.dispose()

    command.upgrade(config, "0004")
    engine = make_engine(empty_database)
    with engine.connect() as connection:
        run = table("run", column("id"), column("document", JSON))
        stored = dict(connection.execute(select(run.c.id, run.c.document).order_by(run.c.id)).all())
    engine.dispose()
    assert [stored[n + 1]["command_line"] for n in range(len(COMMAND_LINES))] == [after for _, after in COMMAND_LINES]
    assert stored[1]["system"] == {"hostname": "h"} and stored[len(documents)] == {"command_line": None}
    assert stored[len(documents) + 1] is None
    assert TOKEN not in str(stored)
