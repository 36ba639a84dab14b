"""The SRS manager: proving keys (the "SRS") loaded on demand, counted, evicted when idle.

Per key (a circuit name or a zkey path) an entry is in one tier:

- cold: known (or evicted), holding no memory;
- warm: a host copy is kept (only with a loader that has the optional `load_host(key)` /
  `drop_host(key)` hooks, and `host_size(key)` if the copy's size differs from `size(key)`);
- hot: loaded, the object the prover uses, resident on the backend (a hot entry of a warm-capable
  loader keeps its host copy too).

Each step up reserves its bytes from the memory budget before loading; the reservation is held
until that tier is evicted. Jobs hold an `SrsLease` while they prove; an entry with leases is
never evicted. The budget's evictor (`evict_idle`) frees entries unused for at least
`min_idle_s`, least recently used first: first their hot parts, then, if still short, their
host copies.

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
from cuzk.errors import DeadlineExceededError, EngineError, JobCancelledError, UsageError

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
    size_bytes: int  # bytes reserved for it now, all tiers (0 when cold)
    ref_count: int
    last_used_s_ago: float | None  # None: never used
    load_seconds: float  # how long its last load took (0.0: never loaded)
    loads: int  # how many times it was loaded
    loading: bool = False
    host_bytes: int = 0  # the warm host copy's share of size_bytes
    host_load_seconds: float = 0.0  # how long making the host copy took last time


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
        self.host_reservation: Reservation | None = None  # the warm copy's bytes
        self.host_load_seconds = 0.0
        self.registered = False  # made known by register(): kept cold even if never loaded

    @property
    def hot(self) -> bool:
        return self.reservation is not None

    @property
    def tier(self) -> str:
        return "hot" if self.hot else "warm" if self.host_reservation is not None else "cold"

    def held(self) -> int:
        return sum(r.nbytes for r in (self.reservation, self.host_reservation) if r is not None)


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

    If the budget has no evictor yet, this manager's `evict_idle` becomes it. Lock order: this
    manager's lock may be held while releasing budget memory, never while waiting for it.
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
        self.warm_capable = callable(getattr(loader, "load_host", None)) and callable(
            getattr(loader, "drop_host", None)
        )
        self._listeners: list[Callable[[], None]] = []
        if budget.evictor is None:
            budget.set_evictor(self.evict_idle)

    def add_listener(self, fn: Callable[[], None]) -> None:
        """Call `fn` (no lock held) whenever an entry becomes idle or gives memory back: what a
        stage waiting for room on a device (the dispatcher's parked batches) waits for."""
        self._listeners.append(fn)

    def _changed(self) -> None:
        for fn in self._listeners:
            fn()

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
        return self._ensure(key, "hot", cancelled, timeout)  # type: ignore[return-value]

    def _ensure(
        self, key: Hashable, tier: str, cancelled: threading.Event | None, timeout: float | None
    ) -> SrsLease | None:
        """Bring `key` up to `tier` ("hot": returns a lease; "warm": the host copy only, None)."""
        while True:
            with self._lock:
                entry = self._entries.get(key)
                if entry is None:
                    entry = self._entries[key] = _Entry(key)
                if entry.hot:
                    if tier == "warm":
                        return None
                    entry.ref_count += 1
                    entry.last_used = self._clock()
                    return SrsLease(self, entry)
                if tier == "warm" and entry.host_reservation is not None:
                    return None
                attempt = entry.attempt
                if attempt is None:
                    attempt = entry.attempt = _Attempt()
                    break
            attempt.done.wait()
            if attempt.error is not None:
                raise attempt.error
            # loaded (or the loader gave up without an error, e.g. cancelled): look again
        try:
            if self.warm_capable and entry.host_reservation is None:
                self._load_host(entry, cancelled, timeout)
            lease = self._load_hot(entry, cancelled, timeout) if tier == "hot" else None
        except (JobCancelledError, DeadlineExceededError):
            # This caller's own wait ended; other callers may still load it: hand the load on.
            self._abandon(entry, attempt, None)
            raise
        except Exception as exc:
            self._abandon(entry, attempt, exc)
            raise
        except BaseException:  # KeyboardInterrupt, SystemExit: this thread's end, not the load's verdict
            self._abandon(entry, attempt, None)
            raise
        with self._lock:
            entry.attempt = None
            attempt.done.set()
        return lease

    def _load_host(self, entry: _Entry, cancelled: threading.Event | None, timeout: float | None) -> None:
        host_size = getattr(self._loader, "host_size", self._loader.size)
        reservation = self._budget.reserve(
            host_size(entry.key), tag=f"{self._tag}-host", cancelled=cancelled, timeout=timeout
        )
        try:
            start = time.perf_counter()
            self._loader.load_host(entry.key)  # type: ignore[attr-defined]
            seconds = time.perf_counter() - start
        except BaseException:
            reservation.release()
            raise
        with self._lock:
            entry.host_reservation = reservation
            entry.host_load_seconds = seconds
            entry.last_used = self._clock()

    def _load_hot(self, entry: _Entry, cancelled: threading.Event | None, timeout: float | None) -> SrsLease:
        reservation = self._budget.reserve(
            self._loader.size(entry.key), tag=self._tag, cancelled=cancelled, timeout=timeout
        )
        try:
            start = time.perf_counter()
            value = self._loader.load(entry.key)
            seconds = time.perf_counter() - start
        except BaseException:
            reservation.release()
            raise
        with self._lock:
            entry.value = value
            entry.reservation = reservation
            entry.load_seconds = seconds
            entry.loads += 1
            entry.ref_count += 1
            entry.last_used = self._clock()
            return SrsLease(self, entry)

    def _abandon(self, entry: _Entry, attempt: _Attempt, error: BaseException | None) -> None:
        """End a load that did not finish: what was loaded before it (a warm copy) stays, nothing else."""
        with self._lock:
            attempt.error = error
            entry.attempt = None
            if entry.tier == "cold" and entry.loads == 0 and not entry.registered:
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
            self._changed()

    def preload(self, key: Hashable, *, tier: str = "hot") -> tuple[bool, float]:
        """Bring `key` to `tier` ("hot", or "warm": the host copy only) if it is not there;
        (it was there already, how long its load to that tier took)."""
        if tier not in ("hot", "warm"):
            raise UsageError(f"preload to 'hot' or 'warm', not {tier!r}")
        if tier == "warm" and not self.warm_capable:
            raise UsageError("this backend's SRS loader keeps no host copies (no warm tier)")
        with self._lock:
            entry = self._entries.get(key)
            already = entry is not None and (entry.hot or (tier == "warm" and entry.tier == "warm"))
        lease = self._ensure(key, tier, None, None)
        if lease is not None:
            lease.release()
        with self._lock:
            entry = self._entries[key]
            return already, entry.load_seconds if tier == "hot" else entry.host_load_seconds

    def evict(self, key: Hashable, *, tier: str = "cold") -> tuple[bool, int]:
        """Step `key` down to `tier` now ("cold": free everything; "warm": keep the host copy);
        (it held memory above that tier, bytes given back). An entry in use is refused."""
        if tier not in ("cold", "warm"):
            raise UsageError(f"evict to 'cold' or 'warm', not {tier!r}")
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.tier == "cold" or (tier == "warm" and not entry.hot):
                return False, 0
            if entry.ref_count > 0:
                raise EngineError(
                    f"the SRS for {key!r} is in use by {entry.ref_count} job(s) and cannot be evicted now"
                )
            if entry.attempt is not None:
                raise EngineError(f"the SRS for {key!r} is being loaded and cannot be evicted now")
            freed = self._unload_hot(entry) if entry.hot else 0
            if tier == "cold":
                freed += self._drop_host(entry)
        self._changed()
        return True, freed

    def evict_idle(self, needed: int) -> int:
        """The budget's evictor: free entries unused for >= min_idle_s, least recently used first
        (hot parts first, then host copies), until `needed` bytes are freed; returns the bytes freed."""
        freed = 0
        with self._lock:
            now = self._clock()
            idle = [
                e
                for e in self._entries.values()
                if e.tier != "cold"
                and e.ref_count == 0
                and e.attempt is None
                and (e.last_used is None or now - e.last_used >= self.min_idle_s)
            ]
            idle.sort(key=lambda e: e.last_used if e.last_used is not None else float("-inf"))
            for step in (self._unload_hot, self._drop_host):
                for entry in idle:
                    if freed >= needed:
                        break
                    freed += step(entry)
        if freed:
            self._changed()
        return freed

    def _unload_hot(self, entry: _Entry) -> int:
        if entry.reservation is None:
            return 0
        value, entry.value = entry.value, None
        reservation, entry.reservation = entry.reservation, None
        try:
            self._loader.unload(entry.key, value)
        finally:
            freed = reservation.nbytes
            reservation.release()
        return freed

    def _drop_host(self, entry: _Entry) -> int:
        if entry.host_reservation is None:
            return 0
        reservation, entry.host_reservation = entry.host_reservation, None
        try:
            self._loader.drop_host(entry.key)  # type: ignore[attr-defined]
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
                    tier=e.tier,
                    size_bytes=e.held(),
                    ref_count=e.ref_count,
                    last_used_s_ago=None if e.last_used is None else now - e.last_used,
                    load_seconds=e.load_seconds,
                    loads=e.loads,
                    loading=e.attempt is not None,
                    host_bytes=e.host_reservation.nbytes if e.host_reservation is not None else 0,
                    host_load_seconds=e.host_load_seconds,
                )
                for e in self._entries.values()
            ]
