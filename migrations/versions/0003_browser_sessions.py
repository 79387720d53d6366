"""browser sessions kept server-side, so signing out ends them

Revision ID: 0003
Revises: 0002
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "browser_login",
        sa.Column("id_sha256", sa.LargeBinary(length=32), nullable=False),
        sa.Column("token_sha256", sa.LargeBinary(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id_sha256", name=op.f("pk_browser_login")),
    )
    op.create_index(op.f("ix_browser_login_created_at"), "browser_login", ["created_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_browser_login_created_at"), table_name="browser_login")
    op.drop_table("browser_login")
