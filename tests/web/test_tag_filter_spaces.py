"""Tags stored before spaces were refused (`os=Debian 12`) can still be filtered by URL: `tag=os=Debian%2012`
on the API, the export and the runs page, whose own links to such a tag work too (issue: review loose ends).
Chosen over a migration renaming them: a filter changes nobody's data and needs no revision order."""

from __future__ import annotations

import html
import re

import pytest
from sqlalchemy import insert

from app.store.models import Tag
from app.tags import split_tag_terms
from app.web.routes import pages
from tests.helpers import LINE_103, LINE_197, LINE_198, post_csv


@pytest.fixture
def old_tags(client, session) -> dict[str, int]:
    """Three runs; two carry tags with spaces, written straight to the table as an old release stored them."""
    ids = [post_csv(client, line, tag="raid=5").json()["created"][0] for line in (LINE_198, LINE_197, LINE_103)]
    session.execute(
        insert(Tag),
        [
            {"run_id": ids[0], "key": "os", "value": "Debian 12"},
            {"run_id": ids[1], "key": "os", "value": "Debian  12\t(old)"},
            {"run_id": ids[2], "key": "os", "value": "Debian"},
            {"run_id": ids[0], "key": "site", "value": "lab 2"},
            {"run_id": ids[2], "key": "site", "value": "lab 2"},
        ],
    )
    session.commit()
    return {"Debian 12": ids[0], "Debian  12\t(old)": ids[1], "Debian": ids[2]}


def listed(client, url: str, **params) -> list[int]:
    response = client.get(url, params=params)
    assert response.status_code == 200, response.text
    return [run["id"] for run in response.json()["items"]]


def test_the_api_filters_by_a_value_with_spaces(client, old_tags):
    for value, run_id in old_tags.items():
        assert listed(client, "/api/runs", tag=f"os={value}") == [run_id]
        assert client.get("/api/runs/export.csv", params={"tag": f"os={value}"}).text.count("\n") == 1
    assert listed(client, "/api/runs", tag=["raid=5", "os=Debian 12"]) == [old_tags["Debian 12"]]
    assert listed(client, "/api/runs", tag="os=Debian 13") == []
    # Percent-encoded by hand, as a link carries it.
    response = client.get("/api/runs?tag=os%3DDebian%2012")
    assert [run["id"] for run in response.json()["items"]] == [old_tags["Debian 12"]]


def test_new_tags_with_spaces_are_still_refused(client):
    response = post_csv(client, LINE_198, tag="os=Debian 12")
    assert response.status_code == 400 and "contains a space" in response.json()["detail"]


def test_the_run_pages_tag_link_lists_the_run(client, old_tags):
    for value, run_id in old_tags.items():
        run_page = client.get(f"/runs/{run_id}").text
        links = [html.unescape(href) for href in re.findall(r'<a class="tag" href="([^"]+)"', run_page)]
        link = next(href for href in links if "os%3D" in href)
        front = client.get(link)
        assert front.status_code == 200 and "not of the form" not in front.text
        shown = [int(i) for i in re.findall(r'href="/runs/(\d+)"', front.text)]
        assert set(shown) == {run_id}, (value, link)


def runs_shown(page: str) -> set[int]:
    return {int(i) for i in re.findall(r'href="/runs/(\d+)"', page)}


def test_the_filter_box_and_the_pager_keep_a_value_with_spaces(client, old_tags, monkeypatch):
    page = client.get("/", params={"tag": "raid=5 os=Debian 12"}).text
    assert runs_shown(page) == {old_tags["Debian 12"]}
    assert 'value="raid=5 os=Debian 12"' in page  # the box shows the filter as typed
    # One run a page: the "older" link repeats the filter, one tag= per term, and finds the other run.
    monkeypatch.setattr(pages, "PAGE_SIZE", 1)
    first = client.get("/", params={"tag": "raid=5 site=lab 2"}).text
    older = html.unescape(re.search(r'<a href="(\?[^"]+)">older', first).group(1))
    assert "&tag=raid%3D5&tag=site%3Dlab%202&" in older
    second = client.get(f"/{older}").text
    assert runs_shown(first) | runs_shown(second) == {old_tags["Debian 12"], old_tags["Debian"]}
    assert runs_shown(first) != runs_shown(second)


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("raid=5 fs=xfs", ["raid=5", "fs=xfs"]),
        ("  raid=5\tfs=xfs ", ["raid=5", "fs=xfs"]),
        ("os=Debian 12", ["os=Debian 12"]),
        ("os=Debian  12\t(old) raid=5", ["os=Debian  12\t(old)", "raid=5"]),
        ("raid=5 os=Debian 12 fs=xfs", ["raid=5", "os=Debian 12", "fs=xfs"]),
        ("note=a=b c", ["note=a=b c"]),
        ("", []),
        ("   ", []),
        ("lonely", ["lonely"]),  # not KEY=VALUE: parse_tag_filters answers 400 naming it
    ],
)
def test_split_tag_terms(text, terms):
    assert split_tag_terms(text) == terms
