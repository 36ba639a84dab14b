"""The asyncio event loop the daemon's gRPC server runs on, in a thread of its own.

The daemon's main thread waits for signals; the engine has its own threads; the gRPC
server (grpc.aio) needs a running loop. This puts one on a daemon thread, and lets the
main thread run coroutines there (start, stop) and wait for their outcome.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """An event loop running forever on a thread named `name`, until close()."""

    def __init__(self, name: str = "cuzk-grpc") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the loop and wait for its result here (its exception is raised here)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        """Stop the loop and its thread; tasks still pending are cancelled first."""
        if self.loop.is_closed():
            return

        async def cancel_rest() -> None:
            rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in rest:
                t.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        if self._thread.is_alive():
            self.run(cancel_rest(), timeout=10)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)
        self.loop.close()
