"""history_state.version: a random stamp a machine's stored changes are given whenever they change

A process kept its /history answers under the database's every-write stamp, so that a triage made elsewhere (another
worker, the CLI) was seen; that emptied the cache at every upload of any machine, and the first page after another
machine's upload was read and decoded again. Detection's store and a triage replace this stamp, the answers are kept
under it and the machine's runs, and another machine's upload leaves them (bench/RESULTS.md, "History at scale, the
first page after a write").

Revision ID: 0013
Revises: 0012
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Null in rows stored before: such a row is replaced at the machine's next detection or triage, and until
    # then its answers are kept under null, which a replaced row never has.
    op.add_column("history_state", sa.Column("version", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    op.drop_column("history_state", "version")
