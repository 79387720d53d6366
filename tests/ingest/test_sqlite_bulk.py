"""The compiled ingest path (app/ingest/_plain_lines.c via app/ingest/sqlite_bulk.py) stores exactly what the Python parser would.

Each upload goes into two SQLite databases: through ingest_bytes(), where the extension takes the plain
format-1.98 lines, and through the parser alone (iter_parse_bytes, the path PostgreSQL and the fallback
take). The stored rows, the tags, the outcome (which lines made runs, which were duplicates, in order)
and the errors must be the same.
"""

import sqlite3
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from app.config import Settings
from app.errors import InvalidUpload
from app.ingest import _plain_lines, sqlite_bulk
from app.ingest.parsing import DEFAULT_MAX_LINE_BYTES, MAX_MACHINE_CHARS, iter_parse_bytes
from app.ingest.service import ingest, ingest_bytes
from app.store.db import make_engine
from app.store.migrate import upgrade
from app.store.models import Base, run_table, tag_table
from tests.helpers import CORPUS_DIR, LINE_198, distinct_lines, post_csv
from tests.plain_198 import PLAIN, PLAIN_19X, PLAIN_103, PLAIN_198

COMPARED = [c for c in run_table.c if c.name not in ("id", "upload_id", "created_at")]
HYPOTHESIS = settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def make_two_databases(tmp_path_factory):
    """One database filled through the extension, one through the parser alone."""
    engines = []
    for name in ("compiled", "parser"):
        url = f"sqlite:///{tmp_path_factory.mktemp(name) / 'db.sqlite'}"
        upgrade(url)
        engines.append(make_engine(url))
    yield engines
    for engine in engines:
        engine.dispose()


two_databases = pytest.fixture(scope="module")(make_two_databases)
fresh_databases = pytest.fixture(make_two_databases)


def store(engine, data: bytes, compiled: bool, **options):
    """(stored rows of the upload's lines, their tags, created lines, duplicate lines), or the errors
    as (line, field, message) when the upload is refused. Runs are named by their lines: ids differ."""
    with Session(engine) as session:
        try:
            if compiled:
                assert sqlite_bulk.connection_problem(session) is None
                outcome = ingest_bytes(
                    session=session, data=data, max_line_bytes=DEFAULT_MAX_LINE_BYTES, source="test", **options
                )
            else:
                items = iter_parse_bytes(data, max_line_bytes=DEFAULT_MAX_LINE_BYTES)
                outcome = ingest(session=session, items=items, source="test", **options)
        except InvalidUpload as exc:
            session.rollback()
            return [(e.line, e.field, e.error) for e in exc.errors], exc.error_count
        session.commit()
        return describe(session, outcome)


def describe(session: Session, outcome) -> tuple:
    """What an upload stored and answered, its runs named by their lines (ids differ between databases)."""
    ids = outcome.created + outcome.duplicates
    line_of = dict(session.execute(select(run_table.c.id, run_table.c.raw_line).where(run_table.c.id.in_(ids))).all())
    rows = session.execute(select(*COMPARED).where(run_table.c.id.in_(ids)).order_by(run_table.c.id)).all()
    tags = session.execute(
        select(run_table.c.raw_line, tag_table.c.key, tag_table.c.value)
        .join(tag_table, tag_table.c.run_id == run_table.c.id)
        .where(run_table.c.id.in_(ids))
        .order_by(run_table.c.raw_line, tag_table.c.key)
    ).all()
    # Runs are numbered in line order, whichever path read their lines.
    assert outcome.created == sorted(outcome.created)
    return (
        [tuple(row) for row in rows],
        [tuple(tag) for tag in tags],
        [line_of[i] for i in outcome.created],
        [line_of[i] for i in outcome.duplicates],
        [(e.line, e.field, e.error) for e in outcome.errors],
        outcome.error_count,
        sorted(line_of[i] for i in outcome.tagged),
    )


def stored_both_ways(engines, text: str | bytes, **options):
    data = text.encode() if isinstance(text, str) else text
    return [store(engine, data, compiled, **options) for engine, compiled in zip(engines, (True, False), strict=True)]


def test_corpus_lines_store_the_same_either_way(two_databases):
    lines = [line for path in sorted(CORPUS_DIR.glob("*.csv")) for line in path.read_text().splitlines()]
    plain = [line for line in lines if _plain_lines.line_is_plain(line.encode())]
    assert len(plain) >= 6  # the test means something only if real lines take the compiled path
    compiled, parsed = stored_both_ways(two_databases, "\n".join(lines))
    assert compiled == parsed and len(compiled[0]) == len(lines)


def test_a_mixed_upload_stores_the_same_and_numbers_runs_in_line_order(fresh_databases):
    """Plain lines around parsed ones, repeats of both, lines stored before, skipped lines, CRLF and a BOM,
    with tags: the same rows, tags and outcome, and the created ids in line order."""
    lines = [line for path in sorted(CORPUS_DIR.glob("*.csv")) for line in path.read_text().splitlines()]
    plain = [line for line in lines if _plain_lines.line_is_plain(line.encode())]
    # and lines only the parser reads: a comma in the machine name
    other = [line for line in lines if line.count(",") > 20 and not _plain_lines.line_is_plain(line.encode())]
    other += [line.replace(",other,", ",other,x,", 1) for line in distinct_lines("other", 6)]
    assert len(plain) >= 6 and len(other) >= 6 and not any(_plain_lines.line_is_plain(line.encode()) for line in other)
    stored_both_ways(fresh_databases, "\n".join([plain[0], other[0]]), tags={"fs": "xfs"})  # stored before
    upload = [
        "# a comment",
        plain[1],
        other[1],
        plain[0],  # stored before: a duplicate that gains the new tag
        "",
        plain[2] + "\r",
        other[0],  # a parsed line stored before
        plain[1],  # repeated in this upload
        other[2],
        "   ",
        plain[3],
        other[1],  # a parsed line repeated
        plain[4],
    ]
    data = b"\xef\xbb\xbf" + "\n".join(upload).encode() + b"\n"
    compiled, parsed = stored_both_ways(fresh_databases, data, tags={"fs": "ext4", "disk": "nvme0"})
    assert compiled == parsed
    created, duplicates = compiled[2], compiled[3]
    assert created == [plain[1], other[1], plain[2], other[2], plain[3], plain[4]]
    assert duplicates == [plain[0], other[0], plain[1], other[1]]
    assert compiled[6] == sorted([plain[0], other[0]])  # the runs stored before that got the new key


def test_an_invalid_line_among_plain_ones_stores_nothing_and_names_line_and_field(two_databases):
    bad = LINE_198.replace(",512M,", ",512X,", 1)
    data = "\n".join([LINE_198, bad, LINE_198.replace("vm", "vm2", 1), "1.98,x"])
    compiled, parsed = stored_both_ways(two_databases, data)
    assert compiled == parsed
    errors, count = compiled
    assert count == 2 and errors[0][:2] == (2, "file_size") and errors[1][0] == 4


def test_partial_upload_stores_the_plain_lines_and_reports_the_others(two_databases):
    data = "\n".join([LINE_198.replace("vm", "partial1", 1), "junk", LINE_198.replace("vm", "partial2", 1)])
    compiled, parsed = stored_both_ways(two_databases, data, partial=True)
    assert compiled == parsed and len(compiled[2]) == 2 and compiled[5] == 1


def test_a_line_longer_than_a_quarter_of_the_limit_goes_to_the_parser(two_databases):
    """The parser counts the limit in bytes; the extension keeps only lines it cannot be near."""
    line = LINE_198.replace(",1795352513,", f",{'7' * 2000},", 1)  # a seed is free text
    assert _plain_lines.line_is_plain(line.encode())
    scan = _plain_lines.scan(line.encode(), DEFAULT_MAX_LINE_BYTES)
    assert scan.plain_count == 0 and scan.others == [(1, 0, len(line))]
    compiled, parsed = stored_both_ways(two_databases, line)
    assert compiled == parsed and len(compiled[2]) == 1


def test_the_extensions_columns_are_the_run_tables():
    from app.ingest.writers import ROW_COLUMNS

    assert ("id", *ROW_COLUMNS) == sqlite_bulk.COLUMNS


def test_without_a_trusted_connection_the_parser_stores_the_same_rows(tmp_path):
    """An in-memory database: the extension cannot check the handle's file, so it does not write."""
    engine = make_engine("sqlite://")
    Base.metadata.create_all(engine)
    file_url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    upgrade(file_url)
    file_engine = make_engine(file_url)
    data = "\n".join([LINE_198, LINE_198.replace("vm", "vm2", 1), "1.03,junk"]).encode()
    try:
        with Session(engine) as session:
            assert sqlite_bulk.connection_problem(session) == "the database is in memory"
            assert sqlite_bulk.scan(session, data, DEFAULT_MAX_LINE_BYTES) is None
        fallback = store(engine, data, compiled=False, partial=True)
        with Session(engine) as session:
            outcome = ingest_bytes(
                session=session, data=data, max_line_bytes=DEFAULT_MAX_LINE_BYTES, source="test", partial=True
            )
            assert len(outcome.duplicates) == 2  # the same lines again, through ingest_bytes' fallback
            session.rollback()
        assert fallback == store(file_engine, data, compiled=True, partial=True)
    finally:
        engine.dispose()
        file_engine.dispose()


def test_a_failing_insert_raises_a_database_error_and_stores_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    upgrade(url)
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            connection.exec_driver_sql(
                "CREATE TRIGGER refuse BEFORE INSERT ON run WHEN NEW.machine = 'refused' BEGIN SELECT RAISE(ABORT, 'no'); END"
            )
            connection.commit()
        data = "\n".join([LINE_198, LINE_198.replace("vm", "refused", 1)]).encode()
        with Session(engine) as session, pytest.raises(DBAPIError) as raised:
            ingest_bytes(session=session, data=data, max_line_bytes=DEFAULT_MAX_LINE_BYTES, source="test")
        # As SQLAlchemy raises a driver error (so the app answers it as any other), from the extension's insert.
        assert isinstance(raised.value.orig, sqlite3.IntegrityError) and str(raised.value.orig) == "no"
        assert "app.ingest._plain_lines" in str(raised.value.statement)
        with Session(engine) as session:
            assert session.execute(select(run_table.c.id)).all() == []
    finally:
        engine.dispose()


TEXT = st.text(st.characters(blacklist_characters=',"\\', blacklist_categories=("Cc", "Cs")), max_size=12)
DIGITS = st.integers(0, 10**15 - 1).map(str)
COUNT = st.integers(0, 10**9 - 1).map(str)
PAIR = st.one_of(st.tuples(DIGITS, COUNT).map(",".join), st.just("+++++,+++"), st.just(","))
SEEKS = st.one_of(
    # at most 14 digits before a fraction: 15 and a fraction can round up to the limit (PLAIN_198)
    st.tuples(st.integers(0, 10**14 - 1), st.integers(0, 999999), st.integers(1, 6)).map(
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


def _files_9x(draw):
    return [
        draw(DIGITS),
        draw(st.one_of(st.just(""), DIGITS, st.sampled_from(["link", "symlink"]))),
        draw(OPTIONAL),
        "",
        draw(OPTIONAL),
        *(draw(PAIR) for _ in range(6)),
    ]


@st.composite
def plain_19x_lines(draw):
    """1.97, 1.96 and 1.93c: 48 fields (no seek counts; io_chunk_size 8192 or empty), or 47 for a -s 0 line
    of 1.96 and 1.93c."""
    fmt = draw(st.sampled_from(["1.97", "1.96", "1.93c"]))
    size = draw(st.integers(0, 10**12 - 1).map(str)) + draw(st.sampled_from("MG"))
    chunk = draw(st.one_of(st.just(""), st.integers(0, 10**12 - 1).map(str)))
    pairs = [draw(PAIR) for _ in range(5)] + [draw(SEEKS_PAIR)]
    if fmt != "1.97" and not chunk and all(pair == "," for pair in pairs):
        pairs[0] = "+++++,+++"  # else the parser reads the short -s 0 layout and a comma in the name
    io = [size, chunk, *pairs]
    files = _files_9x(draw)
    io_latencies = [draw(LATENCY) for _ in range(6)]
    file_latencies = [draw(LATENCY) for _ in range(6)]
    not_run = draw(st.sampled_from(["none", "io", "files"]))
    if not_run == "io":
        io, io_latencies = [""] * 14, [""] * 6
        if fmt != "1.97" and draw(st.booleans()):
            io = [""] * 13  # §3.3-3: one empty field fewer
    elif not_run == "files":
        files, file_latencies = [""] * 17, [""] * 6
    head = [fmt, draw(TEXT), draw(TEXT), draw(COUNT), draw(TEXT)]
    return ",".join(head + io + files + io_latencies + file_latencies)


@st.composite
def plain_103_lines(draw):
    """1.03 (§2): 27 fields, no latencies; file_size with an optional chunk, num_files with its own grammar."""
    number = st.integers(0, 10**12 - 1).map(str)
    size = draw(number) + draw(st.sampled_from("MG"))
    if draw(st.booleans()):
        size += ":" + draw(number) + draw(st.sampled_from(["", "k"]))
    files = draw(number)
    files += draw(
        st.one_of(
            st.just(""),
            st.sampled_from([":link", ":symlink"]),
            st.tuples(number, number).map(lambda t: f":{t[0]}:{t[1]}"),
        )
    )
    files += draw(st.one_of(st.just(""), number.map(lambda n: f"/{n}")))
    io = [size, *(draw(PAIR) for _ in range(5)), draw(SEEKS_PAIR)]
    file_cells = [files, *(draw(PAIR) for _ in range(6))]
    not_run = draw(st.sampled_from(["none", "io", "files"]))
    if not_run == "io":
        io = [""] * 13
    elif not_run == "files":
        file_cells = [""] * 13
    name = draw(TEXT.filter(lambda text: not text.startswith("#")))
    return ",".join([name, *io, *file_cells])


PLAIN_LINES = st.one_of(plain_198_lines(), plain_19x_lines(), plain_103_lines())


@pytest.mark.slow
@HYPOTHESIS
@given(PLAIN_LINES)
def test_any_plain_line_stores_the_same_either_way(two_databases, line):
    assert PLAIN.fullmatch(line) and _plain_lines.line_is_plain(line.encode()), line
    compiled, parsed = stored_both_ways(two_databases, line, tags={"k": "v"})
    assert compiled == parsed


@pytest.mark.parametrize("fmt", ["1.96", "1.93c"])
def test_a_line_the_parser_reads_as_the_short_layout_is_not_plain(two_databases, fmt):
    """48 fields of 1.96 or 1.93c with a size but no other I/O cell: the parser reads a comma in the name and the
    47-field -s 0 layout (parsing._is_short_no_io_line), so the extension must leave it alone."""
    line = f"{fmt},{fmt},lab,1,12345,2G," + "," * 13 + "16,,,,," + ",".join(["1,2"] * 6) + "," * 12
    assert line.count(",") == 47 and not PLAIN.fullmatch(line) and not _plain_lines.line_is_plain(line.encode())
    compiled, parsed = stored_both_ways(two_databases, line)
    assert compiled == parsed


@pytest.mark.parametrize(
    ("strategy", "pattern"),
    [(plain_198_lines(), PLAIN_198), (plain_19x_lines(), PLAIN_19X), (plain_103_lines(), PLAIN_103)],
    ids=["1.98", "1.9x", "1.03"],
)
def test_each_layouts_lines_are_its_own(strategy, pattern):
    """Each strategy makes lines of its layout (so the tests above cover all three), which the extension keeps."""

    @settings(max_examples=50, deadline=None, derandomize=True)
    @given(strategy)
    def check(line):
        assert pattern.fullmatch(line) and _plain_lines.line_is_plain(line.encode()), line

    check()


# Characters str.isdigit() or a regex's \\d takes for digits, and other Unicode: only ASCII digits are numbers.
NOT_ASCII_DIGITS = st.one_of(
    st.characters(whitelist_categories=("Nd", "No", "Nl"), blacklist_characters="0123456789"),
    st.sampled_from("\u0663\u06f5\u0968\uff13\u00b2\u2155\u2167\U0001d7d8\ufeff\u00a0\u200b"),
    st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)),
)


@st.composite
def plain_lines_with_changes(draw):
    """A plain line of any layout, some of whose characters are replaced or joined by others (digits of other
    scripts, punctuation, the cell-shape characters +, ., :, /, M, G, s, k, and anything else)."""
    line = draw(PLAIN_LINES)
    if not line:
        return line
    chars = list(line)
    for at in draw(st.lists(st.integers(0, len(line) - 1), min_size=1, max_size=3, unique=True)):
        new = draw(st.one_of(NOT_ASCII_DIGITS, st.sampled_from(list('0123456789+.,:/#MGmsuk-\r"\\'))))
        chars[at] = draw(st.sampled_from([new, chars[at] + new, new + chars[at], ""]))
    return "".join(chars)


@pytest.mark.slow
@HYPOTHESIS
@given(plain_lines_with_changes())
def test_a_changed_plain_line_has_the_same_outcome_either_way(two_databases, line):
    """The extension keeps exactly the lines PLAIN matches, and a changed line either stays plain and
    stores what the parser stores, or goes to the parser ("٣" is a digit to a Unicode \\d, not to SQLite)."""
    data = line.encode("utf-8", "surrogatepass")
    assert _plain_lines.line_is_plain(data) == bool(PLAIN.fullmatch(line)), line
    compiled, parsed = stored_both_ways(two_databases, data)
    assert compiled == parsed, line


@pytest.mark.slow
@HYPOTHESIS
@given(st.binary(max_size=40), st.sampled_from([b"", b"1.98,", LINE_198.encode()]))
def test_bytes_that_are_not_utf8_have_the_same_outcome_either_way(two_databases, junk, prefix):
    data = prefix + junk
    compiled, parsed = stored_both_ways(two_databases, data)
    assert compiled == parsed, data


@pytest.mark.databases("sqlite")
def test_an_upload_leaves_its_checkpoint_to_after_the_answer_and_restores_the_connection(client, database_url):
    """The upload's commit skips SQLite's automatic checkpoint (the client does not wait for the copy
    into the database file); the upload turn's own checkpoint then copies it, and the pooled connection
    gets its page cache and autocheckpoint back."""
    import os
    import threading

    from app.ingest import upload as storing
    from app.store import db

    path = database_url.removeprefix("sqlite:///")
    size_before = os.path.getsize(path)
    release = threading.Event()
    storing._checkpoints.submit(release.wait, 60)  # holds the checkpoint thread until the answer is in
    try:
        # about 10 MB of WAL: more than the 1,000 pages at which SQLite's own checkpoint would run
        response = post_csv(client, "\n".join(distinct_lines(LINE_198, 10_000)) + "\n")
        assert response.status_code == 201, response.text
        # answered, and the database file has not been written: the run rows are only in the WAL
        assert os.path.getsize(path) == size_before
    finally:
        release.set()
    storing._checkpoints.submit(lambda: None).result(timeout=60)  # the upload's checkpoint has run
    assert os.path.getsize(path) > size_before + 5_000_000
    with sqlite3.connect(path) as other:
        assert other.execute("select count(*) from run").fetchone()[0] == 10_000

    with db.get_engine().connect() as connection:
        driver = connection.connection.driver_connection
        assert driver.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
        assert driver.execute("PRAGMA cache_size").fetchone()[0] == -2000


def test_an_ingest_skips_foreign_key_checks_only_for_its_own_transaction(tmp_path):
    """An ingest writes with SQLite's foreign-key checks off (each tag's run, each run's upload: 0.15 s of an
    upload of 100,000 runs with two tags), which is sound only because it refers to rows it wrote or read under
    its write lock: what it stored passes foreign_key_check, and the pooled connection checks again afterwards,
    after a commit and after a refused upload alike."""
    from sqlalchemy import insert, text
    from sqlalchemy.exc import IntegrityError

    url = f"sqlite:///{tmp_path / 'fk.db'}"
    upgrade(url)
    engine = make_engine(url)
    lines = distinct_lines("fk", 3)
    during: list[int] = []

    def upload(data: str, **options) -> None:
        with Session(engine) as session:
            items = iter_parse_bytes(data.encode(), max_line_bytes=DEFAULT_MAX_LINE_BYTES)
            ingest(session=session, items=items, source="test", **options)
            during.append(session.connection().exec_driver_sql("PRAGMA foreign_keys").scalar_one())
            session.commit()

    def foreign_keys_checked() -> int:
        with engine.connect() as connection:
            return connection.exec_driver_sql("PRAGMA foreign_keys").scalar_one()

    upload(lines[0] + "\n", tags={"fs": "xfs"})
    # the compiled path, and runs stored before that gain a tag they lack (read under the write lock)
    with Session(engine) as session:
        ingest_bytes(
            session=session,
            data="\n".join(lines).encode() + b"\n",
            max_line_bytes=DEFAULT_MAX_LINE_BYTES,
            source="test",
            tags={"disk": "nvme0"},
        )
        during.append(session.connection().exec_driver_sql("PRAGMA foreign_keys").scalar_one())
        session.commit()
    assert during == [0, 0]
    assert engine.pool.checkedout() == 0 and foreign_keys_checked() == 1

    with pytest.raises(InvalidUpload), Session(engine) as session:
        ingest(session=session, items=iter_parse_bytes(b"not,a,line" + b",x" * 30, max_line_bytes=1000), source="t")
    assert foreign_keys_checked() == 1

    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA foreign_key_check").all() == []
        assert connection.scalar(text("SELECT count(*) FROM tag")) == 1 + 3
        with pytest.raises(IntegrityError):  # any other write is checked as before
            connection.execute(insert(tag_table).values(run_id=999_999, key="fs", value="xfs"))
    engine.dispose()


@pytest.mark.parametrize("cache_grows_with_the_upload", [True, False])
def test_an_uploads_pages_stay_in_the_cache_until_the_commit(tmp_path, monkeypatch, cache_grows_with_the_upload):
    """Every page an upload writes fits its page cache, so none is spilled to the WAL mid-transaction (at a
    fixed 64 MiB, 100,000 lines with two tags spilled 8 MB and took 13 % longer). The floor is lowered so a
    small upload shows it; without the cache that grows with the upload the same upload spills (the control)."""
    monkeypatch.setattr(sqlite_bulk, "UPLOAD_CACHE_MIN_KIB", 2048)
    if not cache_grows_with_the_upload:
        monkeypatch.setattr(sqlite_bulk, "UPLOAD_CACHE_PER_UPLOAD_BYTE", 0)
    path = tmp_path / "db.sqlite"
    upgrade(f"sqlite:///{path}")
    engine = make_engine(f"sqlite:///{path}")
    wal = tmp_path / "db.sqlite-wal"
    data = ("\n".join(distinct_lines("cache", 20_000)) + "\n").encode()
    try:
        with Session(engine) as session:
            session.execute(select(1))  # the connection is open, so is its WAL
            wal_before = wal.stat().st_size
            ingest_bytes(
                session=session,
                data=data,
                max_line_bytes=DEFAULT_MAX_LINE_BYTES,
                source="test",
                tags={"a": "1", "b": "2"},
            )
            wal_at_commit = wal.stat().st_size
            session.commit()
            written = wal.stat().st_size - wal_before
            (cache_size,) = session.connection().connection.driver_connection.execute("PRAGMA cache_size").fetchone()
    finally:
        engine.dispose()
    assert written > 2048 * 1024 * 2  # the upload's pages are far more than the lowered floor
    if cache_grows_with_the_upload:
        assert sqlite_bulk.upload_cache_kib(len(data)) * 1024 > written
        assert wal_at_commit == wal_before
    else:
        assert wal_at_commit > wal_before + 1_000_000
    assert cache_size == -2000  # within the same session, the transaction over: back to SQLite's default


def test_an_uploads_cache_is_bounded():
    """Room for every page of an upload up to the default limit, but never gigabytes for one upload on a board
    that allows bigger ones: those spill to the WAL instead."""
    assert sqlite_bulk.upload_cache_kib(0) == sqlite_bulk.UPLOAD_CACHE_MIN_KIB
    default_limit = Settings.model_fields["max_upload_bytes"].default
    assert sqlite_bulk.upload_cache_kib(default_limit) * 1024 >= default_limit * 4  # 100,000 lines: 3.2x in pages
    assert sqlite_bulk.upload_cache_kib(4 << 30) == sqlite_bulk.UPLOAD_CACHE_MAX_KIB == 256 * 1024


@pytest.mark.parametrize("char", ["m", "\u00e9", "\u20ac", "\U0001f600"])  # 1 to 4 bytes in UTF-8
def test_a_machine_name_over_the_limit_is_the_lines_error_either_way(two_databases, char):
    """PostgreSQL refused a (machine, id) index entry over 2,704 bytes, and the whole upload failed as a 503.
    A name of MAX_MACHINE_CHARS characters is stored; one more is its line's error, named, on either path."""
    assert _plain_lines.MAX_MACHINE_CHARS == MAX_MACHINE_CHARS
    longest = LINE_198.replace(",vm,", f",{char * MAX_MACHINE_CHARS},", 1)
    too_long = LINE_198.replace(",vm,", f",{char * (MAX_MACHINE_CHARS + 1)},", 1)
    assert _plain_lines.line_is_plain(longest.encode()) and not _plain_lines.line_is_plain(too_long.encode())
    compiled, parsed = stored_both_ways(two_databases, "\n".join([longest, too_long]), partial=True)
    assert compiled == parsed
    assert compiled[2] == [longest]
    assert compiled[4] == [(2, "name", f"the machine name is {MAX_MACHINE_CHARS + 1} characters; the limit is 500")]


def test_outside_the_known_cpython_versions_the_parser_stores_without_reading_the_connection(tmp_path, monkeypatch):
    """A CPython whose sqlite3.Connection layout the extension was not written for: it is never handed the
    connection (db_filename would read the struct), and the parser path stores the same rows."""
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    upgrade(url)
    engine = make_engine(url)
    reference_url = f"sqlite:///{tmp_path / 'reference.sqlite'}"
    upgrade(reference_url)
    reference_engine = make_engine(reference_url)
    data = "\n".join([LINE_198, LINE_198.replace("vm", "vm2", 1)]).encode()
    try:
        compiled = store(reference_engine, data, compiled=True)
        monkeypatch.setattr(_plain_lines, "CONNECTION_LAYOUT_KNOWN", 0)

        def never(*_args):
            raise AssertionError("the connection was handed to the extension")

        monkeypatch.setattr(_plain_lines, "db_filename", never)
        with Session(engine) as session:
            problem = sqlite_bulk.connection_problem(session)
            assert problem is not None and "layout of CPython" in problem
            assert sqlite_bulk.scan(session, data, DEFAULT_MAX_LINE_BYTES) is None
        assert store(engine, data, compiled=False) == compiled
    finally:
        engine.dispose()
        reference_engine.dispose()


def test_the_extension_reads_connections_of_the_cpython_versions_whose_layout_it_knows():
    assert ((3, 8) <= sys.version_info[:2] < (3, 14)) == _plain_lines.CONNECTION_LAYOUT_KNOWN
