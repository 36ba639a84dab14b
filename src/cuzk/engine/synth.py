"""Synthesis worker processes: witness and A.w, B.w, C.w for one partition, off the GIL.

Python synthesis holds the GIL, so the engine runs it in worker PROCESSES, each a
fresh interpreter started on cuzk's own entry point (cuzk.engine.synth_worker):
nothing of the parent's threads or locks is inherited, and the caller's
`__main__` is never re-run, so scripts need no `if __name__ == "__main__":` guard.
Each worker loads a circuit's witness program and topology once, from the
on-disk cache, and keeps them for later tasks. Per task (one partition of one
job) it makes the instance of a seed (span `instance`), runs the witness
program (span `witness`) and, when the task asks,
a = A.w, b = B.w, c = C.w with the satisfaction check on the CPU backend
(span `matvec`, through `groth16.prover.evaluate`, the prover's own check).

Hand-off: the worker writes the arrays into one POSIX shared-memory block per
result (a file under /dev/shm, name chosen by the parent) and sends only the
layout (names, shapes, offsets) through its socket; the parent maps the block
and gives out numpy views without a copy. `SynthResult.close()` unlinks the
block. The parent registers each name with its resource tracker when it hands
the task out and unregisters it when it unlinks the block, so nothing is
reported as leaked, and if the parent itself dies the tracker removes what is left.

Outcomes: every submitted task gets exactly one callback, with a SynthResult or
a SynthFailure whose kind says why: "job" (the instance is bad: the message
names the unsatisfied constraint; the worker stays), "worker" (the process
died: pid, signal, job and partition named; a new worker replaces it),
"cancelled" (`cancel(job_id)`: queued tasks at once, a running one when it
finishes, its result closed), "shutdown" (`shutdown(cancel_pending=True)`, or
a worker stopped by `shutdown(kill=True)`). Callbacks run one at a time on a
callback thread of the pool, never on the dispatcher, so a slow callback
delays other callbacks but not dispatch or the detection of dead workers.

Span times are `time.perf_counter()`, which on Linux is
clock_gettime(CLOCK_MONOTONIC): one clock for every process of the machine,
so worker spans line up with the parent's timelines.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import heapq
import itertools
import logging
import mmap
import multiprocessing.connection
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection
from typing import Any, Literal

import numpy as np

from cuzk.engine.synth_worker import SHM_DIR
from cuzk.errors import ShuttingDownError, UsageError

log = logging.getLogger(__name__)

#: Every block this module makes starts with this, then the parent's pid (for leak checks).
SHM_PREFIX = "cuzk-synth-"
#: A slot whose workers die this many times in a row before saying ready is given up.
MAX_EARLY_DEATHS = 3

FailureKind = Literal["job", "worker", "cancelled", "shutdown"]


@dataclass
class SynthTask:
    """One partition of one job: a circuit and its instance (a seed for a random valid one, or arrays)."""

    job_id: str
    partition: int
    circuit: str
    seed: int | None = None
    instance: dict[str, np.ndarray] | None = None
    compute_abc: bool = True
    #: Test hook: a folder holding FIFOs `started` and `release`. The worker writes its pid to
    #: `started`, then blocks opening `release` until someone opens it for writing (or kills it).
    hold: str | None = None


@dataclass
class SynthResult:
    """A satisfied partition: views into a shared-memory block that `close()` releases.

    inputs (num_inputs, 4) and aux (num_aux, 4) are the witness (Montgomery Fr, ONE first);
    abc is (a, b, c), each (num_constraints, 4), when the task asked for it.
    """

    job_id: str
    partition: int
    inputs: np.ndarray
    aux: np.ndarray
    abc: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    spans: list[dict[str, Any]]  # name, start, end (perf_counter, CLOCK_MONOTONIC), worker, pid
    worker: int = -1
    pid: int = 0
    nbytes: int = 0  # size of the shared-memory block
    shm_name: str = ""
    _release: weakref.finalize[..., Any] | None = field(default=None, repr=False)

    def close(self) -> None:
        """Unlink the block and drop this result's views; idempotent (also run if it is collected).

        The name goes at once, so nothing is left in /dev/shm; the memory is unmapped when the
        last view goes, so views the caller still holds stay valid, never dangling.
        """
        self.inputs = self.aux = np.zeros((0, 4), dtype=np.uint64)
        self.abc = None
        if self._release is not None:
            self._release()

    def __enter__(self) -> SynthResult:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class SynthFailure:
    """A task that produced no result, and why (see the module docstring for the kinds)."""

    job_id: str
    partition: int
    message: str
    kind: FailureKind
    error: str = ""  # the exception's class name for kind "job" (UnsatisfiedError, CircuitError, ...)
    spans: list[dict[str, Any]] = field(default_factory=list)
    worker: int = -1
    pid: int = 0


Outcome = SynthResult | SynthFailure
Callback = Callable[[Outcome], None]


def _unlink(name: str, *, registered: bool) -> bool:
    """Remove a block's name (if the worker made it); unregister it from the resource tracker if
    the parent registered it. True if there was a block."""
    try:
        os.unlink(os.path.join(SHM_DIR, name))
        existed = True
    except FileNotFoundError:
        existed = False
    if registered:
        resource_tracker.unregister("/" + name, "shared_memory")
    return existed


def default_workers() -> int:
    """One worker per core this process may run on."""
    return len(os.sched_getaffinity(0))


def default_threads(workers: int, cores: int | None = None) -> int:
    """numba threads per worker, so that workers x threads does not exceed the cores.

    Oversubscribed numba parallel launches stall (docs/ARCHITECTURE.md, "Small batches").
    """
    return max(1, (cores or default_workers()) // workers)


# --- the parent side ----------------------------------------------------------------------------


@dataclass
class _Entry:
    task_id: int
    task: SynthTask
    done: Callback
    shm_name: str
    key: tuple[int, ...] = ()
    cancelled: bool = False
    started: bool = False  # the worker has acknowledged it
    registered: bool = False  # its block's name is with the resource tracker (from its first send)


@dataclass
class _Slot:
    index: int
    process: WorkerProcess
    conn: Any
    ready: bool = False
    entry: _Entry | None = None
    started_at: float = 0.0
    startup_s: float | None = None  # Process.start() to 'ready' (imports, numba, preload)
    numba_threads: int = 0  # as the worker reports it
    setup_s: float = 0.0  # inside the worker: importing numba, preloading circuits
    alive: bool = True  # False once its process ended and was handled
    early_deaths: int = 0  # consecutive deaths of this slot's workers before they were ready


class SynthPool:
    """A fixed number of synthesis worker processes fed from one queue.

    Tasks run in order of their `key` (then submission order); a dead worker is replaced.
    """

    def __init__(
        self,
        workers: int | None = None,
        *,
        cache_dir: str | None = None,
        threads_per_worker: int | None = None,
        preload: Sequence[str] = (),
    ) -> None:
        n = default_workers() if workers is None else workers
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise UsageError(f"a synthesis pool needs at least one worker, not {workers!r}")
        self.threads = threads_per_worker or default_threads(n)
        self.cache_dir = cache_dir
        self.preload = tuple(preload)
        self._lock = threading.Lock()
        self._queue: list[tuple[tuple[int, ...], int, _Entry]] = []
        self._ids = itertools.count()
        self._tag = f"{SHM_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}-"
        self._closing = False
        self._cancel_pending = False
        self._kill = False
        self._start_error = ""
        self._callbacks: queue.SimpleQueue[tuple[Callback, Outcome] | None] = queue.SimpleQueue()
        self._wake_lock = threading.Lock()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._slots = [self._start(i) for i in range(n)]
        # Daemon threads plus an exit hook: a pool never shut down must not hang interpreter exit
        # (non-daemon threads are joined before atexit hooks run).
        self._callback_thread = threading.Thread(
            target=self._deliver, name="cuzk-synth-callbacks", daemon=True
        )
        self._dispatcher = threading.Thread(
            target=self._dispatch_loop, name="cuzk-synth-dispatch", daemon=True
        )
        self._callback_thread.start()
        self._dispatcher.start()
        self._at_exit = functools.partial(_shutdown_at_exit, weakref.ref(self))
        atexit.register(self._at_exit)

    # --- public API ---
    @property
    def workers(self) -> int:
        return len(self._slots)

    def submit(self, task: SynthTask, done: Callback, *, key: tuple[int, ...] = ()) -> None:
        """Queue a task; `done` gets its one outcome on the pool's callback thread."""
        if (task.seed is None) == (task.instance is None):
            raise UsageError(f"task {task.job_id}/{task.partition}: give exactly one of seed and instance")
        with self._lock:
            if self._closing:
                raise ShuttingDownError("the synthesis pool is shutting down")
            tid = next(self._ids)
            entry = _Entry(tid, task, done, f"{self._tag}{tid}", key)
            heapq.heappush(self._queue, (key, tid, entry))
        self._wake()

    def cancel(self, job_id: str) -> int:
        """Drop the job's queued tasks (each reports kind "cancelled" now); a running one reports
        "cancelled" when it finishes, its result closed. Returns how many tasks were affected."""
        with self._lock:
            dropped = [e for _, _, e in self._queue if e.task.job_id == job_id]
            if dropped:
                self._queue = [q for q in self._queue if q[2].task.job_id != job_id]
                heapq.heapify(self._queue)
            running = [s.entry for s in self._slots if s.entry is not None and s.entry.task.job_id == job_id]
            for e in running:
                e.cancelled = True
        for e in dropped:
            self._report(e, self._failure(e, "cancelled", f"job {job_id} was cancelled"))
        return len(dropped) + len(running)

    def worker_pids(self) -> list[int]:
        with self._lock:
            return [s.process.pid for s in self._slots]

    def busy(self) -> int:
        """Tasks running now."""
        with self._lock:
            return sum(s.entry is not None for s in self._slots)

    def queued(self) -> int:
        with self._lock:
            return len(self._queue)

    def worker_info(self) -> list[dict[str, Any]]:
        """Per worker slot: index, pid, ready, startup_s (Process.start() to ready; None while
        starting), setup_s (the worker's own part of it: numba import, preloads), numba_threads."""
        keys = ("index", "ready", "startup_s", "setup_s", "numba_threads")
        with self._lock:
            return [{"pid": s.process.pid, **{k: getattr(s, k) for k in keys}} for s in self._slots]

    def shutdown(self, wait: bool = True, *, cancel_pending: bool = False, kill: bool = False) -> None:
        """Stop accepting tasks; queued ones still run unless cancel_pending (then kind "shutdown").

        kill: terminate the workers now; running tasks report kind "shutdown". With wait, return
        once every callback has been delivered and every worker has exited.
        """
        with self._lock:
            self._closing = True
            self._cancel_pending = self._cancel_pending or cancel_pending
            self._kill = self._kill or kill
        self._wake()
        atexit.unregister(self._at_exit)
        if wait and threading.current_thread() not in (self._dispatcher, self._callback_thread):
            self._dispatcher.join()
            self._callback_thread.join()

    def __enter__(self) -> SynthPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(wait=True, cancel_pending=exc[0] is not None)

    # --- the dispatcher thread ---
    def _start(self, index: int) -> _Slot:
        started = time.perf_counter()
        process, conn = WorkerProcess.start(index, self.threads, self.cache_dir, self.preload)
        return _Slot(index, process, conn, started_at=started)

    def _wake(self) -> None:
        with self._wake_lock:  # never write to the descriptor once the dispatcher has closed it
            if self._wake_w >= 0:
                with contextlib.suppress(BlockingIOError):  # a full pipe: the dispatcher is awake anyway
                    os.write(self._wake_w, b"x")

    def _dispatch_loop(self) -> None:
        try:
            while not self._step():
                pass
        except BaseException as exc:  # a bug here must not leave tasks without an outcome
            log.exception("the synthesis dispatcher failed")
            self._fail_all(f"the synthesis pool failed: {exc!r}")
        finally:
            for s in self._slots:
                s.process.join()
                s.conn.close()
            with self._wake_lock:
                os.close(self._wake_r)
                os.close(self._wake_w)
                self._wake_w = -1
            self._callbacks.put(None)

    def _fail_all(self, message: str) -> None:
        with self._lock:
            self._closing = True
            entries = [e for _, _, e in sorted(self._queue)] + [s.entry for s in self._slots if s.entry]
            self._queue = []
            for s in self._slots:
                s.entry = None
                if s.process.is_alive():
                    s.process.kill()
        for e in entries:
            self._report(e, self._failure(e, "worker", message))

    def _step(self) -> bool:
        """Dispatch, wait for one event, handle it. True once the pool has wound down."""
        sends = []
        with self._lock:
            closing, kill = self._closing, self._kill
            hopeless = not any(s.alive for s in self._slots)
            if self._queue and (hopeless or (closing and (self._cancel_pending or kill))):
                drop, self._queue = sorted(self._queue), []
                for _, _, gone in drop:
                    if hopeless:
                        why = self._failure(
                            gone, "worker", f"no synthesis worker could start ({self._start_error})"
                        )
                    else:
                        why = self._failure(gone, "shutdown", "the synthesis pool shut down before it ran")
                    self._report(gone, why)
            if kill:
                for s in self._slots:
                    if s.alive and s.process.is_alive():
                        s.process.kill()
            for s in self._slots:
                if s.alive and s.ready and s.entry is None and self._queue:
                    _, _, s.entry = heapq.heappop(self._queue)
                    sends.append(s)
            if closing and not self._queue and all(s.entry is None for s in self._slots):
                for s in self._slots:
                    if s.alive:
                        sends.append(s)
                done = True
            else:
                done = False
            slots = [s for s in self._slots if s.alive]
        for s in sends:
            e = s.entry
            if e is not None and not done and not e.registered:  # the tracker unlinks it if we die
                resource_tracker.register("/" + e.shm_name, "shared_memory")
                e.registered = True
            try:  # outside the lock: an instance may be large
                s.conn.send(None if done or e is None else (e.task_id, e.task, e.shm_name))
            except OSError:  # the worker is dead (its sentinel will say so); it never saw the task
                if e is not None:
                    with self._lock:
                        s.entry = None
                        if not e.cancelled:
                            heapq.heappush(self._queue, (e.key, e.task_id, e))
                    if e.cancelled:
                        self._report(e, self._failure(e, "cancelled", f"job {e.task.job_id} was cancelled"))
        if done:
            return True
        waitables: list[Any] = [self._wake_r]
        for s in slots:
            waitables += [s.conn, s.process.sentinel]
        ready = multiprocessing.connection.wait(waitables)
        if self._wake_r in ready:
            os.read(self._wake_r, 4096)
        for s in slots:
            if s.conn in ready:
                try:
                    msg = s.conn.recv()
                except (EOFError, OSError):
                    self._died(s, drained=True)
                    continue
                self._handle(s, msg)
            elif s.process.sentinel in ready:
                self._died(s)
        return False

    def _handle(self, slot: _Slot, msg: tuple[Any, ...]) -> None:
        if msg[0] == "ready":
            with self._lock:
                slot.ready = True
                slot.startup_s = time.perf_counter() - slot.started_at
                slot.numba_threads, slot.setup_s = msg[1], msg[2]
            return
        if msg[0] == "started":
            with self._lock:
                if slot.entry is not None and slot.entry.task_id == msg[1]:
                    slot.entry.started = True
            return
        task_id, status, *rest = msg
        entry = slot.entry  # stays the slot's until reported, so a failure here still reaches it
        assert entry is not None and entry.task_id == task_id, "a worker answered a task it was not given"
        outcome = self._outcome(entry, status, rest, slot.index, slot.process.pid)
        with self._lock:
            slot.entry = None
        self._report(entry, outcome)

    def _outcome(self, entry: _Entry, status: str, rest: list[Any], worker: int, pid: int) -> Outcome:
        t = entry.task
        if status != "ok":
            error, message, spans = rest
            return SynthFailure(
                t.job_id, t.partition, f"partition {t.partition} of job {t.job_id}: {message}", "job",
                error=error, spans=spans, worker=worker, pid=pid,
            )  # fmt: skip
        layout, nbytes, spans = rest
        try:
            result = _map_result(entry, layout, nbytes, spans, worker, pid)
        except OSError as exc:
            why = f"partition {t.partition} of job {t.job_id}: its result block is not readable: {exc}"
            return self._failure(entry, "worker", why)
        if not entry.cancelled:
            return result
        result.close()
        cancelled = self._failure(entry, "cancelled", f"job {t.job_id} was cancelled")
        cancelled.spans = spans
        return cancelled

    def _died(self, slot: _Slot, *, drained: bool = False) -> None:
        """The worker's process ended: fail its task (if any) and start a replacement."""
        while not drained and slot.conn.poll():  # what it sent before dying still counts
            try:
                msg = slot.conn.recv()
            except (EOFError, OSError):
                break
            self._handle(slot, msg)
        slot.process.join()
        slot.conn.close()
        code = slot.process.exitcode
        pid = slot.process.pid
        how = f"signal {-code}: {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
        with self._lock:
            entry, slot.entry = slot.entry, None
            slot.alive = slot.ready = False
            killed = self._kill
            replace = not killed and (not self._closing or bool(self._queue))
            early = 0 if slot.startup_s is not None else slot.early_deaths + 1
            if early:
                self._start_error = f"worker {pid} exited with {how} before it was ready"
        if entry is not None and not entry.started and not entry.cancelled and not killed:
            with self._lock:  # it died before it saw the task: the task runs elsewhere
                heapq.heappush(self._queue, (entry.key, entry.task_id, entry))
            entry, replace = None, True
        if entry is not None:  # _report unlinks a block it made before dying
            t = entry.task
            if killed:
                outcome = self._failure(entry, "shutdown", f"synthesis worker {pid} was stopped by shutdown")
            elif entry.cancelled:
                outcome = self._failure(entry, "cancelled", f"job {t.job_id} was cancelled")
            else:
                msg = (
                    f"synthesis worker {pid} died ({how}) while synthesizing "
                    f"partition {t.partition} of job {t.job_id}"
                )
                outcome = SynthFailure(t.job_id, t.partition, msg, "worker", worker=slot.index, pid=pid)
            self._report(entry, outcome)
        elif not killed and not self._closing:
            log.warning("synthesis worker %d (pid %d) died idle (%s)", slot.index, pid, how)
        if replace and early < MAX_EARLY_DEATHS:
            new = self._start(slot.index)
            new.early_deaths = early
            with self._lock:
                self._slots[slot.index] = new

    def _failure(self, entry: _Entry, kind: FailureKind, message: str) -> SynthFailure:
        t = entry.task
        return SynthFailure(t.job_id, t.partition, message, kind)

    def _report(self, entry: _Entry, outcome: Outcome) -> None:
        if isinstance(outcome, SynthFailure) and entry.registered:  # no result holds the block
            entry.registered = False
            _unlink(entry.shm_name, registered=True)
        self._callbacks.put((entry.done, outcome))

    def _deliver(self) -> None:
        while True:
            item = self._callbacks.get()
            if item is None:
                return
            done, outcome = item
            try:
                done(outcome)
            except Exception:
                log.exception("a synthesis callback raised (job %s)", outcome.job_id)
                if isinstance(outcome, SynthResult):
                    outcome.close()


def _shutdown_at_exit(ref: weakref.ref[SynthPool]) -> None:
    """At interpreter exit, stop a pool nobody shut down (its threads are daemons)."""
    pool = ref()
    if pool is not None:
        pool.shutdown(wait=True, kill=True)


def _map_result(
    entry: _Entry, layout: list[tuple[str, tuple[int, ...], int]], nbytes: int, spans: list[dict[str, Any]],
    worker: int, pid: int,
) -> SynthResult:  # fmt: skip
    """Map the worker's block and wrap its arrays as views (no copy)."""
    with open(os.path.join(SHM_DIR, entry.shm_name), "r+b") as f:
        m = mmap.mmap(f.fileno(), 0)
    # Each view's base is the mmap object, which unmaps when the last view is freed: it is
    # never closed explicitly (numpy holds no buffer export, so a close would leave views dangling).
    views = {key: np.ndarray(shape, dtype=np.uint64, buffer=m, offset=off) for key, shape, off in layout}
    del m
    abc = (views["a"], views["b"], views["c"]) if "a" in views else None
    t = entry.task
    result = SynthResult(
        t.job_id, t.partition, views["inputs"], views["aux"], abc, spans,
        worker=worker, pid=pid, nbytes=nbytes, shm_name=entry.shm_name,
    )  # fmt: skip
    result._release = weakref.finalize(result, _unlink, entry.shm_name, registered=entry.registered)
    entry.registered = False  # the result owns the block's name now
    return result


class WorkerProcess:
    """A synthesis worker: a fresh interpreter on `python -P -m cuzk.engine.synth_worker`.

    Not multiprocessing's spawn or forkserver: both re-run the caller's `__main__` in the child
    (docs/ARCHITECTURE.md, "Synthesis workers"). The sentinel is a pidfd, readable once the
    process has ended, so `multiprocessing.connection.wait` watches it with the worker's socket.
    """

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.sentinel = os.pidfd_open(popen.pid)

    @classmethod
    def start(
        cls, index: int, threads: int, cache_dir: str | None, preload: Sequence[str]
    ) -> tuple[WorkerProcess, Connection]:
        from cuzk import config

        ours, theirs = socket.socketpair()
        # the worker imports what this process can: its sys.path, as spawn passes it
        paths = [p for p in sys.path if p]
        env = {"NUMBA_NUM_THREADS": str(threads), "PYTHONPATH": os.pathsep.join(paths)}
        if cache_dir is not None:
            env["CUZK_CACHE_DIR"] = cache_dir
        fd = theirs.fileno()
        try:
            popen = subprocess.Popen(
                [sys.executable, "-P", "-m", "cuzk.engine.synth_worker", str(fd), str(index), str(threads),
                 *preload],
                pass_fds=(fd,), env=config.child_environment(env), stdin=subprocess.DEVNULL,
            )  # fmt: skip
        finally:
            theirs.close()
        return cls(popen), Connection(ours.detach())

    @property
    def exitcode(self) -> int | None:
        return self.popen.poll()

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.popen.kill()

    def join(self) -> None:
        self.popen.wait()
        if self.sentinel >= 0:
            os.close(self.sentinel)
            self.sentinel = -1
