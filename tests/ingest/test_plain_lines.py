"""The compiled ingest path is optional: without app.ingest._plain_lines (an install with no C compiler) the parser
stores the same rows, and `bonnieboard --version` and /api/health say which path uploads take. The extension's
BLAKE2b (app/ingest/blake2/, the reference code) gives hashlib's digests byte for byte."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from app.config import Settings, describe_invalid_settings
from app.ingest import sqlite_bulk
from tests.helpers import CORPUS_DIR, set_setting

ROOT = Path(__file__).resolve().parents[2]
bulk = pytest.importorskip("app.ingest._plain_lines", reason="the compiled ingest path is not built")


@settings(max_examples=500, deadline=None, derandomize=True)
@given(data=st.binary(max_size=600), size=st.integers(min_value=1, max_value=64))
def test_the_extensions_blake2b_is_hashlibs(data, size):
    assert bulk.digest(data, size) == hashlib.blake2b(data, digest_size=size).digest()


def test_the_extensions_blake2b_at_block_edges_and_the_line_hash_size():
    # BLAKE2b works in 128-byte blocks and treats the last one apart: lengths around each edge.
    for length in (0, 1, 127, 128, 129, 255, 256, 257, 4096, 100_000):
        data = bytes(range(256)) * (length // 256 + 1)
        assert bulk.digest(data[:length], 16) == hashlib.blake2b(data[:length], digest_size=16).digest()
    with pytest.raises(ValueError, match="1 to 64 bytes"):
        bulk.digest(b"x", 65)


def test_the_extension_links_no_sqlite_and_calls_pythons():
    # SQLite is looked up in the library CPython's _sqlite3 runs (app/ingest/sqlite_api.h), never linked: a wheel
    # carries no libsqlite3 of its own that would work on another copy's connection.
    assert bulk.SQLITE_PROBLEM is None
    major, minor, patch = sqlite3.sqlite_version_info
    assert bulk.libversion_number() == major * 1_000_000 + minor * 1000 + patch
    needed = subprocess.run(["ldd", bulk.__file__], capture_output=True, text=True, check=True).stdout
    assert "libsqlite3" not in needed and "libb2" not in needed, needed


@pytest.mark.parametrize("path", [sqlite_bulk.COMPILED, sqlite_bulk.PYTHON])
def test_health_says_which_path_uploads_take(client, monkeypatch, path):
    set_setting(monkeypatch, "INGEST_PATH", path)
    assert client.get("/api/health").json() == {"status": "ok", "ingest_path": path}


def test_an_unknown_ingest_path_setting_is_refused_by_name(monkeypatch):
    # It used to take the parser's path and say "ok": a typo made every upload slow, and nothing said so.
    monkeypatch.setenv("BONNIEBOARD_INGEST_PATH", "fast")
    with pytest.raises(ValidationError) as refused:
        Settings()
    assert describe_invalid_settings(refused.value) == (
        "BONNIEBOARD_INGEST_PATH: Input should be 'compiled' or 'python' (it is 'fast')"
    )


def _bonnieboard(source: Path, database: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=source,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(source), "BONNIEBOARD_DATABASE_URL": f"sqlite:///{database}"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _runs(database: Path) -> list[tuple]:
    with sqlite3.connect(database) as connection:
        columns = [row[1] for row in connection.execute("PRAGMA table_info(run)")]
        kept = ", ".join(c for c in columns if c not in ("upload_id", "created_at"))
        runs = connection.execute(f"SELECT {kept} FROM run ORDER BY id").fetchall()
        tags = connection.execute("SELECT run_id, key, value FROM tag ORDER BY run_id, key").fetchall()
    return [*runs, *tags]


@pytest.mark.slow
def test_without_the_extension_the_parser_stores_the_same_rows(tmp_path):
    """A copy of the source without the compiled module, as `pip install .` leaves it where no compiler runs."""
    source = tmp_path / "source"
    for name in ("app", "templates", "static", "migrations"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    files = [str(path) for path in sorted(CORPUS_DIR.glob("*.csv"))]
    stored = {}
    for name, tree in (("without", source), ("with", ROOT)):
        database = tmp_path / f"{name}.db"
        version = _bonnieboard(tree, database, "--version")
        expected = (
            "(ingest: python: app.ingest._plain_lines is not built" if name == "without" else "(ingest: compiled)"
        )
        assert expected in version.stdout, version.stdout + version.stderr
        for command in (["migrate"], ["ingest", "--tag", "fs=xfs", "--tag", "disk=nvme", *files]):
            done = _bonnieboard(tree, database, *command)
            assert done.returncode == 0, done.stdout + done.stderr
        stored[name] = _runs(database)
    assert len(stored["with"]) > 100
    assert stored["without"] == stored["with"]
