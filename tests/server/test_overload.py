"""Overload: 2x and 10x more work than the memory budget holds, from several clients at once.

The daemon's budget holds the circuit's parameters and two partitions; its queue limit is six
jobs. Four client threads, each on its own channel, submit their share and await it. Past the
queue limit a submit is RESOURCE_EXHAUSTED (a client waits for one of its own jobs, then tries
again); within it jobs queue for memory. No crash, every accepted job completes with proofs that
verify, and the engine's reserved-bytes counter (its peak, from GetMetrics) never passed the budget.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from daemon_proc import Daemon, verify

from cuzk import config
from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow

CIRCUIT = "winning-tiny"
IN_BUDGET = 2  # partitions the budget holds beside the parameters
QUEUE_LIMIT = 6
CLIENTS = 4


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CUZK_CACHE_DIR", str(path))  # the budget is sized, and proofs verified, from here
        config.reload()
        yield path
    config.reload()


def _metrics(stub: object) -> dict[str, float]:
    text = stub.GetMetrics(pb.GetMetricsRequest()).prometheus_text  # type: ignore[attr-defined]
    return {ln.split()[0]: float(ln.split()[1]) for ln in text.splitlines() if ln and not ln.startswith("#")}


@pytest.mark.parametrize("factor", [2, 10])
def test_more_work_than_the_budget_holds(tmp_path: Path, cache: Path, factor: int) -> None:
    from cuzk.engine import work

    budget = work.srs_bytes(CIRCUIT) + IN_BUDGET * work.working_set(CIRCUIT).total
    d = Daemon(tmp_path, cache=cache, budget=str(budget), extra=f"queue_limit = {QUEUE_LIMIT}")
    jobs = factor * IN_BUDGET  # one partition each
    seeds = [[1000 * factor + c * 100 + k for k in range(c, jobs, CLIENTS)] for c in range(CLIENTS)]

    def client(mine: list[int]) -> tuple[list[tuple[int, pb.AwaitProofResponse]], int]:
        stub = d.stub()  # a channel of its own
        pending, done, refused = list(mine), [], 0
        submitted: list[tuple[int, str]] = []
        while pending or submitted:
            if pending:
                try:
                    req = pb.SubmitProofRequest(circuit=CIRCUIT, instance_seed=pending[0])
                    submitted.append((pending[0], stub.SubmitProof(req).job_id))
                    pending.pop(0)
                    continue
                except grpc.RpcError as exc:
                    assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, exc.details()
                    assert f"queue limit is {QUEUE_LIMIT}" in exc.details()
                    refused += 1
                    if not submitted:  # the others fill the queue: wait on nothing of ours, try again
                        continue
            seed, job_id = submitted.pop(0)  # backpressure: wait for one of ours, then go on
            done.append((seed, stub.AwaitProof(pb.AwaitProofRequest(job_id=job_id), timeout=600)))
        return done, refused

    try:
        with ThreadPoolExecutor(CLIENTS) as ex:
            outcomes = list(ex.map(client, seeds))
        m = _metrics(d.stub())
        assert d.alive()
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
    results = [r for done, _ in outcomes for r in done]
    assert len(results) == jobs  # every job was accepted in the end, and each completed
    for seed, r in results:
        assert r.status == pb.AwaitProofResponse.COMPLETED, r.error_message
        assert verify(CIRCUIT, seed, r) == 1
    assert m["cuzk_memory_budget_bytes"] == budget
    assert m["cuzk_memory_peak_bytes"] <= budget  # the engine's own counter never passed it
    assert m["cuzk_memory_peak_bytes"] >= work.srs_bytes(CIRCUIT) + work.working_set(CIRCUIT).total
    assert m["cuzk_memory_reserved_bytes"] <= work.srs_bytes(CIRCUIT)  # only parameters left held
    refused = sum(n for _, n in outcomes)
    print(
        f"overload x{factor}: {jobs} jobs accepted and completed, {refused} RESOURCE_EXHAUSTED answers, "
        f"peak {m['cuzk_memory_peak_bytes']:.0f} of a {budget} byte budget"
    )
