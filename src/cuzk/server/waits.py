"""Waiting for a job without holding a thread: completion events parked on the server's event loop.

A proving service has far more clients waiting on proofs than it has threads. The old daemon
blocked one thread of a 64-thread pool per AwaitProof/Prove, so 64 waiting clients froze
GetStatus and SubmitProof (issue 32 item 1). Here a waiter is an asyncio future on the gRPC
event loop; the engine's completion listener (called on the engine's own thread) resolves the
futures of that job through `call_soon_threadsafe`. A thousand waits cost a thousand futures,
not a thousand threads, and a client that goes away cancels its task, which drops its future.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any


class CompletionWaits:
    """Futures waiting on job ids, resolved by the engine's completion listener."""

    def __init__(self, engine: Any) -> None:
        self._lock = threading.Lock()
        self._waiters: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]]] = {}
        self._count = 0
        engine.add_listener(self._finished)

    @property
    def count(self) -> int:
        """Waits parked now (the cuzk_rpc_waiting gauge; tests synchronize on it)."""
        with self._lock:
            return self._count

    def _finished(self, result: Any, _request: Any) -> None:
        """Engine listener (any thread): wake every wait on this job with its result."""
        with self._lock:
            waiters = self._waiters.pop(result.job_id, [])
        for loop, fut in waiters:
            loop.call_soon_threadsafe(_resolve, fut, result)

    async def wait(self, handle: Any, timeout_s: float | None) -> Any | None:
        """The job's result, or None once `timeout_s` passed (None: no limit). Holds no thread."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        entry = (loop, fut)
        with self._lock:
            self._waiters.setdefault(handle.job_id, []).append(entry)
            self._count += 1
        try:
            if handle.done():  # finished before the future was parked: the listener has come and gone
                return handle.result(timeout=0)
            try:
                return await asyncio.wait_for(fut, timeout_s)
            except TimeoutError:
                return None
        finally:
            with self._lock:
                self._count -= 1
                waiters = self._waiters.get(handle.job_id)
                if waiters is not None and entry in waiters:
                    waiters.remove(entry)
                    if not waiters:
                        del self._waiters[handle.job_id]


def _resolve(fut: asyncio.Future[Any], result: Any) -> None:
    if not fut.done():
        fut.set_result(result)
