"""The real lines the speed scripts load: every line of tests/data/corpus/, cycled, each run with a machine name
of its own, ingested with `bonnieboard ingest` in four uploads tagged fs=ext4|xfs and raid=5|6."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "corpus"
TAGS = [("ext4", "5"), ("xfs", "5"), ("ext4", "6"), ("xfs", "6")]


def corpus_lines() -> list[str]:
    lines = []
    for path in sorted(CORPUS.glob("*.csv")):
        lines += [line for line in path.read_text().splitlines() if line and not line.startswith("#")]
    return lines


def with_machine(line: str, machine: str) -> str:
    fields = line.split(",")
    fields[0 if len(fields) == 27 else 2] = machine  # 1.03 lines start with the name
    return ",".join(fields)


def load_runs(workdir: Path, count: int, database_url: str) -> None:
    """`count` runs into the (migrated or not) database at `database_url`, machine host0, host1, ..."""
    lines = corpus_lines()
    per_file = -(-count // len(TAGS))
    written = 0
    # This checkout's app with this interpreter, and none of the caller's settings but the database.
    env = {k: v for k, v in os.environ.items() if not k.startswith("BONNIEBOARD_")}
    env |= {"BONNIEBOARD_DATABASE_URL": database_url, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "app.cli", "migrate"], env=env, cwd=ROOT, check=True, capture_output=True)
    for part, (fs, raid) in enumerate(TAGS):
        path = workdir / f"runs-{part}.csv"
        with path.open("w") as out:
            for _ in range(min(per_file, count - written)):
                out.write(with_machine(lines[written % len(lines)], f"host{written}") + "\n")
                written += 1
        subprocess.run(
            [sys.executable, "-m", "app.cli", "ingest", "--tag", f"fs={fs}", "--tag", f"raid={raid}", str(path)],
            env=env,
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
        )
