"""HTML pages: full page or htmx partial, escaping, upload form, error pages."""

import html
import re

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.helpers import HOSTILE, LINE_103, LINE_198, post_csv, post_form, set_setting, with_field


def test_front_page_lists_runs_with_key_figures(client):
    post_csv(client, f"{LINE_198}\n{LINE_103}\n", tag="fs=xfs")
    page = client.get("/")
    assert page.status_code == 200 and page.headers["vary"] == "HX-Request"
    html = page.text
    assert "<html" in html and "htmx-4.0.1.min.js" in html
    assert "mindpipe" in html and "vm" in html and "fs=xfs" in html
    assert "410.6 MiB/s" in html  # 420469 KiB/s put_block of the 1.98 line
    assert "+++++" in html


def test_the_kept_list_follows_every_write(client):
    # The list is kept per URL under the data's stamp, which every write replaces
    # (docs/decisions.md, "The runs list kept as the comparisons are"): an upload, a label, a tag and a delete
    # each show on the next read of the same URLs, page and part.
    urls = ["/", "/?sort=name&tag=fs=xfs"]
    post_csv(client, LINE_198, tag="fs=xfs")
    run_id = client.get("/api/runs").json()["items"][0]["id"]
    for url in urls:
        assert client.get(url).text == client.get(url).text  # nothing of a request in what is kept
        assert f'value="{run_id}"' in client.get(url, headers={"HX-Request": "true"}).text
    post_csv(client, LINE_103, tag="fs=xfs")
    assert all("mindpipe" in client.get(url).text for url in urls)
    client.patch(f"/api/runs/{run_id}", json={"label": "relabelled-run"})
    assert all("relabelled-run" in client.get(url).text for url in urls)
    client.patch(f"/api/runs/{run_id}", json={"tags": {"fs": "btrfs"}})
    assert "fs=btrfs" in client.get("/").text
    assert f'value="{run_id}"' not in client.get(urls[1]).text
    assert client.delete(f"/api/runs/{run_id}").status_code == 204
    assert f'value="{run_id}"' not in client.get("/").text


def test_htmx_request_gets_only_the_table(client):
    post_csv(client, LINE_198)
    partial = client.get("/?machine=vm", headers={"HX-Request": "true"})
    assert "<html" not in partial.text and "<table" in partial.text
    empty = client.get("/?machine=nobody", headers={"HX-Request": "true"})
    assert "No runs match" in empty.text


def test_names_tags_and_labels_are_escaped(client):
    post_csv(client, with_field(LINE_198, 2, HOSTILE), tag=f"x={HOSTILE.replace(' ', '_')}", label=HOSTILE)
    run_id = client.get("/api/runs").json()["items"][0]["id"]
    for url in ("/", f"/runs/{run_id}"):
        html = client.get(url).text
        assert HOSTILE not in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_run_page_shows_every_figure_and_the_raw_line(client):
    run_id = post_csv(client, LINE_198, tag="raid=5").json()["created"][0]
    html = client.get(f"/runs/{run_id}").text
    for text in (
        "put_block",
        "ran_del",
        "+++++ too fast to measure",
        "18.2 ms",
        "raid=5",
        "8192 by 5 processes",
        LINE_198,
    ):
        assert text in html, text


def test_upload_page_reports_created_duplicates_and_errors(client):
    assert "<form" in client.get("/upload").text
    form = {
        "lines": f"{LINE_198}\n{LINE_198}\nbroken,line\n",
        "tags": "fs=xfs raid=5",
        "label": "first",
        "partial": "true",
    }
    result = post_form(client, "/upload", form, headers={"HX-Request": "true"})
    assert result.status_code == 201
    assert "1 run created, 1 duplicate, 1 invalid line skipped" in result.text
    assert "<td>3</td>" in result.text and "<html" not in result.text
    run = client.get("/api/runs").json()["items"][0]
    assert run["tags"] == {"fs": "xfs", "raid": "5"} and run["label"] == "first"


def test_upload_page_file_and_all_or_nothing(client):
    files = {"file": ("bonnie.csv", f"{LINE_103}\nbad\n".encode(), "text/csv")}
    result = post_form(client, "/upload", files=files)
    assert result.status_code == 422
    assert "1 of 2 lines is invalid; nothing was stored" in result.text and "<html" in result.text
    assert client.get("/api/runs").json()["total"] == 0


def test_unknown_page_is_an_html_404(client):
    response = client.get("/runs/12345")
    assert response.status_code == 404
    assert "text/html" in response.headers["content-type"] and "run 12345 does not exist" in response.text


@pytest.mark.slow  # 6,000 lines (1 MiB) through the form: seconds on PostgreSQL, not milliseconds
def test_pasting_more_than_a_megabyte_of_lines_works(client):
    lines = "\n".join(with_field(LINE_198, 2, f"host{i}") for i in range(6000))
    assert len(lines) > 1024 * 1024
    # As the page sends it: multipart (a script's urlencoded form is kept to 64 KiB).
    result = post_form(client, "/upload", files={"lines": (None, lines)}, headers={"HX-Request": "true"})
    assert result.status_code == 201, result.text[:300]
    assert "6000 runs created" in result.text


def test_asset_urls_are_paths_that_no_host_header_can_steer(client, monkeypatch):
    run_id = post_csv(client, LINE_198).json()["created"][0]
    pages = ("/", f"/runs/{run_id}", "/upload", "/login", "/docs", f"/compare?runs={run_id}", "/runs/999999")
    set_setting(monkeypatch, "ALLOWED_HOSTS", "*")  # a board that answers any name (`serve --host 0.0.0.0`)
    any_host = TestClient(create_app())
    for url in pages:
        html = any_host.get(url, headers={"Host": "evil.example:666", "X-Forwarded-Host": "evil.example"}).text
        assets = re.findall(r'<(?:script|link)\b[^>]*\b(?:src|href)="([^"]*)"', html)
        assert assets, url
        # Root-relative: an HTTPS page behind a proxy loads them over HTTPS from itself.
        assert all(asset.startswith("/") and not asset.startswith("//") for asset in assets), (url, assets)
        assert any(asset.startswith("/static/") for asset in assets) and "evil" not in " ".join(assets), (url, assets)


def test_by_name_runs_without_a_label_come_first_on_either_database(client):
    """Machine, then label, runs without one first (SQLite and PostgreSQL put NULL at opposite ends unless told)."""
    ids = [post_csv(client, with_field(LINE_198, 4, str(seed))).json()["created"][0] for seed in range(3)]
    client.patch(f"/api/runs/{ids[0]}", json={"label": "b"})
    client.patch(f"/api/runs/{ids[2]}", json={"label": "a"})
    html = client.get("/?sort=name").text
    assert re.findall(r'<a href="/runs/(\d+)">', html) == [str(ids[1]), str(ids[2]), str(ids[0])]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/runs?before=zz", "before: 'zz' is not a whole number"),
        ("/api/runs?limit=x", "limit: 'x' is not a whole number"),
        ("/runs/abc", "run_id: 'abc' is not a whole number"),
        ("/?before=zz", "before: 'zz' is not a whole number"),
    ],
)
def test_a_number_typed_wrong_is_named_in_plain_words(client, path, expected):
    response = client.get(path)
    assert response.status_code == 422
    assert expected in (response.json()["detail"] if path.startswith("/api") else html.unescape(response.text))
