"""Every address README.md shows for reading (a `/path?query` in backticks, and each curl command that only
reads) answers 200 on the sample data `make run` loads: the examples a new user copies first work."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.helpers import CORPUS_DIR
from tests.sample_board import sample_board

pytestmark = pytest.mark.slow  # a real server: pytest -m 'not slow' skips it

README = Path(__file__).resolve().parents[2] / "README.md"
BOARD = "http://127.0.0.1:8000"
# A path with a query, in backticks: `/matrix?rows=fs&cols=mode` (not a placeholder such as `/api/compare?...`).
BACKTICKED = re.compile(r"`(/[A-Za-z0-9_./-]*\?[^`\s]+)`")
# A curl command's address on the README's board.
CURL_URL = re.compile(re.escape(BOARD) + r"(/[^'\s]*)")
WRITES = re.compile(r"(^|\s)(-F|--form|-d|--data\S*|-X)(\s|$)")


def curl_commands(text: str) -> list[str]:
    """The README's curl commands, each on one line (continuation backslashes joined)."""
    commands, current = [], ""
    for line in text.splitlines():
        if current or line.lstrip().startswith("curl "):
            current += " " + line.strip().removesuffix("\\")
            if not line.rstrip().endswith("\\"):
                commands.append(current.strip())
                current = ""
    return commands


def read_examples() -> list[str]:
    text = README.read_text()
    paths = [match for match in BACKTICKED.findall(text) if not match.endswith("?...")]
    for command in curl_commands(text):
        if not WRITES.search(command):
            paths += CURL_URL.findall(command)
    return list(dict.fromkeys(paths))


def test_the_readme_shows_the_examples_this_test_runs():
    examples = read_examples()
    assert "/matrix?rows=fs&cols=mode&test=put_block" in examples
    assert "/api/runs/17" in examples and "/api/runs/export.csv" in examples
    assert not any("name_tags=" in path or "partial=" in path for path in examples)  # uploads are not run here
    assert len(examples) >= 8


@pytest.fixture(scope="module")
def board(tmp_path_factory) -> Iterator[str]:
    with sample_board(tmp_path_factory.mktemp("readme")) as base_url:
        yield base_url


def test_every_read_example_of_the_readme_answers_on_the_sample_data(board):
    with httpx.Client(base_url=board, follow_redirects=True) as client:
        answers = {path: client.get(path).status_code for path in read_examples()}
    assert {path: status for path, status in answers.items() if status != 200} == {}


def edit_example() -> str:
    """The README's shell block that edits and deletes a run (the one holding `curl -X DELETE`)."""
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(), re.DOTALL)
    [block] = [block for block in blocks if "curl -X DELETE" in block]
    return block


@pytest.mark.skipif(shutil.which("curl") is None, reason="the README's examples need curl")
def test_the_readme_edits_and_deletes_a_run_it_uploaded_never_a_sample_run(board, tmp_path):
    """Run as a new user would, in a folder holding a bonnie.csv of theirs: the PATCH and DELETE act on the run
    the block uploaded, and the board's sample runs are as `make run` loaded them."""
    block = edit_example()
    assert "PATCH" in block and "$id" in block and not re.search(r"/api/runs/\d", block)
    sample_runs = httpx.get(f"{board}/api/runs", params={"tag": "source=sample_data", "limit": 1}).json()["total"]
    line = next(line for line in (CORPUS_DIR / "bonnie200-sample.csv").read_text().splitlines() if line[:1].isdigit())
    (tmp_path / "bonnie.csv").write_text(line.replace(line.split(",")[2], "readme-user-box", 1) + "\n")
    script = block.replace(BOARD, board) + '\necho "id=$id"\n'
    done = subprocess.run(["sh", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    run_id = int(done.stdout.rsplit("id=", 1)[1])
    assert httpx.get(f"{board}/api/runs/{run_id}").status_code == 404  # deleted
    after = httpx.get(f"{board}/api/runs", params={"tag": "source=sample_data", "limit": 1}).json()["total"]
    assert after == sample_runs
