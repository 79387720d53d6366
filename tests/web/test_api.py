"""The HTTP API against a real SQLite file: uploads in every form, duplicates, errors, reads, edits."""

import json

import pytest
from fastapi.testclient import TestClient

from tests.corpus_expected import EXPECTED
from tests.helpers import (
    CONTRACT_LINE,
    CORPUS_DIR,
    LINE_103,
    LINE_197,
    LINE_198,
    post_csv,
    set_setting,
    with_field,
)


def test_contract_example_round_trip(client):
    response = client.post(
        "/api/runs?tag=raid=5&tag=chunk_kib=64&tag=fs=ext3&label=ext3 on RAID-5",
        content=CONTRACT_LINE + "\n",
        headers={"Content-Type": "text/csv"},
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["created"] and body["duplicates"] == [] and body["errors"] == []
    run = client.get(f"/api/runs/{body['created'][0]}").json()
    assert run["upload_id"] == body["upload_id"]
    assert run["created_at"].endswith("Z") or run["created_at"].endswith("+00:00")
    assert {
        k: run[k]
        for k in (
            "machine",
            "format_version",
            "bonnie_version",
            "concurrency",
            "seed",
            "file_size_mib",
            "io_chunk_bytes",
            "seek_count",
            "seek_procs",
            "label",
            "tags",
            "raw_line",
            "document",
        )
    } == {
        "machine": "raid5_chunk64_ext3",
        "format_version": "1.98",
        "bonnie_version": "2.00a",
        "concurrency": 1,
        "seed": "1795352513",
        "file_size_mib": 512,
        "io_chunk_bytes": None,
        "seek_count": 8192,
        "seek_procs": 5,
        "label": "ext3 on RAID-5",
        "tags": {"raid": "5", "chunk_kib": "64", "fs": "ext3"},
        "raw_line": CONTRACT_LINE,
        "document": None,
    }
    assert run["file_test"] == {"num_files": 16, "max_size": None, "min_size": None, "num_dirs": None, "link": None}
    assert list(run["results"]) == [
        "putc",
        "put_block",
        "rewrite",
        "getc",
        "get_block",
        "seeks",
        "seq_create",
        "seq_stat",
        "seq_del",
        "ran_create",
        "ran_stat",
        "ran_del",
    ]
    assert run["results"]["putc"] == {"status": "ok", "value": 869, "unit": "KiB/s", "cpu_pct": 96, "latency_us": 18213}
    assert run["results"]["rewrite"] == {
        "status": "too_fast",
        "value": None,
        "unit": "KiB/s",
        "cpu_pct": None,
        "latency_us": 1098,
    }
    assert run["results"]["seeks"] == {
        "status": "too_fast",
        "value": None,
        "unit": "seeks/s",
        "cpu_pct": None,
        "latency_us": 7618,
    }
    assert run["results"]["seq_create"] == {
        "status": "ok",
        "value": 16795,
        "unit": "files/s",
        "cpu_pct": 94,
        "latency_us": 10730,
    }


@pytest.mark.parametrize("name", sorted({key[0] for key in EXPECTED}))
def test_corpus_files_through_the_api_match_the_spec(client, name):
    data = (CORPUS_DIR / name).read_bytes()
    response = client.post("/api/runs", files={"file": (name, data, "text/csv")})
    assert response.status_code == 201, response.text
    ids = response.json()["created"]
    line_numbers = sorted(line for file, line in EXPECTED if file == name)
    assert len(ids) == len(line_numbers)
    for run_id, line_no in zip(ids, line_numbers, strict=True):
        run = client.get(f"/api/runs/{run_id}").json()
        expected = EXPECTED[(name, line_no)]
        for key, value in expected.items():
            if key == "results":
                got = {t: (r["status"], r["value"], r["cpu_pct"], r["latency_us"]) for t, r in run["results"].items()}
                assert got == value, (name, line_no)
            else:
                assert run[key] == value, (name, line_no, key)
    export = client.get("/api/runs/export.csv", params={"upload": response.json()["upload_id"]})
    assert export.content == data if data.endswith(b"\n") else export.content == data + b"\n"


def test_reupload_creates_nothing_and_lists_duplicates(client):
    data = (CORPUS_DIR / "public-sample.csv").read_bytes()
    first = client.post("/api/runs", files={"file": ("a.csv", data)}).json()
    again = client.post("/api/runs", content=data, headers={"Content-Type": "text/plain"})
    assert again.status_code == 201
    assert again.json()["created"] == [] and again.json()["duplicates"] == first["created"]
    assert client.get("/api/runs").json()["total"] == 29


def test_line_repeated_within_an_upload_is_stored_once(client):
    body = post_csv(client, f"{LINE_198}\n{LINE_103}\n{LINE_198}\n").json()
    assert len(body["created"]) == 2
    assert body["duplicates"] == [body["created"][0]]


def test_one_bad_line_is_422_and_nothing_is_stored(client):
    text = f"# header comment\n{LINE_198}\n{LINE_103}\n{with_field(LINE_197, 13, 'x')}\n"
    response = post_csv(client, text)
    assert response.status_code == 422
    assert response.json() == {
        "detail": "1 of 3 lines is invalid; nothing was stored",
        "errors": [{"line": 4, "field": "getc", "error": "getc is 'x', not a whole number"}],
        "error_count": 1,
    }
    assert client.get("/api/runs").json()["total"] == 0


def test_partial_stores_the_good_lines(client):
    text = f"{LINE_198}\nnot a line\n{LINE_103}\n"
    response = post_csv(client, text, partial="true")
    assert response.status_code == 201
    body = response.json()
    assert len(body["created"]) == 2 and [e["line"] for e in body["errors"]] == [2]
    assert client.get("/api/runs").json()["total"] == 2


@pytest.mark.parametrize("text", ["", "\n\n# nothing\n", "garbage\n"])
@pytest.mark.parametrize("partial", ["true", "false"])
def test_upload_without_a_valid_line_is_422(client, text, partial):
    response = post_csv(client, text, partial=partial)
    assert response.status_code == 422
    assert isinstance(response.json()["detail"], str)


def test_curl_data_binary_without_content_type_is_read_as_csv(client):
    response = client.post("/api/runs", content=LINE_198, headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 201, response.text


def test_json_upload_stores_the_document_and_merges_tags(client):
    document = {"system": {"fs_type": "xfs", "ram_mib": 2048}, "tests": {"put_block": {"wall_s": 1.5}}}
    response = client.post(
        "/api/runs?tag=raid=5&tag=fs=ext4",
        json={"csv": f"{LINE_198}\n{LINE_197}\n", "document": document, "tags": {"fs": "xfs"}, "label": "runner"},
    )
    assert response.status_code == 201, response.text
    for run_id in response.json()["created"]:
        run = client.get(f"/api/runs/{run_id}").json()
        assert run["document"] == document
        assert run["tags"] == {"raid": "5", "fs": "xfs"}
        assert run["label"] == "runner"
    listed = client.get("/api/runs").json()["items"][0]
    assert "document" not in listed


@pytest.mark.parametrize(
    "body", ['{"csv": 5}', "{not json", '{"csv": "x", "extra": 1}', '{"csv": "x", "tags": {"a": 1}}']
)
def test_malformed_json_upload_is_a_clear_400(client, body):
    response = client.post("/api/runs", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert "JSON upload" in response.json()["detail"]


def test_upload_over_the_size_limit_is_413(client, monkeypatch):
    set_setting(monkeypatch, "MAX_UPLOAD_BYTES", "1000")
    response = post_csv(client, (LINE_198 + "\n") * 10)
    assert response.status_code == 413
    assert "limit" in response.json()["detail"]
    assert client.get("/api/runs").json()["total"] == 0


def test_line_over_the_length_limit_is_its_own_error(client, monkeypatch):
    set_setting(monkeypatch, "MAX_LINE_BYTES", "150")
    response = post_csv(client, f"{LINE_103}\n{LINE_198}\n", partial="true")
    assert response.status_code == 201
    assert response.json()["errors"][0]["line"] == 2
    assert "limit is 150" in response.json()["errors"][0]["error"]


def test_non_utf8_line_is_reported_by_number(client):
    response = post_csv(client, LINE_198.encode() + b"\n\xc3\x28bad\n")
    assert response.status_code == 422
    assert response.json()["errors"][0]["line"] == 2 and "UTF-8" in response.json()["errors"][0]["error"]


def test_list_filters_and_paging(client):
    post_csv(client, f"{LINE_198}\n{LINE_197}\n", tag=["fs=xfs", "raid=5"])
    post_csv(client, LINE_103, tag="fs=ext3")
    runs = client.get("/api/runs").json()
    assert runs["total"] == 3
    assert [r["machine"] for r in runs["items"]] == ["mindpipe", "wifo3-02", "vm"]  # newest first
    assert client.get("/api/runs", params={"machine": "vm"}).json()["total"] == 1
    assert client.get("/api/runs", params={"format": "1.03"}).json()["items"][0]["machine"] == "mindpipe"
    assert client.get("/api/runs", params=[("tag", "fs=xfs"), ("tag", "raid=5")]).json()["total"] == 2
    assert client.get("/api/runs", params=[("tag", "fs=xfs"), ("tag", "raid=6")]).json()["total"] == 0
    page = client.get("/api/runs", params={"limit": 1, "offset": 1}).json()
    assert page["total"] == 3 and [r["machine"] for r in page["items"]] == ["wifo3-02"]
    assert client.get("/api/runs", params={"limit": 1001}).status_code == 422
    bad_tag = client.get("/api/runs", params={"tag": "nokey"})
    assert bad_tag.status_code == 400 and "KEY=VALUE" in bad_tag.json()["detail"]


def test_export_is_oldest_first_and_filtered(client):
    post_csv(client, f"{LINE_198}\n", tag="fs=xfs")
    post_csv(client, f"{LINE_103}\n{LINE_197}\n")
    export = client.get("/api/runs/export.csv")
    assert export.headers["content-type"].startswith("text/csv")
    assert export.text == f"{LINE_198}\n{LINE_103}\n{LINE_197}\n"
    assert client.get("/api/runs/export.csv", params={"tag": "fs=xfs"}).text == f"{LINE_198}\n"


def test_export_is_a_csv_file_that_keeps_formula_like_names_as_uploaded(client):
    """The export is bonnie++'s lines byte for byte: a name a spreadsheet would run as a formula stays as it is
    (README, "Compare configurations", says how to open the file safely). It comes as a .csv file to save."""
    names = ['=HYPERLINK("http://example.com")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3"]
    lines = [with_field(LINE_198, 2, name) for name in names] + [with_field(LINE_103, 0, "=1+1")]
    created = post_csv(client, "\n".join(lines) + "\n").json()["created"]
    for params in ({}, {"runs": ",".join(map(str, created))}):
        export = client.get("/api/runs/export.csv", params=params)
        assert export.headers["content-type"] == "text/csv; charset=utf-8"
        assert export.headers["content-disposition"] == 'attachment; filename="bonnieboard-runs.csv"'
        assert export.content == "".join(f"{line}\n" for line in lines).encode()


def test_crlf_upload_exports_its_lines(client):
    post_csv(client, f"{LINE_198}\r\n{LINE_103}\r\n")
    assert client.get("/api/runs/export.csv").text == f"{LINE_198}\n{LINE_103}\n"


def test_patch_replaces_label_and_tag_set(client):
    run_id = post_csv(client, LINE_198, tag=["a=1", "b=2"], label="old").json()["created"][0]
    patched = client.patch(f"/api/runs/{run_id}", json={"tags": {"c": "3"}})
    assert patched.status_code == 200
    assert patched.json()["tags"] == {"c": "3"} and patched.json()["label"] == "old"
    patched = client.patch(f"/api/runs/{run_id}", json={"label": None})
    assert patched.json()["label"] is None and patched.json()["tags"] == {"c": "3"}
    assert client.get("/api/runs", params={"tag": "a=1"}).json()["total"] == 0
    assert client.patch(f"/api/runs/{run_id}", json={"colour": "red"}).status_code == 422


def test_delete_then_reupload_creates_again(client):
    run_id = post_csv(client, LINE_198, tag="a=1").json()["created"][0]
    assert client.delete(f"/api/runs/{run_id}").status_code == 204
    assert client.get(f"/api/runs/{run_id}").status_code == 404
    assert client.delete(f"/api/runs/{run_id}").status_code == 404
    assert len(post_csv(client, LINE_198).json()["created"]) == 1


def test_errors_are_json_with_a_string_detail(client):
    for response in (
        client.get("/api/runs/999"),
        client.get("/api/runs/abc"),
        client.get("/api/nowhere"),
        client.post("/api/runs", files={"other": ("a.csv", b"x")}),
    ):
        assert response.headers["content-type"].startswith("application/json")
        assert isinstance(response.json()["detail"], str), response.json()


def test_openapi_is_served(client):
    spec = client.get("/openapi.json").json()
    assert "/api/runs" in spec["paths"] and "/api/runs/{run_id}" in spec["paths"]
    assert client.get("/docs").status_code == 200
    json.dumps(spec)


def test_a_deleted_runs_id_is_never_given_to_another_run(client):
    run_id = post_csv(client, LINE_198).json()["created"][0]
    assert client.delete(f"/api/runs/{run_id}").status_code == 204
    (new_id,) = post_csv(client, LINE_103).json()["created"]
    assert new_id > run_id


@pytest.mark.parametrize("params", [{"machine": "a\x00b"}, {"format": "\x00"}, {"machine": "x" * 5000}])
def test_filters_with_nul_or_huge_text_are_a_400_not_a_server_error(client, params):
    for url in ("/api/runs", "/api/runs/export.csv"):
        response = client.get(url, params=params)
        assert response.status_code == 400
        assert next(iter(params)) in response.json()["detail"]
    assert client.get("/", params=params).status_code == 400


def test_multipart_label_and_file_name_are_checked(client):
    long_label = client.post("/api/runs", files={"file": ("b.csv", LINE_198.encode())}, data={"label": "x" * 600})
    assert long_label.status_code == 400 and "label" in long_label.json()["detail"]
    nul_label = client.post("/api/runs", files={"file": ("b.csv", LINE_198.encode())}, data={"label": "a\x00b"})
    assert nul_label.status_code == 400
    assert client.get("/api/runs").json()["total"] == 0
    good = client.post("/api/runs", files={"file": ("b.csv", LINE_198.encode())}, data={"label": "xfs"})
    assert client.get(f"/api/runs/{good.json()['created'][0]}").json()["label"] == "xfs"


def test_an_unexpected_server_error_is_still_json(client, monkeypatch):
    from app.store import runs as run_store

    def broken(**_):
        raise RuntimeError("a bug")

    monkeypatch.setattr(run_store, "list_runs", broken)
    with TestClient(client.app, raise_server_exceptions=False) as plain:
        response = plain.get("/api/runs")
    assert response.status_code == 500
    assert response.json() == {"detail": "internal server error"}
