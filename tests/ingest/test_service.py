"""The ingest service on a real SQLite file: stores, finds duplicates, rolls back, takes the write lock."""

import pytest
from sqlalchemy import func, select

from app.errors import InvalidUpload
from app.ingest.parsing import iter_parse
from app.ingest.secrets_scrub import scrub_command_line, scrub_document
from app.ingest.service import ingest
from app.ingest.writers import BATCH_ROWS
from app.store import db
from app.store.models import Run, Tag, Upload, run_table
from tests.helpers import LINE_103, LINE_197, LINE_198, distinct_lines, post_form, with_field

# Each test twice on SQLite: through the compiled path where it takes plain lines, and through the parser alone.
pytestmark = pytest.mark.usefixtures("ingest_path")


def count(session, table):
    return session.scalar(select(func.count()).select_from(table))


def test_stores_runs_tags_label_and_document(session):
    outcome = ingest(
        session=session,
        items=iter_parse(f"{LINE_198}\n{LINE_103}\n"),
        source="cli",
        filename="b.csv",
        label="lab",
        tags={"fs": "xfs"},
        document={"system": {"ram_bytes": 1}},
    )
    session.commit()
    assert len(outcome.created) == 2 and outcome.duplicates == [] and outcome.errors == []
    rows = session.execute(select(run_table).order_by(run_table.c.id)).mappings().all()
    assert [r["machine"] for r in rows] == ["vm", "mindpipe"]
    assert rows[0]["label"] == "lab" and rows[0]["document_id"] == rows[1]["document_id"] is not None
    assert session.get(Run, rows[0]["id"]).document == {"system": {"ram_bytes": 1}}
    assert rows[0]["io_chunk_bytes"] is None and rows[0]["putc_cpu_pct"] == 96
    assert rows[1]["putc_latency_us"] is None and rows[1]["seeks_value"] == 56.7
    assert count(session, Tag) == 2
    upload = session.get(Upload, outcome.upload_id)
    assert (upload.source, upload.filename, upload.label) == ("cli", "b.csv", "lab")


def test_an_invalid_line_stores_nothing_once_the_caller_rolls_back(session):
    bad = with_field(LINE_197, 9, "x")
    with pytest.raises(InvalidUpload) as raised:
        ingest(session=session, items=iter_parse(f"{LINE_198}\n{bad}\n{LINE_103}\n"), source="api")
    assert [(e.line, e.field) for e in raised.value.errors] == [(2, "put_block")]
    session.rollback()
    assert count(session, run_table) == 0 and count(session, Upload) == 0


def test_partial_keeps_valid_lines_and_reports_the_rest(session):
    outcome = ingest(session=session, items=iter_parse(f"x\n{LINE_198}\n"), source="api", partial=True)
    session.commit()
    assert len(outcome.created) == 1 and [e.line for e in outcome.errors] == [1]


def test_duplicates_across_uploads_and_within_one(session):
    first = ingest(session=session, items=iter_parse(f"{LINE_198}\n"), source="api")
    session.commit()
    second = ingest(
        session=session, items=iter_parse(f"{LINE_103}\n{LINE_198}\n{LINE_103}\n"), source="api", tags={"a": "b"}
    )
    session.commit()
    assert second.duplicates == [first.created[0], second.created[0]]
    assert count(session, run_table) == 2
    # The run stored before gets the upload's tags it lacks, and the answer says so.
    assert sorted(session.scalars(select(Tag.run_id)).all()) == sorted([first.created[0], *second.created])
    assert second.tagged == [first.created[0]]


def test_runs_of_a_long_upload_are_numbered_in_line_order(session):
    # Several of a writer's batches (PostgreSQL: several COPYs into one table, numbered by one statement), with
    # lines stored before and repeats among them: the created runs' ids rise with their lines.
    lines = distinct_lines("numbered", 2 * BATCH_ROWS + 500)
    before = ingest(session=session, items=iter_parse("\n".join(lines[::7])), source="cli")
    upload = lines[: BATCH_ROWS + 3] + lines[10:20] + lines[BATCH_ROWS + 3 :]
    outcome = ingest(session=session, items=iter_parse("\n".join(upload)), source="cli", tags={"fs": "xfs"})
    session.commit()
    line_of = dict(session.execute(select(run_table.c.id, run_table.c.raw_line)).all())
    new_lines = [line for index, line in enumerate(lines) if index % 7]
    assert outcome.created == sorted(outcome.created)
    assert [line_of[run_id] for run_id in outcome.created] == new_lines
    assert min(outcome.created) > max(before.created)
    assert len(outcome.duplicates) == len(before.created) + 10
    assert count(session, Tag) == len(lines)  # the runs stored before gain the tag too


def test_a_reupload_adds_tags_and_never_replaces_or_removes_one(session):
    first = ingest(session=session, items=iter_parse(f"{LINE_198}\n"), source="api", tags={"fs": "xfs", "raid": "5"})
    session.commit()
    again = ingest(session=session, items=iter_parse(f"{LINE_198}\n"), source="api", tags={"fs": "ext4", "disk": "sda"})
    session.commit()
    tags = dict(session.execute(select(Tag.key, Tag.value).where(Tag.run_id == first.created[0])).all())
    assert tags == {"fs": "xfs", "raid": "5", "disk": "sda"}
    assert again.tagged == first.created and again.created == []
    # Nothing new to add: not listed as tagged.
    third = ingest(session=session, items=iter_parse(f"{LINE_198}\n"), source="api", tags={"disk": "sda"})
    assert third.tagged == []


def test_writer_after_a_read_in_the_same_session_does_not_hit_a_locked_database(database_url):
    """A read opens a deferred transaction; a writer committing meanwhile must not make our write fail."""
    make_session = db.get_sessionmaker()
    with make_session() as reader, make_session() as other:
        assert count(reader, run_table) == 0  # opens a read transaction on an old snapshot
        ingest(session=other, items=iter_parse(LINE_103), source="api")
        other.commit()
        outcome = ingest(session=reader, items=iter_parse(LINE_198), source="api")
        reader.commit()
        assert len(outcome.created) == 1


def test_the_first_100_errors_are_reported_and_all_are_counted(client):
    """The API, its 422 and the upload page list 100 errors and say how many there are: junk brings millions."""
    text = f"{LINE_198}\n" + "junk\n" * 250
    partial = client.post(
        "/api/runs", content=text, params={"partial": "true"}, headers={"Content-Type": "text/csv"}
    ).json()
    assert partial["error_count"] == 250 and [e["line"] for e in partial["errors"]] == list(range(2, 102))
    refused = client.post("/api/runs", content=text, headers={"Content-Type": "text/csv"})
    assert refused.status_code == 422
    # Without partial the upload has failed by the 101st error: the rest is not read (16 million
    # junk lines took minutes of a core), and the answer says so.
    assert refused.json()["detail"] == (
        "more than 100 lines are invalid; nothing was stored (reading stopped at line 102; with partial=true "
        "reading goes on and the valid ones are stored)"
    )
    assert refused.json()["error_count"] == 101 and len(refused.json()["errors"]) == 100
    page = post_form(client, "/upload", {"lines": text}, headers={"HX-Request": "true"})
    assert page.status_code == 422 and "reading stopped at line 102" in page.text and page.text.count("<tr>") == 101
    text_100 = f"{LINE_198}\n" + "junk\n" * 100  # exactly 100: every line read, every error counted
    refused = client.post("/api/runs", content=text_100, headers={"Content-Type": "text/csv"})
    assert refused.json()["detail"] == "100 of 101 lines are invalid; nothing was stored"
    page = post_form(
        client,
        "/upload",
        {"lines": text.replace(LINE_198, LINE_103), "partial": "true"},
        headers={"HX-Request": "true"},
    )
    assert (
        "1 run created, 0 duplicates, 250 invalid lines skipped" in page.text
        and "The first 100 of 250 errors" in page.text
    )


def test_a_run_has_at_most_50_tags(client):
    run_id = client.post("/api/runs", content=LINE_198).json()["created"][0]
    fifty = {f"key{i}": "v" for i in range(50)}
    assert client.patch(f"/api/runs/{run_id}", json={"tags": fifty}).json()["tags"] == fifty
    response = client.patch(f"/api/runs/{run_id}", json={"tags": {**fifty, "one": "more"}})
    assert response.status_code == 400 and "at most 50 tags" in response.json()["detail"]
    assert client.get(f"/api/runs/{run_id}").json()["tags"] == fifty
    upload = client.post("/api/runs", json={"csv": LINE_103, "tags": {**fifty, "one": "more"}})
    assert upload.status_code == 400 and "at most 50 tags" in upload.json()["detail"]


def test_an_upload_of_one_invalid_line_says_so_in_words(client):
    refused = client.post("/api/runs", content=LINE_198.replace(",869,", ",x,", 1))
    assert refused.status_code == 422
    assert refused.json()["detail"] == "the upload's only line is invalid; nothing was stored"
    assert refused.json()["errors"][0]["field"] == "putc"


def test_a_stored_line_whose_run_cannot_take_more_tags_is_an_error_of_that_line(client):
    """Its line (2 here), field `tags`: with partial the other lines are stored and the run keeps its tags; without,
    nothing is stored."""
    run_id = client.post("/api/runs", content=LINE_198).json()["created"][0]
    fifty = {f"key{i}": "v" for i in range(50)}
    client.patch(f"/api/runs/{run_id}", json={"tags": fifty})
    body = f"{LINE_103}\n{LINE_198}\n"
    refused = client.post("/api/runs", content=body, params={"tag": "extra=1"})
    message = f"run {run_id} is already stored with 50 tags; 1 more would pass the limit of 50 per run"
    assert refused.status_code == 422
    assert refused.json()["detail"] == "1 of 2 lines is invalid; nothing was stored"
    assert refused.json()["errors"] == [{"line": 2, "field": "tags", "error": message}]
    assert client.get("/api/runs").json()["total"] == 1
    partial = client.post("/api/runs", content=body, params={"tag": "extra=1", "partial": "true"})
    assert partial.status_code == 201, partial.text
    answer = partial.json()
    assert answer["errors"] == [{"line": 2, "field": "tags", "error": message}] and answer["error_count"] == 1
    assert len(answer["created"]) == 1 and answer["duplicates"] == [] and answer["tagged"] == []
    assert client.get(f"/api/runs/{answer['created'][0]}").json()["tags"] == {"extra": "1"}
    assert client.get(f"/api/runs/{run_id}").json()["tags"] == fifty


def test_edits_and_deletes_of_a_missing_run_are_404(client):
    assert client.patch("/api/runs/77", json={"label": "x"}).status_code == 404
    assert client.delete("/api/runs/77").status_code == 404
    run_id = client.post("/api/runs", content=LINE_198, params={"tag": "a=1"}).json()["created"][0]
    assert client.patch(f"/api/runs/{run_id}", json={"label": "new"}).json()["tags"] == {"a": "1"}
    assert client.delete(f"/api/runs/{run_id}").status_code == 204
    assert client.patch(f"/api/runs/{run_id}", json={"tags": {"b": "2"}}).status_code == 404


def test_a_token_in_a_posted_runner_document_is_not_stored(client):
    """A runner that does not scrub its own argv posts it, --token SECRET included: the secret is never stored."""
    secret = "tok-9f8e7d6c5b4a"
    document = {
        "schema": "bonnieboard-runner/1",
        "command_line": ["bonnieboard-runner", "-d", "/tmp", "--token", secret, f"--token={secret}"],
    }
    run_id = client.post("/api/runs", json={"csv": LINE_198, "document": document}).json()["created"][0]
    stored = client.get(f"/api/runs/{run_id}").json()["document"]
    assert stored["command_line"] == ["bonnieboard-runner", "-d", "/tmp", "--token", "***", "--token=***"]
    assert secret not in client.get(f"/runs/{run_id}").text and secret not in client.get("/api/runs").text


def test_scrubbing_leaves_documents_without_a_token_alone():
    document = {"command_line": ["r", "--token-file", "/etc/token", "-m", "host"], "system": {}}
    assert scrub_document(document) is document
    assert scrub_document(None) is None and scrub_document({"a": 1}) == {"a": 1}
    assert scrub_command_line("r --tok abc --tag x=y") == "r --tok *** --tag x=y"
