"""Where an upload's time goes, inside the process: the whole ingest_bytes() and commit, its tag step, its
commit, for a 100,000-line file with two tags (or none), into a fresh SQLite database each round.

Usage: .venv/bin/python bench/ingest_steps.py [--rounds 3] [--no-tags] [CHECKOUT ...]

Each CHECKOUT (default: this one) is timed in its own process, the checkouts taking turns round by round, so
code before and after a change meet the same machine. The file is bench/ingest_100k.py's. Prints the medians.
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

ROOT = Path(__file__).resolve().parent.parent
TAGS = {"fs": "xfs", "disk": "nvme0"}


def one_round(data_file: Path, workdir: Path, tags: dict[str, str]) -> tuple[float, float, float]:
    """(seconds for ingest and commit, of which the tag step, of which the commit): run inside a checkout."""
    from sqlalchemy.orm import Session

    from app.ingest import service as ingest
    from app.store import generation
    from app.store.db import make_engine
    from app.store.migrate import upgrade

    database = workdir / f"steps-{time.monotonic_ns()}.db"
    url = f"sqlite:///{database}"
    upgrade(url)
    engine = make_engine(url)
    tag_step: list[float] = []
    untimed = ingest._tag_upload_runs

    def timed(*args, **kwargs):
        started = time.perf_counter()
        untimed(*args, **kwargs)
        tag_step.append(time.perf_counter() - started)

    ingest._tag_upload_runs = timed
    data = data_file.read_bytes()
    with Session(engine) as session:
        started = time.perf_counter()
        ingest.ingest_bytes(session=session, data=data, max_line_bytes=1 << 20, source="api", tags=tags)
        generation.bump(session)
        committing = time.perf_counter()
        session.commit()
        done = time.perf_counter()
    engine.dispose()
    return done - started, sum(tag_step), done - committing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkouts", nargs="*", type=Path, default=[ROOT])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-tags", action="store_true")
    parser.add_argument("--one-round", nargs=2, help=argparse.SUPPRESS)  # DATA_FILE WORKDIR, in a checkout
    args = parser.parse_args()
    tags = {} if args.no_tags else TAGS
    if args.one_round:
        print(*one_round(Path(args.one_round[0]), Path(args.one_round[1]), tags))
        return 0
    sys.path.insert(0, str(ROOT / "bench"))
    from ingest_100k import make_file

    results: dict[Path, list[list[float]]] = {checkout.resolve(): [] for checkout in args.checkouts}
    with tempfile.TemporaryDirectory(prefix="bonnieboard-steps-") as directory:
        data_file = Path(directory) / "lines.csv"
        make_file(data_file, 100_000)
        for _ in range(args.rounds):
            for checkout in results:
                command = [sys.executable, __file__, "--one-round", str(data_file), directory]
                out = subprocess.run(
                    command + (["--no-tags"] if args.no_tags else []),
                    cwd=checkout,
                    env=os.environ | {"PYTHONPATH": str(checkout)},
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                results[checkout].append([float(x) for x in out.split()])
    print(f"tags: {tags or 'none'}, {args.rounds} rounds, medians in seconds")
    for checkout, rounds in results.items():
        total, tag_step, commit = (statistics.median(column) for column in zip(*rounds, strict=True))
        print(f"{checkout}: ingest and commit {total:.3f}, tag step {tag_step:.3f}, commit {commit:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
