"""Which call ids and cache keys a run store may hold, kept in memory, so that looking up one it cannot hold
reads nothing.

Before a cell sends a call it looks it up twice (``RunStore.find_call``: its own record from an earlier
process, on a resume; ``RunStore.find_received``: a reply to the same request from any cell or reused run).
On a fresh run every lookup misses, and each was a read transaction on the store on the event loop's thread
while the group committer writes: 0.1–0.5 ms a call, two per call (bench/RESULTS.md, "The harness's cost per
cell"). The index is a superset of what the store holds: every call id and cache key in it when first asked
(one scan), and every one this process prepares after (noted before its record is written, so before it can
be in the store). A lookup outside the index cannot find a row and answers at once; one inside reads the
store as before. So an answer is never lost: a received call is still found and never sent again.

It holds hashes, not the strings (a collision costs only the read it would have cost anyway), and it covers
the writes of this process only: a store is written by one run at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable


class CallIndex:
    """The call ids and cache keys a store may hold; ``scan`` yields the (call id, cache key) of every row
    the store holds, read once, on the first question."""

    def __init__(self, scan: Callable[[], Iterable[tuple[str, str]]]) -> None:
        self._scan: Callable[[], Iterable[tuple[str, str]]] | None = scan
        self._ids: set[int] = set()
        self._keys: set[int] = set()
        self._lock = threading.Lock()

    def note(self, call_id: str, cache_key: str) -> None:
        """A call about to be prepared (before its record is written, on any connection)."""
        self._ids.add(hash(call_id))
        self._keys.add(hash(cache_key))

    def may_hold_call(self, call_id: str) -> bool:
        self._load()
        return hash(call_id) in self._ids

    def may_hold_key(self, cache_key: str) -> bool:
        self._load()
        return hash(cache_key) in self._keys

    def _load(self) -> None:
        if self._scan is None:
            return
        with self._lock:
            if self._scan is not None:
                for call_id, cache_key in self._scan():
                    self.note(call_id, cache_key)
                self._scan = None


def key_set(keys: Iterable[tuple[str]]) -> frozenset[int]:
    """The hashes of a reused run's received cache keys (rows of one column), read once when it is attached."""
    return frozenset(hash(key) for (key,) in keys)
