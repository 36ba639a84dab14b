"""The SRS manager: proving keys (the "SRS") loaded on demand, counted, evicted when idle.

Per key (a circuit name or a zkey path) an entry is cold (known, not loaded) or hot (loaded:
the object the prover uses, resident on the backend). Loading reserves the entry's size from
the memory budget first; that reservation is held until eviction. Jobs hold an `SrsLease` while
they prove; an entry with leases is never evicted. The budget's evictor (`evict_idle`) frees the
least recently used idle entries that have been idle at least `min_idle_s`.

Differences from the reference daemon (REFERENCE_API.md 7.3), on purpose: `evict(key)` works
(the reference's EvictSRS is a stub); `status()` reports real tiers, sizes and load times (the
reference reports zeros); concurrent acquires of one key load it once and a failed load is
reported to every waiter and leaves no half-loaded entry behind.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol

from cuzk.engine.memory import MemoryBudget, Reservation
from cuzk.errors import DeadlineExceededError, EngineError, JobCancelledError

__all__ = ["SrsEntryStatus", "SrsLease", "SrsLoader", "SrsManager"]


class SrsLoader(Protocol):
    """How the engine turns a key into a resident proving key; tests supply fakes."""

    def size(self, key: Hashable) -> int: ...  # bytes the hot entry takes (reserved before loading)
    def load(self, key: Hashable) -> Any: ...  # cold -> hot: the resident object the prover uses
    def unload(self, key: Hashable, value: Any) -> None: ...  # hot -> cold: free it


@dataclass(frozen=True)
class SrsEntryStatus:
    key: Hashable
    tier: str  # "hot" | "warm" | "cold"
    size_bytes: int  # bytes reserved for it now (0 when cold)
    ref_count: int
    last_used_s_ago: float | None  # None: never used
    load_seconds: float  # how long its last load took (0.0: never loaded)
    loads: int  # how many times it was loaded
    loading: bool = False


class _Attempt:
    """One load in progress: waiters block on `done`; `error` is set if it failed."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.error: BaseException | None = None


class _Entry:
    def __init__(self, key: Hashable) -> None:
        self.key = key
        self.value: Any = None
        self.reservation: Reservation | None = None
        self.ref_count = 0
        self.last_used: float | None = None
        self.load_seconds = 0.0
        self.loads = 0
        self.attempt: _Attempt | None = None
        self.registered = False  # made known by register(): kept cold even if never loaded

    @property
    def hot(self) -> bool:
        return self.reservation is not None


class SrsLease:
    """A job's hold on a loaded entry: `.value` is the loaded object; `release()` once when done."""

    def __init__(self, manager: SrsManager, entry: _Entry) -> None:
        self._manager = manager
        self._entry = entry
        self.key = entry.key
        self.value = entry.value
        self._released = False

    def release(self) -> None:
        """Drop the hold (a second call does nothing)."""
        self._manager._release(self)

    def __enter__(self) -> SrsLease:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


class SrsManager:
    """Loaded proving keys under a memory budget; thread-safe.

    If the budget has no evictor yet, this manager's `evict_idle` becomes it.
    """

    def __init__(
        self,
        budget: MemoryBudget,
        loader: SrsLoader,
        *,
        min_idle_s: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        tag: str = "srs",
    ) -> None:
        self._budget = budget
        self._loader = loader
        self.min_idle_s = float(min_idle_s)
        self._clock = clock
        self._tag = tag
        self._lock = threading.RLock()
        self._entries: dict[Hashable, _Entry] = {}
        if budget.evictor is None:
            budget.set_evictor(self.evict_idle)

    def register(self, key: Hashable) -> None:
        """Make `key` known (a cold entry in `status()`) without loading it."""
        with self._lock:
            self._entries.setdefault(key, _Entry(key)).registered = True

    def acquire(
        self, key: Hashable, *, cancelled: threading.Event | None = None, timeout: float | None = None
    ) -> SrsLease:
        """A lease on the loaded entry for `key`, loading it first if needed (once for all callers).

        `cancelled` / `timeout` bound the wait for budget memory to load it (JobCancelledError /
        DeadlineExceededError); a load failure reaches every caller waiting for that load.
        """
        while True:
            with self._lock:
                entry = self._entries.get(key)
                if entry is None:
                    entry = self._entries[key] = _Entry(key)
                if entry.hot:
                    entry.ref_count += 1
                    entry.last_used = self._clock()
                    return SrsLease(self, entry)
                attempt = entry.attempt
                if attempt is None:
                    attempt = entry.attempt = _Attempt()
                    break
            attempt.done.wait()
            if attempt.error is not None:
                raise attempt.error
            # loaded (or the loader gave up without an error, e.g. cancelled): look again
        return self._load(entry, attempt, cancelled, timeout)

    def _load(
        self,
        entry: _Entry,
        attempt: _Attempt,
        cancelled: threading.Event | None,
        timeout: float | None,
    ) -> SrsLease:
        reservation: Reservation | None = None
        try:
            nbytes = self._loader.size(entry.key)
            reservation = self._budget.reserve(nbytes, tag=self._tag, cancelled=cancelled, timeout=timeout)
            start = time.perf_counter()
            value = self._loader.load(entry.key)
            seconds = time.perf_counter() - start
        except (JobCancelledError, DeadlineExceededError):
            # This caller's own wait ended; other callers may still load it: hand the load on.
            self._abandon(entry, attempt, None, reservation)
            raise
        except BaseException as exc:
            self._abandon(entry, attempt, exc, reservation)
            raise
        with self._lock:
            entry.value = value
            entry.reservation = reservation
            entry.load_seconds = seconds
            entry.loads += 1
            entry.ref_count += 1
            entry.last_used = self._clock()
            entry.attempt = None
            attempt.done.set()
            return SrsLease(self, entry)

    def _abandon(
        self, entry: _Entry, attempt: _Attempt, error: BaseException | None, reservation: Reservation | None
    ) -> None:
        if reservation is not None:
            reservation.release()
        with self._lock:
            attempt.error = error
            entry.attempt = None
            if entry.loads == 0 and not entry.registered:
                del self._entries[entry.key]  # a key that never loaded leaves no trace
            attempt.done.set()

    def _release(self, lease: SrsLease) -> None:
        with self._lock:
            if lease._released:
                return
            lease._released = True
            lease._entry.ref_count -= 1
            lease._entry.last_used = self._clock()
            idle = lease._entry.ref_count == 0
        if idle:
            self._budget.wake()  # a reserve waiting for memory may evict this entry now

    def preload(self, key: Hashable) -> tuple[bool, float]:
        """Load `key` now if it is not loaded; (it was already loaded, how long its load took)."""
        with self._lock:
            entry = self._entries.get(key)
            already = entry is not None and entry.hot
        with self.acquire(key) as lease:
            return already, lease._entry.load_seconds

    def evict(self, key: Hashable) -> tuple[bool, int]:
        """Unload `key` now; (it was loaded, bytes given back). An entry in use is refused."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or not entry.hot:
                return False, 0
            if entry.ref_count > 0:
                raise EngineError(
                    f"the SRS for {key!r} is in use by {entry.ref_count} job(s) and cannot be evicted now"
                )
            return True, self._unload(entry)

    def evict_idle(self, needed: int) -> int:
        """The budget's evictor: unload unused entries idle >= min_idle_s, least recently used first,
        until `needed` bytes are freed or none is left; returns the bytes freed."""
        freed = 0
        with self._lock:
            now = self._clock()
            idle = [
                e
                for e in self._entries.values()
                if e.hot
                and e.ref_count == 0
                and (e.last_used is None or now - e.last_used >= self.min_idle_s)
            ]
            idle.sort(key=lambda e: e.last_used if e.last_used is not None else float("-inf"))
            for entry in idle:
                if freed >= needed:
                    break
                freed += self._unload(entry)
        return freed

    def _unload(self, entry: _Entry) -> int:
        assert entry.reservation is not None
        value, entry.value = entry.value, None
        reservation, entry.reservation = entry.reservation, None
        try:
            self._loader.unload(entry.key, value)
        finally:
            freed = reservation.nbytes
            reservation.release()
        return freed

    def status(self) -> list[SrsEntryStatus]:
        """Every known entry: its tier, reserved bytes, holds, idle time and load record."""
        with self._lock:
            now = self._clock()
            return [
                SrsEntryStatus(
                    key=e.key,
                    tier="hot" if e.hot else "cold",
                    size_bytes=e.reservation.nbytes if e.reservation is not None else 0,
                    ref_count=e.ref_count,
                    last_used_s_ago=None if e.last_used is None else now - e.last_used,
                    load_seconds=e.load_seconds,
                    loads=e.loads,
                    loading=e.attempt is not None,
                )
                for e in self._entries.values()
            ]
