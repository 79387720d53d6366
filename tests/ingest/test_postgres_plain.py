"""On PostgreSQL the plain lines go straight into `run` as COPY text the extension writes (app/ingest/_plain_lines.c,
PlainLines.copy_chunks), never parsed in Python: each upload goes into two PostgreSQL databases, once so and once
through the parser alone (BONNIEBOARD_INGEST_PATH=python), and the stored rows, tags, outcome and errors must be
the same."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given

from app.config import get_settings
from app.errors import InvalidUpload
from app.ingest import sqlite_bulk
from app.ingest.parsing import DEFAULT_MAX_LINE_BYTES
from app.ingest.service import ingest_bytes
from app.store.db import make_engine
from app.store.migrate import upgrade
from tests.helpers import CORPUS_DIR, LINE_198, distinct_lines, set_setting
from tests.ingest.test_sqlite_bulk import HYPOTHESIS, PLAIN_LINES, describe, plain_lines_with_changes

_plain_lines = pytest.importorskip("app.ingest._plain_lines", reason="the compiled ingest path is not built")


@pytest.fixture(scope="module")
def two_postgres(request) -> Iterator[list]:
    if "postgresql" not in request.config.getoption("--db"):
        pytest.skip("database not selected by --db")
    postgres = request.getfixturevalue("postgres")
    engines, names = [], []
    for path in ("compiled", "python"):
        name = f"bb_plain_{path}_{os.getpid()}"
        url = postgres.create_database(name)
        upgrade(url)
        engines.append(make_engine(url))
        names.append(name)
    yield engines
    for engine in engines:
        engine.dispose()
    for name in names:
        postgres.drop_database(name)


@contextmanager
def ingest_path(path: str) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        set_setting(patch, "INGEST_PATH", path)
        yield
    get_settings.cache_clear()


def store(engine, data: bytes, path: str, **options):
    from sqlalchemy.orm import Session

    with ingest_path(path), Session(engine) as session:
        plain = sqlite_bulk.scan(session, data, DEFAULT_MAX_LINE_BYTES)
        assert (plain is not None) == (path == sqlite_bulk.COMPILED)  # the path asked for is the path taken
        try:
            outcome = ingest_bytes(
                session=session, data=data, max_line_bytes=DEFAULT_MAX_LINE_BYTES, source="test", **options
            )
        except InvalidUpload as exc:
            session.rollback()
            return [(e.line, e.field, e.error) for e in exc.errors], exc.error_count
        session.commit()
        return describe(session, outcome)


def stored_both_ways(engines, text: str | bytes, **options):
    data = text.encode() if isinstance(text, str) else text
    paths = (sqlite_bulk.COMPILED, sqlite_bulk.PYTHON)
    return [store(engine, data, path, **options) for engine, path in zip(engines, paths, strict=True)]


def test_corpus_lines_store_the_same_either_way(two_postgres):
    lines = [line for path in sorted(CORPUS_DIR.glob("*.csv")) for line in path.read_text().splitlines()]
    assert sum(_plain_lines.line_is_plain(line.encode()) for line in lines) >= 30
    compiled, parsed = stored_both_ways(two_postgres, "\n".join(lines), tags={"fs": "xfs", "disk": "nvme0"})
    assert compiled == parsed and len(compiled[0]) == len(lines)


def test_a_mixed_upload_stores_the_same_and_numbers_runs_in_line_order(two_postgres):
    """Plain lines around parsed ones (a comma in the name), repeats of both, lines stored before, skipped lines,
    CRLF and a BOM, with tags."""
    plain = distinct_lines("pgplain", 5)
    other = [line.replace(",pgother,", ",pgother,x,", 1) for line in distinct_lines("pgother", 3)]
    stored_both_ways(two_postgres, "\n".join([plain[0], other[0]]), tags={"fs": "xfs"})  # stored before
    upload = [
        "# a comment",
        plain[1],
        other[1],
        plain[0],  # stored before: a duplicate that gains the new tag
        "",
        plain[2] + "\r",
        other[0],
        plain[1],  # repeated in this upload
        other[2],
        plain[3],
        plain[4],
    ]
    data = b"\xef\xbb\xbf" + "\n".join(upload).encode() + b"\n"
    compiled, parsed = stored_both_ways(two_postgres, data, tags={"fs": "ext4", "disk": "nvme0"})
    assert compiled == parsed
    assert compiled[2] == [plain[1], other[1], plain[2], other[2], plain[3], plain[4]]
    assert compiled[3] == [plain[0], other[0], plain[1]]
    assert compiled[6] == sorted([plain[0], other[0]])


def test_an_invalid_line_among_plain_ones_stores_nothing_either_way(two_postgres):
    data = "\n".join([LINE_198.replace("vm", "pgbad1", 1), LINE_198.replace(",512M,", ",512X,", 1)])
    compiled, parsed = stored_both_ways(two_postgres, data)
    assert compiled == parsed and compiled[1] == 1


@HYPOTHESIS
@given(PLAIN_LINES)
def test_any_plain_line_stores_the_same_either_way(two_postgres, line):
    assert _plain_lines.line_is_plain(line.encode()), line
    compiled, parsed = stored_both_ways(two_postgres, line, tags={"k": "v"})
    assert compiled == parsed


@HYPOTHESIS
@given(plain_lines_with_changes())
def test_a_changed_plain_line_has_the_same_outcome_either_way(two_postgres, line):
    compiled, parsed = stored_both_ways(two_postgres, line.encode("utf-8", "surrogatepass"))
    assert compiled == parsed, line


def test_the_upload_s_own_cells_go_into_copy_text_intact(two_postgres):
    """The plain lines' rows carry the upload's label, document and time as COPY text written in Python: a tab,
    newline, carriage return or backslash in them must arrive as sent, a missing document as SQL NULL, as the
    parser's path stores them."""
    from sqlalchemy import text
    from sqlalchemy.orm import Session

    label = "tab\there\nnew line\r\\N back\\slash \u00e9"
    document = {"system": {"mount": "rw,noatime\t\\x", "note": "line\nbreak", "ram_mib": 2048}, "empty": None}
    for index, (options, line) in enumerate(
        [({"label": label, "document": document}, "pgcells1"), ({"label": None, "document": None}, "pgcells2")]
    ):
        data = distinct_lines(line, 3)
        assert all(_plain_lines.line_is_plain(row.encode()) for row in data)
        compiled, parsed = stored_both_ways(two_postgres, "\n".join(data), **options)
        assert compiled == parsed and len(compiled[2]) == 3
        for engine in two_postgres:
            with Session(engine) as session:
                rows = session.execute(
                    text(
                        "SELECT run.label, document.body::text, run.document_id IS NULL, "
                        "run.created_at = upload.created_at FROM run JOIN upload ON upload.id = run.upload_id "
                        "LEFT JOIN document ON document.id = run.document_id "
                        "WHERE run.raw_line = ANY(:lines)"
                    ),
                    {"lines": data},
                ).all()
            expected_document = None if options["document"] is None else json.dumps(document)
            assert rows == [(options["label"], expected_document, index == 1, True)] * 3, engine.url
