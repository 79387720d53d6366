"""A runner document as the board takes it in and compares it, on both databases: real RAM figures (over 2 GiB,
which PostgreSQL's 32-bit INTEGER cast overflowed), the limits a document is held to (NUL, size, values), and no
token left in it wherever the runner copied one."""

from __future__ import annotations

import json
import logging
import re

import pytest
from sqlalchemy import text

from app.ingest.secrets_scrub import BOARD_TOKEN
from tests.helpers import DATA_DIR, LINE_198, create_token, post_csv, set_setting


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
        ('{"csv": "x", "document": []}', "document is an array, not a JSON object ({...})"),
        ('{"csv": "x", "colour": "red"}', "colour: Extra inputs are not permitted"),
        ("{}", "csv: Field required"),
        ("[1]", "Input should be a valid dictionary"),
    ],
)
def test_json_upload_errors_name_the_field(client, body, words):
    response = client.post("/api/runs", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert words in response.json()["detail"], response.json()["detail"]


# ---- No token stays in a stored document (app.ingest.secrets_scrub) ----

ENV_TOKEN = "env-token-0123456789"
# Shaped as `bonnieboard token create` makes them; this one was made by no board here.
ANOTHER_BOARDS_TOKEN = "bb_" + "Q" * 20 + "-_" + "7" * 21


def _document_quoting(secret: str) -> dict:
    """The runner's document with `secret` copied everywhere a runner (or a person) could copy it."""
    document = _runner_document()
    document["environment"] = {"BONNIEBOARD_TOKEN": secret, "PATH": "/usr/bin:/bin", "HOME": "/root"}
    document["warnings"].append(f"posted with 'Authorization: Bearer {secret}' to http://board:8000")
    document["runs"][0]["argv"] = [["bonnieboard-runner", "--post", "http://board:8000", "--token", secret]]
    document["by_token"] = {secret: "the token as a key", f"token={secret}": 1}
    document["command_line"] = [*document["command_line"], "--token", secret]
    document["copies"] = [{"other": ANOTHER_BOARDS_TOKEN}]
    return document


def _posting_token(how: str, session, monkeypatch) -> str:
    if how == "env":
        set_setting(monkeypatch, "API_TOKEN", ENV_TOKEN)
        return ENV_TOKEN
    if how == "created":
        return create_token(session, "runner")
    return "sent-to-a-board-without-tokens"  # tokens not in use: the header is ignored, and still a secret


def _everything_shown(client, run_id: int, token: str) -> str:
    """Every answer that shows the run or its document, with the token (reads may need it)."""
    headers = {"Authorization": f"Bearer {token}"}
    urls = (
        f"/api/runs/{run_id}",
        f"/runs/{run_id}",
        "/api/runs",
        "/api/runs/export.csv",
        f"/api/compare?runs={run_id}",
        f"/compare?runs={run_id}",
    )
    answers = [client.get(url, headers=headers) for url in urls]
    assert all(answer.status_code == 200 for answer in answers), [answer.status_code for answer in answers]
    return "\n".join(answer.text for answer in answers)


@pytest.mark.parametrize("how", ["env", "created", "sent"])
def test_the_posting_token_is_hidden_wherever_the_document_holds_it(client, session, monkeypatch, caplog, how):
    token = _posting_token(how, session, monkeypatch)
    document = _document_quoting(token)
    upload = {"csv": document["runs"][0]["csv"], "document": document}
    with caplog.at_level(logging.DEBUG):
        response = client.post("/api/runs", json=upload, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 201, response.text[:300]
    run_id = response.json()["created"][0]
    shown = _everything_shown(client, run_id, token)
    assert token not in shown and ANOTHER_BOARDS_TOKEN not in shown
    assert token not in caplog.text
    stored = session.execute(
        text(
            "select document.body, run.limiters from run join document on document.id = run.document_id "
            "where run.id = :id"
        ),
        {"id": run_id},
    ).one()
    assert token not in str(stored) and ANOTHER_BOARDS_TOKEN not in str(stored)
    # The run keeps its document, with *** where the secret was.
    kept = client.get(f"/api/runs/{run_id}", headers={"Authorization": f"Bearer {token}"}).json()["document"]
    assert kept["environment"] == {"BONNIEBOARD_TOKEN": "***", "PATH": "/usr/bin:/bin", "HOME": "/root"}
    assert kept["warnings"][-1] == "posted with 'Authorization: Bearer ***' to http://board:8000"
    assert kept["runs"][0]["argv"] == [["bonnieboard-runner", "--post", "http://board:8000", "--token", "***"]]
    assert kept["by_token"] == {"***": "the token as a key", "token=***": 1}
    assert kept["command_line"][-2:] == ["--token", "***"]
    assert kept["copies"] == [{"other": "***"}]
    assert kept["system"] == document["system"] and kept["runs"][0]["tests"] == document["runs"][0]["tests"]


def test_a_short_token_is_hidden_only_where_it_stands_alone(client, monkeypatch):
    # A configured token may be a word; hidden inside other words it would wreck the document's keys. The word
    # appears nowhere in the runner's document, so its per-test facts come back whole.
    set_setting(monkeypatch, "API_TOKEN", "swordfish")
    document = _runner_document() | {
        "environment": {"TOKEN": "swordfish"},
        "note": "a swordfish run, swordfish_x and swordfishes",
    }
    response = client.post(
        "/api/runs",
        json={"csv": document["runs"][0]["csv"], "document": document},
        headers={"Authorization": "Bearer swordfish"},
    )
    kept = client.get(f"/api/runs/{response.json()['created'][0]}").json()["document"]
    assert kept["environment"] == {"TOKEN": "***"} and kept["note"] == "a *** run, swordfish_x and swordfishes"
    assert kept["runs"][0]["tests"] == document["runs"][0]["tests"]


def test_board_tokens_have_the_shape_the_scrubber_hides(session):
    assert re.fullmatch(BOARD_TOKEN, create_token(session, "shape"))
