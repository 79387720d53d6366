"""a runner document stored once: a `document` table that runs refer to, and what a comparison reads taken out

Each run held its own copy of its upload's document: a 1 MB document with 1,000 lines wrote a gigabyte, and a
comparison parsed every copy (docs/decisions.md, "A document stored once"). Every copy moves to one `document`
row per distinct document (identical copies, such as those of one upload, become one row), `run.document_id`
refers to it, and what a comparison reads is taken out once: `document.ram_bytes` (system.ram_bytes) and
`run.limiters` (what the runner said limited each test of the run's line). Then `run.document` is dropped.

SQLite: the columns are added and dropped with ALTER TABLE (SQLite 3.35 or later), not by batch mode's copy of
the table, which would drop `run` and, with foreign keys on, delete every tag with it and forget the highest id
ever given (sqlite_sequence). The space the copies took stays in the file as free pages for later writes;
`VACUUM` gives it back to the system. SQLite cannot drop a column that a foreign key names, so downgrade leaves
`run.document_id` there, NULL everywhere (the code of 0008 never writes it), and upgrade uses it again.

The rules (which entry of document["runs"] is a line's, what a valid limiter is) are copied here rather than
imported from app/ingest/documents.py: a migration must do tomorrow what it does today.

Revision ID: 0009
Revises: 0008
"""

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Runs read per statement. A copy is at most BONNIEBOARD_MAX_DOCUMENT_BYTES (1 MiB by default): 20 of them are
# 20 MiB in memory at once.
BATCH = 20
TESTS = (
    "putc",
    "put_block",
    "rewrite",
    "getc",
    "get_block",
    "seeks",
    "seq_create",
    "seq_stat",
    "seq_del",
    "ran_create",
    "ran_stat",
    "ran_del",
)

run = sa.table(
    "run",
    sa.column("id", sa.Integer),
    sa.column("raw_line", sa.Text),
    sa.column("document", sa.JSON),
    sa.column("document_id", sa.Integer),
    sa.column("limiters", sa.JSON(none_as_null=True)),
)
document = sa.table(
    "document",
    sa.column("id", sa.Integer),
    sa.column("body_hash", sa.LargeBinary),
    sa.column("ram_bytes", sa.BigInteger),
    sa.column("body", sa.JSON),
)


def _limiters(document_runs: Any, raw_line: str) -> dict[str, dict[str, str]] | None:
    """What limited each test of this line, by the line's entry in document["runs"]; None when nothing is said."""
    if not isinstance(document_runs, list):
        return None
    entry = next((e for e in document_runs if isinstance(e, dict) and e.get("csv") == raw_line), None)
    tests = entry.get("tests") if entry else None
    if not isinstance(tests, dict):
        return None
    found = {}
    for test in TESTS:
        facts = tests.get(test)
        limiter = facts.get("limiter") if isinstance(facts, dict) else None
        if isinstance(limiter, dict) and isinstance(limiter.get("code"), str) and isinstance(limiter.get("text"), str):
            found[test] = {"code": limiter["code"][:40], "text": limiter["text"][:500]}
    return found or None


def _ram_bytes(body: Any) -> int | None:
    system = body.get("system") if isinstance(body, dict) else None
    ram_bytes = system.get("ram_bytes") if isinstance(system, dict) else None
    return int(ram_bytes) if isinstance(ram_bytes, int) and 0 < ram_bytes < 2**63 else None


def _is_sqlite() -> bool:
    return op.get_bind().dialect.name == "sqlite"


def _run_columns() -> set[str]:
    return {column["name"] for column in sa.inspect(op.get_bind()).get_columns("run")}


def upgrade() -> None:
    if _is_sqlite() and sqlite3.sqlite_version_info < (3, 35):
        raise RuntimeError(f"SQLite {sqlite3.sqlite_version} cannot drop a column; this migration needs 3.35 or later")
    op.create_table(
        "document",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("body_hash", sa.LargeBinary(length=16), nullable=False),
        sa.Column("ram_bytes", sa.BigInteger(), nullable=True),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_document")),
        sa.UniqueConstraint("body_hash", name=op.f("uq_document_body_hash")),
    )
    if _is_sqlite():
        if "document_id" not in _run_columns():  # left by a downgrade
            op.execute(
                "ALTER TABLE run ADD COLUMN document_id INTEGER "
                "CONSTRAINT fk_run_document_id_document REFERENCES document (id)"
            )
        op.execute("ALTER TABLE run ADD COLUMN limiters JSON")
    else:
        op.add_column("run", sa.Column("document_id", sa.Integer(), nullable=True))
        op.add_column("run", sa.Column("limiters", sa.JSON(), nullable=True))
        op.create_foreign_key(op.f("fk_run_document_id_document"), "run", "document", ["document_id"], ["id"])
    op.create_index(
        "ix_run_document_id",
        "run",
        ["document_id"],
        sqlite_where=sa.text("document_id IS NOT NULL"),
        postgresql_where=sa.text("document_id IS NOT NULL"),
    )
    _fold_copies()
    if _is_sqlite():
        op.execute("ALTER TABLE run DROP COLUMN document")
    else:
        op.drop_column("run", "document")


def _fold_copies() -> None:
    """Each run's copy into the document row of its text (made at its first copy), and the run's limiters from it.
    The copies of one upload are neighbours in id order, so only the last document read is kept parsed."""
    connection = op.get_bind()
    copies = (
        sa.select(run.c.id, run.c.raw_line, sa.cast(run.c.document, sa.Text))
        .where(run.c.document.is_not(None))
        .order_by(run.c.id)
        .limit(BATCH)
    )
    ids: dict[bytes, int] = {}  # body hash -> document id
    parsed: tuple[bytes, Any] | None = None  # (hash, body) of the last copy read
    last_id = 0
    while rows := connection.execute(copies.where(run.c.id > last_id)).all():
        updates = []
        for run_id, raw_line, body_text in rows:
            body_hash = hashlib.blake2b(body_text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            if parsed is None or parsed[0] != body_hash:
                parsed = (body_hash, json.loads(body_text))
            body = parsed[1]
            if body is None:  # JSON's null, as a bound None once stored: no document
                continue
            if body_hash not in ids:
                # The stored value itself, copied by the database: no text is turned into JSON again.
                connection.execute(
                    sa.insert(document).from_select(
                        ["body_hash", "ram_bytes", "body"],
                        sa.select(
                            sa.literal(body_hash, sa.LargeBinary),
                            sa.literal(_ram_bytes(body), sa.BigInteger),
                            run.c.document,
                        ).where(run.c.id == run_id),
                    )
                )
                ids[body_hash] = connection.execute(
                    sa.select(document.c.id).where(document.c.body_hash == body_hash)
                ).scalar_one()
            runs = body.get("runs") if isinstance(body, dict) else None
            updates.append({"run_id": run_id, "found_id": ids[body_hash], "found": _limiters(runs, raw_line)})
        if updates:
            connection.execute(
                run.update()
                .where(run.c.id == sa.bindparam("run_id"))
                .values(document_id=sa.bindparam("found_id"), limiters=sa.bindparam("found")),
                updates,
            )
        last_id = rows[-1][0]


def downgrade() -> None:
    if _is_sqlite():
        op.execute("ALTER TABLE run ADD COLUMN document JSON")
    else:
        op.add_column("run", sa.Column("document", sa.JSON(), nullable=True))
    body = sa.select(document.c.body).where(document.c.id == run.c.document_id).scalar_subquery()
    op.execute(run.update().where(run.c.document_id.is_not(None)).values(document=body))
    op.drop_index("ix_run_document_id", table_name="run")
    if _is_sqlite():
        op.execute(run.update().where(run.c.document_id.is_not(None)).values(document_id=None))
        op.execute("ALTER TABLE run DROP COLUMN limiters")
    else:
        op.drop_constraint(op.f("fk_run_document_id_document"), "run", type_="foreignkey")
        op.drop_column("run", "document_id")
        op.drop_column("run", "limiters")
    op.drop_table("document")
