"""One cuzk engine on one Ray node: the class the fleet front runs as a Ray actor.

It is a plain class (Ray wraps it in `cuzk.cluster.front`), an async actor so that many
`prove` calls wait at once on one event loop while the engine works on its own threads: each
call submits one job and returns its `JobResult` when the job is terminal. A call is the
front's only handle on a job, so a dead actor or node shows up as the call's error, which is
how the front learns to re-dispatch (Ray reports it; nothing here watches for it).
"""

from __future__ import annotations

import asyncio
import os
import socket
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cuzk.cluster.stats import engine_stats


class EngineNode:
    """An Engine built from EngineConfig keyword arguments, with the calls the front makes."""

    def __init__(self, engine_id: str, config: dict[str, Any]) -> None:
        from cuzk.engine import Engine, EngineConfig

        self.engine_id = engine_id
        self.engine = Engine(EngineConfig(**config))
        # a thread per job waiting for its result (the default executor has cores + 4 threads)
        self._waiters = ThreadPoolExecutor(max_workers=256, thread_name_prefix="cuzk-node-wait")

    async def info(self) -> dict[str, Any]:
        """Where this engine runs: its id, host and pid (the front's status shows them)."""
        return {"engine_id": self.engine_id, "host": socket.gethostname(), "pid": os.getpid()}

    async def prove(self, request: Any) -> dict[str, Any]:
        """Submit one job and wait until it is terminal (a refused job raises its CuzkError).

        The result crosses to the front as plain data (`result_fields`): a Timeline holds a lock.
        """
        handle = self.engine.submit(request)
        loop = asyncio.get_running_loop()
        return result_fields(await loop.run_in_executor(self._waiters, handle.result))

    async def cancel(self, job_id: str) -> bool:
        from cuzk.errors import UnknownJobError

        try:
            return bool(self.engine.cancel(job_id))
        except UnknownJobError:
            return False

    async def preload(self, circuit: str) -> dict[int, tuple[bool, float]]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._waiters, lambda: self.engine.preload(circuit))

    async def evict(self, circuit: str) -> dict[int, tuple[bool, int]]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._waiters, lambda: self.engine.evict(circuit))

    async def stats(self) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._waiters, lambda: engine_stats(self.engine))

    async def shutdown(self, wait: bool) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._waiters, lambda: self.engine.shutdown(wait=wait))


def result_fields(result: Any) -> dict[str, Any]:
    """A JobResult as picklable fields; `to_result` makes it a JobResult again."""
    return {
        "job_id": result.job_id,
        "request_id": result.request_id,
        "status": result.status.value,
        "proofs": result.proofs,
        "public_inputs": result.public_inputs,
        "error": result.error,
        "spans": list(result.timeline.spans),
    }


def to_result(fields: dict[str, Any], node: str) -> Any:
    """The JobResult of `result_fields`, every span tagged with the node that proved it."""
    from cuzk.engine.engine import JobResult
    from cuzk.engine.request import JobStatus
    from cuzk.instrument.spans import Timeline

    timeline = Timeline(fields["job_id"], sinks=[])
    for span in fields["spans"]:
        span.attrs["node"] = node
    timeline.spans = list(fields["spans"])
    return JobResult(
        fields["job_id"], fields["request_id"], JobStatus(fields["status"]), fields["proofs"],
        fields["public_inputs"], fields["error"], timeline,
    )  # fmt: skip
