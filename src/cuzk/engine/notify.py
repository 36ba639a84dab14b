"""Job listeners, called off the core's loop.

A listener does I/O: the daemon's journal commits each terminal job with an fsync
(synchronous=FULL), and on a storage provider's disks, busy with sealing, one fsync can take
seconds. Called on the loop's thread, that stall held up every event behind it: a GPU
worker's next unit, a WinningPoSt job's dispatch. Here one thread calls the listeners, each
job in the order it ended, and only after that does the job stop counting as in flight, so
`wait_idle` (and the shutdown that waits on it) still means "every listener has run".
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger("cuzk.engine")

_Fn = Callable[[Any, Any], None]  # core.Listener, untyped here (core imports this module)


class Notifier:
    """Calls every listener for each ended job on its own thread, then `after()`."""

    def __init__(self, after: Callable[[], None]) -> None:
        self._after = after
        self._listeners: list[_Fn] = []
        self._queue: queue.SimpleQueue[tuple[Any, Any] | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="cuzk-notify", daemon=True)
        self._thread.start()

    def add(self, fn: _Fn) -> None:
        with self._lock:
            self._listeners = [*self._listeners, fn]

    def ended(self, result: Any, request: Any) -> None:
        """A job reached its terminal status (from the loop); after stop: delivered here, now."""
        with self._lock:
            if not self._stopped:
                self._queue.put((result, request))
                return
        self._deliver(result, request)

    def stop(self) -> None:
        """Deliver what is queued, then end the thread."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            self._queue.put(None)
        self._thread.join()

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            self._deliver(*item)

    def _deliver(self, result: Any, request: Any) -> None:
        try:
            for fn in self._listeners:
                try:
                    fn(result, request)
                except Exception:  # a listener's bug must not change the job's outcome
                    log.exception("job listener %r failed for %s", fn, getattr(result, "job_id", "?"))
        finally:
            self._after()


__all__ = ["Notifier"]
