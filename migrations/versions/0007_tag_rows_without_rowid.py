"""SQLite: a tag table WITHOUT ROWID

The tag table keeps its rows in its primary key's b-tree instead of a rowid table plus that key's index: each
tag written is one b-tree insert fewer (an upload of 100,000 runs with two tags writes 200,000;
docs/decisions.md, "Ingest within 2x of sqlite3's .import"). PostgreSQL has
no such notion: nothing changes there.

A one-off cost at upgrade (`bonnieboard serve` and `make run` migrate at start): SQLite copies every tag,
about 7 s for a million runs with 1,001,000 tags here; writes wait meanwhile.

Revision ID: 0007
Revises: 0006
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TAG_COLUMNS = """
    run_id INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    value TEXT NOT NULL,
    CONSTRAINT pk_tag PRIMARY KEY (run_id, "key"),
    CONSTRAINT fk_tag_run_id_run FOREIGN KEY(run_id) REFERENCES run (id) ON DELETE CASCADE
"""


def _rebuild_tag_table(table_options: str) -> None:
    # SQLite cannot ALTER a table into (or out of) WITHOUT ROWID: copy into a new one. Nothing references tag,
    # so the swap needs no foreign-key dance.
    op.execute(f"CREATE TABLE tag_rebuilt ({_TAG_COLUMNS}){table_options}")
    op.execute('INSERT INTO tag_rebuilt (run_id, "key", value) SELECT run_id, "key", value FROM tag')
    op.execute("DROP TABLE tag")
    op.execute("ALTER TABLE tag_rebuilt RENAME TO tag")
    op.execute('CREATE INDEX ix_tag_key_value_run_id ON tag ("key", value, run_id)')


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_tag_table(" WITHOUT ROWID")


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_tag_table("")
