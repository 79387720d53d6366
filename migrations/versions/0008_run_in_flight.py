"""run_in_flight: the blocks of run ids PostgreSQL uploads are writing now

A newest-first list steps over a block whose upload it cannot see yet, instead of visiting each of the upload's
uncommitted rows at the top of the id index (docs/decisions.md, "Lists step over uploads in flight"). SQLite
never writes it: its readers do not see an open write at all.

Revision ID: 0008
Revises: 0007
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_in_flight",
        sa.Column("first_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("last_id", sa.Integer(), nullable=False),
        sa.Column("upload_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("first_id", name=op.f("pk_run_in_flight")),
    )


def downgrade() -> None:
    op.drop_table("run_in_flight")
