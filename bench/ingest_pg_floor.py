"""Where PostgreSQL's floor for an upload goes: `COPY` of the rows an upload of 100,000 format-1.98 lines stores
into a migrated `run`, with the table as it is and with one of its indexes or keys dropped at a time, and a
`COPY` of one tag per run into `tag` as it is, without its key to `run`, and without its (key, value, run_id)
index. Then the rows as an upload writes them (its key triggers skipped, `session_replication_role = replica`):
alone, with two tags' `INSERT ... SELECT` as an upload runs them, and with an interned tag set instead (one
integer column, every run of the upload the same, and an index on (that column, id)). Against `psql \\copy` of
the file into a plain 50-column table, in the same rounds.

Usage: PYTHONPATH=. .venv/bin/python bench/ingest_pg_floor.py [--lines 100000] [--repeat 3]

Each measurement runs in a fresh, migrated database on a throwaway cluster (tests/postgres.py; or
BONNIEBOARD_TEST_POSTGRES_URL's server); the rows are this checkout's own (bench/ingest_pg.py's dump). Prints each
variant's seconds per round, its median and the median's ratio to `\\copy`'s. What it answers: which part of the
schema costs what, for a decision on the schema; it changes nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.store.migrate import upgrade  # noqa: E402
from bench.ingest_100k import make_file  # noqa: E402
from bench.ingest_pg import dump_stored_rows, time_psql_copy  # noqa: E402
from tests.postgres import PostgresServer, postgres_server  # noqa: E402

RUN_VARIANTS = {
    "run as it is": [],
    "run without its key to upload": ["ALTER TABLE run DROP CONSTRAINT fk_run_upload_id_upload"],
    "run without ix_run_upload_id": ["DROP INDEX ix_run_upload_id"],
    "run without its unique line_hash": ["ALTER TABLE run DROP CONSTRAINT uq_run_line_hash"],
    "run without ix_run_machine_id": ["DROP INDEX ix_run_machine_id"],
    "run without ix_run_format_version_id": ["DROP INDEX ix_run_format_version_id"],
    "run with its primary key only": [
        "ALTER TABLE run DROP CONSTRAINT fk_run_upload_id_upload",
        "DROP INDEX ix_run_upload_id",
        "ALTER TABLE run DROP CONSTRAINT uq_run_line_hash",
        "DROP INDEX ix_run_machine_id",
        "DROP INDEX ix_run_format_version_id",
    ],
}
TAGS_SQL = [
    f"INSERT INTO tag (run_id, key, value) SELECT id, '{key}', '{value}' FROM run WHERE upload_id = (SELECT id FROM upload)"
    for key, value in (("fs", "xfs"), ("disk", "nvme0"))
]
# (schema changes before, statements timed after the COPY): all in replica mode, as an upload's transaction.
AS_UPLOAD_VARIANTS = {
    "run as an upload writes it": ([], []),
    "run and two tags' rows, as an upload writes them": ([], TAGS_SQL),
    "run with a tag-set column and its index, no tag rows": (
        [
            "ALTER TABLE run ADD COLUMN tag_set_id integer DEFAULT 1",
            "CREATE INDEX ix_run_tag_set_id_id ON run (tag_set_id, id)",
        ],
        [],
    ),
}
TAG_VARIANTS = {
    "one tag per run, tag as it is": [],
    "one tag per run, without its key to run": ["ALTER TABLE tag DROP CONSTRAINT fk_tag_run_id_run"],
    "one tag per run, without ix_tag_key_value_run_id": ["DROP INDEX ix_tag_key_value_run_id"],
}


def time_copy(
    server: PostgresServer,
    files: dict[str, Path],
    setup: list[str],
    ddl: list[str],
    table: str,
    then: tuple[str, ...] = (),
    replica: bool = False,
) -> float:
    """Seconds for `COPY <table>` of its file and the statements `then`, in one transaction, into a fresh, migrated
    database, after `setup`'s tables are loaded (untimed) and `ddl` has run; with `replica`, no trigger fires (as
    in an upload's transaction)."""
    url = server.create_database("bench_floor")
    engine = create_engine(url, poolclass=NullPool)
    try:
        upgrade(url)
        with engine.connect() as connection:
            for loaded in setup:
                connection.execute(text(f"COPY {loaded} FROM '{files[loaded]}'"))
            # The file's columns, named: a column `ddl` adds takes its default.
            columns = ", ".join(
                connection.execute(
                    text(
                        "SELECT column_name FROM information_schema.columns WHERE table_name = :t ORDER BY ordinal_position"
                    ),
                    {"t": table},
                ).scalars()
            )
            for statement in ddl:
                connection.execute(text(statement))
            connection.commit()
            start = time.perf_counter()
            if replica:
                connection.execute(text("SET LOCAL session_replication_role = replica"))
            connection.execute(text(f"COPY {table} ({columns}) FROM '{files[table]}'"))
            for statement in then:
                connection.execute(text(statement))
            connection.commit()
            return time.perf_counter() - start
    finally:
        engine.dispose()
        server.drop_database("bench_floor")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, postgres_server(os.environ.get("BONNIEBOARD_TEST_POSTGRES_URL")) as pg:
        directory = Path(tmp)
        os.chmod(directory, 0o755)  # the server reads the files: its own user
        data_file = directory / "runs.csv"
        make_file(data_file, args.lines)
        upload_rows, run_rows = dump_stored_rows(pg, data_file, directory)
        tag_rows = directory / "tag.copy"
        tag_rows.write_text("".join(f"{line.split(chr(9), 1)[0]}\tfs\txfs\n" for line in run_rows.open()))
        for file in (upload_rows, run_rows, tag_rows, data_file):
            os.chmod(file, 0o644)
        files = {"upload": upload_rows, "run": run_rows, "tag": tag_rows}
        times: dict[str, list[float]] = {"psql \\copy into a plain 50-column table": []}
        times |= {name: [] for name in (*RUN_VARIANTS, *TAG_VARIANTS, *AS_UPLOAD_VARIANTS)}
        for _ in range(args.repeat):
            times["psql \\copy into a plain 50-column table"].append(time_psql_copy(pg, data_file))
            for name, ddl in RUN_VARIANTS.items():
                times[name].append(time_copy(pg, files, ["upload"], ddl, "run"))
            for name, ddl in TAG_VARIANTS.items():
                times[name].append(time_copy(pg, files, ["upload", "run"], ddl, "tag"))
            for name, (ddl, then) in AS_UPLOAD_VARIANTS.items():
                times[name].append(time_copy(pg, files, ["upload"], ddl, "run", tuple(then), replica=True))
    reference = statistics.median(times["psql \\copy into a plain 50-column table"])
    load = os.getloadavg()
    print(f"\n{args.lines} lines, {args.repeat} rounds, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}\n")
    print("| COPY | rounds (s) | median | ratio to `\\copy` |")
    print("|---|---|---|---|")
    for name, rounds in times.items():
        median = statistics.median(rounds)
        print(f"| {name} | {' '.join(f'{t:.2f}' for t in rounds)} | {median:.2f} s | {median / reference:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
