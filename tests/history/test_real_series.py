"""The committed real series (tests/data/history/, made by its make_history.sh with the runner), posted as the runner
posts them and read back from /api/history: where the setup did not change, no open change; where the kernel's
throttle moved from 16 to 8 MiB/s at run 21, the block tests' change is found at run 21 and named a setup change."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data" / "history"
THROTTLE_STEP_RUN = 21  # tests/data/history/README.md


def _post_series(client, series: str, tags: dict[str, str]) -> list[int]:
    folder = DATA / series
    lines = (folder / "lines.csv").read_text().splitlines()
    ids = []
    for number, line in enumerate(lines, 1):
        document = json.loads((folder / "docs" / f"{number:03d}.json").read_text())
        answer = client.post(
            "/api/runs",
            content=json.dumps({"csv": line, "document": document, "tags": tags}),
            headers={"Content-Type": "application/json"},
        )
        assert answer.status_code == 201, answer.text
        ids += answer.json()["created"]
    return ids


def _changes(body: dict) -> list[dict]:
    return [
        change | {"test": t["test"], "measure": t["measure"]}
        for s in body["series"]
        for t in s["tests"]
        for change in t["changes"]
    ]


@pytest.mark.slow
def test_forty_tmpfs_runs_on_a_loaded_machine_show_no_open_change(client):
    """The machine's load fell from 6.4 to 2.2 during these runs: every CPU-bound rate rose with the CPU it got.
    Each change the detection finds is one where the runner saw the test wait for a CPU far less: explained."""
    _post_series(client, "tmpfs", {"fs": "tmpfs"})
    body = client.get("/api/history", params={"machine": "history-tmpfs"}).json()
    changes = _changes(body)
    assert changes, "the load's steps are there to explain"
    assert [c for c in changes if c["state"] == "open"] == []
    assert all(c["kind"] == "machine_load" and c["state"] == "explained" for c in changes), changes
    assert all(c["label"].startswith("machine load: the test waited for a CPU") for c in changes)
    assert client.get("/api/changes").json() == {"changes": []}
    page = client.get("/history", params={"machine": "history-tmpfs"}).text
    marks = re.findall(r'class="change-mark" aria-hidden="true">(.)<', page)
    assert marks and set(marks) == {"◇"}, marks  # nothing marked better or worse
    assert "No change found in the storage" in page


@pytest.mark.slow
def test_forty_throttled_ext4_runs_show_no_change(client):
    """One setup, forty runs (tests/data/history/README.md): no change. get_block's rate is a mix of 16.3 and
    18-20 MB/s until run 15 (the page cache served part of its file), then the throttle's 16.3, a x0.87 step the
    mix's own spread hides from every look; the latencies, a few hundred us or 4-8 ms from run to run (a journal
    commit), are compared by rank, and three runs of one kind after a mix of both are no step."""
    _post_series(client, "ext4-throttled", {"fs": "ext4"})
    body = client.get("/api/history", params={"machine": "history-ext4"}).json()
    assert _changes(body) == []
    assert client.get("/api/changes").json() == {"changes": []}
    page = html.unescape(client.get("/history", params={"machine": "history-ext4"}).text)
    assert re.findall(r'class="change-mark" aria-hidden="true">(.)<', page) == []
    assert "No change found in the storage: every series is one stable stretch." in page


@pytest.mark.slow
def test_the_throttle_halved_at_run_21_is_found_there_as_a_setup_change(client):
    ids = _post_series(client, "throttle-step", {"fs": "ext4"})
    body = client.get("/api/history", params={"machine": "history-step"}).json()
    (series,) = body["series"]
    assert [s["run"] for s in series["setup_changes"]] == [ids[THROTTLE_STEP_RUN - 1]]
    assert "I/O throttle" in series["setup_changes"][0]["changes"][0]
    block = {
        t["test"]: t["changes"]
        for t in series["tests"]
        if t["measure"] == "rate" and t["test"] in ("put_block", "get_block")
    }
    assert set(block) == {"put_block", "get_block"}
    for test, changes in block.items():
        (change,) = [c for c in changes if c["run"] == ids[THROTTLE_STEP_RUN - 1]]
        assert 0.4 < change["ratio"] < 0.7, (test, change)
        assert change["kind"] == "setup_change" and change["state"] == "open"
        assert change["label"].startswith("setup change: I/O throttle read 16 MiB/s, write 16 MiB/s on loop")
        # get_block's first four runs beat the throttle from the page cache (19.7 MB/s, then 16.3 or 19.7): a
        # change of its own at run 5, under the same setup, explained by the page cache's share.
        others = [(c["run"], c["kind"], c["state"]) for c in changes if c is not change]
        if test == "get_block":
            assert others == [(ids[4], "page_cache", "explained")], others
        else:
            assert others == [], others
