"""A newest-first list while a PostgreSQL upload is writing: the runs committed before it, and runs anything else
writes meanwhile, without reading the upload's uncommitted rows one by one.
See docs/decisions.md, "Lists step over uploads in flight". A real server: the upload is a session that has
written and not yet committed."""

from __future__ import annotations

import pytest
from sqlalchemy import event, func, select, text
from sqlalchemy.orm import Session

from app.ingest.parsing import DEFAULT_MAX_LINE_BYTES
from app.ingest.service import ingest_bytes
from app.store import db
from app.store import runs as run_store
from app.store.models import run_in_flight_table, run_table
from app.store.runs import RunFilter
from tests.helpers import LINE_198, with_field

pytestmark = pytest.mark.databases("postgresql")


def lines(prefix: str, count: int) -> bytes:
    return "".join(with_field(LINE_198, 2, f"{prefix}-{i}") + "\n" for i in range(count)).encode()


def upload(session: Session, data: bytes, **options) -> list[int]:
    outcome = ingest_bytes(session=session, data=data, max_line_bytes=DEFAULT_MAX_LINE_BYTES, source="api", **options)
    return sorted(outcome.created)


def newest(
    session: Session, run_filter: RunFilter | None = None, limit: int = 5, before: int | None = None
) -> list[int]:
    page = run_store.list_runs(session=session, run_filter=run_filter or RunFilter(), limit=limit, before=before)
    return [run.id for run in page.runs]


def copy_of_run(session: Session, run_id: int, machine: str) -> int:
    """A run written as a program other than this app would: plain SQL, its id from the sequence."""
    columns = [c.name for c in run_table.c if c.name not in ("id", "line_hash", "machine")]
    names = ", ".join(columns)
    new_id = session.execute(
        text(
            f"INSERT INTO run (line_hash, machine, {names}) "
            f"SELECT decode(md5(:machine), 'hex'), :machine, {names} FROM run WHERE id = :run_id RETURNING id"
        ),
        {"machine": machine, "run_id": run_id},
    ).scalar_one()
    session.commit()
    return new_id


def test_a_newest_first_list_steps_over_an_upload_in_flight(database_url):
    sessions = db.get_sessionmaker()
    with sessions() as writer, sessions() as reader, sessions() as other:
        committed = upload(writer, lines("before", 3))
        writer.commit()

        in_flight = upload(writer, lines("flight", 200), tags={"fs": "xfs"})  # written, not committed
        assert len(in_flight) == 200 and in_flight[0] > committed[-1]
        block = reader.execute(select(run_in_flight_table)).one()
        assert (block.first_id, block.last_id) == (in_flight[0], in_flight[-1])
        reader.rollback()

        # Another program's run, from the sequence: above the block, and listed.
        outside = copy_of_run(other, committed[0], "outside")
        assert outside > in_flight[-1]
        assert newest(reader) == [outside, *reversed(committed)]
        assert newest(reader, limit=2, before=outside) == [committed[2], committed[1]]
        assert newest(reader, RunFilter(tags={"fs": "xfs"})) == []
        reader.rollback()

        # The block's rows are not read: the scan of the block in the statement the list ran never runs.
        statements: list[tuple[str, dict]] = []

        def record(connection, cursor, statement, parameters, context, executemany):
            statements.append((statement, parameters))

        event.listen(db.get_engine(), "before_cursor_execute", record)
        try:
            newest(reader)
        finally:
            event.remove(db.get_engine(), "before_cursor_execute", record)
        page = next((statement, parameters) for statement, parameters in statements if "UNION ALL" in statement)
        plan = reader.connection().exec_driver_sql(f"EXPLAIN (ANALYZE, FORMAT JSON) {page[0]}", page[1]).scalar_one()
        scans = [node for node in walk(plan) if node.get("Index Name") == "pk_run"]
        # above the block, the block, below it: the block's never runs (its upload is not committed)
        assert sorted(node["Actual Loops"] for node in scans) == [0, 1, 1], scans
        reader.rollback()

        writer.commit()
        assert newest(reader, limit=300)[:3] == [outside, in_flight[-1], in_flight[-2]]
        assert newest(reader, RunFilter(tags={"fs": "xfs"}), limit=1) == [in_flight[-1]]
        assert reader.scalar(select(func.count()).select_from(run_in_flight_table)) == 0


def test_an_upload_that_never_commits_leaves_a_block_the_next_upload_clears(database_url):
    sessions = db.get_sessionmaker()
    with sessions() as writer, sessions() as reader:
        committed = upload(writer, lines("kept", 2))
        writer.commit()
        upload(writer, lines("lost", 50))
        writer.rollback()
        # Its block stays (committed apart) but no run of it ever shows: the list is as before.
        assert reader.scalar(select(func.count()).select_from(run_in_flight_table)) == 1
        assert newest(reader) == list(reversed(committed))
        reader.rollback()

        later = upload(writer, lines("later", 2))
        writer.commit()
        assert reader.scalar(select(func.count()).select_from(run_in_flight_table)) == 0
        assert newest(reader) == [*reversed(later), *reversed(committed)]


def walk(plan):
    """Every node of an EXPLAIN (FORMAT JSON) plan."""
    stack = [entry["Plan"] for entry in plan]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.get("Plans", []))
