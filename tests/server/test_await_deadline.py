"""AwaitProof bounded by the call's own deadline: what ran out is the call, so the answer is
DEADLINE_EXCEEDED (the client's exit 5) whichever reaches the client first, the daemon's answer
or the client's own deadline. A TIMEOUT answer is for the request's `timeout_ms` only. (The
daemon answered TIMEOUT at the deadline, and when that answer beat the deadline to the client,
`cuzk client await --timeout 0.2` exited 4 instead of 5: a flaky suite run, 2026-12-07.)"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import grpc
import pytest

from cuzk.server.config import DaemonConfig
from cuzk.server.service import ProvingEngineServicer
from cuzk.server.v1 import proving_pb2 as pb


class Aborted(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code


class Context:
    """A call context whose deadline is `remaining` seconds away (None: no deadline)."""

    def __init__(self, remaining: float | None) -> None:
        self.remaining = remaining

    def time_remaining(self) -> float | None:
        return self.remaining

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise Aborted(code, details)


class NeverDone:
    """The daemon's waits on a job that does not finish: every wait runs out (records its bound)."""

    def __init__(self) -> None:
        self.bounds: list[float | None] = []

    async def wait(self, handle: object, timeout_s: float | None) -> None:
        self.bounds.append(timeout_s)
        return None


def _await(timeout_ms: int, remaining: float | None) -> tuple[pb.AwaitProofResponse | Aborted, NeverDone]:
    svc = ProvingEngineServicer(SimpleNamespace(add_listener=lambda f: None), DaemonConfig())
    try:
        waits = NeverDone()
        svc.waits = waits  # type: ignore[assignment]
        svc._lookup = lambda job_id: (SimpleNamespace(job_id=job_id), None)  # type: ignore[method-assign]
        request = pb.AwaitProofRequest(job_id="j1", timeout_ms=timeout_ms)
        try:
            return asyncio.run(svc.AwaitProof(request, Context(remaining))), waits  # type: ignore[arg-type]
        except Aborted as exc:
            return exc, waits
    finally:
        svc.close()


def test_the_calls_deadline_running_out_is_deadline_exceeded() -> None:
    for timeout_ms in (0, 5000):  # no wait limit, or one longer than the deadline
        out, waits = _await(timeout_ms, remaining=0.2)
        assert isinstance(out, Aborted) and out.code is grpc.StatusCode.DEADLINE_EXCEEDED
        assert "j1 did not finish within the call's deadline" in str(out)
        assert waits.bounds == [0.2]


@pytest.mark.parametrize("remaining", [None, 30.0])
def test_the_requests_own_wait_running_out_is_a_timeout_answer(remaining: float | None) -> None:
    out, waits = _await(100, remaining=remaining)
    assert isinstance(out, pb.AwaitProofResponse) and out.status == pb.AwaitProofResponse.TIMEOUT
    assert out.job_id == "j1" and waits.bounds == [0.1]
