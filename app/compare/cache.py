"""Cached comparisons: what /api/compare and the /compare page compute from the database, kept per worker
under the data generation it was computed at (app/store/generation.py) and served while the database still
holds that stamp. Only data goes in (JSON bytes and rendered fragments, the same for every reader), never
anything of a browser's session (its CSRF token, who is signed in).

Storage, and one computation per answer at a time: app/compare/page.py reads the stamp and fills it (fetch). A
request that misses while the same answer is being made for the same stamp (by another request, or by the
re-warm after a write) waits for that one rather than making it again. Bounded in entries and bytes
(BONNIEBOARD_COMPARE_CACHE_MIB), least recently used out first: any number of distinct URLs cannot grow a
worker's memory past it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
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


@dataclass(slots=True)
class _Flight:
    """An answer being made for `generation`; `done` is set once it is stored, or failed (value None)."""

    generation: int
    done: threading.Event = field(default_factory=threading.Event)
    value: object | None = None


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
        self._flights: dict[Hashable, _Flight] = {}

    def get(self, key: Hashable, stamp: int) -> object | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.generation != stamp:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry.value

    def holds(self, key: Hashable, stamp: int) -> bool:
        """Whether an answer for `key` made at `stamp` is kept (not counted as a hit or miss)."""
        with self._lock:
            entry = self._entries.get(key)
            return entry is not None and entry.generation == stamp

    def fetch(
        self,
        key: Hashable,
        stamp: int,
        make: Callable[[], T],
        size_of: Callable[[T], int],
        max_bytes: int,
        counted: bool = True,
    ) -> T:
        """The answer for `key` at `stamp`: kept, or being made (then waited for), or made now by make()
        and kept. make() must read its data after `stamp` was read (app/compare/page.py's cached()). A
        request's fetch is `counted` in hits and misses; the re-warm's is not."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.generation == stamp:
                self._entries.move_to_end(key)
                self.hits += counted
                return entry.value
            self.misses += counted
            flight = self._flights.get(key)
            joined = flight is not None and flight.generation == stamp
            if not joined:
                flight = self._flights[key] = _Flight(stamp)
        assert flight is not None
        if joined:
            flight.done.wait()
            if flight.value is not None:
                return flight.value  # type: ignore[return-value]  # made by make() of this key: a T
            return make()  # it failed there: its error, or this request's own answer, is made here
        try:
            value = make()
            self.put(key, stamp, value, size_of(value), max_bytes)
            flight.value = value
            return value
        finally:
            with self._lock:
                if self._flights.get(key) is flight:
                    del self._flights[key]
            flight.done.set()

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
