"""The comparison cache (docs/decisions.md, "Comparisons served from a cache"): /api/compare and the /compare page are
served from a per-worker cache keyed by the database's data generation. Every write that can change a comparison is
followed at once by the changed answer (on SQLite and PostgreSQL, in-process and with two server workers); the cache
holds no session's secrets and stays within its bounds."""

import gzip

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete

from app.compare import engine
from app.compare.cache import CACHE, ResponseCache
from app.main import create_app
from app.store.generation import Stamps
from app.store.models import data_generation_table
from tests.compare_data import embedded_data
from tests.helpers import (
    DATA_DIR,
    LINE_197,
    LINE_198,
    csrf_token,
    post_csv,
    post_form,
    run_cli,
    set_setting,
)
from tests.live_server import CLIENT_SSL, live_server

API_URL = "/api/compare?runs=1,2&group=disk"
PAGE_URL = "/compare?runs=1,2&group=disk"
HTMX = {"HX-Request": "true", "HX-Request-Type": "partial"}


def api_view(client) -> list:
    answer = client.get(API_URL)
    if answer.status_code == 404:
        return ["404", answer.json()["detail"]]
    assert answer.status_code == 200, answer.text
    body = answer.json()
    return [[c["tags"], c["runs"]] for c in body["configurations"]] + [body["runs"]]


def page_view(client, url: str = PAGE_URL) -> list:
    answer = client.get(url)
    assert answer.status_code == 200, answer.text
    if 'id="compare-data"' not in answer.text:
        return ["no data", answer.text.count("No run #")]
    compare = embedded_data(answer.text)["compare"]
    return [[c["tags"], c["runs"]] for c in compare["configurations"]] + [compare["runs"]]


def cached_views(client) -> tuple[list, list]:
    """Both views, read twice: the second read of each is served from the cache (so what a write is
    checked against below is a cached answer)."""
    first = api_view(client), page_view(client)
    hits = CACHE.hits
    assert (api_view(client), page_view(client)) == first
    assert CACHE.hits == hits + 2
    return first


@pytest.fixture
def two_runs(client) -> None:
    """Runs 1 and 2, no disk tag yet: one configuration when grouped by disk."""
    assert post_csv(client, f"{LINE_198}\n{LINE_197}\n").json()["created"] == [1, 2]
    before_api, before_page = cached_views(client)
    assert before_api[0] == [{}, [1, 2]] and before_page[0] == [{}, [1, 2]]


def assert_run_1_on_ssd(client) -> None:
    api, page = api_view(client), page_view(client)
    assert api == page
    assert [{"disk": "ssd"}, [1]] in api and [{}, [2]] in api, api


@pytest.mark.usefixtures("two_runs")
def test_an_api_upload_that_tags_a_stored_run_shows_at_once(client):
    assert post_csv(client, LINE_198, tag="disk=ssd").json()["tagged"] == [1]
    assert_run_1_on_ssd(client)


@pytest.mark.usefixtures("two_runs")
def test_an_upload_form_post_shows_at_once(client):
    assert post_form(client, "/upload", {"lines": LINE_198, "tags": "disk=ssd"}).status_code == 201
    assert_run_1_on_ssd(client)


@pytest.mark.usefixtures("two_runs")
def test_a_cli_ingest_shows_at_once(client, database_url, tmp_path):
    path = tmp_path / "line.csv"
    path.write_text(LINE_198 + "\n")
    result = run_cli(tmp_path, "ingest", "--tag", "disk=ssd", path, database_url=database_url)
    assert result.returncode == 0 and "1 already stored given new tags" in result.stdout, result.stderr
    assert_run_1_on_ssd(client)


@pytest.mark.usefixtures("two_runs")
def test_a_text_report_upload_shows_at_once(client):
    url = "/compare?runs=1,2,3"
    assert page_view(client, url) == page_view(client, url)  # the second from the cache
    assert len(page_view(client, url)[-1]) == 2  # no run 3 yet: left out, with a notice
    report = (DATA_DIR / "reports" / "real-default.txt").read_text().rstrip("\n").rsplit("\n", 1)[0]
    answer = client.post(
        "/api/runs", content=report, headers={"Content-Type": "text/plain"}, params={"tag": "disk=ssd"}
    )
    assert answer.json()["created"] == [3], answer.text
    assert [run["id"] for run in page_view(client, url)[-1]] == [1, 2, 3]


@pytest.mark.usefixtures("two_runs")
def test_a_tag_patch_shows_at_once(client):
    assert client.patch("/api/runs/1", json={"tags": {"disk": "ssd"}}).status_code == 200
    assert_run_1_on_ssd(client)
    assert client.patch("/api/runs/2", json={"label": "renamed"}).status_code == 200
    assert {"id": 2, "label": "renamed"} in api_view(client)[-1]
    assert {"id": 2, "label": "renamed"} in page_view(client)[-1]


@pytest.mark.usefixtures("two_runs")
def test_the_run_pages_tag_form_shows_at_once(client):
    form = {"label": "", "key": ["disk"], "value": ["ssd"]}
    assert post_form(client, "/runs/1/tags", form, follow_redirects=False).status_code == 303
    assert_run_1_on_ssd(client)


@pytest.mark.usefixtures("two_runs")
def test_a_run_delete_shows_at_once(client):
    assert client.delete("/api/runs/2").status_code == 204
    assert api_view(client) == ["404", "run 2 does not exist"]
    page = client.get(PAGE_URL)
    assert "No run #2: left out." in page.text
    assert [run["id"] for run in embedded_data(page.text)["compare"]["runs"]] == [1]


@pytest.mark.usefixtures("two_runs")
def test_the_cached_answers_are_those_computed_afresh(client, monkeypatch):
    cached = client.get(API_URL).content, client.get(PAGE_URL).content, client.get(PAGE_URL, headers=HTMX).content
    set_setting(monkeypatch, "COMPARE_CACHE_MIB", "0")
    hits = CACHE.hits
    fresh = client.get(API_URL).content, client.get(PAGE_URL).content, client.get(PAGE_URL, headers=HTMX).content
    assert CACHE.hits == hits and fresh == cached


def test_two_sessions_never_see_each_others_csrf_token(database_url):
    with TestClient(create_app()) as alice, TestClient(create_app()) as bob:
        assert post_csv(alice, f"{LINE_198}\n{LINE_197}\n").status_code == 201
        tokens = {"alice": csrf_token(alice), "bob": csrf_token(bob)}
        assert tokens["alice"] != tokens["bob"]
        for headers in ({}, HTMX):
            hits = CACHE.hits
            pages = {"alice": alice.get(PAGE_URL, headers=headers), "bob": bob.get(PAGE_URL, headers=headers)}
            assert CACHE.hits >= hits + 1  # bob's page came from the cache alice's filled
            for name, page in pages.items():
                assert page.status_code == 200 and "set-cookie" not in page.headers
                for other, token in tokens.items():
                    assert token not in page.text, f"{other}'s CSRF token in {name}'s page"
        # And each still holds its own: the pages did not replace a session's cookie.
        assert csrf_token(alice) == tokens["alice"] and csrf_token(bob) == tokens["bob"]


def test_many_distinct_urls_stay_within_the_bounds(client, monkeypatch):
    post_csv(client, f"{LINE_198}\n{LINE_197}\n")
    set_setting(monkeypatch, "COMPARE_CACHE_MIB", "1")
    # Group keys make distinct URLs for the same answer: each is its own entry.
    for i in range(60):
        assert client.get(f"/compare?runs=1,2&group=k{i}").status_code == 200
        assert client.get(f"/api/compare?runs=1,2&group=k{i}").status_code == 200
        assert CACHE.size_bytes <= 1024 * 1024
    assert 0 < len(CACHE) <= 120


def test_the_cache_evicts_the_least_recently_used_and_forgets_an_old_generation():
    cache = ResponseCache(max_entries=3)
    seven = Stamps(every_write=7, stored_runs=70)
    for key in "abc":
        cache.put(key, seven, 7, key.upper(), 10, max_bytes=1000)
    assert cache.get("a", seven) == "A"  # now the most recently used
    cache.put("d", seven, 70, "D", 10, max_bytes=1000)
    assert [cache.get(key, seven) for key in "abcd"] == ["A", None, "C", "D"]
    cache.put("e", seven, 7, "E", 240, max_bytes=1000)
    assert cache.size_bytes <= 1000 and len(cache) == 3
    cache.put("f", seven, 7, "F", 251, max_bytes=1000)  # more than a quarter of the cache: not kept
    assert cache.get("f", seven) is None
    # New runs only (every_write replaced, stored_runs kept): what depends on the stored runs stays.
    eight = Stamps(every_write=8, stored_runs=70)
    assert cache.get("a", eight) is None and cache.get("d", eight) == "D"
    cache.put("g", eight, 8, "G", 10, max_bytes=1000)  # the first entry under new stamps drops the stale ones
    assert len(cache) == 2 and cache.size_bytes == 20 and cache.get("g", eight) == "G"
    # A stored run changed: nothing made before stays.
    nine = Stamps(every_write=9, stored_runs=90)
    assert cache.get("d", nine) is None and cache.get("g", nine) is None
    cache.put("h", nine, 90, "H", 10, max_bytes=1000)
    assert len(cache) == 1 and cache.get("h", nine) == "H"


def test_a_database_without_its_generation_row_is_read_uncached(client, session):
    post_csv(client, f"{LINE_198}\n{LINE_197}\n")
    session.execute(delete(data_generation_table))
    session.commit()
    hits, misses = CACHE.hits, CACHE.misses
    assert api_view(client) == api_view(client)
    assert (CACHE.hits, CACHE.misses) == (hits, misses)
    # The next write puts the row back (an upsert), and the cache is used again.
    assert client.patch("/api/runs/1", json={"tags": {"disk": "ssd"}}).status_code == 200
    assert api_view(client) == api_view(client) and CACHE.hits == hits + 1


def test_a_link_spelt_otherwise_makes_the_comparison_once(client, monkeypatch):
    """The redirect to the permalink finds the fragment its first request made (kept under both requests)."""
    post_csv(client, f"{LINE_198}\n{LINE_197}\n")
    made = []
    compare = engine.compare
    monkeypatch.setattr(engine, "compare", lambda *args, **kwargs: made.append(1) or compare(*args, **kwargs))
    answer = client.get("/compare?run=2&run=1&mode=relative")
    assert [r.status_code for r in answer.history] == [303] and answer.url.path == "/compare"
    assert answer.url.query == b"runs=2,1&baseline=2&mode=relative" and len(made) == 1


@pytest.mark.slow
def test_two_workers_each_with_its_cache_show_a_write_at_once(database_url):
    with live_server(database_url, workers=2) as server, httpx.Client(verify=CLIENT_SSL, base_url=server.url) as http:
        body = f"{LINE_198}\n{LINE_197}\n"
        created = http.post("/api/runs", content=body, headers={"Content-Type": "text/csv"}).json()["created"]
        assert created == [1, 2]

        def views() -> set[str]:
            # A new connection each: the kernel hands them to either worker.
            return {
                httpx.get(server.url + API_URL, verify=CLIENT_SSL).text
                + httpx.get(server.url + PAGE_URL, verify=CLIENT_SSL).text
                for _ in range(20)
            }

        assert len(views()) == 1  # both workers now hold the answer
        assert http.patch("/api/runs/1", json={"tags": {"disk": "ssd"}}).status_code == 200
        after = views()
        assert len(after) == 1 and '"tags":{"disk":"ssd"}' in next(iter(after))


@pytest.mark.usefixtures("two_runs")
def test_gzip_when_accepted_the_same_bytes_as_without(client):
    for url, headers in ((API_URL, {}), (PAGE_URL, {}), (PAGE_URL, HTMX)):
        plain = client.get(url, headers=headers | {"Accept-Encoding": "identity"})
        refused = client.get(url, headers=headers | {"Accept-Encoding": "gzip;q=0, br"})
        assert "content-encoding" not in plain.headers and "content-encoding" not in refused.headers
        assert plain.content == refused.content and b'"runs"' in plain.content
        for accepted in ("gzip", "deflate, gzip;q=0.5", "*"):
            # Read raw: httpx would undo the gzip itself.
            with client.stream("GET", url, headers=headers | {"Accept-Encoding": accepted}) as zipped:
                raw = b"".join(zipped.iter_raw())
            assert zipped.headers["content-encoding"] == "gzip" and "Accept-Encoding" in zipped.headers["vary"]
            assert len(raw) * 3 < len(plain.content) and gzip.decompress(raw) == plain.content, (url, accepted)
