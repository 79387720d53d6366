"""The answers of /history and /api/history a process keeps: another machine's upload leaves them (the first page
after it is no read of the kept page), a triage or a new run of the machine replaces them, in whichever process
it was made."""

from __future__ import annotations

import json
import re
from datetime import timedelta

from app.history import changes as history_changes
from app.history import snapshot
from app.store.db import get_sessionmaker
from tests.history.test_history_api import START, _line, _noisy, _post, _series


def _page_data(client, machine: str) -> dict:
    page = client.get("/history", params={"machine": machine})
    assert page.status_code == 200, page.text
    return json.loads(
        re.search(r'<script type="application/json" id="history-data">(.*?)</script>', page.text, re.S)[1]
    )


def _states(client, machine: str) -> list[str]:
    answer = client.get("/api/history", params={"machine": machine}).json()
    return [c["state"] for s in answer["series"] for t in s["tests"] for c in t["changes"]]


def test_another_machine_s_upload_leaves_the_answers_a_process_keeps(client, monkeypatch):
    _series(client, "kept", _noisy([400_000] * 8 + [200_000] * 5, 0.02, 11))
    before = _page_data(client, "kept")
    assert _states(client, "kept") == ["open"]
    _post(client, _line("other", 1, 300_000), START)
    reads = []
    monkeypatch.setattr(snapshot, "load", lambda *args: reads.append(args))
    assert _page_data(client, "kept") == before
    assert _states(client, "kept") == ["open"]
    assert reads == []


def test_a_triage_elsewhere_and_a_new_run_replace_the_answers_a_process_keeps(client):
    _series(client, "triaged", _noisy([400_000] * 8 + [200_000] * 5, 0.02, 12))
    data = _page_data(client, "triaged")
    assert _states(client, "triaged") == ["open"]
    assert "state-false_alarm" not in client.get("/history", params={"machine": "triaged"}).text
    (change_id,) = [c[2] for c in data["charts"]["put_block"][0]["changes"]]
    # Triaged as another worker or the CLI would: nothing of this process is told.
    with get_sessionmaker()() as session:
        history_changes.triage(session, change_id, state="false_alarm", note=None, by="ops")
        session.commit()
    assert _states(client, "triaged") == ["false_alarm"]
    assert "state-false_alarm" in client.get("/history", params={"machine": "triaged"}).text
    runs = len(data["configs"][0]["runs"])
    _post(client, _line("triaged", 99, 200_000), START + timedelta(days=40))
    assert len(_page_data(client, "triaged")["configs"][0]["runs"]) == runs + 1


def _kept_machines() -> set[str]:
    from sqlalchemy import select

    from app.store.models import history_state_table

    with get_sessionmaker()() as session:
        return set(session.scalars(select(history_state_table.c.machine)))


def test_detection_after_an_upload_skips_a_machine_too_young_to_have_a_change(client):
    """A change needs three runs a side: an upload leaves a machine of fewer than six runs to its first page, so
    an upload of thousands of new machines does not read, analyse, keep and commit each of them."""
    young = [_line(f"young{i}", i, 300_000) for i in range(200)]
    answer = client.post("/api/runs", content="\n".join(young) + "\n", headers={"Content-Type": "text/csv"})
    assert answer.status_code == 201, answer.text
    _series(client, "grown", _noisy([400_000] * 5, 0.02, 13))
    assert _kept_machines() == set()
    _post(client, _line("young7", 99, 300_000), START)
    assert _kept_machines() == set()
    _post(client, _line("grown", 99, 400_000), START + timedelta(days=5))  # its sixth run
    assert _kept_machines() == {"grown"}
    # a young machine's first page finds what there is: nothing yet
    page = client.get("/history", params={"machine": "young7"})
    assert page.status_code == 200 and "Nothing changed beyond the noise" in page.text
