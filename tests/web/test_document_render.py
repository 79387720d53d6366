"""The run page of any document the API accepts is small: tests/hostile_documents.py's documents, uploaded and
viewed through the app on both databases, give pages under 2 MB that say what they leave out. (Their times are
bench/document_render.py's: this machine is too noisy to assert one.)"""

from __future__ import annotations

import json
import re

import pytest

from app.web import document_view as dv
from tests.helpers import DATA_DIR, LINE_198
from tests.hostile_documents import HOSTILE_DOCUMENTS, long_string, warnings_string

PAGE_BYTES = 2_000_000
CUT_HINT = "Long parts are cut short here"
# What each document's page must say it left out.
NOTES = {
    "wide-table": r"… 40 more keys",
    "wide-per-test-table": r"… [\d,]+ more keys",
    "shared-columns-table": r"… [\d,]+ more rows",
    "many-keys": r"… [\d,]+ more keys",
    "long-key": r"… [\d,]+ more characters",
    "long-string": r"… [\d,]+ more characters",
    "warnings-string": r"… [\d,]+ more characters",
    "warnings-list": r"… [\d,]+ more items",
    "warnings-mapping": r"… [\d,]+ more keys",
    "long-list": r"… [\d,]+ more items",
    "list-of-mappings": r"… [\d,]+ more items",
    "deep": r"… [\d,]+ more characters",
    "big-numbers": r"… 3,000 more characters",
}


def _document_section(page: str) -> str:
    return page.split('<section class="document"', 1)[1].split("</section>", 1)[0]


def _run_page(client, document: dict) -> str:
    response = client.post("/api/runs", json={"csv": LINE_198, "document": document})
    assert response.status_code == 201, response.text[:300]
    page = client.get(f"/runs/{response.json()['created'][0]}")
    assert page.status_code == 200
    return page.text


def test_every_hostile_document_has_a_note():
    assert set(NOTES) == set(HOSTILE_DOCUMENTS)


@pytest.mark.parametrize("name", list(HOSTILE_DOCUMENTS))
def test_a_hostile_documents_run_page_is_small_and_says_what_it_leaves_out(client, name):
    page = _run_page(client, HOSTILE_DOCUMENTS[name]())
    assert len(page.encode()) < PAGE_BYTES, f"{len(page.encode()):,} bytes"
    assert re.search(NOTES[name], page), NOTES[name]
    assert CUT_HINT in page


def test_a_long_string_is_shown_once_cut_short(client):
    document = long_string()
    page = _run_page(client, document)
    assert f"… {len(document['notes']) - dv.MAX_TEXT_CHARS:,} more characters" in page


def test_warnings_given_as_one_string_are_one_warning(client):
    document = warnings_string()
    warnings = _document_section(_run_page(client, document)).split('<ul class="warnings">', 1)[1].split("</ul>")[0]
    assert warnings.count("<li>") == 1
    assert f"… {len(document['warnings']) - dv.MAX_TEXT_CHARS:,} more characters" in warnings


def test_a_runner_document_still_shows_its_per_test_table_whole(client):
    document = json.loads((DATA_DIR / "runner-document.json").read_text())
    response = client.post("/api/runs", json={"csv": document["runs"][0]["csv"], "document": document})
    section = _document_section(client.get(f"/runs/{response.json()['created'][0]}").text)
    per_test = section.split("<h3>Per test (this line)</h3>", 1)[1].split("<h3>", 1)[0]
    header = per_test.split("</thead>", 1)[0]
    assert "<th>rate_measured</th>" in header and "<th>syscalls</th>" in header and "<th>limiter</th>" not in header
    for test in document["runs"][0]["tests"]:
        assert f'<th scope="row">{test}</th>' in per_test, test
    assert '<td class="syscalls">write 4096, open_creat 2, close 2, fsync 2, unlink 2</td>' in per_test
    assert '<td class="num">8.0 KiB <span class="muted">(8192)</span></td>' in per_test
    assert 'Evidence behind "Limited by"' in section and "<h3>System</h3>" in section
    assert " more " not in section and CUT_HINT not in section and "<details>" not in section
