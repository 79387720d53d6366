"""The re-warm after a write (app/compare/page.py, Rewarmer): the comparison and matrix views last served are
made again in the background once the data changed, so their next reader gets them from the cache; and what
that reader gets is the fresh answer, never the one from before the write."""

import threading

import pytest

from app.compare import page as comparisons
from app.compare.cache import CACHE, ResponseCache
from app.store.generation import Stamps
from tests.compare_data import embedded_data
from tests.helpers import LINE_197, LINE_198, post_csv, run_cli, set_setting

VIEWS = {
    "api": "/api/compare?runs=1,2&group=disk",
    "page": "/compare?runs=1,2&group=disk",
    "api-matrix": "/api/matrix?rows=disk&cols=fs",  # the newest runs with both tags
    "matrix": "/matrix?rows=disk&cols=fs",
}
REWARM_TIMEOUT_S = 60
SEVEN = Stamps(every_write=7, stored_runs=None)


def read_all(client) -> dict[str, bytes]:
    answers = {}
    for name, url in VIEWS.items():
        answer = client.get(url)
        assert answer.status_code == 200, (url, answer.text)
        answers[name] = answer.content
    return answers


@pytest.fixture
def tagged_runs(client):
    assert post_csv(client, f"{LINE_198}\n{LINE_197}\n").json()["created"] == [1, 2]
    for run_id, disk in ((1, "ssd"), (2, "hdd")):
        assert client.patch(f"/api/runs/{run_id}", json={"tags": {"disk": disk, "fs": "xfs"}}).status_code == 200
    read_all(client)
    assert comparisons.REWARM.wait_idle(REWARM_TIMEOUT_S)


def fresh_answers(client, monkeypatch) -> dict[str, bytes]:
    """Every view computed now, without the cache."""
    set_setting(monkeypatch, "COMPARE_CACHE_MIB", "0")
    answers = read_all(client)
    monkeypatch.delenv("BONNIEBOARD_COMPARE_CACHE_MIB")
    from app.config import get_settings

    get_settings.cache_clear()
    return answers


@pytest.mark.usefixtures("tagged_runs")
def test_after_a_write_the_views_last_served_are_made_again_before_their_reader_comes(client, monkeypatch):
    made = comparisons.REWARM.made
    assert client.patch("/api/runs/2", json={"tags": {"disk": "ssd", "fs": "xfs"}, "label": "moved"}).status_code == 200
    assert comparisons.REWARM.wait_idle(REWARM_TIMEOUT_S)
    assert comparisons.REWARM.made == made + len(VIEWS)
    hits, misses = CACHE.hits, CACHE.misses
    warm = read_all(client)
    assert (CACHE.hits, CACHE.misses) == (hits + len(VIEWS), misses)  # every one from the cache
    assert warm == fresh_answers(client, monkeypatch)  # and each the answer computed afresh
    assert b"moved" in warm["api"] and b"moved" in warm["page"]


@pytest.mark.usefixtures("tagged_runs")
def test_an_upload_of_new_runs_leaves_the_views_of_the_runs_they_name_as_made(client, monkeypatch):
    """Runs 1 and 2 compared cannot change when run 3 arrives: those views stay; the matrices of the newest runs
    with two tags are made again, and the page's "Add runs" box offers run 3 at once."""
    made = comparisons.REWARM.made
    fields = LINE_198.split(",")
    fields[2] = "a-new-machine"
    assert post_csv(client, ",".join(fields) + "\n").json()["created"] == [3]
    assert comparisons.REWARM.wait_idle(REWARM_TIMEOUT_S)
    assert comparisons.REWARM.made == made + 2  # the two matrices, not the two comparisons
    hits, misses = CACHE.hits, CACHE.misses
    warm = read_all(client)
    assert (CACHE.hits, CACHE.misses) == (hits + len(VIEWS), misses)
    assert warm == fresh_answers(client, monkeypatch)
    assert 'hx-get="/compare/recent?runs=1%2C2"' in warm["page"].decode()
    offered = client.get("/compare/recent?runs=1%2C2", headers={"HX-Request": "true"})
    assert offered.status_code == 200 and '<option value="3">#3 a-new-machine</option>' in offered.text
    assert 'value="1"' not in offered.text and 'value="2"' not in offered.text


@pytest.mark.usefixtures("tagged_runs")
def test_a_reader_right_after_a_write_never_gets_the_answer_from_before_it(client):
    """Each read races the re-warm the write before it started: whichever makes the answer, it is this write's."""
    for i in range(12):
        assert client.patch("/api/runs/1", json={"label": f"version {i}"}).status_code == 200
        runs = client.get(VIEWS["api"]).json()["runs"]
        assert {"id": 1, "label": f"version {i}"} in runs, (i, runs)
        page = embedded_data(client.get(VIEWS["page"]).text)["compare"]["runs"]
        assert {"id": 1, "label": f"version {i}"} in page, (i, page)


@pytest.mark.usefixtures("tagged_runs")
def test_another_process_write_is_re_warmed_after_its_first_reader(client, database_url, tmp_path):
    """A write this process did not make (the CLI, another worker) is seen by the first request reading the new
    stamp: that reader's view is made for it, the other views in the background."""
    path = tmp_path / "line.csv"
    fields = LINE_198.split(",")
    fields[2] = "another-machine"
    path.write_text(",".join(fields) + "\n")
    result = run_cli(tmp_path, "ingest", "--tag", "disk=nvme", "--tag", "fs=xfs", path, database_url=database_url)
    assert result.returncode == 0, result.stderr
    rows = client.get(VIEWS["api-matrix"]).json()["rows"]
    assert "nvme" in {row["value"] for row in rows}, rows
    assert comparisons.REWARM.wait_idle(REWARM_TIMEOUT_S)
    hits = CACHE.hits
    page = client.get(VIEWS["matrix"])
    assert CACHE.hits == hits + 1 and "disk=nvme" in page.text


def test_one_answer_is_made_once_while_readers_wait_for_it():
    cache = ResponseCache()
    started, release = threading.Event(), threading.Event()
    calls = []

    def make():
        calls.append(1)
        started.set()
        release.wait(30)
        return b"answer", 7

    results = []
    first = threading.Thread(target=lambda: results.append(cache.fetch("k", SEVEN, make, len, 1 << 20)))
    first.start()
    assert started.wait(30)
    second = threading.Thread(target=lambda: results.append(cache.fetch("k", SEVEN, make, len, 1 << 20)))
    second.start()
    release.set()
    first.join(30)
    second.join(30)
    assert results == [b"answer", b"answer"] and len(calls) == 1
    # Another stamp is another answer: made again.
    assert cache.fetch("k", Stamps(8, 9), lambda: (b"newer", 8), len, 1 << 20) == b"newer"


def test_a_failed_answer_is_not_kept_and_its_waiters_make_their_own():
    cache = ResponseCache()

    def fail():
        raise LookupError("run 3 does not exist")

    with pytest.raises(LookupError):
        cache.fetch("k", SEVEN, fail, len, 1 << 20)
    assert not cache.holds("k", SEVEN)
    assert cache.fetch("k", SEVEN, lambda: (b"made", 7), len, 1 << 20) == b"made" and cache.holds("k", SEVEN)
