"""/static: the app's own scripts and styles, read once at start and served from memory, gzipped when the
browser accepts it, under versioned URLs a browser may keep for a year.

A page links an asset with the Jinja global `static_url('app.css')`: `/static/app.css?v=<hash>`, the hash
of the bytes this process serves (computed once, at start). A request whose `v` is that hash gets
`Cache-Control: public, max-age=31536000, immutable`: the browser asks again only when a page links another
version, i.e. after the file changed and the server restarted. Any other request (no `v`, or an older one
from a page cached before an upgrade) gets today's bytes with `no-cache`: the browser revalidates them by
their ETag (a 304), so an unversioned link is never stuck on old bytes.

No brotli: it needs a library beyond the standard one, and gzip level 9 already takes the bundles to a
quarter to a sixth of their size (docs/decisions.md, "Static files from memory under versioned URLs").
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import threading
from dataclasses import dataclass, field
from pathlib import Path

from starlette.datastructures import Headers
from starlette.types import Receive, Scope, Send

from app.web.cache import accepts_gzip

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
# Hex digits of the SHA-256 in a versioned URL: a collision between two versions of one file is not a concern.
HASH_CHARS = 12
# A compressed variant is kept only if it saves at least this share (an already compressed file would not).
MIN_SAVING = 0.1
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


@dataclass(slots=True)
class Asset:
    data: bytes
    version: str
    content_type: str
    _gzipped: bytes | None = None
    _compressed: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def gzipped(self) -> bytes | None:
        """The gzip of the bytes, made at the first request that accepts it (not at start: the Swagger UI
        bundle takes 70 ms), or None when it would not save MIN_SAVING."""
        with self._lock:
            if not self._compressed:
                packed = gzip.compress(self.data, 9, mtime=0)
                self._gzipped = packed if len(packed) <= len(self.data) * (1 - MIN_SAVING) else None
                self._compressed = True
            return self._gzipped


def _content_type(path: Path) -> str:
    guessed = TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "text/plain"
    return f"{guessed}; charset=utf-8" if guessed.startswith("text/") and "charset" not in guessed else guessed


class StaticAssets:
    """An ASGI app serving every file under `directory` as it was when this was made."""

    def __init__(self, directory: Path) -> None:
        self.assets: dict[str, Asset] = {}
        for path in sorted(directory.rglob("*")):
            # Not a package's own files (an installed wheel's app/static may hold __init__.py or __pycache__/).
            parts = path.relative_to(directory).parts
            if path.is_file() and not any(part.startswith((".", "__")) for part in parts):
                data = path.read_bytes()
                version = hashlib.sha256(data).hexdigest()[:HASH_CHARS]
                self.assets[path.relative_to(directory).as_posix()] = Asset(data, version, _content_type(path))

    def url(self, mount_path: str, name: str) -> str:
        """The versioned URL of the file `name` under `mount_path` (KeyError for a file not served)."""
        return f"{mount_path}/{name}?v={self.assets[name].version}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        status, headers, body = self.answer(scope)
        head = scope["method"] == "HEAD"
        raw_headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
        await send({"type": "http.response.start", "status": status, "headers": raw_headers})
        await send({"type": "http.response.body", "body": b"" if head else body})

    def answer(self, scope: Scope) -> tuple[int, dict[str, str], bytes]:
        if scope["method"] not in ("GET", "HEAD"):
            return 405, {"Allow": "GET, HEAD", "Content-Type": "text/plain; charset=utf-8"}, b"Method Not Allowed"
        name = _inside_mount(scope).lstrip("/")
        asset = self.assets.get(name)
        if asset is None:
            return 404, {"Content-Type": "text/plain; charset=utf-8"}, b"Not Found"
        request_headers = Headers(scope=scope)
        versioned = _query_version(scope) == asset.version
        packed = asset.gzipped() if accepts_gzip(request_headers.get("accept-encoding")) else None
        etag = f'"{asset.version}.gz"' if packed is not None else f'"{asset.version}"'
        headers = {
            "Content-Type": asset.content_type,
            "Cache-Control": IMMUTABLE if versioned else REVALIDATE,
            "ETag": etag,
            "Vary": "Accept-Encoding",
        }
        if packed is not None:
            headers["Content-Encoding"] = "gzip"
        if _matches(request_headers.get("if-none-match"), etag):
            return 304, headers, b""
        body = asset.data if packed is None else packed
        headers["Content-Length"] = str(len(body))
        return 200, headers, body


def _inside_mount(scope: Scope) -> str:
    """The path inside the mount: Starlette's Mount passes the whole path on, and where the mount starts as
    root_path."""
    path, root_path = scope["path"], scope.get("root_path", "")
    return path[len(root_path) :] if root_path and path.startswith(root_path) else path


def _query_version(scope: Scope) -> str | None:
    for part in scope.get("query_string", b"").decode("latin-1").split("&"):
        key, _, value = part.partition("=")
        if key == "v":
            return value
    return None


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return "*" in tags or etag in tags
