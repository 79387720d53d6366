"""On every way in: tags from machine names, tags added by a re-upload, bonnie++'s text
report turned into its CSV line, tags with a space refused at input, and "compare these runs" after an upload."""

from pathlib import Path

import pytest

from tests.helpers import LINE_198, post_form, run_cli, with_field

REPORTS = Path(__file__).resolve().parents[1] / "data" / "reports"
SAMPLE_DATA = Path(__file__).resolve().parents[2] / "sample_data"
HEADER_198 = "format_version,bonnie_version,name,concurrency,seed,file_size,chunk_size,seeks,seek_proc_count"
PATTERN = "raid{raid}_chunk{chunk_kib}_{fs}"


def named(*names: str) -> str:
    return "".join(f"{with_field(LINE_198, 2, name)}\n" for name in names)


def tags_of(client, run_id: int) -> dict[str, str]:
    return client.get(f"/api/runs/{run_id}").json()["tags"]


def test_name_tags_tag_each_line_and_explicit_tags_win(client):
    body = named("raid5_chunk64_ext3", "raid6_chunk128_xfs")
    answer = client.post(
        "/api/runs",
        content=body,
        params={"name_tags": PATTERN, "tag": ["fs=btrfs", "site=lab"]},
        headers={"Content-Type": "text/csv"},
    )
    assert answer.status_code == 201, answer.text
    first, second = answer.json()["created"]
    assert tags_of(client, first) == {"raid": "5", "chunk_kib": "64", "fs": "btrfs", "site": "lab"}
    assert tags_of(client, second) == {"raid": "6", "chunk_kib": "128", "fs": "btrfs", "site": "lab"}


def test_a_name_that_does_not_fit_is_an_error_of_its_line_and_a_header_line_is_fine(client):
    body = "\n".join([HEADER_198, *named("raid5_chunk64_ext3", "baseline").splitlines()]) + "\n"
    refused = client.post(
        "/api/runs", content=body, params={"name_tags": PATTERN}, headers={"Content-Type": "text/csv"}
    )
    assert refused.status_code == 422
    [error] = refused.json()["errors"]
    assert error["line"] == 3 and error["field"] == "name"
    assert "'baseline' does not fit the name pattern" in error["error"]
    assert client.get("/api/runs").json()["total"] == 0
    partial = client.post(
        "/api/runs",
        content=body,
        params={"name_tags": PATTERN, "partial": "true"},
        headers={"Content-Type": "text/csv"},
    )
    assert partial.status_code == 201 and len(partial.json()["created"]) == 1 and partial.json()["error_count"] == 1


def test_a_bad_pattern_is_a_400_saying_what_is_wrong(client):
    answer = client.post(
        "/api/runs", content=named("a"), params={"name_tags": "raid{raid"}, headers={"Content-Type": "text/csv"}
    )
    assert answer.status_code == 400 and "is not closed" in answer.json()["detail"]


def test_json_and_multipart_uploads_take_name_tags_too(client):
    answer = client.post("/api/runs", json={"csv": named("raid5_chunk64_ext3"), "name_tags": PATTERN})
    assert tags_of(client, answer.json()["created"][0]) == {"raid": "5", "chunk_kib": "64", "fs": "ext3"}
    files = {"file": ("sweep.csv", named("raid1_chunk8_xfs").encode(), "text/csv")}
    answer = client.post("/api/runs", files=files, data={"name_tags": PATTERN})
    assert tags_of(client, answer.json()["created"][0]) == {"raid": "1", "chunk_kib": "8", "fs": "xfs"}


def test_reuploading_with_a_pattern_adds_the_tags_and_says_so(client):
    body = named("raid5_chunk64_ext3", "raid6_chunk64_ext3")
    first = client.post(
        "/api/runs", content=body, params={"tag": "fs=ext4"}, headers={"Content-Type": "text/csv"}
    ).json()
    again = client.post(
        "/api/runs", content=body, params={"name_tags": PATTERN}, headers={"Content-Type": "text/csv"}
    ).json()
    assert again["created"] == [] and again["duplicates"] == first["created"] and again["tagged"] == first["created"]
    # Added, never replaced: fs keeps the value it had.
    assert tags_of(client, first["created"][0]) == {"fs": "ext4", "raid": "5", "chunk_kib": "64"}


def test_a_text_report_is_stored_as_its_csv_line_with_its_notes(client):
    report, csv = (REPORTS / "real-default.txt").read_text().rstrip("\n").rsplit("\n", 1)
    text = f"some prose before\n{report}\n"
    answer = client.post("/api/runs", content=text, headers={"Content-Type": "text/plain"})
    assert answer.status_code == 201, answer.text
    [converted] = answer.json()["converted"]
    assert converted["line"] == 5 and converted["run_id"] == answer.json()["created"][0]
    assert any("seed" in note for note in converted["notes"])
    stored = client.get(f"/api/runs/{converted['run_id']}").json()
    assert stored["raw_line"] == converted["csv_line"]
    # Every column the report carries is bonnie++'s own: only the seed (not in a 1.9x report) differs.
    assert converted["csv_line"].split(",")[5:] == csv.split(",")[5:]


SAME_RUN_NOTE = (
    "the same run as the CSV line on line {}, which is stored instead: every figure of the report equals that "
    "line's, within the report's rounding"
)


@pytest.mark.parametrize(
    "path",
    [*sorted(REPORTS.glob("real-*.txt")), REPORTS / "runner-0.1.0.txt", REPORTS / "seed-1.94-jr4s.txt"],
    ids=lambda path: path.stem,
)
def test_a_report_with_its_csv_line_stores_the_csv_line_once(client, path):
    """bonnie++'s stdout: the report, then its CSV line. The CSV line is stored; the report is that run (its
    figures are the line's, a rounded one within its rounding, a cut name a start of the line's), which the
    answer says."""
    text = path.read_text()
    lines = text.rstrip("\n").split("\n")
    csv_line_no = next(number for number, line in enumerate(lines, 1) if line.count(",") > 20)
    csv = lines[csv_line_no - 1]
    answer = client.post("/api/runs", content=text, headers={"Content-Type": "text/plain"}).json()
    assert len(answer["created"]) == 1, answer
    [converted] = answer["converted"]
    assert converted["run_id"] == answer["created"][0] and converted["csv_line"] == csv
    assert converted["notes"] == [SAME_RUN_NOTE.format(csv_line_no)]
    assert client.get(f"/api/runs/{answer['created'][0]}").json()["raw_line"] == csv


def test_two_runs_of_one_machine_pasted_together_are_two_runs(client):
    """Two real runs of one machine with the same options, pasted together, only the first with its CSV line
    under it: the second report is another run (its figures differ) and is stored; the first is the CSV line's."""
    first = (REPORTS / "real-lab1-run1.txt").read_text()
    second_report, second_csv = (REPORTS / "real-lab1-run2.txt").read_text().rstrip("\n").rsplit("\n", 1)
    paste = first + "\n" + second_report + "\n"
    first_csv = first.rstrip("\n").rsplit("\n", 1)[1]
    answer = client.post("/api/runs", content=paste, headers={"Content-Type": "text/plain"})
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert len(body["created"]) == 2 and body["errors"] == []
    stored = [client.get(f"/api/runs/{run_id}").json() for run_id in body["created"]]
    assert stored[0]["raw_line"] == first_csv
    assert stored[1]["machine"] == "lab1" and stored[1]["results"]["putc"]["value"] == 1458
    # The second run's CSV line without the seed (not in a 1.9x report) and 2.00a's garbled file-test rates.
    assert stored[1]["raw_line"].split(",")[5:21] == second_csv.split(",")[5:21]
    first_note, second = body["converted"]
    assert first_note == {
        "line": 4,
        "run_id": body["created"][0],
        "csv_line": first_csv,
        "notes": [SAME_RUN_NOTE.format(11)],
        "stored_before": False,
    }
    assert second["line"] == 16 and second["run_id"] == body["created"][1]
    assert second["csv_line"] == stored[1]["raw_line"]


def test_an_unreadable_report_row_is_named_by_its_line(client):
    report = (REPORTS / "real-chunk-seeks-procs.txt").read_text().rstrip("\n").rsplit("\n", 1)[0]
    broken = report.replace("971k  68", "971k  xx")
    answer = client.post("/api/runs", content=f"\n\n{broken}\n", headers={"Content-Type": "text/plain"})
    assert answer.status_code == 422
    assert [error["line"] for error in answer.json()["errors"]] == [6]
    assert client.get("/api/runs").json()["total"] == 0


def test_a_tag_with_a_space_is_refused_at_input(client):
    api = client.post(
        "/api/runs", content=named("h"), params={"tag": "fs=my xfs"}, headers={"Content-Type": "text/csv"}
    )
    assert api.status_code == 400 and "contains a space" in api.json()["detail"]
    json_upload = client.post("/api/runs", json={"csv": named("h"), "tags": {"fs": "my xfs"}})
    assert json_upload.status_code == 400 and "contains a space" in json_upload.json()["detail"]
    page = post_form(
        client, "/upload", {"lines": named("h"), "tags": "fs=xfs raid=5 6"}, headers={"HX-Request": "true"}
    )
    assert page.status_code == 400 and "is not of the form KEY=VALUE" in page.text
    assert client.get("/api/runs").json()["total"] == 0
    created = client.post("/api/runs", content=named("h"), headers={"Content-Type": "text/csv"}).json()["created"][0]
    patch = client.patch(f"/api/runs/{created}", json={"tags": {"fs": "a b"}})
    assert patch.status_code == 400 and "contains a space" in patch.json()["detail"]
    form = post_form(
        client, f"/runs/{created}/tags", {"key": ["fs"], "value": ["my xfs"]}, headers={"HX-Request": "true"}
    )
    assert form.status_code == 422 and "contains a space" in form.text
    assert client.get(f"/api/runs/{created}").json()["tags"] == {}


def test_upload_page_takes_a_pattern_and_a_report_and_offers_to_compare(client):
    form = {"lines": named("raid5_chunk64_ext3", "raid6_chunk64_ext3"), "name_tags": PATTERN}
    page = post_form(client, "/upload", form, headers={"HX-Request": "true"})
    assert page.status_code == 201, page.text
    ids = [run["id"] for run in client.get("/api/runs").json()["items"]]
    # The runs differ in one tag (raid): the comparison offered first is grouped by it.
    assert f'href="/compare?runs={",".join(map(str, sorted(ids)))}&amp;group=raid"' in page.text
    assert tags_of(client, ids[0])["raid"] in ("5", "6")
    form["tags"] = "site=lab"
    again = post_form(client, "/upload", form, headers={"HX-Request": "true"})
    assert "New tags added to 2 runs already stored" in again.text
    report = (REPORTS / "real-chunk-seeks-procs.txt").read_text().rstrip("\n").rsplit("\n", 1)[0]
    converted = post_form(client, "/upload", {"lines": report}, headers={"HX-Request": "true"})
    assert (
        converted.status_code == 201 and "Read from the text report" in converted.text and "line 4 →" in converted.text
    )
    bad = post_form(client, "/upload", {"lines": named("x"), "name_tags": "{a}{b}"}, headers={"HX-Request": "true"})
    assert bad.status_code == 400 and "needs text between the two placeholders" in bad.text


@pytest.mark.slow
def test_cli_name_tags_report_and_space_refusal(tmp_path):
    sweep = tmp_path / "sweep.csv"
    sweep.write_text(named("raid5_chunk64_ext3"))
    done = run_cli(tmp_path, "ingest", sweep, "--name-tags", PATTERN)
    assert done.returncode == 0, done.stderr
    again = run_cli(tmp_path, "ingest", sweep, "--tag", "site=lab")
    assert "1 duplicates, 1 already stored given new tags" in again.stdout
    refused = run_cli(tmp_path, "ingest", sweep, "--tag", "fs=a b")
    assert refused.returncode == 2 and "contains a space" in refused.stderr
    report = tmp_path / "report.txt"
    report.write_text((REPORTS / "real-chunk-seeks-procs.txt").read_text().rstrip("\n").rsplit("\n", 1)[0])
    read = run_cli(tmp_path, "ingest", report)
    assert read.returncode == 0, read.stderr
    assert f"{report}:4: text report -> run " in read.stdout and ": 1.98,2.00a,chunk-seeks-procs," in read.stdout


@pytest.mark.slow
def test_the_sample_manifest_loads_an_empty_database_once_with_its_tags(tmp_path):
    """What `make samples` runs: six sweep configurations of three runs each, tagged from their names."""
    args = ("ingest", "--if-empty", "--tag", "source=sample_data", "--manifest", SAMPLE_DATA / "manifest")
    loaded = run_cli(tmp_path, *args)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.count("sample_data/sweep-") == 6
    assert run_cli(tmp_path, *args).stdout.strip() == "database already has runs; nothing loaded"
    from sqlalchemy import create_engine, text

    engine = create_engine(f"sqlite:///{tmp_path / 'cli.db'}")
    with engine.connect() as connection:
        rows = connection.execute(
            text(
                "select r.machine, t.key, t.value from run r join tag t on t.run_id = r.id where r.machine like 'sweep-%'"
            )
        ).all()
    engine.dispose()
    tags: dict[str, dict[str, str]] = {}
    for machine, key, value in rows:
        tags.setdefault(machine, {})[key] = value
    assert len(tags) == 6
    assert tags["sweep-xfs-loop-sync"] == {
        "fs": "xfs",
        "dev": "loop",
        "mode": "sync",
        "sweep": "media-sync",
        "ram_mib": "24105",
        "source": "sample_data",
    }
