"""Run small batches on one thread: a parallel launch costs more than it saves there.

numba's parallel loops wake worker threads on every call. For small batches
that wake-up dominates, and on a busy machine (CI, or synthesis running beside
GPU work) it is far worse: an 8192-element Fr multiplication took 13-15 ms on
2 threads against 0.3-3 ms on 1 thread with the machine's 2 cores
oversubscribed (2026-12-02). numba's thread count is per calling thread, so
setting it around one call affects nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numba

#: Below this many field multiplications' worth of work, run serially.
SERIAL_WORK = 1 << 15


@contextmanager
def threads_for(work: int) -> Iterator[None]:
    """Use one thread inside the block when `work` (in field multiplications) is small."""
    if work >= SERIAL_WORK:
        yield
        return
    previous = numba.get_num_threads()
    if previous == 1:
        yield
        return
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)
