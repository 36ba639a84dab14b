"""Intake priorities, the batch collector and the stage queues: CPU-only bookkeeping.

`BatchCollector` is the pure core: no threads, no clock of its own; every call that depends on
time is given `now` (vLLM's scheduler style), so tests drive it with plain numbers. `Scheduler`
wraps it in a lock and a condition for the engine's dispatcher thread, on a real or fake clock.
`WorkQueue` joins the later stages (synthesis, GPU): a bounded priority queue.

Batch rules (REFERENCE_API.md 7.2, adapted). Ready batches leave highest priority first, FIFO
(submit order) within a class. With `max_batch_size` 1 every job is its own batch at once.
Otherwise at most one batch is open (collecting): a batchable job joins it when it has the same
`batch_key` and no higher priority; the open batch flushes when it reaches `max_batch_size`,
`max_batch_wait_s` after its first job, when a non-batchable job or a job of higher priority
arrives (the open batch first, then the newcomer alone), when a batchable job of another key
arrives (the newcomer opens the next batch), and at close/flush.

Differences from the reference, on purpose: queue entries are never keyed by anything that can
collide (the reference's GPU queue keyed monolithic jobs (0, 0) in an ordered map, so a second
job overwrote the first and its caller never got an answer); a duplicate job id is refused
loudly; the higher-priority flush is implemented (the reference only flushes on non-batchable
kinds); a queued job can be removed (the reference has no cancellation).
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from cuzk.engine.request import Priority
from cuzk.errors import EngineError, QueueFullError, ShuttingDownError, UsageError

__all__ = ["BatchCollector", "Schedulable", "Scheduler", "WorkQueue"]

T = TypeVar("T")


class Schedulable(Protocol):
    """What the scheduler needs to know of a job."""

    job_id: str
    priority: Priority
    seq: int  # submit order: FIFO within a priority class
    batch_key: str  # same key: may share a batch (the circuit / zkey)
    batchable: bool  # kinds marked batchable (porep, snap) or not (PoSt)


@dataclass
class _Batch:
    key: str
    jobs: list[Schedulable]
    opened_at: float
    ready_at: float = 0.0
    order: int = 0  # arrival counter of the first job: the tie-break that keeps FIFO exact

    @property
    def priority(self) -> int:
        return max(int(j.priority) for j in self.jobs)

    @property
    def sort_key(self) -> tuple[int, int, int]:
        return (-self.priority, min(j.seq for j in self.jobs), self.order)


class BatchCollector:
    """The priority intake and the batch collector, driven by explicit times; not thread-safe."""

    def __init__(self, *, max_batch_size: int = 1, max_batch_wait_s: float = 10.0) -> None:
        if isinstance(max_batch_size, bool) or not isinstance(max_batch_size, int) or max_batch_size < 1:
            raise UsageError(f"max_batch_size must be a positive integer, not {max_batch_size!r}")
        if not max_batch_wait_s >= 0:
            raise UsageError(f"max_batch_wait_s must be >= 0, not {max_batch_wait_s!r}")
        self.max_batch_size = max_batch_size
        self.max_batch_wait_s = float(max_batch_wait_s)
        self._ready: list[tuple[tuple[int, int, int], _Batch]] = []  # heap by sort_key
        self._open: _Batch | None = None
        self._ids: set[str] = set()
        self._arrivals = itertools.count()

    def push(self, job: Schedulable, now: float) -> int:
        """Queue `job`; returns its queue position (the jobs that will be dispatched before it)."""
        if job.job_id in self._ids:
            raise EngineError(f"job {job.job_id!r} is already queued")
        self._ids.add(job.job_id)
        order = next(self._arrivals)
        if self.max_batch_size == 1 or not job.batchable:
            self._seal(now)
            self._make_ready(_Batch(job.batch_key, [job], now, order=order), now)
        elif (
            self._open is not None and self._open.key == job.batch_key and job.priority <= self._open.priority
        ):
            self._open.jobs.append(job)
            if len(self._open.jobs) >= self.max_batch_size:
                self._seal(now)
        elif self._open is not None and job.priority > self._open.priority:
            self._seal(now)
            self._make_ready(_Batch(job.batch_key, [job], now, order=order), now)
        else:
            self._seal(now)  # another key (or none open): the newcomer opens the next batch
            self._open = _Batch(job.batch_key, [job], now, order=order)
            if self.max_batch_wait_s == 0:
                self._seal(now)
        return self.position(job.job_id)

    def poll(
        self, now: float, limit: int | None = None, min_priority: int | None = None
    ) -> list[list[Schedulable]]:
        """The batches ready at `now`, in dispatch order (at most `limit`, and only those of
        `min_priority` or higher when given; the rest stay queued)."""
        if self._open is not None and now >= self._open.opened_at + self.max_batch_wait_s:
            self._seal(now)
        out: list[list[Schedulable]] = []
        while (
            self._ready
            and (limit is None or len(out) < limit)
            and self._admits(self._ready[0][1], min_priority)
        ):
            out.append(self._take())
        return out

    def next_deadline(self, min_priority: int | None = None) -> float | None:
        """When `poll` may next return something: a time already past if a batch is ready; else the
        open batch's wait deadline; None when nothing (of `min_priority` or higher) is queued."""
        ready = [b.ready_at for _, b in self._ready if self._admits(b, min_priority)]
        if ready:
            return min(ready)
        if self._open is not None and self._admits(self._open, min_priority):
            return self._open.opened_at + self.max_batch_wait_s
        return None

    @staticmethod
    def _admits(batch: _Batch, min_priority: int | None) -> bool:
        return min_priority is None or batch.priority >= min_priority

    def remove(self, job_id: str) -> Schedulable | None:
        """Take a queued job out (cancellation); None if it is not queued (dispatched or unknown)."""
        if job_id not in self._ids:
            return None
        self._ids.discard(job_id)
        if self._open is not None:
            found = _pop_job(self._open, job_id)
            if found is not None:
                if not self._open.jobs:
                    self._open = None
                return found
        for i, (_, batch) in enumerate(self._ready):
            found = _pop_job(batch, job_id)
            if found is not None:
                if batch.jobs:
                    self._ready[i] = (batch.sort_key, batch)
                else:
                    self._ready.pop(i)
                heapq.heapify(self._ready)
                return found
        raise AssertionError(f"job {job_id!r} was registered but is in no batch")  # pragma: no cover

    def seal(self, now: float) -> None:
        """Close the open batch now (it becomes ready); nothing is dispatched."""
        self._seal(now)

    def flush(self, now: float = 0.0) -> list[list[Schedulable]]:
        """Shutdown: every queued job, batched, in dispatch order; the collector is left empty."""
        self._seal(now)
        return self.poll(now)

    def pending(self) -> list[Schedulable]:
        """Every queued job in dispatch order (the open batch last)."""
        jobs = [j for _, b in sorted(self._ready, key=lambda e: e[0]) for j in b.jobs]
        if self._open is not None:
            jobs.extend(self._open.jobs)
        return jobs

    def position(self, job_id: str) -> int:
        """Jobs that leave before `job_id` as things stand (the open batch counted as if sealed now)."""
        batches = [b for _, b in self._ready]
        if self._open is not None:
            batches.append(self._open)
        for batch in batches:
            for i, job in enumerate(batch.jobs):
                if job.job_id == job_id:
                    ahead = sum(len(b.jobs) for b in batches if b.sort_key < batch.sort_key)
                    return ahead + i
        raise EngineError(f"job {job_id!r} is not queued")

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._ids

    def _seal(self, now: float) -> None:
        if self._open is not None:
            batch, self._open = self._open, None
            self._make_ready(batch, now)

    def _make_ready(self, batch: _Batch, now: float) -> None:
        batch.ready_at = now
        heapq.heappush(self._ready, (batch.sort_key, batch))

    def _take(self) -> list[Schedulable]:
        _, batch = heapq.heappop(self._ready)
        for job in batch.jobs:
            self._ids.discard(job.job_id)
        return batch.jobs


def _pop_job(batch: _Batch, job_id: str) -> Schedulable | None:
    for i, job in enumerate(batch.jobs):
        if job.job_id == job_id:
            return batch.jobs.pop(i)
    return None


class Scheduler:
    """A `BatchCollector` behind a lock and a condition, for one or more dispatcher threads.

    Times come from `clock`; with a fake clock, call `wake()` after moving it so a waiting
    `next_batch` re-reads the time.
    """

    def __init__(self, collector: BatchCollector, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._collector = collector
        self._clock = clock
        self._cond = threading.Condition(threading.Lock())
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def push(self, job: Schedulable) -> int:
        with self._cond:
            if self._closed:
                raise ShuttingDownError(f"the scheduler is closed; job {job.job_id!r} was not queued")
            position = self._collector.push(job, self._clock())
            self._cond.notify_all()
            return position

    def remove(self, job_id: str) -> Schedulable | None:
        with self._cond:
            return self._collector.remove(job_id)

    def next_batch(
        self,
        timeout: float | None = None,
        *,
        wake: threading.Event | None = None,
        min_priority: int | None = None,
    ) -> list[Schedulable] | None:
        """The next batch to dispatch, waiting for one; None on timeout or once closed and empty;
        [] when `wake` is set (with `wake()` after setting it) before a batch is due. With
        `min_priority` only a batch of that priority or higher comes out (the others wait)."""
        with self._cond:
            start = self._clock()
            while True:
                now = self._clock()
                batches = self._collector.poll(now, limit=1, min_priority=min_priority)
                if batches:
                    return batches[0]
                if self._closed and not len(self._collector):
                    return None
                if wake is not None and wake.is_set():
                    return []
                waits = []
                deadline = self._collector.next_deadline(min_priority)
                if deadline is not None:
                    waits.append(deadline - now)
                if timeout is not None:
                    left = start + timeout - now
                    if left <= 0:
                        return None
                    waits.append(left)
                self._cond.wait(max(0.0, min(waits)) if waits else None)

    def pending(self) -> list[Schedulable]:
        with self._cond:
            return self._collector.pending()

    def position(self, job_id: str) -> int:
        with self._cond:
            return self._collector.position(job_id)

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        """Take no more jobs; the open batch is sealed, queued batches still come out, then None."""
        with self._cond:
            self._closed = True
            self._collector.seal(self._clock())
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._collector)


@dataclass(order=True)
class _Entry(Generic[T]):
    key: tuple[int, ...]
    order: int
    item: T = field(compare=False)


class WorkQueue(Generic[T]):
    """A bounded priority queue between stages: smallest key first, FIFO among equal keys.

    Keys are `(-priority, seq, partition)`; equal keys never overwrite each other.
    `maxsize` 0 means unbounded. After `close()` puts are refused and gets drain what is left.
    """

    def __init__(self, maxsize: int = 0) -> None:
        if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 0:
            raise UsageError(f"maxsize must be a non-negative integer, not {maxsize!r}")
        self.maxsize = maxsize
        self._heap: list[_Entry[T]] = []
        self._order = itertools.count()
        self._cond = threading.Condition(threading.Lock())
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def put(self, key: tuple[int, ...], item: T, timeout: float | None = None) -> None:
        """Add `item`; blocks while the queue is full (QueueFullError after `timeout` seconds)."""
        with self._cond:
            deadline = None if timeout is None else time.monotonic() + timeout
            while not self._closed and self.maxsize and len(self._heap) >= self.maxsize:
                if deadline is None:
                    self._cond.wait()
                else:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise QueueFullError(f"the queue stayed full ({self.maxsize} items) for {timeout} s")
                    self._cond.wait(left)
            if self._closed:
                raise ShuttingDownError("the queue is closed")
            heapq.heappush(self._heap, _Entry(key, next(self._order), item))
            self._cond.notify_all()

    def get(self, timeout: float | None = None, *, max_first: int | None = None) -> T | None:
        """The item with the smallest key, waiting for one; None on timeout or once closed and empty.

        `max_first`: take only an item whose key starts at most this (keys start with -priority:
        `-Priority.HIGH` takes HIGH and CRITICAL items only; the engine's urgent lane)."""
        with self._cond:
            deadline = None if timeout is None else time.monotonic() + timeout
            while not self._heap or (max_first is not None and self._heap[0].key[0] > max_first):
                if self._closed:  # an urgent-lane reader stops at close too, leaving the rest
                    return None
                if deadline is None:
                    self._cond.wait()
                else:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return None
                    self._cond.wait(left)
            entry = heapq.heappop(self._heap)
            self._cond.notify_all()
            return entry.item

    def remove_if(self, pred: Callable[[T], bool]) -> list[T]:
        """Take out every queued item for which `pred` holds (cancellation); returns them in key order."""
        with self._cond:
            gone: list[_Entry[T]] = []
            kept: list[_Entry[T]] = []
            for e in self._heap:
                (gone if pred(e.item) else kept).append(e)
            if gone:
                self._heap = kept
                heapq.heapify(self._heap)
                self._cond.notify_all()
            return [e.item for e in sorted(gone)]

    def items(self) -> list[T]:
        """The queued items now, in no particular order (status views)."""
        with self._cond:
            return [e.item for e in self._heap]

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def __len__(self) -> int:
        with self._cond:
            return len(self._heap)


#: Work-queue keys start with -priority: the urgent lane takes keys up to this (HIGH, CRITICAL).
URGENT_KEY = -int(Priority.HIGH)


class Slots:
    """Synthesis slots: `normal` for any unit, `urgent` kept for HIGH and CRITICAL units.

    An urgent unit takes a kept slot first, else any normal slot that frees first; a normal unit
    waits for a normal slot. With one kept slot and a pool of normal + urgent processes, a
    WinningPoSt partition never waits behind PoRep partitions that hold every worker for seconds.
    """

    def __init__(self, normal: int, urgent: int = 0) -> None:
        self._free = {"normal": normal, "urgent": urgent}
        self._cond = threading.Condition(threading.Lock())

    def acquire(self, urgent: bool) -> str:
        """Block until a slot is free; the kind taken ("normal" or "urgent"), for `release`."""
        with self._cond:
            while True:
                if urgent and self._free["urgent"]:
                    kind = "urgent"
                    break
                if self._free["normal"]:
                    kind = "normal"
                    break
                self._cond.wait()
            self._free[kind] -= 1
            return kind

    def release(self, kind: str) -> None:
        with self._cond:
            self._free[kind] += 1
            self._cond.notify_all()
