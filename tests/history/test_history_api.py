"""A machine's history through the API: runs placed in time (the runner's start, else time=, else the upload's),
a step found at its run and stored, nothing found in an unchanged series, a setup change named, +++++ kept as a
bound, and a change triaged (PATCH /api/changes/{id}, the page's form) and listed on /changes and its feed."""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, datetime, timedelta
from xml.etree import ElementTree

from tests.helpers import LINE_198, with_field

PUT_BLOCK, REWRITE = 11, 13  # fields of a 1.98 line
START = datetime(2026, 10, 1, 2, 0, tzinfo=UTC)


def _line(machine: str, seed: int, put_block: float, rewrite: str = "+++++") -> str:
    line = with_field(with_field(LINE_198, 2, machine), 4, str(seed))
    line = with_field(with_field(line, PUT_BLOCK, str(round(put_block))), REWRITE, rewrite)
    return line if rewrite == "+++++" else with_field(line, REWRITE + 1, "20")


def _noisy(levels: list[float], cv: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [level * rng.lognormvariate(0, cv) for level in levels]


def _post(client, line: str, when: datetime, tags: str = "fs=ext4") -> int:
    params = [("tag", tag) for tag in tags.split()] + [("time", when.isoformat())]
    answer = client.post("/api/runs", params=params, content=line + "\n", headers={"Content-Type": "text/csv"})
    assert answer.status_code == 201, answer.text
    return answer.json()["created"][0]


def _series(client, machine: str, values: list[float], tags: str = "fs=ext4", seed: int = 1000) -> list[int]:
    return [_post(client, _line(machine, seed + i, v), START + timedelta(days=i), tags) for i, v in enumerate(values)]


def _test(answer: dict, configuration: str, test: str, measure: str = "rate") -> dict:
    series = next(s for s in answer["series"] if s["configuration"] == configuration)
    return next(t for t in series["tests"] if t["test"] == test and t["measure"] == measure)


def test_a_halved_block_write_is_found_at_the_run_it_starts_and_stored_open(client):
    ids = _series(client, "nightly", _noisy([400_000] * 10 + [200_000] * 6, 0.02, 1))
    answer = client.get("/api/history", params={"machine": "nightly"})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["group"] == []  # fs=ext4 on every run tells nothing apart
    put_block = _test(body, "", "put_block")
    assert [p["run"] for p in put_block["points"]] == ids
    (change,) = put_block["changes"]
    assert change["run"] == ids[10]
    assert 0.45 < change["ratio"] < 0.55
    low, high = change["ratio_ci95"]
    assert low < change["ratio"] < high
    assert change["state"] == "open" and isinstance(change["id"], int)
    assert [s["first_run"] for s in put_block["stretches"]] == [ids[0], ids[10]]
    # The constant tests (every run the same) and the other series show nothing.
    others = [t for s in body["series"] for t in s["tests"] if t is not put_block]
    assert others and all(not t["changes"] for t in others)
    # Stored: the list across the board and the feed name it.
    listed = client.get("/api/changes").json()["changes"]
    assert [(c["id"], c["machine"], c["test"], c["run"]) for c in listed] == [
        (change["id"], "nightly", "put_block", ids[10])
    ]
    feed = ElementTree.fromstring(client.get("/changes.atom").content)
    titles = [e.text for e in feed.iter("{http://www.w3.org/2005/Atom}title")]
    assert any(t and "nightly" in t and "put_block" in t and f"run {ids[10]}" in t for t in titles), titles


def test_an_unchanged_series_shows_one_stretch_and_no_change(client):
    _series(client, "steady", _noisy([400_000] * 30, 0.03, 2))
    body = client.get("/api/history", params={"machine": "steady"}).json()
    put_block = _test(body, "", "put_block")
    assert put_block["changes"] == []
    (stretch,) = put_block["stretches"]
    low, high = stretch["band95"]
    assert low < stretch["level"] < high
    assert client.get("/api/changes").json() == {"changes": []}


def test_runs_sit_at_their_time_not_their_upload_order(client):
    late = _post(client, _line("clock", 1, 1000), START + timedelta(days=2))
    early = _post(client, _line("clock", 2, 1000), START)
    # The runner's start time wins over time=.
    document = {"started_at": (START + timedelta(days=1)).isoformat(), "system": {"kernel": {"release": "6.1.0"}}}
    # An unescaped "+" of the zone arrives as a space, and is read as the "+" it was.
    middle = client.post(
        f"/api/runs?tag=fs=ext4&time={(START + timedelta(days=9)).isoformat()}",
        content=json.dumps({"csv": _line("clock", 3, 1000), "document": document}),
        headers={"Content-Type": "application/json"},
    ).json()["created"][0]
    points = _test(client.get("/api/history", params={"machine": "clock"}).json(), "", "put_block")["points"]
    assert [(p["run"], p["time"]) for p in points] == [
        (early, "2026-10-01T02:00:00Z"),
        (middle, "2026-10-02T02:00:00Z"),
        (late, "2026-10-03T02:00:00Z"),
    ]


def test_a_time_that_is_not_iso_8601_is_refused_naming_the_field(client):
    answer = client.post("/api/runs?time=yesterday", content=LINE_198 + "\n", headers={"Content-Type": "text/csv"})
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("time: 'yesterday' is not an ISO 8601 time")
    assert client.get("/api/runs").json()["total"] == 0
    in_json = client.post(
        "/api/runs",
        content=json.dumps({"csv": LINE_198, "time": "2026-13-01"}),
        headers={"Content-Type": "application/json"},
    )
    assert in_json.status_code == 400 and in_json.json()["detail"].startswith("time: '2026-13-01'")


def test_a_step_where_the_kernel_changed_is_labelled_a_setup_change(client):
    values = _noisy([400_000] * 8 + [300_000] * 8, 0.01, 3)
    ids = []
    for i, value in enumerate(values):
        kernel = "6.1.0" if i < 8 else "6.6.0"
        document = {
            "started_at": (START + timedelta(days=i)).isoformat(),
            "system": {"kernel": {"release": kernel}, "filesystem": {"type": "ext4", "mount_options": "rw,relatime"}},
        }
        answer = client.post(
            "/api/runs?tag=fs=ext4",
            content=json.dumps({"csv": _line("kernels", 3000 + i, value), "document": document}),
            headers={"Content-Type": "application/json"},
        )
        ids.append(answer.json()["created"][0])
    body = client.get("/api/history", params={"machine": "kernels"}).json()
    (change,) = _test(body, "", "put_block")["changes"]
    assert change["run"] == ids[8]
    assert change["kind"] == "setup_change"
    assert change["label"] == "setup change: kernel 6.1.0 → 6.6.0"
    (series,) = body["series"]
    assert series["setup_changes"] == [
        {"run": ids[8], "time": "2026-10-09T02:00:00Z", "changes": ["kernel 6.1.0 → 6.6.0"]}
    ]


def test_too_fast_runs_are_a_bound_never_zero(client):
    lines = [_line("fast", 4000 + i, 400_000, rewrite="+++++" if i % 3 == 0 else str(150_000 + i)) for i in range(9)]
    for i, line in enumerate(lines):
        _post(client, line, START + timedelta(days=i))
    rewrite = _test(client.get("/api/history", params={"machine": "fast"}).json(), "", "rewrite")
    too_fast = [p for p in rewrite["points"] if p["status"] == "too_fast"]
    assert len(too_fast) == 3
    # 512 MiB in under half a second: above 1,048,576 KiB/s.
    assert all(p["value"] is None and p["above"] == 512 * 1024 / 0.5 for p in too_fast)
    assert rewrite["changes"] == []


def test_a_change_marked_expected_keeps_its_triage_when_detection_runs_again(client):
    ids = _series(client, "triaged", _noisy([400_000] * 8 + [200_000] * 5, 0.02, 5))
    (change,) = client.get("/api/changes").json()["changes"]
    patched = client.patch(
        f"/api/changes/{change['id']}", json={"state": "expected", "note": "new RAID controller", "by": "ops"}
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["state"] == "expected" and patched.json()["triaged_by"] == "ops"
    # A new run changes the series' digest: detection runs again, and the change keeps its id and triage.
    _post(client, _line("triaged", 9999, 201_000), START + timedelta(days=30))
    again = _test(client.get("/api/history", params={"machine": "triaged"}).json(), "", "put_block")
    (same,) = again["changes"]
    assert (same["id"], same["run"], same["state"], same["note"]) == (
        change["id"],
        ids[8],
        "expected",
        "new RAID controller",
    )
    assert client.get("/api/changes").json() == {"changes": []}  # open ones only, by default
    assert [c["id"] for c in client.get("/api/changes?state=expected").json()["changes"]] == [change["id"]]
    assert client.patch(f"/api/changes/{change['id']}", json={"state": "gone"}).status_code == 422
    assert client.patch("/api/changes/999999", json={"state": "open"}).status_code == 404


def test_the_history_page_lists_the_change_and_offers_its_triage(client):
    ids = _series(client, "paged", _noisy([400_000] * 8 + [200_000] * 5, 0.02, 6))
    page = client.get("/history", params={"machine": "paged"})
    assert page.status_code == 200
    text = page.text
    assert f'href="/runs/{ids[8]}"' in text
    assert re.search(r"block write ×0\.\d\d", text), text
    assert "worse" in text
    data = json.loads(
        re.search(r'<script type="application/json" id="history-data">(.*?)</script>', text, re.S).group(1)
    )
    assert data["configs"][0]["runs"] == ids
    assert [c[0] for c in data["charts"]["put_block"][0]["changes"]] == [8]
    (change_id,) = [c[2] for c in data["charts"]["put_block"][0]["changes"]]
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', text).group(1)
    saved = client.post(
        f"/changes/{change_id}",
        data={"csrf_token": csrf, "state": "false_alarm", "note": "noisy neighbour", "back": "/history?machine=paged"},
        follow_redirects=False,
    )
    assert saved.status_code == 303, saved.text
    assert saved.headers["location"].endswith(f"/history?machine=paged#change-{change_id}")
    (row,) = client.get("/api/changes?state=false_alarm").json()["changes"]
    assert (row["id"], row["note"]) == (change_id, "noisy neighbour")
    assert client.get("/history", params={"machine": "nobody"}).status_code == 404
    machines = client.get("/history").text
    assert 'href="/history?machine=paged"' in machines


def test_a_step_in_every_configuration_at_once_is_a_machine_event(client):
    rng = random.Random(8)
    ids: dict[str, list[int]] = {"ext4": [], "xfs": []}
    for night in range(14):
        for fs in ids:
            level = (400_000 if fs == "ext4" else 300_000) * (0.7 if night >= 7 else 1)
            line = _line("shared-box", 5000 + night * 2 + (fs == "xfs"), level * rng.lognormvariate(0, 0.01))
            ids[fs].append(_post(client, line, START + timedelta(days=night, hours=fs == "xfs"), f"fs={fs}"))
    body = client.get("/api/history", params={"machine": "shared-box"}).json()
    for fs, runs in ids.items():
        (change,) = _test(body, f"fs={fs}", "put_block")["changes"]
        assert (change["run"], change["kind"]) == (runs[7], "machine_event"), change
        assert change["label"] == "machine event: every configuration changed here"
    # One configuration alone stepping is no machine event.
    _series(client, "one-box", _noisy([400_000] * 7 + [280_000] * 7, 0.01, 9), tags="fs=ext4", seed=7000)
    _series(client, "one-box", _noisy([300_000] * 14, 0.01, 10), tags="fs=xfs", seed=8000)
    (alone,) = _test(client.get("/api/history", params={"machine": "one-box"}).json(), "fs=ext4", "put_block")[
        "changes"
    ]
    assert alone["kind"] is None and alone["label"] is None
