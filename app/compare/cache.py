"""Cached comparisons: what /api/compare and the /compare page compute from the database, kept per worker
under the data generation's stamp it depends on (app/store/generation.py) and served while the database still
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
from typing import Generic, Protocol, TypeVar

MAX_ENTRIES = 512
# An answer larger than this share of the cache is not kept: it would push out most others.
MAX_ENTRY_SHARE = 4

T = TypeVar("T")


class Stamps(Protocol):
    """The data generation's stamps as a request read them (app.store.generation.Stamps); equal when the same."""

    def hold(self, stamp: int) -> bool:
        """Whether an answer kept under `stamp` is still current."""
        ...


@dataclass(slots=True)
class _Entry(Generic[T]):
    stamp: int  # the one of the data generation's stamps it depends on
    value: T
    size_bytes: int


@dataclass(slots=True)
class _Flight:
    """An answer being made for `stamps`; `done` is set once it is stored, or failed (value None)."""

    stamps: Stamps
    done: threading.Event = field(default_factory=threading.Event)
    value: object | None = None


class ResponseCache:
    """A least-recently-used map of key -> (stamp, value), thread-safe (routes fill it from worker threads),
    bounded by `max_entries` and the sum of the values' sizes. An entry is current while the stamps a
    request read hold its stamp."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.size_bytes = 0
        self.hits = self.misses = 0
        self._stamps: Stamps | None = None
        self._flights: dict[Hashable, _Flight] = {}

    def get(self, key: Hashable, stamps: Stamps) -> object | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or not stamps.hold(entry.stamp):
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry.value

    def holds(self, key: Hashable, stamps: Stamps) -> bool:
        """Whether a current answer for `key` is kept (not counted as a hit or miss)."""
        with self._lock:
            entry = self._entries.get(key)
            return entry is not None and stamps.hold(entry.stamp)

    def fetch(
        self,
        key: Hashable,
        stamps: Stamps,
        make: Callable[[], tuple[T, int]],
        size_of: Callable[[T], int],
        max_bytes: int,
        counted: bool = True,
    ) -> T:
        """The current answer for `key`: kept, or being made (then waited for), or made now by make() and
        kept. make() gives the answer and the stamp of `stamps` it depends on, and must read its data after
        `stamps` were read (app/compare/page.py's cached()). A request's fetch is `counted` in hits and misses;
        the re-warm's is not."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and stamps.hold(entry.stamp):
                self._entries.move_to_end(key)
                self.hits += counted
                return entry.value
            self.misses += counted
            flight = self._flights.get(key)
            joined = flight is not None and flight.stamps == stamps
            if not joined:
                flight = self._flights[key] = _Flight(stamps)
        assert flight is not None
        if joined:
            flight.done.wait()
            if flight.value is not None:
                return flight.value  # type: ignore[return-value]  # made by make() of this key: a T
            return make()[0]  # it failed there: its error, or this request's own answer, is made here
        try:
            value, stamp = make()
            self.put(key, stamps, stamp, value, size_of(value), max_bytes)
            flight.value = value
            return value
        finally:
            with self._lock:
                if self._flights.get(key) is flight:
                    del self._flights[key]
            flight.done.set()

    def put(self, key: Hashable, stamps: Stamps, stamp: int, value: object, size_bytes: int, max_bytes: int) -> None:
        """Keep `value` under `stamp`, one of `stamps` (those read before it was made)."""
        if size_bytes > max_bytes // MAX_ENTRY_SHARE:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.size_bytes -= old.size_bytes
            if stamps != self._stamps:
                # New stamps: the entries they no longer hold are stale. (A read that raced a write may still
                # bring the previous stamps: its entry goes at the next change, or the next eviction.)
                self._forget_stale_locked(stamps)
                self._stamps = stamps
            self._entries[key] = _Entry(stamp, value, size_bytes)
            self.size_bytes += size_bytes
            while len(self._entries) > self.max_entries or self.size_bytes > max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self.size_bytes -= evicted.size_bytes

    def _forget_stale_locked(self, stamps: Stamps) -> None:
        for key in [key for key, entry in self._entries.items() if not stamps.hold(entry.stamp)]:
            self.size_bytes -= self._entries.pop(key).size_bytes

    def __len__(self) -> int:
        return len(self._entries)


CACHE = ResponseCache()
