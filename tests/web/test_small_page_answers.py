"""The smaller answers a new user met: /login on a board without tokens, the upload answer showing each refused
line and why run ids skip, a favicon, and the latency of a test that never ran."""

from __future__ import annotations

import re

from sqlalchemy import select

from app.compare import engine
from app.ingest.parsing import parse_line
from app.store.models import run_table
from app.web.upload_lines import MAX_SHOWN_LINE_CHARS, lines_at
from tests.helpers import LINE_198, create_token, csrf_token, post_csv, post_form, with_field


def test_login_without_tokens_says_there_is_nothing_to_sign_in_to(client, session):
    page = client.get("/login?next=/runs/1")
    assert page.status_code == 200
    assert "needs a token" not in page.text and 'type="password"' not in page.text
    assert "This bonnieboard has no tokens" in page.text and '<a href="/runs/1">Go on</a>' in page.text
    create_token(session, "ci")
    page = client.get("/login?next=/runs/1")
    assert "This bonnieboard needs a token" in page.text and 'type="password"' in page.text


def test_the_upload_answer_shows_each_refused_line_beside_its_error(client):
    bad = with_field(LINE_198, 12, "xx")  # put_block's %CPU
    text = f"{LINE_198}\n\n{bad}\r\nnot,a,line\n"
    answer = post_form(client, "/upload", {"lines": text, "csrf_token": csrf_token(client)})
    assert answer.status_code == 422
    html = answer.text
    assert "<th>The line</th>" in html
    # Line 3 (a blank line between) and line 4, each shown as it was pasted, without its \r.
    assert "<td>3</td>" in html and f"<code>{bad}</code>" in html
    assert "<td>4</td>" in html and "<code>not,a,line</code>" in html


def test_lines_at_finds_the_lines_asked_for_in_one_pass():
    data = b"one\ntwo\r\nthree\n\nfive" + b"\n"
    assert lines_at(data, [5, 2, 2, 99, 0]) == {2: "two", 5: "five"}
    assert lines_at(data, [6]) == {6: ""}  # after the last newline: an empty line
    assert lines_at(b"\xff\xfeab", [1]) == {1: "\ufffd\ufffdab"}
    assert lines_at("\ufeffbom,line\n".encode(), [1]) == {1: "bom,line"}  # an editor's byte order mark
    long = lines_at(b"x" * 10_000, [1])[1]
    assert len(long) == MAX_SHOWN_LINE_CHARS + 1 and long.endswith("…")


def test_a_duplicate_uses_up_a_run_id_and_the_upload_answer_says_so(client):
    first = post_csv(client, LINE_198).json()["created"][0]
    duplicate = post_csv(client, LINE_198).json()
    assert duplicate["created"] == [] and duplicate["duplicates"] == [first]
    later = post_csv(client, with_field(LINE_198, 2, "another-host")).json()["created"][0]
    # What docs/api-contract.md says: ids only grow, and the duplicate's insert took one.
    assert later == first + 2
    answer = post_form(client, "/upload", {"lines": LINE_198, "csrf_token": csrf_token(client)})
    assert answer.status_code == 201
    assert "a line already stored uses one up all the same" in answer.text


def test_runs_are_numbered_in_line_order_around_stored_and_repeated_lines(client, session):
    """Each distinct line of an upload has its place in line order, parsed or plain: a line stored already leaves
    its id unused, a line repeated within the upload takes none.
    See docs/decisions.md, "PostgreSQL runs numbered from a reserved block", for where PostgreSQL's ids come from."""
    stored = with_field(LINE_198, 2, "stored-host")
    first = post_csv(client, stored).json()["created"][0]
    # The parser's 47-field layout (a comma in the name): never a plain line, so it is numbered among them.
    parsed = "1.96,1.96,lab,1,12345,2G," + "," * 13 + "16,,,,," + ",".join(["1,2"] * 6) + "," * 12
    new = [with_field(LINE_198, 2, name) for name in ("new-a", "new-b")]
    answer = post_csv(client, "\n".join([new[0], stored, new[0], parsed, new[1]]) + "\n").json()
    assert answer["created"] == [first + 1, first + 3, first + 4]
    assert answer["duplicates"] == [first, first + 1]
    lines = dict(session.execute(select(run_table.c.id, run_table.c.raw_line)).all())
    assert lines == {first: stored, first + 1: new[0], first + 3: parsed, first + 4: new[1]}


def test_a_favicon_is_linked_from_every_page_and_served(client):
    for url in ("/", "/upload", "/login", "/docs"):
        assert re.search(
            r'rel="icon" type="image/svg\+xml" href="/static/favicon\.svg\?v=\w+"', client.get(url).text
        ), url
    icon = client.get("/static/favicon.svg")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.text.startswith("<svg")


# Debian's bonnie++ 2.00a with -f: putc and getc not run, their rates, %CPU and latencies empty.
FAST_LINE = (
    "1.98,2.00a,vm,1,1795352069,512M,,8192,5,,,564124,74,955896,61,,,+++++,+++,+++++,+++,16,,,,,3411,97,+++++,+++,"
    "+++++,+++,2189,99,+++++,+++,+++++,+++,,5996us,9384us,,1514us,5243us,8781us,703us,7380us,10912us,144us,5710us"
)


def test_a_test_that_never_ran_has_no_latency_because_it_did_not_run():
    """-f skips putc and getc: their latency is "not run", as their rate is; "no latency in this line" is for a
    line that carries none (bonnie++ 1.03). Three runs of one setup (one configuration) and a single run."""
    parsed = parse_line(FAST_LINE, 1)
    runs = [
        engine.RunFigures(
            run_id, parsed.machine, None, {}, parsed.format_version, parsed.bonnie_version, parsed.results
        )
        for run_id in (1, 2, 3)
    ]
    for compared in (runs, runs[:1]):
        latency = next(chart for chart in engine.compare(compared).charts if chart.key == "latency")
        [entry] = latency.configurations
        statuses = {cell.test: cell.status for cell in entry.tests}
        assert statuses["putc"] == statuses["getc"] == "not_run"
        assert statuses["put_block"] == "ok"
    assert engine.STATUS_TEXT["not_run"] == "not run"
