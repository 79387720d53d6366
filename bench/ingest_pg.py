"""PostgreSQL ingest speed: POST a 100,000-line file to a real server, against `psql \\copy` of the same file.

Usage: .venv/bin/python bench/ingest_pg.py [--lines 100000] [--repeat 3] [--baseline /work/main ...] [--reads-only]

The file is bench/ingest_100k.py's: real format-1.98 lines, line i with the machine name host<i>. A
throwaway PostgreSQL cluster is started (tests/postgres.py; or BONNIEBOARD_TEST_POSTGRES_URL's server), and
every round times, each into a fresh database: `psql -c "\\copy t from FILE csv"` into a plain 50-column text
table (the reference), `psql -c "\\copy run from FILE"` of the very rows an upload of the file stores into a
migrated database's `run`, with its indexes and keys (the schema's floor: what no writer can go below), then
the server's `POST /api/runs` with two tags (`?tag=fs=xfs&tag=disk=nvme0`) and without. With --baseline (repeatable), other checkouts' servers (each with its .venv) take the same rounds:
before and after in one run. Rounds alternate, so drift on a shared machine hits all alike. A third POST (no
tags, not timed) runs while a reader sends `GET /api/runs?limit=50` back to back (after 20 reads not counted):
the reads' p50/p99 during an upload (--reads-only: that POST alone, each round, to pool more uploads' reads).
Prints each round's seconds, medians and their ratio to the median `\\copy`, and the PostgreSQL server's CPU
seconds (its processes only, from /proc) during each POST.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.ingest.parsing import DEFAULT_MAX_LINE_BYTES
from app.ingest.service import ingest_bytes
from app.store.db import make_engine
from app.store.migrate import upgrade
from bench.ingest_100k import READING, TAGS, free_port, make_file, post_report, post_while_reading, wait_for_health
from tests.postgres import PostgresServer, postgres_bin, postgres_server

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def libpq_url(url: str) -> str:
    """SQLAlchemy's URL as psql takes it (no +driver)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _stat(pid: int) -> list[str]:
    """/proc/<pid>/stat's fields after the command name: [0] state, [1] ppid, [11:15] utime stime cutime cstime."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def postgres_cpu_s(server: PostgresServer) -> float:
    """CPU seconds used so far by this cluster: its postmaster, its live processes and those that have ended
    (counted in the postmaster's cutime and cstime). Other clusters on the machine are left out."""
    with server.engine.connect() as connection:
        checkpointer = connection.execute(
            text("SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'")
        ).scalar_one()
    postmaster = int(_stat(checkpointer)[1])
    ticks = sum(int(field) for field in _stat(postmaster)[11:15])
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = _stat(int(stat.parent.name))
        except (OSError, ValueError):
            continue  # ended meanwhile: its time is in the postmaster's cutime now
        if int(fields[1]) == postmaster:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / CLOCK_TICKS


def time_psql_copy(server: PostgresServer, data_file: Path) -> float:
    url = server.create_database("bench_copy")
    try:
        columns = ", ".join(f"c{i} text" for i in range(50))
        command = [str(postgres_bin() / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", libpq_url(url)]
        subprocess.run([*command, "-c", f"create table t ({columns})"], check=True)
        start = time.perf_counter()
        subprocess.run([*command, "-c", f"\\copy t from '{data_file}' with (format csv)"], check=True)
        return time.perf_counter() - start
    finally:
        server.drop_database("bench_copy")


def psql(url: str, command: str) -> None:
    subprocess.run(
        [str(postgres_bin() / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", libpq_url(url), "-c", command],
        check=True,
    )


def dump_stored_rows(server: PostgresServer, data_file: Path, directory: Path) -> tuple[Path, Path]:
    """(upload, run): the rows an upload of the file stores (this checkout's ingest, untimed), as COPY text."""
    url = server.create_database("bench_rows")
    try:
        upgrade(url)
        engine = make_engine(url)
        with Session(engine) as session:
            data = data_file.read_bytes()
            ingest_bytes(session=session, data=data, max_line_bytes=DEFAULT_MAX_LINE_BYTES, source="bench")
            session.commit()
        engine.dispose()
        files = directory / "upload.copy", directory / "run.copy"
        for table, file in zip(("upload", "run"), files, strict=True):
            psql(url, f"\\copy {table} to '{file}'")
        return files
    finally:
        server.drop_database("bench_rows")


def time_copy_into_run(server: PostgresServer, upload_rows: Path, run_rows: Path) -> float:
    """`psql \\copy run from FILE` of the stored rows into a fresh, migrated database: the table's indexes and its
    foreign key to upload (whose row is loaded first, untimed) in place."""
    url = server.create_database("bench_floor")
    try:
        upgrade(url)
        psql(url, f"\\copy upload from '{upload_rows}'")
        start = time.perf_counter()
        psql(url, f"\\copy run from '{run_rows}'")
        return time.perf_counter() - start
    finally:
        server.drop_database("bench_floor")


def time_server(
    server: PostgresServer, root: Path, data_file: Path, params: list[tuple[str, str]], read: bool = False
) -> tuple[float, float, list[float]]:
    """(seconds for the POST, PostgreSQL's CPU seconds meanwhile, seconds of each GET /api/runs?limit=50 answered
    meanwhile if `read`) into a fresh, migrated database."""
    url = server.create_database("bench_ingest")  # `serve` migrates it with the checkout's own migrations
    port = free_port()
    env = os.environ | {"BONNIEBOARD_DATABASE_URL": url, "BONNIEBOARD_MAX_UPLOAD_BYTES": str(256 * 1024 * 1024)}
    # The checkout's own venv, else this one's (a worktree without a venv); its `app` first on the path either way.
    python = root / ".venv/bin/python" if (root / ".venv/bin/python").exists() else Path(sys.executable)
    process = subprocess.Popen(
        [python, "-m", "app.cli", "serve", "--port", str(port)],
        env=env | {"PYTHONPATH": str(root)},
        cwd=root,  # a baseline imports its own `app`
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for_health(base)
        body = data_file.read_bytes()
        if read:  # something to list: a first upload of a few runs
            httpx.post(f"{base}/api/runs", content=b"".join(body.splitlines(keepends=True)[-100:]), timeout=60)
        cpu_before = postgres_cpu_s(server)
        response, elapsed, reads = post_while_reading(base, body, params, read)
        cpu = postgres_cpu_s(server) - cpu_before
        assert response.status_code == 201, response.text[:500]
        assert len(response.json()["created"]) + len(response.json()["duplicates"]) == body.count(b"\n")
        return elapsed, cpu, reads
    finally:
        process.terminate()
        process.wait()
        server.drop_database("bench_ingest")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", type=Path, action="append", default=[], help="another checkout (with its .venv)")
    parser.add_argument(
        "--reads-only", action="store_true", help="only the POST timed with reads meanwhile (more uploads to pool)"
    )
    args = parser.parse_args()
    servers = {"this": ROOT} | {f"baseline {i + 1}": path.resolve() for i, path in enumerate(args.baseline)}
    with tempfile.TemporaryDirectory() as tmp, postgres_server(os.environ.get("BONNIEBOARD_TEST_POSTGRES_URL")) as pg:
        data_file = Path(tmp) / "runs.csv"
        make_file(data_file, args.lines)
        os.chmod(tmp, 0o755)  # psql runs as this user, but keep the file readable whoever runs it
        print(f"file: {args.lines} lines, {data_file.stat().st_size / 1e6:.1f} MB")
        stored_rows = None if args.reads_only else dump_stored_rows(pg, data_file, Path(tmp))
        copy_s: list[float] = []
        floor_s: list[float] = []
        results: dict[tuple[str, str], list[tuple[float, float, list[float]]]] = {
            (server, tags): [] for server in servers for tags in ((READING,) if args.reads_only else (*TAGS, READING))
        }
        for _ in range(args.repeat):
            copy_s.append(time_psql_copy(pg, data_file))
            if stored_rows is not None:
                floor_s.append(time_copy_into_run(pg, *stored_rows))
            for (server, tags), rounds in results.items():
                params = TAGS.get(tags, [])
                rounds.append(time_server(pg, servers[server], data_file, params, read=tags == READING))
        med_copy = statistics.median(copy_s)
        print(f"psql \\copy s: {' '.join(f'{t:.2f}' for t in copy_s)}  median {med_copy:.2f}")
        if floor_s:
            med_floor = statistics.median(floor_s)
            print(
                f"the same rows COPYed straight into run with its indexes and keys s: "
                f"{' '.join(f'{t:.2f}' for t in floor_s)}  median {med_floor:.2f} = {med_floor / med_copy:.1f}x \\copy"
            )
        for (server, tags), rounds in results.items():
            line = post_report(f"{server} ({servers[server]}), tags {tags}", rounds, med_copy, "\\copy")
            print(f"{line}; PostgreSQL CPU s {' '.join(f'{cpu:.1f}' for _, cpu, _ in rounds)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
