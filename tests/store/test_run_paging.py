"""The runs list's fast paths (docs/decisions.md, "Runs list at a million runs") against the plain ones, on SQLite and
PostgreSQL: keyset paging (before=) gives the rows offset paging gives, a capped count is never shown as exact, and
the streamed export is byte for byte the lines as stored."""

from __future__ import annotations

import pytest
from sqlalchemy import select, text

from app.store import runs as run_store
from app.store.models import run_table
from app.web.routes import pages
from tests.helpers import CORPUS_DIR, post_csv

FILTERS = [
    {},
    {"machine": "vm"},
    {"format": "1.98"},
    {"tag": "fs=xfs"},
    {"tag": ["fs=xfs", "raid=5"]},
    {"tag": "fs=ext4", "format": "1.96"},
]


@pytest.fixture
def stored(client) -> list[int]:
    """The corpus in three uploads with overlapping tags, a few runs deleted (gaps in the ids)."""
    files = sorted(CORPUS_DIR.glob("*.csv"))
    tags = [["fs=xfs", "raid=5"], ["fs=ext4"], ["fs=xfs"], []]
    for path, tag in zip(files, tags, strict=False):
        assert post_csv(client, path.read_bytes(), tag=tag, partial="true").status_code == 201
    ids = [run["id"] for run in client.get("/api/runs", params={"limit": 1000}).json()["items"]]
    for run_id in ids[3::7]:
        assert client.delete(f"/api/runs/{run_id}").status_code == 204
    return ids


def params_of(run_filter: dict, **more) -> list[tuple[str, str]]:
    pairs = [(key, v) for key, value in run_filter.items() for v in ([value] if isinstance(value, str) else value)]
    return pairs + [(key, str(value)) for key, value in more.items()]


@pytest.mark.parametrize("run_filter", FILTERS, ids=str)
def test_keyset_pages_are_the_offset_pages(client, stored, run_filter):
    everything = client.get("/api/runs", params=params_of(run_filter, limit=1000)).json()
    expected = [run["id"] for run in everything["items"]]
    assert expected == sorted(expected, reverse=True) and not everything["total_is_estimate"]
    assert everything["total"] == len(expected)
    by_offset, by_keyset, before = [], [], None
    for offset in range(0, len(expected) + 4, 4):
        page = client.get("/api/runs", params=params_of(run_filter, limit=4, offset=offset)).json()
        by_offset += [run["id"] for run in page["items"]]
        keyset = client.get(
            "/api/runs",
            params=params_of(run_filter, limit=4, **({"before": before} if before else {})),
        ).json()
        by_keyset += [run["id"] for run in keyset["items"]]
        assert keyset["items"] == page["items"]  # the same rows, not only the same ids
        if keyset["items"]:
            before = keyset["items"][-1]["id"]
    assert by_offset == by_keyset == expected
    assert len(expected) > 0


# Each order's "next" link: newest and oldest first page with a keyset cursor, by name with page=; and the
# link back that every later page shows.
NEXT_LINKS = {"newest": ("older →", "before="), "oldest": ("newer →", "after="), "name": ("next →", "at_machine=")}
BACK_LINKS = {"newest": "← newest", "oldest": "← oldest", "name": "← first page"}


@pytest.mark.parametrize("sort", NEXT_LINKS)
@pytest.mark.parametrize("query", ["", "tag=fs%3Dext4"])
def test_runs_page_next_links_walk_every_run_once(client, stored, monkeypatch, query, sort, database_kind):
    monkeypatch.setattr(pages, "PAGE_SIZE", 4)
    seen: list[int] = []
    url = f"/?{query}&sort={sort}"
    newest_first = client.get(f"/api/runs?{query}&limit=1000").json()["items"]
    assert len(newest_first) > 8
    label, cursor = NEXT_LINKS[sort]
    links = 0
    while url:
        html = client.get(url).text
        ids = [int(run_id) for run_id in _checkbox_ids(html)]
        assert 0 < len(ids) <= 4
        assert (BACK_LINKS[sort] in html) == (links > 0)
        seen += ids
        url = _next_link(html, label)
        if url:
            links += 1
            assert cursor in url and f"sort={sort}" in url
    assert links >= 2
    if sort == "name":
        # machine, then label, then upload order; a run without a label comes first on SQLite, last on PostgreSQL
        def by_name(run):
            no_label_last = run["label"] is None if database_kind == "postgresql" else run["label"] is not None
            return run["machine"], no_label_last, run["label"] or "", run["id"]

        expected = [run["id"] for run in sorted(newest_first, key=by_name)]
    else:
        expected = [run["id"] for run in newest_first]
        expected = expected if sort == "newest" else expected[::-1]
    assert seen == expected


def test_pages_by_name_from_a_typed_page_go_on_by_page_and_a_cursor_counts_within_its_machine(client, monkeypatch):
    """Runs of three machines, one over three pages and one inside a page: every cursor page by name is the
    offset page it stands for, whatever machine its cursor names; a page= typed by hand links on with page=."""
    monkeypatch.setattr(pages, "PAGE_SIZE", 4)
    from tests.helpers import distinct_lines

    # machine names with a space, to be sent encoded; "box a" spans three pages, "box b" sits inside one
    lines = distinct_lines("box a", 11) + distinct_lines("box b", 2) + distinct_lines("box c", 8)
    for i, line in enumerate(lines):
        assert post_csv(client, line + "\n", label=f"run {i % 5}").status_code == 201
    by_offset: list[list[str]] = []
    for page in range(1, 8):
        by_offset.append(_checkbox_ids(client.get(f"/?sort=name&page={page}").text))
    assert sum(map(len, by_offset)) == 21
    url, walked = "/?sort=name", []
    while url and len(walked) < 10:  # a wrong cursor may lead back to a page already shown
        html = client.get(url).text
        walked.append(_checkbox_ids(html))
        url = _next_link(html, "next →")
        assert url is None or "at_machine=box%20" in url
    assert walked == [page for page in by_offset if page]
    typed = client.get("/?sort=name&page=2").text
    assert _next_link(typed, "next →") is not None and "page=3" in _next_link(typed, "next →")
    assert client.get("/?sort=name&at_machine=" + "x" * 5000).status_code == 400


@pytest.mark.parametrize(
    "past_the_end", ["sort=oldest&after={last}", "sort=newest&before=1", "sort=name&page=999", "sort=name&at_machine=~"]
)
def test_a_page_past_the_last_run_says_so_and_links_back(client, stored, past_the_end):
    last = client.get("/api/runs?limit=1").json()["items"][0]["id"]
    response = client.get(f"/?tag=fs%3Dxfs&{past_the_end.format(last=last)}")
    assert response.status_code == 200
    assert "No runs on this page." in response.text and "Upload a bonnie.csv" not in response.text
    back = _next_link(response.text, "← the first page")
    assert back is not None and "tag=fs%3Dxfs" in back and "after=" not in back and "page=" not in back
    assert _checkbox_ids(client.get(f"/{back}").text)
    assert client.get("/?sort=oldest&after=0").status_code == 422


def test_lists_leave_runner_documents_unread(session, stored):
    listed = run_store.list_runs(session=session, run_filter=run_store.RunFilter(), limit=5)
    assert listed.runs and all("document" not in run._fields for run in listed.runs)
    assert all(run.raw_line for run in listed.runs)


def _checkbox_ids(html: str) -> list[str]:
    import re

    return re.findall(r'name="run" value="(\d+)"', html)


def _next_link(html: str, label: str) -> str | None:
    import re

    match = re.search(rf'<a href="(\?[^"]*)">{label}</a>', html)
    return match.group(1).replace("&amp;", "&") if match else None


def test_counts_beyond_the_limit_are_never_shown_as_exact(client, stored, monkeypatch, session, database_kind):
    exact = client.get("/api/runs").json()["total"]
    assert exact > 5
    monkeypatch.setattr(run_store, "COUNT_LIMIT", 5)
    # All runs: counted on SQLite (cheap there); PostgreSQL's estimate once it has statistics (made first: a
    # count is kept until the next write, and without statistics PostgreSQL's is an exact count).
    if database_kind == "postgresql":
        session.execute(text("ANALYZE run"))
        session.commit()
    listed = client.get("/api/runs").json()
    if database_kind == "postgresql":
        assert listed["total_is_estimate"] is True and listed["total"] == exact
        assert f"about {exact:,} runs" in client.get("/").text
    else:
        assert listed == client.get("/api/runs").json() and not listed["total_is_estimate"] and listed["total"] == exact
    filtered = client.get("/api/runs", params={"tag": "fs=xfs"}).json()
    assert filtered["total_is_estimate"] is True and filtered["total"] == 5
    page = client.get("/?tag=fs%3Dxfs").text
    assert "more than 5 runs" in page and "page 1 of" not in page
    few = client.get("/api/runs", params={"machine": "wifo3-02"}).json()
    assert few["total_is_estimate"] is False and 0 < few["total"] == len(few["items"]) <= 5


@pytest.mark.parametrize("run_filter", [{}, {"tag": "fs=xfs"}, {"machine": "vm"}], ids=str)
def test_streamed_export_is_every_stored_line(client, stored, session, run_filter, monkeypatch):
    monkeypatch.setattr(run_store, "EXPORT_FIRST_BATCH", 2)
    monkeypatch.setattr(run_store, "EXPORT_BATCH", 3)  # many batches, and one left over
    ids = [run["id"] for run in client.get("/api/runs", params=params_of(run_filter, limit=1000)).json()["items"]]
    lines = dict(session.execute(select(run_table.c.id, run_table.c.raw_line).where(run_table.c.id.in_(ids))).all())
    expected = "".join(f"{lines[run_id]}\n" for run_id in sorted(ids))
    export = client.get("/api/runs/export.csv", params=params_of(run_filter))
    assert export.status_code == 200 and export.headers["content-type"].startswith("text/csv")
    assert export.content == expected.encode() and len(ids) > 3


@pytest.mark.parametrize("run_filter", [{}, {"tags": {"fs": "xfs"}}, {"format_version": "1.98"}], ids=str)
def test_a_deep_page_by_name_from_its_machine_is_the_page_by_offset(session, stored, monkeypatch, run_filter):
    """A page by name deep enough starts from the machine its position falls in (run_store._machine_at): the same
    runs as skipping from the top, at every offset, past the end included, on both databases."""
    wanted = run_store.RunFilter(**run_filter)

    def pages(seek_from: int) -> list[list[int]]:
        monkeypatch.setattr(run_store, "NAME_SEEK_FROM_OFFSET", seek_from)
        return [
            [
                run.id
                for run in run_store.list_runs(
                    session=session, run_filter=wanted, limit=3, offset=offset, order="name"
                ).runs
            ]
            for offset in range(total + 4)
        ]

    total = run_store.list_runs(session=session, run_filter=wanted, limit=1, order="name").total
    assert total > 6
    by_offset = pages(seek_from=10**9)
    assert pages(seek_from=0) == by_offset
    assert by_offset[0] and not by_offset[total]
    machines = session.scalars(select(run_table.c.machine).distinct()).all()
    assert len(machines) > 2  # the pages cross from machine to machine


@pytest.mark.parametrize(
    "run_filter",
    [{"tags": {"fs": "xfs"}}, {"tags": {"fs": "xfs", "raid": "5"}}, {"tags": {"fs": "ext4"}, "format_version": "1.96"}],
    ids=str,
)
def test_pages_by_name_with_tags_read_in_name_order_are_the_sorted_matches(
    client, session, stored, monkeypatch, run_filter
):
    """By name with a tag filter, the runs read in name order and checked for their tags (run_store._walked_by_name)
    give the pages that joining every match and sorting them gives: at every offset and from every machine's
    cursor, labels (some empty, which come first) included, on both databases; and a walk too short for its page
    falls back to the join."""
    labelled = [run_id for run_id in stored if run_id not in stored[3::7]][::4]
    for number, run_id in enumerate(labelled):
        label = None if number % 3 == 0 else f"label {number % 5}"
        assert client.patch(f"/api/runs/{run_id}", json={"label": label}).status_code == 200
    wanted = run_store.RunFilter(**run_filter)
    walked = []
    walk = run_store._walked_by_name

    def counted_walk(*args, **kwargs):
        found = walk(*args, **kwargs)
        walked.append(found is not None)
        return found

    monkeypatch.setattr(run_store, "_walked_by_name", counted_walk)
    monkeypatch.setattr(run_store, "NAME_SORT_MATCHES", -1)  # a few runs here: walked as a million would be

    def pages(*factors: int) -> list[list[int]]:
        monkeypatch.setattr(run_store, "NAME_WALK_FACTORS", factors)
        session.expire_all()
        machines = [None, *session.scalars(select(run_table.c.machine).distinct().order_by(run_table.c.machine))]
        return [
            [
                run.id
                for run in run_store.list_runs(
                    session=session, run_filter=wanted, limit=limit, offset=offset, at_machine=at, order="name"
                ).runs
            ]
            for at in machines
            for limit in (1, 3)
            for offset in range(8)
        ]

    joined = pages(0)  # never fills a page: every page is joined and sorted
    assert walked and not any(walked)
    walked.clear()
    assert pages(1, 10**6) == joined  # every page that has its runs is found by the walk
    assert any(walked)
    walked.clear()
    assert pages(1) == joined  # some walks fall short and fall back
    assert any(walked) and not all(walked)
    assert sum(map(len, joined)) > 10


def test_a_tag_few_runs_have_is_sorted_by_name_on_expressions(session, stored, monkeypatch):
    """Few matches skip the walk and are sorted at once; that sort is _sorted_by_name's, on expressions, never the
    columns' order that SQLite serves by walking ix_run_machine_label_id through every run (388 ms for a tag one run
    in 1,000 has, at a million runs)."""
    sorted_by_name = run_store._sorted_by_name
    calls = []

    def counted(*args):
        calls.append(args)
        return sorted_by_name(*args)

    monkeypatch.setattr(run_store, "_sorted_by_name", counted)
    monkeypatch.setattr(run_store, "_walked_by_name", lambda *args: pytest.fail("a few matches are never walked"))
    page = run_store.list_runs(
        session=session, run_filter=run_store.RunFilter(tags={"fs": "xfs"}), limit=3, order="name"
    )
    assert len(page.runs) == 3 and len(calls) == 1
