"""Batch kernels split into chunks over cuzk's own small thread pool, instead of numba parfor.

numba's `parallel=True` kernels compile the loop body again as a gufunc with wrappers around
it: about 1.5x a plain kernel's compile time (8.5 s against 5.5 s for the Fq2 point addition,
2026-12-05), which a first run pays for every kernel it meets (issue 29). The CPU
kernels are serial `njit(nogil=True)` loops over a row range [lo, hi) instead, and this module
runs one call per chunk on a pool of threads: the kernels release the GIL, so the chunks run on
all cores. Small batches run on the calling thread: waking threads costs more than it saves
there (an 8192-element Fr multiplication took 13-15 ms on 2 threads against 0.3-3 ms on 1 with
the machine's 2 cores oversubscribed, 2026-12-02).

The thread count is NUMBA_NUM_THREADS (numba's own default: the cores; the engine's synthesis
workers set it per process), lowered per calling thread by `threads_for` and `limit_threads`.
A chunk that itself calls into this module runs its chunks inline, so nesting cannot deadlock.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import Any

import numba

#: Below this many field multiplications' worth of work, run serially.
SERIAL_WORK = 1 << 15

_local = threading.local()  # .limit: this thread's cap; .in_pool: a pool thread
_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def max_threads() -> int:
    """Threads the pool may use: NUMBA_NUM_THREADS, as numba's parallel kernels did."""
    return max(1, int(numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]


def threads() -> int:
    """Threads a batch started on this thread may use now."""
    if getattr(_local, "in_pool", False):
        return 1
    limit = getattr(_local, "limit", None)
    return max_threads() if limit is None else max(1, min(limit, max_threads()))


@contextmanager
def limit_threads(n: int) -> Iterator[None]:
    """At most `n` threads for batches started by this thread inside the block."""
    previous = getattr(_local, "limit", None)
    _local.limit = n if previous is None else min(previous, n)
    try:
        yield
    finally:
        _local.limit = previous


@contextmanager
def threads_for(work: int) -> Iterator[None]:
    """One thread inside the block when `work` (in field multiplications) is small."""
    if work >= SERIAL_WORK:
        yield
        return
    with limit_threads(1):
        yield


def _mark_pool_thread() -> None:
    _local.in_pool = True


def _executor(size: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < size:
            old = _pool
            _pool = ThreadPoolExecutor(size, thread_name_prefix="cuzk-kernel", initializer=_mark_pool_thread)
            _pool_size = size
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def _forget_pool() -> None:
    """After fork the child has the pool object but not its threads: start a new one on demand."""
    global _pool, _pool_size, _pool_lock
    _pool, _pool_size, _pool_lock = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def chunks(n: int, parts: int) -> list[tuple[int, int]]:
    """[0, n) as at most `parts` contiguous, non-empty ranges of near-equal length."""
    parts = max(1, min(parts, n))
    step = -(-n // parts) if n else 0
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)] if n else []


def parts_for(n: int, work: int) -> int:
    """How many chunks a batch of `n` rows and `work` field multiplications is split into."""
    return 1 if work < SERIAL_WORK else max(1, min(n, threads()))


def run_all(tasks: Sequence[Callable[[], Any]], *, parallel: bool = True) -> None:
    """Run the tasks on the pool (the last one on this thread) and wait for all of them; in
    order on this thread when not `parallel`, when there is one, or when this thread may use one.

    The exception of the first failed task in list order is raised here, after every task has
    finished, so no task still writes into the caller's arrays once this returns.
    """
    if not parallel or len(tasks) <= 1 or threads() <= 1:
        for task in tasks:
            task()
        return
    pool = _executor(max_threads())
    futures: list[Future[Any]] = [pool.submit(task) for task in tasks[:-1]]
    last: BaseException | None = None
    try:
        tasks[-1]()
    except BaseException as exc:
        last = exc
    errors = [f.exception() for f in futures] + [last]  # waits for every chunk
    error = next((e for e in errors if e is not None), None)
    if error is not None:
        raise error


def run_ranges(kernel: Callable[..., Any], args: tuple, n: int, work: int, parts: int | None = None) -> None:
    """kernel(*args, lo, hi) over [0, n) in chunks, on the pool when `work` (in field
    multiplications) is worth it: one chunk per thread, or `parts` chunks (kernels whose result
    depends on nothing but the rows, and that do per-call work such as an inversion, choose)."""
    ranges = chunks(n, parts_for(n, work) if parts is None else parts)
    run_all([partial(kernel, *args, lo, hi) for lo, hi in ranges], parallel=work >= SERIAL_WORK)
