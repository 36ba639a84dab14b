"""The engine's one byte budget: every in-flight partition and every loaded SRS reserves from it.

A `Reservation` is taken before the work that needs the memory starts and released (in parts:
the a/b/c share as soon as the GPU is done with it, the rest at finalization) when it ends.
Differences from the reference daemon (REFERENCE_API.md 7.4), on purpose:

- a request larger than the whole budget fails at once (`BudgetExceededError`) instead of
  waiting forever with a warning;
- a waiter can be cancelled (a `threading.Event`) or time out (`DeadlineExceededError`);
- waiters are served first come, first served (unless `fair=False`), so a large request is not
  starved by a stream of small ones that keep fitting in front of it;
- the evictor (the SRS manager's idle entries) is called outside the budget's lock, so an
  evictor that releases reservations cannot deadlock against it.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType

from cuzk.errors import BudgetExceededError, DeadlineExceededError, JobCancelledError, UsageError
from cuzk.units import parse_size

__all__ = ["MemoryBudget", "Reservation", "auto_budget"]

#: snapshot() keys that a tag may not take.
_RESERVED_KEYS = frozenset({"total", "used", "available", "peak", "waiters", "untagged"})

#: How often a blocked reserve re-checks its cancel event and re-asks the evictor (an SRS entry
#: becomes evictable when its idle time passes, which no release announces). Not a correctness
#: bound: a release or `wake()` wakes waiters at once.
_POLL_S = 0.05


def _mem_available(meminfo_path: str) -> int:
    try:
        with open(meminfo_path, encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024  # the kernel writes kB meaning KiB
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def auto_budget(margin: int | str, *, meminfo_path: str = "/proc/meminfo") -> int:
    """MemAvailable minus `margin` (the reference uses MemTotal, which counts memory others hold)."""
    margin = parse_size(margin)
    available = _mem_available(meminfo_path)
    if available <= margin:
        raise UsageError(
            f"the memory margin ({margin} bytes) is not below the available memory ({available} bytes); "
            "set the budget explicitly or lower the margin"
        )
    return available - margin


class Reservation:
    """Bytes held from a budget; release in parts or all at once. A context manager; thread-safe."""

    def __init__(self, budget: MemoryBudget, nbytes: int, tag: str) -> None:
        self._budget = budget
        self.nbytes = nbytes
        self.tag = tag

    def release(self, nbytes: int | None = None) -> None:
        """Give back `nbytes` (at most what is still held) or everything; releasing again is a no-op."""
        if nbytes is not None and (isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0):
            raise UsageError(f"a release must be a non-negative byte count, not {nbytes!r}")
        self._budget._give_back(self, nbytes)

    def __enter__(self) -> Reservation:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"Reservation({self.nbytes} bytes, tag={self.tag!r})"


class MemoryBudget:
    """A byte budget with blocking, cancellable, first-come-first-served reserves."""

    def __init__(self, total: int, *, evictor: Callable[[int], int] | None = None, fair: bool = True) -> None:
        """`fair`: waiters are served in arrival order (a waiter that fits waits behind one that
        does not); False lets any request that fits go at once."""
        total = parse_size(total)
        if total <= 0:
            raise UsageError(f"a memory budget must be positive, not {total}")
        self.total = total
        self._evictor = evictor
        self._cond = threading.Condition(threading.Lock())
        self._used = 0
        self._peak = 0
        self._by_tag: dict[str, int] = {}
        self._waiters: deque[object] = deque()  # tickets, first come first served
        self.fair = fair

    @property
    def evictor(self) -> Callable[[int], int] | None:
        return self._evictor

    def set_evictor(self, evictor: Callable[[int], int] | None) -> None:
        """Install the function that frees idle memory: called with the bytes short, returns bytes freed."""
        self._evictor = evictor

    def reserve(
        self,
        nbytes: int,
        *,
        tag: str = "",
        cancelled: threading.Event | None = None,
        timeout: float | None = None,
        urgent: bool = False,
    ) -> Reservation:
        """Reserve `nbytes`, waiting (in arrival order) until they fit; evicts idle memory when short.
        `urgent` goes to the head of the line (the engine's urgent lane: HIGH and CRITICAL units)."""
        nbytes = self._check(nbytes, tag)
        deadline = None if timeout is None else time.monotonic() + timeout
        ticket = object()
        queued = False
        try:
            while True:
                with self._cond:
                    if cancelled is not None and cancelled.is_set():
                        raise JobCancelledError(f"cancelled while waiting for {nbytes} bytes of memory")
                    if self._my_turn(ticket) and self._fits(nbytes):
                        return self._grant(nbytes, tag)
                    if not queued:
                        if urgent:
                            self._waiters.appendleft(ticket)
                        else:
                            self._waiters.append(ticket)
                        queued = True
                    short = self._used + nbytes - self.total
                    head = self._waiters[0] is ticket or not self.fair
                # Only the head of the line evicts, so two waiters do not both empty the SRS cache.
                if head and short > 0 and self._evictor is not None and self._evictor(short) > 0:
                    continue
                with self._cond:
                    if self._my_turn(ticket) and self._fits(nbytes):
                        return self._grant(nbytes, tag)
                    wait = _POLL_S
                    if deadline is not None:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            raise DeadlineExceededError(
                                f"timed out after {timeout} s waiting for {nbytes} bytes of memory "
                                f"({self.total - self._used} of {self.total} free)"
                            )
                        wait = min(wait, left)
                    self._cond.wait(wait)
        finally:
            if queued:
                with self._cond:
                    self._waiters.remove(ticket)
                    self._cond.notify_all()  # the next in line may fit now

    def try_reserve(self, nbytes: int, *, tag: str = "") -> Reservation | None:
        """Reserve now if it fits without waiting or evicting (and, if fair, nobody waits); else None."""
        nbytes = self._check(nbytes, tag)
        with self._cond:
            if (not self.fair or not self._waiters) and self._fits(nbytes):
                return self._grant(nbytes, tag)
        return None

    def wake(self) -> None:
        """Wake blocked reserves so they re-check their cancel events now."""
        with self._cond:
            self._cond.notify_all()

    def in_flight(self) -> int:
        with self._cond:
            return self._used

    def peak(self) -> int:
        with self._cond:
            return self._peak

    def snapshot(self) -> dict[str, int]:
        """total, used, available, peak, waiters, and the bytes held per tag ("untagged" for no tag)."""
        with self._cond:
            snap = {
                "total": self.total,
                "used": self._used,
                "available": self.total - self._used,
                "peak": self._peak,
                "waiters": len(self._waiters),
            }
            for tag, held in sorted(self._by_tag.items()):
                snap[tag or "untagged"] = held
            return snap

    def _check(self, nbytes: int, tag: str) -> int:
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
            raise UsageError(f"a reservation must be a non-negative byte count, not {nbytes!r}")
        if tag in _RESERVED_KEYS:
            raise UsageError(f"{tag!r} is a snapshot field, not a usable reservation tag")
        if nbytes > self.total:
            raise BudgetExceededError(
                f"{nbytes} bytes{f' for {tag}' if tag else ''} exceed the whole memory budget of "
                f"{self.total} bytes; raise the budget or lower the work's size"
            )
        return nbytes

    def _my_turn(self, ticket: object) -> bool:
        return not self.fair or not self._waiters or self._waiters[0] is ticket

    def _fits(self, nbytes: int) -> bool:
        return self._used + nbytes <= self.total

    def _grant(self, nbytes: int, tag: str) -> Reservation:
        self._used += nbytes
        self._peak = max(self._peak, self._used)
        self._by_tag[tag] = self._by_tag.get(tag, 0) + nbytes
        return Reservation(self, nbytes, tag)

    def _give_back(self, res: Reservation, nbytes: int | None) -> None:
        with self._cond:
            n = res.nbytes if nbytes is None else min(nbytes, res.nbytes)
            if n == 0:
                return
            res.nbytes -= n
            self._used -= n
            left = self._by_tag[res.tag] - n
            if left:
                self._by_tag[res.tag] = left
            else:
                del self._by_tag[res.tag]
            self._cond.notify_all()
