"""/static (app/web/static_assets.py): pages link every asset by a URL that carries the hash of its bytes; such a
URL is cached by browsers for a year, anything else is revalidated; text assets go gzipped to a browser that
accepts it."""

import gzip
import hashlib
import re

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.routing import Mount

from app.main import create_app
from app.paths import STATIC_DIR
from app.web.static_assets import HASH_CHARS, IMMUTABLE, StaticAssets

ASSET_LINK = re.compile(r'<(?:script|link)\b[^>]*\b(?:src|href)="(/[^"]*)"')
GZIP = {"Accept-Encoding": "gzip"}
IDENTITY = {"Accept-Encoding": "identity"}


def linked_assets(html: str) -> list[str]:
    return [url.replace("&amp;", "&") for url in ASSET_LINK.findall(html)]


def version_of(name: str) -> str:
    return hashlib.sha256((STATIC_DIR / name).read_bytes()).hexdigest()[:HASH_CHARS]


@pytest.mark.databases("sqlite")  # the pages need a database; the files are the same on either
@pytest.mark.parametrize("page", ["/", "/upload", "/docs", "/login"])
def test_every_linked_asset_is_versioned_gzipped_and_kept_for_a_year(client, page):
    assets = linked_assets(client.get(page).text)
    assert assets, page
    for url in assets:
        path, _, query = url.partition("?")
        name = path.removeprefix("/static/")
        assert query == f"v={version_of(name)}", url
        answer = client.get(url, headers=GZIP)
        assert answer.status_code == 200, url
        assert answer.headers["cache-control"] == IMMUTABLE == "public, max-age=31536000, immutable"
        assert answer.headers["content-encoding"] == "gzip" and answer.headers["vary"] == "Accept-Encoding"
        assert answer.content == (STATIC_DIR / name).read_bytes(), url  # httpx unpacked it
        assert answer.num_bytes_downloaded == int(answer.headers["content-length"]) < len(answer.content)


def test_the_bytes_sent_are_the_gzip_of_the_file():
    url = f"/static/app.css?v={version_of('app.css')}"
    with TestClient(create_app()) as client, client.stream("GET", url, headers=GZIP) as answer:
        sent = b"".join(answer.iter_raw())
    assert int(answer.headers["content-length"]) == len(sent) < (STATIC_DIR / "app.css").stat().st_size / 2
    assert gzip.decompress(sent) == (STATIC_DIR / "app.css").read_bytes()


def test_a_browser_without_gzip_gets_the_file_itself():
    client = TestClient(create_app())
    answer = client.get(f"/static/charts.js?v={version_of('charts.js')}", headers=IDENTITY)
    assert "content-encoding" not in answer.headers
    assert answer.content == (STATIC_DIR / "charts.js").read_bytes()
    assert answer.headers["content-type"] == "text/javascript; charset=utf-8"
    assert int(answer.headers["content-length"]) == len(answer.content)


@pytest.mark.parametrize("query", ["", "?v=0123456789ab", "?v="])
def test_an_unversioned_or_old_url_gets_todays_bytes_revalidated(query):
    client = TestClient(create_app())
    answer = client.get(f"/static/app.css{query}")
    assert answer.status_code == 200 and answer.content == (STATIC_DIR / "app.css").read_bytes()
    assert answer.headers["cache-control"] == "no-cache"
    again = client.get(f"/static/app.css{query}", headers={"If-None-Match": answer.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    # The gzip and the plain bytes are two representations: one's ETag does not stand for the other.
    plain = client.get("/static/app.css", headers=IDENTITY | {"If-None-Match": answer.headers["etag"]})
    assert plain.status_code == 200 and plain.headers["etag"] != answer.headers["etag"]


def test_unknown_files_and_other_methods_are_refused():
    client = TestClient(create_app())
    assert client.get("/static/nothing.js").status_code == 404
    assert client.get("/static/../app/main.py").status_code == 404
    refused = client.post("/static/app.css")
    assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"


def test_the_versioned_url_changes_when_the_file_changes(tmp_path):
    (tmp_path / "app.css").write_text("body { color: black }\n" * 50)

    def serve() -> tuple[TestClient, str]:
        """A server started now: it reads the files, and links them, as they are at its start."""
        assets = StaticAssets(tmp_path)
        return TestClient(Starlette(routes=[Mount("/static", assets)])), assets.url("/static", "app.css")

    before, old_url = serve()
    assert before.get(old_url).headers["cache-control"] == IMMUTABLE
    (tmp_path / "app.css").write_text("body { color: navy }\n" * 50)
    assert before.get(old_url).text.startswith("body { color: black }")  # read once, at start
    after, new_url = serve()
    assert new_url != old_url and new_url.startswith("/static/app.css?v=")
    assert after.get(new_url).text.startswith("body { color: navy }")
    assert after.get(new_url).headers["cache-control"] == IMMUTABLE
    # A page cached before the change still links the old URL: today's bytes, not kept as if they were that version.
    stale = after.get(old_url)
    assert stale.text.startswith("body { color: navy }") and stale.headers["cache-control"] == "no-cache"


@pytest.mark.databases("sqlite")
def test_the_links_and_files_follow_the_root_path(database_url):
    client = TestClient(create_app(), root_path="/board")
    assets = linked_assets(client.get("/upload").text)
    assert assets and all(url.startswith("/board/static/") for url in assets), assets
    for url in assets:
        answer = client.get(url)
        assert answer.status_code == 200 and answer.headers["cache-control"] == IMMUTABLE, url


def test_a_packages_own_files_are_not_served(tmp_path):
    """An installed wheel's app/static is a package directory: its __init__.py or bytecode are no assets."""
    (tmp_path / "app.css").write_text("body {}\n")
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"\x00")
    (tmp_path / ".hidden").write_text("x")
    assert set(StaticAssets(tmp_path).assets) == {"app.css"}
