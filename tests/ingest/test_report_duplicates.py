"""A text report of a run stored before as its CSV line (bonnie++'s CSV line uploaded, then its report): named as
that run and not stored again, in the API's answer, the upload page and the CLI. Real bonnie++ 2.00a reports
with the CSV line bonnie++ printed with each (tests/data/reports)."""

from __future__ import annotations

import html

import pytest

from tests.helpers import post_form, run_cli
from tests.ingest.test_report_text import REAL, REPORTS, split_real

STORED_NOTE = (
    "the text report of run {}, stored before as its CSV line: not stored again (every figure the report shows "
    "equals that line's, within the report's rounding)"
)


def upload(client, text: str, **params: str) -> dict:
    answer = client.post("/api/runs", content=text, params=params, headers={"Content-Type": "text/plain"})
    assert answer.status_code == 201, answer.text
    return answer.json()


@pytest.mark.parametrize("path", [*REAL, REPORTS / "runner-0.1.0.txt"], ids=lambda path: path.stem)
def test_the_report_of_a_stored_csv_line_names_that_run(client, path):
    """Every real report (rounded rates, a cut name, 2.00a's wrong file-test rates, no seed) is found as the run
    its own CSV line stored: one run in all, the answer naming it."""
    report, csv = split_real(path)
    [run_id] = upload(client, csv + "\n")["created"]
    answer = upload(client, report)
    assert answer["created"] == [] and answer["duplicates"] == [run_id], answer
    [converted] = answer["converted"]
    assert converted == {
        "line": converted["line"],
        "run_id": run_id,
        "csv_line": csv,
        "notes": [STORED_NOTE.format(run_id)],
        "stored_before": True,
    }
    assert client.get("/api/runs").json()["total"] == 1
    assert client.get(f"/api/runs/{run_id}").json()["raw_line"] == csv  # the exact line stays


def test_another_run_of_the_same_machine_and_options_is_stored(client):
    """lab1's two runs share machine, size and options: the second's report is not the first's stored line (its
    figures differ), so it is stored as a run of its own."""
    _, first_csv = split_real(REPORTS / "real-lab1-run1.txt")
    second_report, _ = split_real(REPORTS / "real-lab1-run2.txt")
    [first] = upload(client, first_csv + "\n")["created"]
    answer = upload(client, second_report)
    [second] = answer["created"]
    assert second != first and answer["duplicates"] == []
    [converted] = answer["converted"]
    assert converted["run_id"] == second and converted["stored_before"] is False
    assert client.get("/api/runs").json()["total"] == 2


def test_the_report_s_tags_go_to_the_stored_run(client):
    """As for any line stored before: the upload's tags the run lacks are added to it, never replacing one."""
    report, csv = split_real(REPORTS / "real-default.txt")
    [run_id] = upload(client, csv + "\n", tag="fs=ext4")["created"]
    answer = upload(client, report, tag=["fs=xfs", "disk=ssd"])
    assert answer["duplicates"] == [run_id] and answer["tagged"] == [run_id]
    assert client.get(f"/api/runs/{run_id}").json()["tags"] == {"fs": "ext4", "disk": "ssd"}


def test_the_same_report_twice_is_a_plain_duplicate(client):
    """The report's own converted line stored before is the same line: a duplicate as usual, not 'stored before as
    its CSV line'."""
    report, _ = split_real(REPORTS / "real-gigabyte.txt")
    [run_id] = upload(client, report)["created"]
    answer = upload(client, report)
    assert answer["created"] == [] and answer["duplicates"] == [run_id]
    [converted] = answer["converted"]
    assert converted["run_id"] == run_id and converted["stored_before"] is False


def test_a_paste_of_report_and_csv_line_after_the_csv_line_stays_one_run(client):
    """bonnie++'s whole stdout after its CSV line alone: the paste's CSV line is the same run (and a duplicate)."""
    text = (REPORTS / "real-default.txt").read_text()
    _, csv = split_real(REPORTS / "real-default.txt")
    [run_id] = upload(client, csv + "\n")["created"]
    answer = upload(client, text)
    assert answer["created"] == [] and answer["duplicates"] == [run_id]
    assert client.get("/api/runs").json()["total"] == 1


def test_the_csv_line_after_its_report_is_stored_as_the_exact_run(client):
    """The reverse order: the report's run is stored as converted (no seed, rounded rates), then bonnie++'s CSV
    line comes. The line is stored as a run of its own, the exact one
    (docs/decisions.md, "A text report of a run stored before"); uploading the report again then names that exact
    run."""
    report, csv = split_real(REPORTS / "real-gigabyte.txt")
    [converted_id] = upload(client, report)["created"]
    [exact_id] = client.post("/api/runs", content=csv + "\n", headers={"Content-Type": "text/csv"}).json()["created"]
    assert exact_id != converted_id
    again = upload(client, report)
    assert again["duplicates"] == [exact_id] and again["converted"][0]["stored_before"] is True
    assert client.get("/api/runs").json()["total"] == 2  # the converted run stays until someone deletes it


def test_the_upload_page_says_the_report_was_stored_before(client):
    report, csv = split_real(REPORTS / "real-measured-files-ext4.txt")
    [run_id] = upload(client, csv + "\n")["created"]
    page = post_form(client, "/upload", {"lines": report}, headers={"HX-Request": "true"})
    assert page.status_code == 201, page.text
    assert "0 runs created, 1 duplicate" in page.text
    assert f'href="/runs/{run_id}">#{run_id}</a> <strong class="stored-before">stored before</strong>' in page.text
    assert html.unescape(page.text).count(STORED_NOTE.format(run_id)) == 1
    # The stored line is bonnie++'s own: nothing of the report's (its seed, 2.00a's wrong file-test rates) is lost.
    assert "not in the text report" not in page.text and "not the rate" not in page.text


def test_the_cli_names_the_stored_run(tmp_path):
    report, csv = split_real(REPORTS / "real-default.txt")
    (tmp_path / "line.csv").write_text(csv + "\n")
    (tmp_path / "report.txt").write_text(report)
    assert run_cli(tmp_path, "ingest", "line.csv").returncode == 0
    done = run_cli(tmp_path, "ingest", "report.txt")
    assert done.returncode == 0, done.stderr
    assert "0 created, 1 duplicates" in done.stdout
    assert "report.txt:4: text report -> run 1 (stored before, not stored again): " + csv in done.stdout
    assert STORED_NOTE.format(1) in done.stdout
