"""When the device was busy, on the host clock: CUDA events at the edges of each run of kernels.

The device lock's hold is host time: it counts the copies, downloads and Python work done
while holding it, and so overstated GPU busy by 7 to 15 points on porep-medium against
per-kernel CUDA events (docs/BENCHMARKS.md). Events around every launch are exact but cost two
records per launch. Here a run opens with an event recorded just before the first launch after
the device went quiet and closes with one recorded at the next download or synchronisation
(where the host stops feeding it); a run's events complete when the stream reaches them, so
each run is measured on the device's clock and the host time between runs is left out. Two
events per run, a handful per MSM. The run's events map onto `time.perf_counter` through one
reference event, recorded and waited for when the measurement ends.

What a run still counts that per-kernel events do not: launch gaps between its kernels and
CuPy's own kernels (scans, fills), which per-kernel events in the runtime do not see.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class DeviceClock:
    """Busy intervals of one stream while `measure` is active (one measurer at a time)."""

    def __init__(self, new_event: Callable[[], Any], elapsed_ms: Callable[[Any, Any], float]) -> None:
        self._new_event = new_event  # an event recorded on the stream now: has .synchronize()
        self._elapsed_ms = elapsed_ms  # device milliseconds from one recorded event to another
        self._lock = threading.Lock()
        self._active = False
        self._open: Any = None
        self._runs: list[tuple[Any, Any]] = []

    def launching(self) -> None:
        """Before a kernel launch: open a run if none is open."""
        with self._lock:
            if self._active and self._open is None:
                self._open = self._new_event()

    def quiet(self) -> None:
        """At a download or synchronisation: the open run ends where the stream's queued work ends."""
        with self._lock:
            if self._open is not None:
                self._runs.append((self._open, self._new_event()))
                self._open = None

    @contextmanager
    def measure(self) -> Iterator[list[tuple[float, float]]]:
        """Yield a list that receives the (start, end) perf_counter intervals of the runs, at exit."""
        with self._lock:
            if self._active:
                raise RuntimeError("the device clock is already measuring (one device lock holder at a time)")
            self._active = True
        out: list[tuple[float, float]] = []
        try:
            yield out
        except BaseException:  # a failed device region: no reading of its events (they may never complete)
            with self._lock:
                self._open, self._runs, self._active = None, [], False
            raise
        self.quiet()
        with self._lock:
            runs, self._runs, self._active = self._runs, [], False
        if runs:
            ref = self._new_event()
            ref.synchronize()  # every run's events precede it on the stream, so all have completed
            now = time.perf_counter()
            out.extend(
                (now - self._elapsed_ms(a, ref) / 1e3, now - self._elapsed_ms(b, ref) / 1e3) for a, b in runs
            )
