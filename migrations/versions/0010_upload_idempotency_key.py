"""upload.idempotency_key: an upload sent again with the same Idempotency-Key is answered, not stored again

The runner's sweep sends each run with a key of its study, configuration and round, so a run posted before the
sweep was killed is not stored twice when the study resumes (docs/api-contract.md, "Sending an upload again").

Revision ID: 0010
Revises: 0009
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("upload", sa.Column("idempotency_key", sa.String(length=200), nullable=True))
    op.create_index(op.f("ix_upload_idempotency_key"), "upload", ["idempotency_key"], unique=True)


def downgrade() -> None:
    op.drop_index(op.f("ix_upload_idempotency_key"), table_name="upload")
    # A plain ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later): a batch rebuild of `upload` would drop the table
    # its runs refer to, and their cascade with it.
    op.drop_column("upload", "idempotency_key")
