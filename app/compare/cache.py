"""Cached comparisons: what /api/compare and the /compare page compute from the database, kept per worker
under the data generation it was computed at (app/store/generation.py) and served while the database still
holds that stamp. Only data goes in (JSON bytes and rendered fragments, the same for every reader), never
anything of a browser's session (its CSRF token, who is signed in).

Storage only: app/compare/page.py reads the stamp and fills it. Bounded in entries and bytes
(BONNIEBOARD_COMPARE_CACHE_MIB), least recently used out first: any number of distinct URLs cannot grow a
worker's memory past it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

MAX_ENTRIES = 512
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
