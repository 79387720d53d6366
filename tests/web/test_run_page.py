"""The run page shows what limited each test, from the runner's evidence."""

import copy
import json

from markupsafe import escape

from tests.helpers import DATA_DIR

HOSTILE = "<img src=x onerror=alert(1)>"


def _golden_document() -> dict:
    return json.loads((DATA_DIR / "runner-document.json").read_text())


def test_each_tests_limiter_is_shown_beside_its_result_with_the_evidence(client):
    document = _golden_document()
    line_run = document["runs"][0]
    run_id = client.post("/api/runs", json={"csv": line_run["csv"], "document": document}).json()["created"][0]
    page = client.get(f"/runs/{run_id}").text
    limiters = {test: facts["limiter"] for test, facts in line_run["tests"].items() if facts.get("limiter")}
    assert limiters, "the golden document has limiters"
    assert "Limited by" in page and 'Evidence behind "Limited by"' in page
    for test, limiter in limiters.items():
        row = page.split(f'<th scope="row">{test}</th>', 1)[1].split("</tr>", 1)[0]
        assert f'<code class="limiter-{limiter["code"]}">{limiter["code"]}</code>' in row, test
        assert str(escape(limiter["text"])) in row, test
    assert "device_util_pct" in page and "cpu_of_wall_pct" in page


def test_a_line_without_runner_evidence_has_no_limited_by_column(client):
    document = _golden_document()
    line = document["runs"][0]["csv"]
    for facts in document["runs"][0]["tests"].values():
        facts.pop("limiter", None)
    run_id = client.post("/api/runs", json={"csv": line, "document": document}).json()["created"][0]
    assert "Limited by" not in client.get(f"/runs/{run_id}").text


def test_a_hostile_limiter_is_text(client):
    document = copy.deepcopy(_golden_document())
    tests = document["runs"][0]["tests"]
    first = next(test for test, facts in tests.items() if facts.get("limiter"))
    tests[first]["limiter"]["text"] = HOSTILE
    tests[first]["limiter"]["code"] = HOSTILE
    run_id = client.post("/api/runs", json={"csv": document["runs"][0]["csv"], "document": document}).json()["created"][
        0
    ]
    page = client.get(f"/runs/{run_id}").text
    assert HOSTILE not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
