"""A runner document as the board takes it in and compares it, on both databases: real RAM figures (over 2 GiB,
which PostgreSQL's 32-bit INTEGER cast overflowed), and the limits a document is held to (NUL, size, values)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import DATA_DIR, LINE_198, post_csv, set_setting


def _runner_document() -> dict:
    return json.loads((DATA_DIR / "runner-document.json").read_text())


def test_a_runner_run_from_a_large_machine_is_compared(client):
    document = _runner_document()
    assert document["system"]["ram_bytes"] > 2**31
    upload = {"csv": document["runs"][0]["csv"], "document": document, "tags": {"raid": "5", "fs": "xfs"}}
    runner = client.post("/api/runs", json=upload).json()["created"][0]
    other = post_csv(client, LINE_198, tag=["raid=1", "fs=ext4"]).json()["created"][0]
    runs = f"{runner},{other}"
    for url in (
        f"/api/compare?runs={runs}",
        f"/compare?runs={runs}",
        f"/api/compare.csv?runs={runs}",
        f"/api/matrix?rows=raid&cols=fs&runs={runs}",
        f"/matrix?rows=raid&cols=fs&runs={runs}",
    ):
        assert client.get(url).status_code == 200, url
    setup = client.get(f"/api/compare?runs={runs}").json()["setup"]
    assert setup[0]["ram_mib"] == document["system"]["ram_bytes"] // 2**20


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"system": {"hostname": "a\u0000b"}}, "document.system.hostname"),
        ({"runs": [{"tests": {"put\u0000c": {}}}]}, "document.runs[0].tests.put\\x00c"),
    ],
)
def test_a_nul_in_a_document_is_refused_naming_where(client, document, field):
    response = client.post("/api/runs", json={"csv": LINE_198, "document": document})
    assert response.status_code == 400
    assert field in response.json()["detail"] and "NUL" in response.json()["detail"]
    assert client.get("/api/runs").json()["total"] == 0


def test_a_document_over_the_byte_limit_is_413(client, monkeypatch):
    set_setting(monkeypatch, "MAX_DOCUMENT_BYTES", "1000")
    response = client.post("/api/runs", json={"csv": LINE_198, "document": {"notes": "x" * 1000}})
    assert response.status_code == 413
    assert "document" in response.json()["detail"] and "BONNIEBOARD_MAX_DOCUMENT_BYTES" in response.json()["detail"]
    assert client.post("/api/runs", json={"csv": LINE_198, "document": _runner_document()}).status_code == 413
    assert client.get("/api/runs").json()["total"] == 0


@pytest.mark.parametrize(
    "document",
    [
        pytest.param("[" + ",".join(["[]"] * 1_000_000) + "]", id="a-million-empty-lists"),
        pytest.param("[" + ",".join(["1"] * 20_001) + "]", id="20001-numbers"),
        pytest.param('{"a": [' + ",".join(['{"b": "x"}'] * 10_001) + "]}", id="10001-objects"),
    ],
)
def test_a_document_with_too_many_values_is_400(client, document):
    body = f'{{"csv": "{LINE_198}", "document": {{"x": {document}}}}}'
    response = client.post("/api/runs", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert "document" in response.json()["detail"] and "20000" in response.json()["detail"]
    assert client.get("/api/runs").json()["total"] == 0


def test_a_document_just_within_the_value_limit_is_kept(client):
    document = {"x": [{"b": []} for _ in range(6_600)]}  # 19,802 values, a third of them empty lists
    response = client.post("/api/runs", json={"csv": LINE_198, "document": document})
    assert response.status_code == 201, response.text[:300]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('{"csv": 1}', "csv: Input should be a valid string"),
        ('{"csv": "x", "tags": {"a": 1}}', "tags.a: Input should be a valid string"),
        ('{"csv": "x", "document": []}', "document: Input should be a valid dictionary"),
        ('{"csv": "x", "colour": "red"}', "colour: Extra inputs are not permitted"),
        ("{}", "csv: Field required"),
        ("[1]", "Input should be a valid dictionary"),
    ],
)
def test_json_upload_errors_name_the_field(client, body, words):
    response = client.post("/api/runs", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert words in response.json()["detail"], response.json()["detail"]
