"""GPU workers: `gpu_workers_per_device` threads per device, one lock per device around `start`.

A worker takes the next unit id from its device's queue and asks the core for
its work (one partition index of one batch: k synthesized witnesses), copies the hand-over out of shared memory,
and holds the device lock only for the prover's `start` (NTTs, H, the G1
MSMs; the G2 MSM too with msm.g2_on=device), so one worker's host work (copies, and the
finalizer's CPU G2 MSM and assembly) overlaps the other worker's kernels. The wait for the lock and the
hold are spans (`lock_wait`, `device_lock`). GPU busy is computed from what the
device's own clock says it ran during each hold (`Backend.device_clock`: CUDA
events at the edges of each run of kernels, spans `device_busy` on the lane
"device N busy"); the hold itself counts copies and host work, so it stands in
only where a backend has no clock (the CPU). With the CPU backend the "devices"
are CPU backends, so every path runs without a GPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any

from cuzk.engine import work
from cuzk.engine.events import FinalizeWork, GpuWork, Proved, TakeGpu, UnitDropped, UnitFailed
from cuzk.engine.scheduler import URGENT_KEY
from cuzk.instrument import Span, Timeline

if TYPE_CHECKING:
    from cuzk.engine.core import EngineCore
    from cuzk.engine.scheduler import WorkQueue


class DeviceLock:
    """The one lock of a device, with its hold intervals kept for the busy fraction.

    Waiters are served by priority, then in arrival order: a CRITICAL WinningPoSt unit staged
    behind a PoRep partition takes the device next, not after every partition that happened to
    reach the lock first (at real size each holds it for seconds)."""

    def __init__(self, device: int, *, keep: int = 100_000) -> None:
        self.device = device
        self._cond = threading.Condition(threading.Lock())
        self._held = False
        self._waiting: list[tuple[int, int]] = []  # heap of (-priority, ticket)
        self._needs: dict[tuple[int, int], int] = {}  # a waiter's device bytes (for `should_yield`)
        self._tickets = itertools.count()
        self._guard = threading.Lock()
        self._keep = keep
        self.intervals: list[tuple[float, float]] = []  # (start, end), time.perf_counter()

    def waiting(self, n: int, timeout: float | None = None) -> bool:
        """Block until at least `n` holders wait for the lock (for tests and tools); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self._waiting) >= n, timeout)

    def _acquire(self, priority: int, need: int = 0, ticket: int | None = None) -> int:
        """Wait for the device; returns the ticket (arrival order), which a holder that yields
        keeps, so that it goes back ahead of the waiters of its own priority."""
        with self._cond:
            me = (-priority, next(self._tickets) if ticket is None else ticket)
            heapq.heappush(self._waiting, me)
            self._needs[me] = need
            self._cond.notify_all()  # `waiting` watchers
            while self._held or self._waiting[0] != me:
                self._cond.wait()
            heapq.heappop(self._waiting)
            del self._needs[me]
            self._held = True
            return me[1]

    def should_yield(self, priority: int, room: int) -> bool:
        """A waiter of higher priority than `priority` whose device bytes fit in `room`?"""
        with self._cond:
            if not self._waiting:
                return False
            top = self._waiting[0]
            return -top[0] > priority and self._needs[top] <= room

    def _release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()

    @contextmanager
    def hold(
        self, tl: Timeline, backend: Any, *, priority: int = 0, need: int = 0,
        room: Callable[[], int] | None = None, **attrs: Any,
    ) -> Iterator[Callable[[], None]]:  # fmt: skip
        """Hold the device; its busy intervals (the device clock's, else the hold) are kept.

        Yields a checkpoint for the holder to call between phases: when a waiter of higher
        priority needs no more device bytes than `room()` says are free, the holder lets it run
        (span `yielded`) and takes the device back before any waiter of its own priority.
        `need`: this holder's own device bytes, for the same test when it waits."""
        with tl.span("lock_wait", **attrs):
            ticket = self._acquire(priority, need)

        # The device clock measures one holder at a time: a yielding holder ends its measurement
        # before the waiter takes the device and starts a new one when it is back. (Kept open
        # across the yield, the waiter's own measurement was refused: WinningPoSt probes failed
        # with "the device clock is already measuring" beside porep-32g, H100 2026-12-07.)
        clock = contextlib.ExitStack()
        segments: list[list[tuple[float, float]] | None] = []

        def checkpoint() -> None:
            if room is None or not self.should_yield(priority, room()):
                return
            backend.synchronize()  # the queued kernels are this holder's, not the waiter's
            clock.close()
            with tl.span("yielded", **attrs):
                self._release()
                self._acquire(priority, need, ticket)
            segments.append(clock.enter_context(backend.device_clock()))

        try:
            with tl.span("device_lock", **attrs) as s, clock:
                segments.append(clock.enter_context(backend.device_clock()))
                yield checkpoint
        finally:
            self._release()
            busy = None if None in segments else [iv for seg in segments for iv in seg or ()]
            intervals = [(s.start, time.perf_counter())] if busy is None else busy
            if busy is not None:  # spans on the device clock's own lane, where the waterfall reads busy %
                lane = {"lane": f"device {self.device} busy"}
                for a, b in busy:
                    tl.add(Span("device_busy", a, b, attrs={**attrs, **lane}))
            with self._guard:
                self.intervals.extend(intervals)
                if len(self.intervals) > self._keep:
                    del self.intervals[: len(self.intervals) - self._keep]

    def snapshot(self) -> list[tuple[float, float]]:
        with self._guard:
            return list(self.intervals)


def busy_seconds(intervals: list[tuple[float, float]], since: float, until: float) -> float:
    """Length of the union of the intervals, clipped to [since, until]."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(intervals):
        s, e = max(s, since), min(e, until)
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s  # type: ignore[operator]
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s  # type: ignore[operator]
    return total


@dataclass
class WorkerState:
    """What status() shows for one GPU worker."""

    device: int
    index: int
    state: str = "idle"  # idle | preparing | waiting | proving
    job: str | None = None
    partition: int | None = None


class GpuWorker(threading.Thread):
    """One GPU worker thread: a unit id in, its GpuWork from the core, `start` under the device
    lock; then, on the worker's second thread ("-after"), the hand-over closed, Proved to the
    core and the FinalizeWork to `handoff` (the finalizers' queue, or the finalizer run there
    with finalize.split off), while this thread stages its next unit. Closing a porep-32g
    hand-over (unmapping 4.2 GB) took 0.34 s, on the path to the device between two holds
    (H100, 2026-12-07); Proved comes after it, so the hand-over's share of the memory budget
    goes back only once its pages have."""

    def __init__(
        self,
        *,
        core: EngineCore,
        device: int,
        index: int,
        lock: DeviceLock,
        queue: WorkQueue[int],
        handoff: Callable[[FinalizeWork], None],
        hooks: Any,
        prestage: bool = True,
        urgent_only: bool = False,
    ) -> None:
        super().__init__(name=f"cuzk-gpu-{device}.{index}{'u' if urgent_only else ''}", daemon=True)
        self.core = core
        self.urgent_only = urgent_only  # the urgent lane's worker: HIGH and CRITICAL units only
        self.prestage = prestage  # upload.prestage: build the device vectors before taking the lock
        self.device = device
        self.lock = lock
        self.queue = queue
        self.handoff = handoff
        self.hooks = hooks
        self.state = WorkerState(device, index)
        self._state_lock = threading.Lock()
        self._after: SimpleQueue[Callable[[], None] | None] = SimpleQueue()
        self._after_thread = threading.Thread(target=self._run_after, name=f"{self.name}-after", daemon=True)

    def status(self) -> WorkerState:
        with self._state_lock:
            return dataclasses.replace(self.state)

    def _set(self, state: str, job: str | None = None, partition: int | None = None) -> None:
        with self._state_lock:
            self.state.state, self.state.job, self.state.partition = state, job, partition

    def run(self) -> None:
        self._after_thread.start()
        try:
            while (uid := self.queue.get(max_first=URGENT_KEY if self.urgent_only else None)) is not None:
                unit: GpuWork | None = None
                try:
                    unit = self.core.call(TakeGpu(uid))
                    if unit is not None:
                        self._prove(unit)
                except Exception as exc:  # a hook that raised: the unit fails, the worker stays
                    self._fail(uid, unit, exc)
                finally:
                    self._set("idle")
        finally:  # every unit this worker proved is handed on before it stops
            self._after.put(None)
            self._after_thread.join()

    def _run_after(self) -> None:
        while (task := self._after.get()) is not None:
            task()

    def _fail(self, uid: int, unit: GpuWork | None, exc: Exception) -> None:
        where = f"partition {unit.partition} " if unit is not None else ""
        self.core.post(UnitFailed(uid, f"{where}GPU stage failed: {type(exc).__name__}: {exc}"))

    def _prove(self, unit: GpuWork) -> None:
        results: list[Any] = list(unit.results)  # this worker's to close

        def close() -> None:
            for r in results:
                r.close()
            results.clear()

        self._set("preparing", unit.job_ids[0], unit.partition)
        tl = Timeline(unit.label)
        try:
            for job_id in unit.job_ids:
                self.hooks.call("before_gpu", job_id, unit.partition)
            if unit.dead.is_set():  # every job ended while this worker waited at the partition boundary
                close()
                self.core.post(UnitDropped(unit.unit_id))
                return
            attrs = {"worker": self.name, "device": self.device, "partition": unit.partition, "k": unit.k,
                     "unit": unit.label}  # fmt: skip
            # Copies and uploads before the lock (upload.prestage); under it only device work: the
            # SpMV and satisfaction check of a witness-only hand-over, then the prover's start.
            # A prestaged hand-over is closed on the "-after" thread once the device is given
            # back (class docstring), never between the prepare and the lock queue, where its
            # unmapping kept the device idle (H100, 2026-12-07).
            assign = None
            if self.prestage:
                with tl.span("gpu_prepare", **attrs) as prep:
                    times: dict[str, float] = {}
                    assign = work.stage(unit.resident, results, tl, times)
                    prep.attrs.update({f"{k}_ms": round(v * 1e3, 1) for k, v in times.items()})
            self._set("waiting", unit.job_ids[0], unit.partition)
            backend = unit.resident.srs.backend
            with self.lock.hold(tl, backend, priority=unit.priority, need=unit.need,
                                room=lambda: work.device_room(backend), **attrs) as checkpoint:  # fmt: skip
                self._set("proving", unit.job_ids[0], unit.partition)
                if assign is None:
                    assign = work.stage(unit.resident, results, tl)
                    close()
                # A G2 MSM on this device runs under this hold: left to the finalizer, it queued
                # on the shared stream behind the next holder's kernels (1.07 s of a 3.07 s
                # WinningPoSt probe beside porep-32g, H100 2026-12-07) and ran inside that hold.
                pending = work.start(assign(), unit.resident, unit.windows, checkpoint=checkpoint,
                                     g2=unit.resident.g2_in_hold)  # fmt: skip
        except Exception as exc:  # a failing partition fails its jobs; the worker goes on
            close()
            msg = f"partition {unit.partition} GPU prove failed: {type(exc).__name__}: {exc}"
            self.core.post(UnitFailed(unit.unit_id, msg))
            return
        self._after.put(lambda: self._hand_on(unit, pending, tl, attrs, close))

    def _hand_on(self, unit: GpuWork, pending: Any, tl: Timeline, attrs: dict[str, Any],
                 close: Callable[[], None]) -> None:  # fmt: skip
        """On the "-after" thread: the hand-over closed, then Proved and the finalizer's work."""
        try:
            close()
            fin: FinalizeWork | None = self.core.call(Proved(unit.unit_id, pending, tl, attrs))
            for job_id in unit.job_ids:
                self.hooks.call("after_gpu", job_id, unit.partition)
            if fin is not None:
                self.handoff(fin)
        except Exception as exc:  # a hook or a hand-off that raised: the unit fails, the worker stays
            self._fail(unit.unit_id, unit, exc)
