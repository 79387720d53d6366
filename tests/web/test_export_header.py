"""`/api/runs/export.csv?header=1`: bonnie++'s own header line first, as Debian's bonnie++ 2.00a prints it before
a repeated run's lines; without it (the default) the file is still the uploaded lines, byte for byte. Either
way bon_csv2html and bon_csv2txt (bonnie++'s own readers) and this board read the file back unchanged."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from app.ingest.parsing import HEADER_198
from tests.helpers import post_csv

ROOT = Path(__file__).resolve().parents[2]
SWEEP_FILE = ROOT / "sample_data" / "sweep-ext4-loop-sync.csv"


def uploaded(client) -> tuple[str, list[int]]:
    text = SWEEP_FILE.read_text()
    created = post_csv(client, text).json()["created"]
    assert len(created) == 3
    return text, created


def test_header_is_the_line_bonnie_printed_in_the_sample_data():
    assert SWEEP_FILE.read_text().splitlines()[0] == HEADER_198


def test_export_with_header_is_bonnies_own_file_and_the_default_keeps_the_exact_lines(client):
    text, created = uploaded(client)
    runs = ",".join(map(str, created))
    plain = client.get(f"/api/runs/export.csv?runs={runs}")
    assert plain.text == "".join(line + "\n" for line in text.splitlines()[1:])
    assert client.get(f"/api/runs/export.csv?runs={runs}&header=0").text == plain.text
    with_header = client.get(f"/api/runs/export.csv?runs={runs}&header=1")
    assert with_header.status_code == 200 and with_header.headers["content-type"].startswith("text/csv")
    # What bonnie++ -q -x 3 wrote, header and all, byte for byte.
    assert with_header.text == text
    # Uploaded again, the header is skipped and every line is a duplicate: nothing new, nothing refused.
    again = post_csv(client, with_header.text).json()
    assert (again["created"], sorted(again["duplicates"]), again["errors"]) == ([], sorted(created), [])
    assert client.get("/api/runs/export.csv?header=1&runs=99999999").text == HEADER_198 + "\n"
    assert client.get("/api/runs/export.csv?header=maybe").status_code == 422


def _bonnie_tool(name: str) -> str:
    path = shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.path.exists(p)), None)
    if path is None:
        pytest.fail(f"{name} is not installed; this test needs Debian's bonnie++: apt-get install -y bonnie++")
    return path


@pytest.mark.slow
def test_real_bonnie_prints_the_same_header_and_its_readers_skip_it(client, tmp_path):
    """Debian's bonnie++ 2.00a with -x 2 prints the header, then its lines; bon_csv2html and bon_csv2txt
    make the same page from the export with and without the header."""
    command = [_bonnie_tool("bonnie++"), "-d", str(tmp_path), "-q", "-s", "0", "-n", "1", "-x", "2"]
    if os.geteuid() == 0:
        command += ["-u", "root"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and lines[0] == HEADER_198
    runs = ",".join(map(str, post_csv(client, done.stdout).json()["created"]))
    with_header = client.get(f"/api/runs/export.csv?runs={runs}&header=1").text
    assert with_header == done.stdout
    without = client.get(f"/api/runs/export.csv?runs={runs}").text
    for tool in ("bon_csv2html", "bon_csv2txt"):
        read = [
            subprocess.run([_bonnie_tool(tool)], input=text, capture_output=True, text=True, timeout=60)
            for text in (with_header, without)
        ]
        assert read[0].returncode == read[1].returncode == 0, (tool, read[0].stderr)
        assert read[0].stdout == read[1].stdout and lines[1].split(",")[2] in read[0].stdout, tool
