"""Every address README.md shows for reading (a `/path?query` in backticks, and each curl command that only
reads) answers 200 on the sample data `make run` loads: the examples a new user copies first work."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from tests.sample_board import sample_board

pytestmark = pytest.mark.slow  # a real server: pytest -m 'not slow' skips it

README = Path(__file__).resolve().parent.parent / "README.md"
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


def test_every_read_example_of_the_readme_answers_on_the_sample_data(tmp_path):
    with sample_board(tmp_path) as base_url, httpx.Client(base_url=base_url, follow_redirects=True) as client:
        answers = {path: client.get(path).status_code for path in read_examples()}
    assert {path: status for path, status in answers.items() if status != 200} == {}
