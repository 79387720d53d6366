"""scrub runner tokens from stored documents

A runner that does not scrub its own argv copies it, `--token SECRET` included, into the document's
command_line, and the API and the run page show it. The value becomes `***`, as the runner and
ingest write it. The token cannot be put back: downgrade leaves the documents as they are.

The rule is copied here rather than imported from app/ingest/secrets_scrub.py: a migration must do
tomorrow what it does today, whatever the app's code becomes.

Revision ID: 0004
Revises: 0003
"""

import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 500
HIDDEN = "***"
_TOKEN_OPTIONS = {"--token"[:n] for n in range(4, len("--token") + 1)}  # getopt_long's unambiguous prefixes
_TOKEN_IN_TEXT = re.compile(r"""(?<!\S)(--to(?:k(?:en?)?)?)(=|\s+)("[^"]*"|'[^']*'|\S+)""")

run = sa.table("run", sa.column("id", sa.Integer), sa.column("document", sa.JSON))


def _scrub(command_line: Any) -> Any:
    if isinstance(command_line, str):
        return _TOKEN_IN_TEXT.sub(lambda m: f"{m[1]}{m[2]}{HIDDEN}", command_line)
    if not isinstance(command_line, list):
        return command_line
    scrubbed = list(command_line)
    for index, arg in enumerate(scrubbed):
        if not isinstance(arg, str):
            continue
        option, equals, _ = arg.partition("=")
        if option in _TOKEN_OPTIONS:
            if equals:
                scrubbed[index] = f"{option}={HIDDEN}"
            elif index + 1 < len(scrubbed):
                scrubbed[index + 1] = HIDDEN
    return scrubbed


def upgrade() -> None:
    connection = op.get_bind()
    # Only documents whose text holds "--to" can hold a token; read them in batches of ids.
    candidates = (
        sa.select(run.c.id, run.c.document)
        .where(run.c.document.is_not(None), sa.cast(run.c.document, sa.Text).like("%--to%"))
        .order_by(run.c.id)
        .limit(BATCH)
    )
    last_id = 0
    while rows := connection.execute(candidates.where(run.c.id > last_id)).all():
        for run_id, document in rows:
            if isinstance(document, dict) and "command_line" in document:
                scrubbed = _scrub(document["command_line"])
                if scrubbed != document["command_line"]:
                    connection.execute(
                        run.update().where(run.c.id == run_id).values(document={**document, "command_line": scrubbed})
                    )
        last_id = rows[-1][0]


def downgrade() -> None:
    pass
