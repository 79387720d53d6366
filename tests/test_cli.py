"""The `bonnieboard` command, run as a user runs it: its main() in a process of its own (forked by tests/zygote.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.helpers import CORPUS_DIR, LINE_103, LINE_198, run_cli
from tests.zygote import BONNIEBOARD

SAMPLE_DATA = Path(__file__).resolve().parent.parent / "sample_data"

pytestmark = pytest.mark.slow  # the command in a process of its own


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


def stored_document(tmp_path):
    engine = create_engine(f"sqlite:///{tmp_path / 'cli.db'}")
    with engine.connect() as connection:
        documents = connection.execute(
            text("select document.body from run left join document on document.id = run.document_id order by run.id")
        ).all()
    engine.dispose()
    return [row[0] for row in documents]


def test_ingest_stores_a_runner_document_with_the_runs_without_a_known_token(tmp_path):
    """What the sample study's manifest lines do: the runner's --json document rides with its CSV line, as the
    runner's own post sends it, and a token the board knows never reaches the database."""
    study = SAMPLE_DATA / "study-ext4-xfs" / "study.plan.sweep"
    document = json.loads((study / "r01-xfs.json").read_text())
    document["warnings"] = ["posted with sekrit-token-0123456789"]
    path = tmp_path / "r01-xfs.json"
    path.write_text(json.dumps(document))
    env = {"BONNIEBOARD_API_TOKEN": "sekrit-token-0123456789"}
    result = run_cli(tmp_path, "ingest", study / "r01-xfs.csv", "--document", path, env=env)
    assert result.returncode == 0, result.stderr
    (stored,) = stored_document(tmp_path)
    stored = json.loads(stored) if isinstance(stored, str) else stored
    assert stored["runs"][0]["tests"]["get_block"]["limiter"] == document["runs"][0]["tests"]["get_block"]["limiter"]
    assert "sekrit-token-0123456789" not in json.dumps(stored)


def test_a_document_that_is_not_json_names_its_file_and_stores_nothing(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": ')
    result = run_cli(tmp_path, "ingest", CORPUS_DIR / "bonnie200-sample.csv", "--document", bad)
    assert result.returncode == 2
    assert result.stderr.startswith(f"bonnieboard: {bad}: not a JSON document (Expecting value at line 1)")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200 + "]" * 200)
    refused = run_cli(tmp_path, "ingest", CORPUS_DIR / "bonnie200-sample.csv", "--document", deep)
    assert refused.returncode == 2 and "document" in refused.stderr
    assert not (tmp_path / "cli.db").exists() or count_runs(tmp_path) == 0


def one_error_line(result, code: int = 2) -> str:
    """The command's stderr when it refused at once: one line and no traceback."""
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1, result.stderr
    return result.stderr.rstrip("\n")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[1, 2]", "document is an array, not a JSON object ({...})"),
        ('"evidence"', "document is a string, not a JSON object ({...})"),
        ("null", "document is null, not a JSON object ({...})"),
        ('{"x": NaN}', "not a JSON document (NaN is not a JSON number)"),
        ('{"a": ' * 40 + "1" + "}" * 40, "document nests deeper than 32 levels (at document.a.a.a"),
        # deeper than Python's own recursion: the same rule's words, not a RecursionError
        ("[" * 100_000 + "]" * 100_000, "document nests deeper than 32 levels"),
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, "document nests deeper than 32 levels"),
    ],
    ids=["array", "string", "null", "nan", "over-32-levels", "deep-array", "deep-object"],
)
def test_a_document_the_api_would_refuse_is_one_line_and_stores_nothing(tmp_path, text, error):
    """--document holds a file to the API's rules for a posted document, with the API's words."""
    path = tmp_path / "doc.json"
    path.write_text(text)
    line = one_error_line(run_cli(tmp_path, "ingest", CORPUS_DIR / "bonnie200-sample.csv", "--document", path))
    assert line.startswith(f"bonnieboard: {path}: {error}"), line
    assert not (tmp_path / "cli.db").exists() or count_runs(tmp_path) == 0


# The command's own peak (Python, SQLAlchemy, the app: about 70 MiB) and the limit's worth of file, with room.
MAX_COMMAND_PEAK_MIB = 150
# argv: PEAK_FILE COMMAND...: runs the command, writes its peak resident KiB to PEAK_FILE, exits with its status.
_REAP_WITH_PEAK = """
import os, sys
pid = os.spawnv(os.P_NOWAIT, sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_a_huge_document_file_is_refused_without_being_read_whole(tmp_path):
    """A 300 MB file (sparse: no disk used) is refused after reading the limit's worth: the command's peak memory
    is its usual, where reading the file whole took 992 MB."""
    path = tmp_path / "huge.json"
    with path.open("wb") as file:
        file.truncate(300 * 2**20)
    stderr, peak = tmp_path / "stderr", tmp_path / "peak"
    with stderr.open("w") as errors:
        # Started by a small Python that reaps it: a child forked from this test process would count this process's
        # resident size, hundreds of MiB late in the suite, in its own ru_maxrss.
        process = subprocess.run(
            [sys.executable, "-c", _REAP_WITH_PEAK, peak, BONNIEBOARD, "ingest", CORPUS_DIR / "bonnie200-sample.csv"]
            + ["--document", path],
            env=os.environ | {"BONNIEBOARD_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}"},
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    assert process.returncode == 2, stderr.read_text()
    assert stderr.read_text().splitlines() == [
        f"bonnieboard: {path}: the document file is {300 * 2**20} bytes; the limit is 1048576 "
        "(BONNIEBOARD_MAX_DOCUMENT_BYTES)"
    ]
    peak_mib = int(peak.read_text()) / 1024  # Linux counts ru_maxrss in KiB
    assert peak_mib < MAX_COMMAND_PEAK_MIB, peak_mib
    assert not (tmp_path / "cli.db").exists() or count_runs(tmp_path) == 0


def test_a_document_file_that_is_not_there_is_one_line(tmp_path):
    missing = tmp_path / "none.json"
    line = one_error_line(run_cli(tmp_path, "ingest", CORPUS_DIR / "bonnie200-sample.csv", "--document", missing))
    assert line == f"bonnieboard: {missing}: No such file or directory"


def test_ingest_names_the_lines_of_a_report_file_it_did_not_read(tmp_path):
    """A report saved with the shell session around it: the prose is named with its line, as the API's `skipped`."""
    report = (Path(__file__).resolve().parent / "data" / "reports" / "real-default.txt").read_text()
    pasted = tmp_path / "session.txt"
    pasted.write_text("$ bonnie++ -d /mnt -u root\nUsing uid:0, gid:0.\n" + report)
    result = run_cli(tmp_path, "ingest", pasted)
    assert result.returncode == 0, result.stderr
    assert f"{pasted}:1: 2 lines were not read (neither a report nor a CSV line): $ bonnie++ -d /mnt -u root" in (
        result.stdout.splitlines()
    )
