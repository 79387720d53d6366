"""Every filtered `curl .../api/runs?...` line of the README finds runs in what `make run` loads (sample_data/ by
its manifest): a new user who pastes one sees an answer, not an empty list."""

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from app.cli import main as bonnieboard
from tests.helpers import reset_caches

ROOT = Path(__file__).resolve().parents[2]
QUERIES = re.findall(
    r"curl '?http://127\.0\.0\.1:8000(/api/runs\?[^' ]*(?:machine|tag)=[^' ]*)'?", (ROOT / "README.md").read_text()
)


def test_the_readme_has_filtered_listings():
    assert any("machine=" in query for query in QUERIES), QUERIES


@pytest.mark.parametrize("query", QUERIES)
def test_a_readme_listing_finds_sample_runs(database_url, client, query, capsys):
    assert bonnieboard(["ingest", "--tag", "source=sample_data", "--manifest", str(ROOT / "sample_data/manifest")]) == 0
    reset_caches()  # the board's cached answers predate the ingest in this process
    answer = client.get(urlsplit(query).path + "?" + urlsplit(query).query)
    assert answer.status_code == 200, answer.text
    assert answer.json()["total"] > 0, f"{query} finds no sample run"


COMPARISONS = re.findall(
    r"(?:http://127\.0\.0\.1:8000)?(/(?:api/)?compare\?runs=[^'` ]+)", (ROOT / "README.md").read_text()
)


def test_the_readme_has_comparisons():
    assert len(COMPARISONS) >= 3, COMPARISONS


@pytest.mark.parametrize("url", COMPARISONS)
def test_a_readme_comparison_compares_sample_configurations(database_url, client, url):
    """Pasted as it is, on the sample data: at least two configurations, not "nothing to compare it with"."""
    assert bonnieboard(["ingest", "--tag", "source=sample_data", "--manifest", str(ROOT / "sample_data/manifest")]) == 0
    reset_caches()
    query = urlsplit(url).query
    answer = client.get(f"/api/compare?{query}")
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["configurations"]) >= 2, (url, answer.json()["summary"])
