"""A cached answer's bytes and their gzip, and the Accept-Encoding rules that choose between them. What is
cached, and when it is stale, is app/compare/cache.py's and app/compare/page.py's."""

from __future__ import annotations

import gzip

# A 50-run page: 840 KB -> 58 KB in 3.2 ms; level 6 makes 46 KB in 9.4 ms, which the first reader after every
# write (and every reader with the cache off) would wait for.
GZIP_LEVEL = 3
MAX_GZIP_VARIANTS = 4


class Body:
    """A cached answer's bytes, and their gzip, made by the first request that accepts it and then kept with
    them. A page's body is sent between a prefix and suffix rendered per request (its layout): gzip covers
    the whole, kept per distinct (prefix, suffix) — the same bytes for every reader of the page, or a few."""

    __slots__ = ("data", "_gzipped")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._gzipped: dict[tuple[bytes, bytes], bytes] = {}

    def size_bytes(self) -> int:
        """What it holds, counted for the cache's bound: the bytes, and room for their gzip (a comparison's
        JSON or HTML gzips to a tenth or less, and a body has MAX_GZIP_VARIANTS at most)."""
        return len(self.data) + len(self.data) // 2

    def gzipped(self, prefix: bytes = b"", suffix: bytes = b"") -> bytes:
        key = (prefix, suffix)
        compressed = self._gzipped.get(key)
        if compressed is None:
            # Two threads may both make it: the same bytes, one kept.
            compressed = gzip.compress(b"".join((prefix, self.data, suffix)), GZIP_LEVEL, mtime=0)
            if len(self._gzipped) < MAX_GZIP_VARIANTS:
                self._gzipped[key] = compressed
        return compressed


def encoding_headers(gzipped: bool) -> dict[str, str]:
    return {"Content-Encoding": "gzip", "Vary": "Accept-Encoding"} if gzipped else {"Vary": "Accept-Encoding"}


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether an Accept-Encoding header accepts gzip ("gzip", "gzip;q=0.5", "*"; not "gzip;q=0")."""
    for part in (accept_encoding or "").lower().split(","):
        name, _, params = part.partition(";")
        if name.strip() in ("gzip", "*"):
            q = params.strip().removeprefix("q=")
            try:
                return not params.strip() or float(q) > 0
            except ValueError:
                return False
    return False
