"""A runner's document is stored once per upload, a comparison never reads one, and migration 0009 folds the
copies stored before (docs/decisions.md, "A document stored once")."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import JSON, column, event, func, select, table, text
from sqlalchemy.orm import Session

from app.compare.figures import ram_mib_of
from app.compare.page import find_runs
from app.ingest.documents import limiters_of, line_facts
from app.store import db
from app.store.db import make_engine
from app.store.migrate import alembic_config, upgrade
from app.store.models import Run, document_table, run_table
from tests.helpers import distinct_lines
from tests.hostile_documents import HOSTILE_DOCUMENTS, filler, json_bytes

LIMITER = {"code": "page_cache", "text": "the file fits in RAM twice over"}


def _entry(line: str, **tests: Any) -> dict[str, Any]:
    return {"csv": line, "tests": tests}


def _database_bytes(session: Session, database_url: str) -> int:
    """What the database takes on disk: SQLite's file and its WAL; PostgreSQL's database."""
    if database_url.startswith("sqlite"):
        path = Path(database_url.removeprefix("sqlite:///"))
        return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    return session.scalar(text("SELECT pg_database_size(current_database())"))


def _post(client, lines: list[str], document: dict[str, Any] | None) -> list[int]:
    body: dict[str, Any] = {"csv": "\n".join(lines) + "\n"}
    if document is not None:
        body["document"] = document
    response = client.post("/api/runs", json=body)
    assert response.status_code == 201, response.text[:300]
    return response.json()["created"]


# ==== F2: an upload of many lines with one large document ====


def test_an_upload_of_many_lines_stores_its_large_document_once(client, session, database_url):
    """A copy per run would grow the database by 1,000 documents (a gigabyte); it grows by about one document
    and the lines' rows."""
    lines = distinct_lines("onedoc", 1000)
    document: dict[str, Any] = {
        "system": {"ram_bytes": 8 * 2**30},
        "runs": [_entry(line, put_block={"limiter": LIMITER}) for line in lines[:100]],
        "pad": "",
    }
    document["pad"] = filler(1_000_000 - json_bytes(document))
    document_bytes = json_bytes(document)
    session.execute(text("SELECT 1"))  # the database exists and is open before it is measured
    before = _database_bytes(session, database_url)

    created = _post(client, lines, document)

    session.rollback()  # a new snapshot
    grown = _database_bytes(session, database_url) - before
    assert len(created) == 1000
    # One copy (SQLite counts it twice: in the WAL and, once checkpointed, in the file) and about 1 KB a line.
    assert grown < 3 * document_bytes + len(lines) * 2048, (grown, document_bytes)
    assert session.scalar(select(func.count()).select_from(document_table)) == 1
    assert session.scalar(select(func.count(run_table.c.document_id.distinct()))) == 1
    assert session.get(Run, created[0]).document == document
    assert client.get(f"/api/runs/{created[-1]}").json()["document"] == document


def test_identical_documents_are_one_row_and_go_when_their_last_run_goes(client, session):
    document = {"system": {"ram_bytes": 2**30}, "runs": [_entry(line, seeks={"limiter": LIMITER}) for line in "ab"]}
    first = _post(client, distinct_lines("share1", 3), document)
    second = _post(client, distinct_lines("share2", 2), document)
    other = _post(client, distinct_lines("share3", 1), {"system": {}})

    def documents() -> int:
        session.rollback()
        return session.scalar(select(func.count()).select_from(document_table))

    assert documents() == 2
    for run_id in first + second[:1]:
        assert client.delete(f"/api/runs/{run_id}").status_code == 204
        assert documents() == 2
    assert client.get(f"/api/runs/{second[1]}").json()["document"] == document
    assert client.delete(f"/api/runs/{second[1]}").status_code == 204
    assert documents() == 1
    assert client.delete(f"/api/runs/{other[0]}").status_code == 204
    assert documents() == 0
    assert _post(client, distinct_lines("share4", 1), document)
    assert documents() == 1


@pytest.mark.slow
def test_deleting_a_run_while_an_upload_shares_its_document_leaves_no_run_without_one(database_url):
    """A deletion that removes a document as no run's, racing an upload of the same document that names the run's
    line as a duplicate: each answers as usual (201, 204), no deadlock, and every run's document is there."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    from tests.live_server import CLIENT_SSL, live_server

    with (
        live_server(database_url, workers=2) as server,
        httpx.Client(verify=CLIENT_SSL, base_url=server.url, timeout=180) as http,
    ):
        for round_no in range(4):
            (old_line,) = distinct_lines(f"doc-race-{round_no}-old", 1)
            document = {"system": {"ram_bytes": 2**30}, "runs": [_entry(old_line, putc={"limiter": LIMITER})]}
            (old_id,) = _post(http, [old_line], document)
            lines = [old_line, *distinct_lines(f"doc-race-{round_no}-new", 2000)]

            def upload(lines: list[str] = lines, document: dict[str, Any] = document) -> httpx.Response:
                with httpx.Client(verify=CLIENT_SSL, base_url=server.url, timeout=180) as own:
                    return own.post("/api/runs", json={"csv": "\n".join(lines), "document": document})

            def remove(old_id: int = old_id, delay_s: float = 0.03 * round_no) -> int:
                with httpx.Client(verify=CLIENT_SSL, base_url=server.url, timeout=180) as own:
                    time.sleep(delay_s)
                    return own.delete(f"/api/runs/{old_id}").status_code

            with ThreadPoolExecutor(2) as pool:
                uploaded, deleted = pool.submit(upload), pool.submit(remove)
                assert uploaded.result().status_code == 201, uploaded.result().text[:300]
                assert deleted.result() == 204
            created = uploaded.result().json()["created"]
            assert http.get(f"/api/runs/{created[-1]}").json()["document"] == document
        log = server.log()
    assert "Traceback" not in log, log[-3000:]
    engine = make_engine(database_url)
    with engine.connect() as connection:
        orphans = connection.scalar(
            text(
                "SELECT count(*) FROM run WHERE document_id IS NOT NULL "
                "AND NOT EXISTS (SELECT 1 FROM document WHERE document.id = run.document_id)"
            )
        )
        unused = connection.scalar(
            text(
                "SELECT count(*) FROM document WHERE NOT EXISTS (SELECT 1 FROM run WHERE run.document_id = document.id)"
            )
        )
    engine.dispose()
    assert (orphans, unused) == (0, 0)


# ==== F3: a comparison reads no document ====


def _shapes(lines: list[str]) -> list[dict[str, Any]]:
    """Documents of many shapes, each naming (or not) the line it goes with in a different way."""
    line = lines[0]
    big_runs = [_entry(f"not{i},{line}", getc={"limiter": LIMITER}) for i in range(1500)]
    return [
        *(make() for make in HOSTILE_DOCUMENTS.values()),
        {"system": {"ram_bytes": 16 * 2**30}, "runs": [*big_runs, _entry(line, putc={"limiter": LIMITER})]},
        {"system": {"ram_bytes": "16 GiB"}, "runs": {"csv": line}},
        {"system": {"ram_bytes": 2**64}, "runs": [_entry(line, putc={"limiter": {"code": 1, "text": "x"}})]},
        {
            "system": {"ram_bytes": 4.0 * 2**30},
            "runs": [_entry(line, rewrite={"limiter": {"code": "c" * 90, "text": "t" * 900}})],
        },
        {"system": [1, 2], "runs": [_entry(line, seeks={"limiter": LIMITER}), _entry(line, seeks={})]},
        {"runs": [_entry(line + " ", putc={"limiter": LIMITER}), "text", None, 7]},
        {"system": {"ram_bytes": True}, "runs": [_entry(line, **{t: {"limiter": LIMITER} for t in ("putc", "x")})]},
    ]


@pytest.mark.slow
def test_a_comparison_reads_no_document_and_finds_what_it_said(client, session, database_url):
    """Runs with large documents of many shapes compare without any statement reading a document's body, to the
    same limiters and RAM the documents say; and within a small factor of as many runs without documents (a
    compare that parsed each document was 12.6 times slower for 100 runs with 125 KB documents)."""
    runs: list[tuple[int, dict[str, Any], str]] = []  # (run id, document, line)
    for index, _ in enumerate(_shapes(["x"])):
        line = distinct_lines(f"shape{index}", 1)[0]
        document = _shapes([line])[index]
        runs.append((_post(client, [line], document)[0], document, line))
    plain = [_post(client, distinct_lines(f"plain{index}", 1), None)[0] for index in range(len(runs))]
    with_documents = [run_id for run_id, _, _ in runs]

    statements: list[str] = []
    engine = db.get_engine()

    def record(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        response = client.get("/api/compare", params={"runs": ",".join(map(str, with_documents))})
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert response.status_code == 200, response.text[:300]
    assert statements and not [s for s in statements if "body" in s or "json_extract" in s or "->" in s]

    with db.get_sessionmaker()() as reading:
        found = {figures.id: figures for figures in find_runs(reading, with_documents).figures}
    for run_id, document, line in runs:
        facts = line_facts(document.get("runs"), line)
        assert found[run_id].limiters == (limiters_of(facts.get("tests")) if facts else {}), run_id
        system = document.get("system")
        ram_bytes = system.get("ram_bytes") if isinstance(system, dict) else None
        assert found[run_id].setup.ram_mib == ram_mib_of(ram_bytes, {}), run_id
    assert any(figures.limiters for figures in found.values())
    assert any(figures.setup.ram_mib for figures in found.values())

    def fastest(run_ids: list[int]) -> float:
        best = float("inf")
        for _ in range(5):
            with db.get_sessionmaker()() as reading:
                started = time.perf_counter()
                find_runs(reading, run_ids)
                best = min(best, time.perf_counter() - started)
        return best

    assert fastest(with_documents) < 3 * fastest(plain) + 0.02


# ==== Migration 0009 ====


def _run_rows(lines_and_documents: list[tuple[int, str, Any]]) -> list[dict[str, Any]]:
    from app.bonnie import TESTS

    return [
        {
            "id": run_id,
            "upload_id": upload_id,
            "created_at": "2026-01-01 00:00:00",
            "line_hash": run_id.to_bytes(16, "big"),
            "raw_line": line,
            "machine": "m",
            "format_version": "1.98",
            "document": document,
        }
        | {f"{test}_status": "ok" for test in TESTS}
        for run_id, (upload_id, line, document) in enumerate(lines_and_documents, start=1)
    ]


def test_0009_folds_each_upload_s_copies_into_one_document_and_back(empty_database):
    """Runs stored by 0008, each with its copy of its upload's document: after 0009 identical copies are one
    document, every run reads its own as before, and the limiters and RAM a comparison reads are those the
    documents say. Down again, every run holds its copy; up again, the same. Tags and the highest id given stay."""
    url = empty_database
    config = alembic_config(url)
    command.upgrade(config, "0008")
    lines = distinct_lines("folded", 6)
    shared = {
        "system": {"ram_bytes": 3 * 2**30},
        "runs": [_entry(lines[0], putc={"limiter": LIMITER}), _entry(lines[1])],
    }
    other = {"system": {"ram_bytes": 2**64}, "runs": [_entry(lines[3], ran_del={"limiter": LIMITER})], "tab": "a\tb\\"}
    stored = [(1, lines[0], shared), (1, lines[1], shared), (1, lines[2], shared), (2, lines[3], other)]
    stored += [(3, lines[4], None), (4, lines[5], shared)]
    old_run = table(
        "run", *(column(name) for name in _run_rows(stored)[0] if name != "document"), column("document", JSON)
    )
    engine = make_engine(url)
    with engine.begin() as connection:
        for upload_id in (1, 2, 3, 4):
            connection.execute(
                text("INSERT INTO upload (id, created_at, source) VALUES (:id, '2026-01-01 00:00:00', 'api')"),
                {"id": upload_id},
            )
        connection.execute(old_run.insert(), _run_rows(stored))
        connection.execute(text("INSERT INTO tag (run_id, key, value) VALUES (1, 'fs', 'xfs'), (4, 'fs', 'ext4')"))
        if connection.dialect.name == "sqlite":
            connection.execute(text("UPDATE sqlite_sequence SET seq = 40 WHERE name = 'run'"))
    engine.dispose()

    def at_head() -> None:
        engine = make_engine(url)
        with Session(engine) as session:
            for run_id, (_, _, document) in enumerate(stored, start=1):
                assert session.get_one(Run, run_id).document == document, run_id
            assert session.scalar(select(func.count()).select_from(document_table)) == 2
            assert session.scalar(select(func.count(run_table.c.document_id.distinct()))) == 2
            found = {figures.id: figures for figures in find_runs(session, list(range(1, 7))).figures}
            assert found[1].limiters == {"putc": LIMITER} and found[6].limiters == {}
            assert found[4].limiters == {"ran_del": LIMITER} and found[5].limiters == {} == found[2].limiters
            assert [found[n].setup.ram_mib for n in range(1, 7)] == [3072, 3072, 3072, None, None, 3072]
            assert session.execute(text("SELECT run_id, key FROM tag ORDER BY run_id")).all() == [(1, "fs"), (4, "fs")]
            if session.get_bind().dialect.name == "sqlite":
                assert session.scalar(text("SELECT seq FROM sqlite_sequence WHERE name = 'run'")) == 40
                assert session.scalar(text("PRAGMA foreign_key_check")) is None
                assert session.scalar(text("PRAGMA integrity_check")) == "ok"
        engine.dispose()

    upgrade(url)
    at_head()
    command.downgrade(config, "0008")
    engine = make_engine(url)
    with engine.connect() as connection:
        copies = connection.execute(select(old_run.c.id, old_run.c.document).order_by(old_run.c.id)).all()
        assert [document for _, document in copies] == [document for _, _, document in stored]
        assert connection.execute(text("SELECT count(*) FROM tag")).scalar_one() == 2
    engine.dispose()
    upgrade(url)
    at_head()


def test_0009_reads_each_distinct_document_once_however_many_copies(empty_database, monkeypatch):
    """An upload of many lines left as many copies: the migration parses a document once per run of copies in a
    row, not once per copy."""
    url = empty_database
    command.upgrade(alembic_config(url), "0008")
    lines = distinct_lines("copies", 60)
    document = {"system": {"ram_bytes": 2**33}, "runs": [_entry(line, getc={"limiter": LIMITER}) for line in lines]}
    names = [name for name in _run_rows([(1, "", None)])[0] if name != "document"]
    old_run = table("run", *(column(name) for name in names), column("document", JSON(none_as_null=True)))
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(text("INSERT INTO upload (id, created_at, source) VALUES (1, '2026-01-01 00:00:00', 'api')"))
        rows = _run_rows([(1, line, None) for line in lines])
        connection.execute(old_run.insert(), [row | {"document": document} for row in rows])
    engine.dispose()
    parses = []
    loads = json.loads
    monkeypatch.setattr(json, "loads", lambda text, *a, **k: parses.append(1) or loads(text, *a, **k))
    command.upgrade(alembic_config(url), "0009")  # 0011 reads each document once more, for history's facts
    monkeypatch.undo()
    assert len(parses) == 1
    engine = make_engine(url)
    with Session(engine) as session:
        limiters = session.scalars(select(run_table.c.limiters).order_by(run_table.c.id)).all()
        assert limiters == [{"getc": LIMITER}] * 60
    engine.dispose()


def test_a_limiter_keeps_the_evidence_history_explains_changes_by_and_nothing_out_of_range():
    def test_facts(evidence: object) -> dict:
        return {"limiter": {"code": "device_bound", "text": "throttled", "evidence": evidence}}

    kept = limiters_of(
        {
            "get_block": test_facts({"run_delay_pct": 2.0068, "device_share_pct": 84.375, "blocked_pct": 98.0}),
            "put_block": test_facts({"run_delay_pct": 140.0, "device_share_pct": 100.06}),
            "rewrite": test_facts({"run_delay_pct": True, "device_share_pct": -1}),
            "getc": test_facts("not a mapping"),
        }
    )
    assert kept["get_block"] == {
        "code": "device_bound",
        "text": "throttled",
        "cpu_wait_pct": 2.0,
        "device_share_pct": 84.4,
    }
    assert kept["put_block"] == {"code": "device_bound", "text": "throttled", "device_share_pct": 100.1}
    assert kept["rewrite"] == kept["getc"] == {"code": "device_bound", "text": "throttled"}
