"""data generation: one row whose stamp every write that can change a comparison replaces

Cached comparisons are keyed by it (app/store/generation.py, app/web/cache.py): a worker that reads a new
stamp knows its cached answers are stale, whichever worker or process wrote. Why a cache:
docs/decisions.md, "Comparisons served from a cache".

Revision ID: 0006
Revises: 0005
"""

import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    table = op.create_table(
        "data_generation",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("generation", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_data_generation")),
    )
    # A random first stamp, as app.store.generation.bump() writes: a database made again from scratch never
    # meets a stamp a running server has cached answers for.
    op.bulk_insert(table, [{"id": 1, "generation": secrets.randbits(62) + 1}])


def downgrade() -> None:
    op.drop_table("data_generation")
