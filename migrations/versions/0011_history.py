"""history: when each run was measured, what its setup was, and the changes found over time with their triage

- `upload.run_time`: the time a client gave its runs (`time=`), for uploads without a runner's start time;
- `document.started_at` and `document.setup`: the runner's start time and the setup facts history compares run
  to run (kernel, filesystem, mount options, RAID layout, RAM, I/O throttle), taken out of the body at ingest as
  `ram_bytes` is, so that a machine's history never parses a document;
- `change`: the change points found in a machine's series, with their triage (state, note, who, when);
- `history_state`: per machine, the digest of the series the stored changes were found in, and its page's data
  kept with the key of the runs it was made from (app/history/snapshot.py).

The rules that take started_at and setup out of a body are copied here rather than imported from
app/history/setup.py: a migration must do tomorrow what it does today.

Revision ID: 0011
Revises: 0010
"""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 200

document = sa.table(
    "document",
    sa.column("id", sa.Integer),
    sa.column("body", sa.JSON),
    sa.column("started_at", sa.DateTime(timezone=True)),
    sa.column("setup", sa.JSON(none_as_null=True)),
)


def upgrade() -> None:
    op.add_column("upload", sa.Column("run_time", sa.DateTime(timezone=True), nullable=True))
    op.add_column("document", sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("document", sa.Column("setup", sa.JSON(), nullable=True))
    op.create_table(
        "change",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("machine", sa.Text(), nullable=False),
        sa.Column("configuration", sa.Text(), nullable=False),
        sa.Column("test", sa.String(length=40), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("found_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("facts", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("triaged_by", sa.Text(), nullable=True),
        sa.Column("triaged_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"], name=op.f("fk_change_run_id_run"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_change")),
        sa.UniqueConstraint("machine", "configuration", "test", "run_id", name="uq_change_series_run"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_change_state_id", "change", ["state", "id"])
    op.create_index("ix_change_run_id", "change", ["run_id"])
    op.create_table(
        "history_state",
        sa.Column("machine", sa.Text(), nullable=False),
        sa.Column("digest", sa.LargeBinary(length=16), nullable=False),
        sa.Column("detected_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("view_key", sa.Text(), nullable=True),
        sa.Column("view", sa.LargeBinary(), nullable=True),
        sa.PrimaryKeyConstraint("machine", name=op.f("pk_history_state")),
    )
    _take_out_facts()


def _take_out_facts() -> None:
    bind = op.get_bind()
    last = 0
    while True:
        rows = bind.execute(
            sa.select(document.c.id, document.c.body).where(document.c.id > last).order_by(document.c.id).limit(BATCH)
        ).all()
        if not rows:
            return
        for row in rows:
            started_at, setup = _started_at(row.body), _setup(row.body)
            if started_at is not None or setup is not None:
                bind.execute(
                    document.update().where(document.c.id == row.id).values(started_at=started_at, setup=setup)
                )
        last = rows[-1].id


def _started_at(document: Any) -> datetime | None:
    """document["started_at"] (ISO 8601) as an aware UTC time; None when absent or not a time."""
    value = document.get("started_at") if isinstance(document, dict) else None
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _setup(document: Any) -> dict[str, str] | None:
    """The document's setup facts as short texts; None when it names none."""
    system = document.get("system") if isinstance(document, dict) else None
    if not isinstance(system, dict):
        return None
    kernel, filesystem = _object(system, "kernel"), _object(system, "filesystem")
    block, cgroup = _object(system, "block_device"), _object(system, "cgroup")
    facts = {
        "kernel": _text(kernel.get("release")),
        "filesystem": _text(filesystem.get("type")),
        "mount_options": _mount_options(filesystem),
        "raid": _raid(block.get("md")),
        "ram": _ram(system.get("ram_bytes")),
        "io_throttle": _throttle(cgroup.get("io_limits")),
    }
    kept = {key: value for key, value in facts.items() if value is not None}
    return kept or None


def _object(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value[:200] if isinstance(value, str) and value else None


def _mount_options(filesystem: dict[str, Any]) -> str | None:
    """The mount's options and the filesystem's own (its superblock's: ext4's data=, commit=, dirsync), each once,
    as mount(8) would list them."""
    options = [
        option
        for key in ("mount_options", "super_options")
        if isinstance(filesystem.get(key), str)
        for option in filesystem[key].split(",")
        if option
    ]
    return _text(",".join(dict.fromkeys(options)))


def _raid(md: Any) -> str | None:
    if not isinstance(md, dict):
        return None
    parts = [str(md.get("level") or "md")]
    if isinstance(md.get("chunk_bytes"), int) and md["chunk_bytes"] > 0:
        parts.append(f"{md['chunk_bytes'] // 1024} KiB chunk")
    if isinstance(md.get("raid_disks"), int):
        parts.append(f"{md['raid_disks']} disks")
    return _text(", ".join(parts))


def _ram(ram_bytes: Any) -> str | None:
    return f"{ram_bytes // 2**20} MiB" if isinstance(ram_bytes, int) and 0 < ram_bytes < 2**63 else None


def _rate(bps: Any) -> str | None:
    return f"{bps / 2**20:g} MiB/s" if isinstance(bps, int) and bps > 0 else None


def _throttle(limits: Any) -> str | None:
    """`read 16 MiB/s, write 16 MiB/s on loop1`, one per limited device; None when nothing is limited."""
    if not isinstance(limits, list):
        return None
    texts = []
    for limit in limits:
        if not isinstance(limit, dict):
            continue
        rates = [
            f"{way} {rate}"
            for way, key in (("read", "read_bps"), ("write", "write_bps"))
            if (rate := _rate(limit.get(key))) is not None
        ]
        rates += [
            f"{way} {limit[key]} IO/s"
            for way, key in (("read", "read_iops"), ("write", "write_iops"))
            if isinstance(limit.get(key), int)
        ]
        if rates:
            texts.append(f"{', '.join(rates)} on {limit.get('name') or limit.get('device') or 'a device'}")
    return _text("; ".join(sorted(texts))) if texts else None


def downgrade() -> None:
    op.drop_table("history_state")
    op.drop_index("ix_change_run_id", table_name="change")
    op.drop_index("ix_change_state_id", table_name="change")
    op.drop_table("change")
    # Plain ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later): a batch rebuild would drop the tables that runs
    # refer to, and their cascade with it.
    op.drop_column("document", "setup")
    op.drop_column("document", "started_at")
    op.drop_column("upload", "run_time")
