"""The `bonnieboard` command, run as a user runs it: the installed console script in a subprocess."""

import pytest
from sqlalchemy import create_engine, text

from tests.helpers import CORPUS_DIR, LINE_103, LINE_198, run_cli

pytestmark = pytest.mark.slow  # the console script in a subprocess


def count_runs(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'cli.db'}")
    with engine.connect() as connection:
        count = connection.execute(text("select count(*) from run")).scalar()
    engine.dispose()
    return count


def test_ingest_reports_created_duplicates_and_tags(tmp_path):
    corpus = CORPUS_DIR / "public-sample.csv"
    first = run_cli(tmp_path, "ingest", corpus, "--tag", "fs=xfs", "--label", "public")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == f"{corpus}: upload 1: 29 created, 0 duplicates, 0 invalid"
    again = run_cli(tmp_path, "ingest", corpus)
    assert again.stdout.strip() == f"{corpus}: upload 2: 0 created, 29 duplicates, 0 invalid"
    assert count_runs(tmp_path) == 29


def test_ingest_bad_file_names_line_and_field_and_stores_nothing(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(f"{LINE_198}\n\n{LINE_103.replace('3002', 'fast')}\n")
    result = run_cli(tmp_path, "ingest", bad)
    assert result.returncode == 1
    assert f"{bad}: 1 of 2 lines is invalid; nothing was stored" in result.stderr
    assert f"{bad}:3: [putc] putc is 'fast', not a whole number" in result.stderr
    assert count_runs(tmp_path) == 0
    partial = run_cli(tmp_path, "ingest", bad, "--partial")
    assert partial.returncode == 0 and "1 created, 0 duplicates, 1 invalid" in partial.stdout
    assert count_runs(tmp_path) == 1


def test_ingest_if_empty_loads_only_into_an_empty_database(tmp_path):
    assert "8 created" in run_cli(tmp_path, "ingest", "--if-empty", CORPUS_DIR / "bonnie200-sample.csv").stdout
    second = run_cli(tmp_path, "ingest", "--if-empty", CORPUS_DIR / "public-sample.csv")
    assert "nothing loaded" in second.stdout
    assert count_runs(tmp_path) == 8


def test_missing_file_and_bad_tag(tmp_path):
    assert "No such file" in run_cli(tmp_path, "ingest", tmp_path / "nope.csv").stderr
    assert run_cli(tmp_path, "ingest", "--tag", "novalue", CORPUS_DIR / "seed-lines.csv").returncode == 2
