"""Cached comparisons (issue #13): what /api/compare and the /compare page compute from the database, kept
per worker under the data generation it was computed at (app/store/generation.py) and served while the database
still holds that stamp. Only data goes in — JSON bytes and rendered fragments, the same for every reader —
never anything of a browser's session (its CSRF token, who is signed in).

Bounded in entries and bytes (BONNIEBOARD_COMPARE_CACHE_MIB), least recently used out first: any number of
distinct URLs cannot grow a worker's memory past it.
"""

from __future__ import annotations

import gzip
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from sqlalchemy.orm import Session

from app.config import get_settings
from app.store import generation
from app.store.db import get_engine
from app.web.deps import read_session

MAX_ENTRIES = 512
# A 50-run page: 840 KB -> 58 KB in 3.2 ms; level 6 makes 46 KB in 9.4 ms, which the first reader after every
# write (and every reader with the cache off) would wait for.
GZIP_LEVEL = 3
MAX_GZIP_VARIANTS = 4
# An answer larger than this share of the cache is not kept: it would push out most others.
MAX_ENTRY_SHARE = 4

T = TypeVar("T")


@dataclass(slots=True)
class _Entry(Generic[T]):
    generation: int
    value: T
    size_bytes: int


class ResponseCache:
    """A least-recently-used map of (key, generation) -> value, thread-safe (routes fill it from
    worker threads), bounded by `max_entries` and the sum of the values' sizes."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.size_bytes = 0
        self.hits = self.misses = 0
        self._stamp: int | None = None

    def get(self, key: Hashable, stamp: int) -> object | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.generation != stamp:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry.value

    def put(self, key: Hashable, stamp: int, value: object, size_bytes: int, max_bytes: int) -> None:
        if size_bytes > max_bytes // MAX_ENTRY_SHARE:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.size_bytes -= old.size_bytes
            if stamp != self._stamp:
                # A new stamp: every entry made before it is stale. (A read that raced a write may still
                # bring the previous stamp: its entry goes at the next change, or the next eviction.)
                self.clear_locked()
                self._stamp = stamp
            self._entries[key] = _Entry(stamp, value, size_bytes)
            self.size_bytes += size_bytes
            while len(self._entries) > self.max_entries or self.size_bytes > max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self.size_bytes -= evicted.size_bytes

    def clear_locked(self) -> None:
        self._entries.clear()
        self.size_bytes = 0

    def __len__(self) -> int:
        return len(self._entries)


CACHE = ResponseCache()


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


def cached(key: Hashable, make: Callable[[Session], T], size_of: Callable[[T], int]) -> T:
    """`make(session)`'s value for `key`, from the cache while the database's data generation is the one it
    was made at; make() gets a read session (app.web.deps.read_session) only when it has to run.

    The stamp is read first (one row by its key, on a plain connection: half the time of a session's, and no
    lock can hold it up to need the read timeout), make()'s
    data after it: the data is never older than the stamp it is kept under — a write that commits in between
    has replaced the stamp, so its readers miss this entry. Stamps are random (app/store/generation.py): an entry
    never matches another database's, so the key needs no database name."""
    max_bytes = get_settings().compare_cache_mib * 1024 * 1024
    stamp = None
    if max_bytes:
        with get_engine().connect() as connection:
            stamp = generation.current(connection)
    if stamp is not None:
        value = CACHE.get(key, stamp)
        if value is not None:
            return value  # type: ignore[return-value]  # stored by this function for this key: a T
    with read_session() as session:
        value = make(session)
    if stamp is not None:
        CACHE.put(key, stamp, value, size_of(value), max_bytes)
    return value
