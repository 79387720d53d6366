"""Ingest speed and memory: POST a 100,000-line file to a real server, against sqlite3's .import
(docs/decisions.md, "Ingest within 2x of sqlite3's .import").

Usage: .venv/bin/python bench/ingest_100k.py [--lines 100000] [--repeat 3] [--format 1.98|1.03|1.9x] [--baseline /work/main ...]

The file cycles through real format-1.98 lines (tests/data/corpus/bonnie200-sample.csv and the
public 2.00a line), or with --format 1.03 through the corpus's real 27-field format-1.0x lines, or with --format
1.9x through its 1.97, 1.96 and 1.93c lines, and gives line i the machine name host<i>. Each timing is into a fresh database:
the server's (started with `bonnieboard serve`, SQLite, WAL) and sqlite3's own `.import` of the same
file into a plain table as wide as its lines (50 or 27 columns). Every round posts the file twice, without tags and with two
(`?tag=fs=xfs&tag=disk=nvme0`), and a third time (no tags, not timed) while a reader sends
`GET /api/runs?limit=50` back to back, after 20 reads not counted that warm its connection (reads must not
wait for an upload). With --baseline (repeatable), other checkouts' servers (each with its .venv) take the same
rounds: before and after in one run. Prints medians, ratios against the median `.import`, the reads' p50/p99 during the uploads and the
servers' peak RSS (VmHWM).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "corpus"


def real_198_lines() -> list[str]:
    lines = []
    for name in ("bonnie200-sample.csv", "public-sample.csv"):
        lines += [line for line in (CORPUS / name).read_text().splitlines() if line.startswith("1.98,")]
    return lines


def real_103_lines() -> list[str]:
    """The corpus's 27-field lines (format 1.0x: no format field; the name comes first)."""
    lines = []
    for path in sorted(CORPUS.glob("*.csv")):
        lines += [line for line in path.read_text().splitlines() if line.count(",") == 26]
    return lines


def real_19x_lines() -> list[str]:
    """The corpus's 48-field lines of 1.97, 1.96 and 1.93c (a 47-field one would make `.import` warn per line)."""
    lines = []
    for path in sorted(CORPUS.glob("*.csv")):
        lines += [
            line
            for line in path.read_text().splitlines()
            if line.startswith(("1.97,", "1.96,", "1.93c,")) and line.count(",") == 47
        ]
    return lines


# lines, name field, fields of the .import table
FORMATS = {"1.98": (real_198_lines, 2, 50), "1.03": (real_103_lines, 0, 27), "1.9x": (real_19x_lines, 2, 48)}


def make_file(path: Path, count: int, line_format: str = "1.98") -> None:
    real_lines, name_field, _ = FORMATS[line_format]
    templates = [line.split(",") for line in real_lines()]
    with path.open("w") as out:
        for i in range(count):
            fields = list(templates[i % len(templates)])
            fields[name_field] = f"host{i}"
            out.write(",".join(fields) + "\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


TAGS = {"none": [], "two tags": [("tag", "fs=xfs"), ("tag", "disk=nvme0")]}
READING = "none, while reading"  # untimed: the reads' latency


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def time_server(
    data_file: Path, workdir: Path, root: Path, params: list[tuple[str, str]], read: bool
) -> tuple[float, float, list[float]]:
    """(seconds for the POST, peak RSS MiB, seconds of each GET /api/runs answered meanwhile, if `read`)."""
    db = workdir / f"server-{time.monotonic_ns()}.db"
    port = free_port()
    env = os.environ | {
        "BONNIEBOARD_DATABASE_URL": f"sqlite:///{db}",
        "BONNIEBOARD_MAX_UPLOAD_BYTES": str(256 * 1024 * 1024),
    }
    # The checkout's own venv, else this one's (a worktree without a venv); its `app` first on the path either way.
    python = root / ".venv/bin/python" if (root / ".venv/bin/python").exists() else Path(sys.executable)
    server = subprocess.Popen(
        [python, "-m", "app.cli", "serve", "--port", str(port)],
        env=env | {"PYTHONPATH": str(root)},
        # In the checkout's own directory: a baseline served by `python -c` (a worktree without its own venv)
        # imports `app` from the working directory first, which must be the baseline's, not this one's.
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_health(url)
        body = data_file.read_bytes()
        response, elapsed, reads = post_while_reading(url, body, params, read)
        assert response.status_code == 201, response.text[:500]
        assert len(response.json()["created"]) == body.count(b"\n")
        return elapsed, peak_rss_mib(server.pid), reads
    finally:
        server.terminate()
        server.wait()
        remove_database(db)


def wait_for_health(base_url: str, tries: int = 400) -> None:
    """Until a just-started server answers (or `tries` times 50 ms have passed)."""
    for _ in range(tries):
        try:
            httpx.get(f"{base_url}/api/health", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.05)


WARM_READS = 20


def post_while_reading(
    base_url: str, body: bytes, params: list[tuple[str, str]], read: bool
) -> tuple[httpx.Response, float, list[float]]:
    """POST `body` to /api/runs; with `read`, GET /api/runs?limit=50 back to back meanwhile. (The answer, the
    POST's seconds, the seconds of each read sent after the POST began.) The reader first sends WARM_READS reads,
    not counted, so its connection and the server's are warm: the reads measure the upload, not a cold start."""
    reads: list[tuple[float, float]] = []  # (sent at, seconds)
    warm = threading.Event()
    done = threading.Event()

    def read_meanwhile() -> None:
        with httpx.Client(base_url=base_url, timeout=60) as client:
            while not done.is_set():
                began = time.perf_counter()
                client.get("/api/runs", params={"limit": 50}).raise_for_status()
                reads.append((began, time.perf_counter() - began))
                if len(reads) >= WARM_READS:
                    warm.set()

    reader = threading.Thread(target=read_meanwhile)
    if read:
        reader.start()
        warm.wait(timeout=60)
    start = time.perf_counter()
    try:
        response = httpx.post(
            f"{base_url}/api/runs", content=body, params=params, headers={"Content-Type": "text/csv"}, timeout=1800
        )
        elapsed = time.perf_counter() - start
    finally:
        done.set()
        if read:
            reader.join()
    return response, elapsed, [seconds for sent, seconds in reads if sent >= start]


def post_report(name: str, rounds: list[tuple[float, float, list[float]]], reference_s: float, reference: str) -> str:
    """A POST's row from its rounds (seconds, a figure of the server's, each read's seconds): the rounds, and the
    reads' count, p50 and p99 if there were reads, else the median and its ratio to the reference."""
    seconds = [elapsed for elapsed, _, _ in rounds]
    reads = [read for _, _, round_reads in rounds for read in round_reads]
    line = f"POST {name}: {' '.join(f'{t:.2f}' for t in seconds)} "
    if reads:
        return line + (
            f"GET /api/runs meanwhile: {len(reads)} answered, "
            f"p50 {percentile(reads, 0.5) * 1000:.0f} ms, p99 {percentile(reads, 0.99) * 1000:.0f} ms"
        )
    med = statistics.median(seconds)
    return line + f"median {med:.2f} s = {med / reference_s:.2f}x {reference}"


def time_sqlite_import(data_file: Path, workdir: Path, fields: int = 50) -> float:
    db = workdir / f"import-{time.monotonic_ns()}.db"
    columns = ",".join(f"c{i}" for i in range(fields))
    start = time.perf_counter()
    subprocess.run(["sqlite3", db, f"create table t({columns});", ".mode csv", f".import {data_file} t"], check=True)
    elapsed = time.perf_counter() - start
    remove_database(db)
    return elapsed


def remove_database(db: Path) -> None:
    """Delete a round's database once it is timed. Left in place, each round's 100-250 MB stayed dirty in the
    page cache and the kernel wrote it back during later rounds, slowing whichever came next."""
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        path.unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--format", choices=sorted(FORMATS), default="1.98", help="the lines' format")
    parser.add_argument(
        "--baseline",
        type=Path,
        action="append",
        default=[],
        help="another checkout (with its .venv) to time in the same rounds",
    )
    args = parser.parse_args()
    servers = {"this": ROOT} | {f"baseline {i + 1}": path.resolve() for i, path in enumerate(args.baseline)}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        data_file = workdir / "runs.csv"
        make_file(data_file, args.lines, args.format)
        print(f"file: {args.lines} format-{args.format} lines, {data_file.stat().st_size / 1e6:.1f} MB")
        import_s: list[float] = []
        runs: dict[tuple[str, str], list[tuple[float, float, list[float]]]] = {
            (server, tags): [] for server in servers for tags in (*TAGS, READING)
        }
        for _ in range(args.repeat):  # alternate, so drift on a shared machine hits all alike
            import_s.append(time_sqlite_import(data_file, workdir, FORMATS[args.format][2]))
            for (server, tags), results in runs.items():
                params = TAGS.get(tags, [])
                results.append(time_server(data_file, workdir, servers[server], params, read=tags == READING))
        med_import = statistics.median(import_s)
        print(f"sqlite3 .import s: {' '.join(f'{t:.2f}' for t in import_s)}  median {med_import:.2f}")
        for (server, tags), results in runs.items():
            line = post_report(f"{server} ({servers[server]}), tags {tags}", results, med_import, ".import")
            print(f"{line}; peak RSS MiB {' '.join(f'{rss:.0f}' for _, rss, _ in results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
