"""docs/how-to-add-a-column.md, followed: the steps of "A new fact of the line" done in a scratch copy of the
repository for a column from a field both readers already read (io_chunk_text: the io_chunk_size field as written),
the C header regenerated and the extension built there, and the new column stored alike by the parser's path and the
compiled one (SQLite's insert and PostgreSQL's COPY text). A step the page leaves out, or a file it names wrongly,
fails here rather than for the next person who adds a column."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import LINE_198

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "how-to-add-a-column.md"

# The page's steps for a new fact of the line, as edits: (file, the line the new one follows, the new line).
EDITS = (
    (
        "app/columns.py",
        '    _column("seek_procs", Conversion.OPTIONAL_INT, "seek_proc_count"),\n',
        '    _column("io_chunk_text", Conversion.OPTIONAL_TEXT, "io_chunk_size"),\n',
    ),
    ("app/ingest/parsing.py", "    seek_procs: int | None\n", "    io_chunk_text: str | None\n"),
    ("app/store/models.py", '    Column("seek_procs", Integer),\n', '    Column("io_chunk_text", Text),\n'),
    ("app/web/schemas.py", "    seek_procs: int | None\n", "    io_chunk_text: str | None\n"),
)

# Run in the scratch copy: each line ingested into a fresh SQLite database (the schema from the models: the page's
# migration step is tests/store's to check), and the compiled reader's COPY text of them.
STORE = """
import json, sys
from array import array
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session
from app.ingest import _plain_lines
from app.ingest.parsing import DEFAULT_MAX_LINE_BYTES
from app.ingest.service import ingest_bytes
from app.ingest.sqlite_bulk import COPY_COLUMNS, ingest_path
from app.store.models import Base

lines, database = json.loads(sys.argv[1]), sys.argv[2]
engine = create_engine(f"sqlite:///{database}")
Base.metadata.create_all(engine)
with Session(engine) as session:
    ingest_bytes(session=session, data="\\n".join(lines).encode(), max_line_bytes=DEFAULT_MAX_LINE_BYTES, source="api")
    session.commit()
    stored = [row[0] for row in session.execute(text("SELECT io_chunk_text FROM run ORDER BY id"))]
scan = _plain_lines.scan("\\n".join(lines).encode(), DEFAULT_MAX_LINE_BYTES)
scan.numbered(1, array("q"), {})
rows = scan.copy_text(0, len(lines), b"1\\t2026-01-01\\t\\\\N\\t\\\\N\\t")[0].decode().splitlines()
at = 5 + COPY_COLUMNS.index("io_chunk_text")
copied = [None if row.split("\\t")[at] == "\\\\N" else row.split("\\t")[at] for row in rows]
print(json.dumps({"path": ingest_path(), "plain": [_plain_lines.line_is_plain(l.encode()) for l in lines],
                  "stored": stored, "copied": copied}))
"""


def _steps(title: str) -> str:
    text = DOC.read_text()
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def _lines() -> list[str]:
    """A line of each layout whose io_chunk_size cell differs: 1.98's is empty (§3.3-2), 1.97's 8192, 1.03's 4k."""
    corpus = [
        line for path in sorted((ROOT / "tests/data/corpus").glob("*.csv")) for line in path.read_text().splitlines()
    ]
    fields_197 = next(line for line in corpus if line.startswith("1.97,")).split(",")
    fields_197[6] = "8192"
    fields_103 = next(line for line in corpus if line.count(",") == 26 and ":" not in line).split(",")
    fields_103[1] += ":4k"
    return [LINE_198, ",".join(fields_197), ",".join(fields_103)]


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "repo"
    shutil.copytree(ROOT / "app", tree / "app", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    for name in ("migrations", "templates", "static"):
        shutil.copytree(ROOT / name, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("setup.py", "pyproject.toml"):
        shutil.copy(ROOT / name, tree / name)
    return tree


@pytest.mark.slow  # a build of the extension: about 10 s
def test_the_pages_steps_add_a_column_both_readers_store(tmp_path):
    steps = _steps("A new fact of the line")
    named = set(re.findall(r"\b((?:app|tests|migrations)/[\w/.]+\.(?:py|c|h))\b", steps))
    edited = {path for path, _, _ in EDITS}
    # Every file edited here is a step of the page; the generated header and the C source are the page's too.
    assert edited <= named, sorted(edited - named)
    assert {"app/ingest/_columns.h", "app/ingest/_plain_lines.c"} <= named

    tree = _copy(tmp_path)
    for path, after, new in EDITS:
        source = (tree / path).read_text()
        assert source.count(after) == 1, (path, after)
        (tree / path).write_text(source.replace(after, after + new))
    env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run([sys.executable, "-m", "app.ingest.columns_header"], cwd=tree, env=env, check=True)
    assert "io_chunk_text" in (tree / "app/ingest/_columns.h").read_text()
    build = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace", "--build-temp", str(tmp_path / "build")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0 and "warning:" not in build.stderr, build.stderr

    lines = _lines()
    outcomes = {}
    for path in ("python", "compiled"):
        run = subprocess.run(
            [sys.executable, "-c", STORE, json.dumps(lines), str(tmp_path / f"{path}.db")],
            cwd=tree,
            env=env | {"BONNIEBOARD_INGEST_PATH": path},
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr
        outcomes[path] = json.loads(run.stdout.splitlines()[-1])
    assert outcomes["python"]["path"] == "python" and outcomes["compiled"]["path"] == "compiled"
    assert outcomes["compiled"]["plain"] == [True, True, True]  # each line took the C reader's path
    expected = [None, "8192", "4k"]
    assert outcomes["python"]["stored"] == outcomes["compiled"]["stored"] == expected
    assert outcomes["compiled"]["copied"] == expected
