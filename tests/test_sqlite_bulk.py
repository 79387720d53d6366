"""SQLite's conversion of plain 1.98 lines (app/sqlite_bulk.py) stores exactly what the Python parser would."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db import make_engine
from app.errors import InvalidUpload
from app.ingest import ingest
from app.migrate import upgrade
from app.models import run_table
from app.parsing import PLAIN_198, iter_parse
from tests.helpers import CORPUS_DIR

COMPARED = [c for c in run_table.c if c.name not in ("id", "upload_id", "created_at")]


@pytest.fixture(scope="module")
def two_databases(tmp_path_factory):
    """One database filled through SQLite's conversion, one through Python's."""
    engines = []
    for name in ("converted_by_sqlite", "converted_by_python"):
        url = f"sqlite:///{tmp_path_factory.mktemp(name) / 'db.sqlite'}"
        upgrade(url)
        engines.append(make_engine(url))
    yield engines
    for engine in engines:
        engine.dispose()


def stored_both_ways(engines, text):
    """Each path's stored rows, or its errors as (line, field) when it refuses the upload."""
    rows = []
    for engine, defer_plain in zip(engines, (True, False), strict=True):
        with Session(engine) as session:
            try:
                outcome = ingest(session=session, items=iter_parse(text, defer_plain=defer_plain), source="test")
            except InvalidUpload as exc:
                session.rollback()
                rows.append([(e.line, e.field) for e in exc.errors])
                continue
            session.commit()
            ids = outcome.created + outcome.duplicates
            found = session.execute(select(*COMPARED).where(run_table.c.id.in_(ids)).order_by(run_table.c.id))
            rows.append([tuple(row) for row in found])
    return rows


def test_corpus_lines_store_the_same_either_way(two_databases):
    lines = [line for path in sorted(CORPUS_DIR.glob("*.csv")) for line in path.read_text().splitlines()]
    plain = [line for line in lines if PLAIN_198.fullmatch(line)]
    assert len(plain) >= 6  # the test means something only if real lines take the SQLite path
    by_sqlite, by_python = stored_both_ways(two_databases, "\n".join(lines))
    assert by_sqlite == by_python and len(by_sqlite) == len(lines)


TEXT = st.text(st.characters(blacklist_characters=',"\\', blacklist_categories=("Cc", "Cs")), max_size=12)
DIGITS = st.integers(0, 10**15 - 1).map(str)
COUNT = st.integers(0, 10**9 - 1).map(str)
PAIR = st.one_of(st.tuples(DIGITS, COUNT).map(",".join), st.just("+++++,+++"), st.just(","))
SEEKS = st.one_of(
    st.tuples(st.integers(0, 10**15 - 1), st.integers(0, 999999), st.integers(1, 6)).map(
        lambda t: f"{t[0]}.{str(t[1]).zfill(6)[: t[2]]}"
    ),
    DIGITS,
)
SEEKS_PAIR = st.one_of(st.tuples(SEEKS, COUNT).map(",".join), st.just("+++++,+++"), st.just(","))
LATENCY = st.one_of(
    st.just(""),
    st.tuples(st.integers(0, 10**12 - 1), st.sampled_from(["us", "ms", "s"])).map(lambda t: f"{t[0]}{t[1]}"),
)
OPTIONAL = st.one_of(st.just(""), DIGITS)


@st.composite
def plain_198_lines(draw):
    io = [
        draw(st.integers(0, 10**12 - 1).map(str)) + draw(st.sampled_from("MG")),
        "",
        draw(OPTIONAL),
        draw(st.one_of(st.just(""), COUNT)),
        *(draw(PAIR) for _ in range(5)),
        draw(SEEKS_PAIR),
    ]
    files = [
        draw(DIGITS),
        draw(st.one_of(st.just(""), DIGITS, st.sampled_from(["link", "symlink"]))),
        draw(OPTIONAL),
        "",
        draw(OPTIONAL),
        *(draw(PAIR) for _ in range(6)),
    ]
    io_latencies = [draw(LATENCY) for _ in range(6)]
    file_latencies = [draw(LATENCY) for _ in range(6)]
    not_run = draw(st.sampled_from(["none", "io", "files"]))  # -s 0 or -n 0
    if not_run == "io":
        io, io_latencies = [""] * 16, [""] * 6
    elif not_run == "files":
        files, file_latencies = [""] * 17, [""] * 6
    head = ["1.98", draw(TEXT), draw(TEXT), draw(COUNT), draw(TEXT)]
    return ",".join(head + io + files + io_latencies + file_latencies)


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plain_198_lines())
def test_any_plain_line_stores_the_same_either_way(two_databases, line):
    assert PLAIN_198.fullmatch(line), line
    by_sqlite, by_python = stored_both_ways(two_databases, line)
    assert by_sqlite == by_python


# Characters str.isdigit() or a regex's \\d takes for digits, and other Unicode: only ASCII digits are numbers.
NOT_ASCII_DIGITS = st.one_of(
    st.characters(whitelist_categories=("Nd", "No", "Nl"), blacklist_characters="0123456789"),
    st.sampled_from("\u0663\u06f5\u0968\uff13\u00b2\u2155\u2167\U0001d7d8\ufeff\u00a0\u200b"),
    st.characters(blacklist_characters=',\n\r"\\', blacklist_categories=("Cs",)),
)


@st.composite
def plain_lines_with_unicode(draw):
    """A plain 1.98 line, some of whose ASCII digits (and places next to them) hold other characters."""
    line = draw(plain_198_lines())
    places = [i for i, char in enumerate(line) if char.isdigit()]
    if not places:
        return line
    chars = list(line)
    for at in draw(st.lists(st.sampled_from(places), min_size=1, max_size=3, unique=True)):
        new = draw(NOT_ASCII_DIGITS)
        chars[at] = draw(st.sampled_from([new, chars[at] + new, new + chars[at]]))
    return "".join(chars)


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plain_lines_with_unicode())
def test_unicode_in_place_of_digits_has_the_same_outcome_either_way(two_databases, line):
    """Issue #8: the plain-line check once took "٣" for a digit, and SQLite stored it as 0."""
    by_sqlite, by_python = stored_both_ways(two_databases, line)
    assert by_sqlite == by_python, line
