"""indexes for a million runs: filters read matching ids in order from an index

Why: docs/decisions.md, "Runs list at a million runs".

tag (key, value, run_id) replaces tag (key, value); run (machine, id) and (format_version, id) replace
run (machine) and run (format_version). On SQLite every index already ends in the rowid; PostgreSQL needs
the id spelled out to hand the newest matches over without sorting all of them.

Revision ID: 0005
Revises: 0004
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_tag_key_value_run_id", "tag", ["key", "value", "run_id"])
    op.drop_index("ix_tag_key_value", table_name="tag")
    op.create_index("ix_run_machine_id", "run", ["machine", "id"])
    op.drop_index("ix_run_machine", table_name="run")
    op.create_index("ix_run_format_version_id", "run", ["format_version", "id"])
    op.drop_index("ix_run_format_version", table_name="run")


def downgrade() -> None:
    op.create_index("ix_run_format_version", "run", ["format_version"])
    op.drop_index("ix_run_format_version_id", table_name="run")
    op.create_index("ix_run_machine", "run", ["machine"])
    op.drop_index("ix_run_machine_id", table_name="run")
    op.create_index("ix_tag_key_value", "tag", ["key", "value"])
    op.drop_index("ix_tag_key_value_run_id", table_name="tag")
