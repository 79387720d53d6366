"""run (machine, label, id): the runs list by name with a tag filter reads its runs in this order

A tag filter on the list by name joined every matching run and sorted them to show 50: 151-184 ms at a million
runs on SQLite. With this index the runs are read in name order, each checked for its tags, and the first page of a
common tag is found among a few hundred of them (bench/RESULTS.md, "The list by name with a tag filter").

Revision ID: 0012
Revises: 0011
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_run_machine_label_id", "run", ["machine", "label", "id"])


def downgrade() -> None:
    op.drop_index("ix_run_machine_label_id", table_name="run")
