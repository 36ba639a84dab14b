"""The engine under a tight memory budget: 3x more work than fits, a job larger than the whole
budget, the queue limit, and shutdown(wait=True) finishing the accepted work."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from engine_helpers import WAIT, Gate, assert_proofs, in_flight_beyond_srs, seeded, spans

from cuzk.engine import Engine, EngineConfig, EngineHooks, JobStatus, ProofRequest, work
from cuzk.errors import QueueFullError, ShuttingDownError

CIRCUIT = "porep-tiny"
HOOKS = EngineHooks()


def fits(partitions: int) -> int:
    """A budget for the SRS and exactly `partitions` in-flight partitions."""
    return work.srs_bytes(CIRCUIT) + partitions * work.working_set(CIRCUIT).total


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    cfg = EngineConfig(backend="cpu", synthesis_workers=1, memory_budget=fits(1), queue_limit=3, hooks=HOOKS)
    e = Engine(cfg)
    yield e
    e.shutdown(wait=False)


def test_three_times_more_work_than_fits_never_exceeds_the_budget(engine):
    # the budget holds one partition beside the SRS; three jobs of two partitions ask for six
    hs = [engine.submit(ProofRequest(circuit=CIRCUIT, seed=100 + 2 * j, partitions=2)) for j in range(3)]
    for j, h in enumerate(hs):
        assert_proofs(h.result(WAIT), CIRCUIT, seeded(CIRCUIT, 100 + 2 * j, 2))
    assert engine.wait_idle(WAIT) and in_flight_beyond_srs(engine) == 0
    ws = work.working_set(CIRCUIT).total
    peak = engine.budget.peak()
    assert peak <= engine.budget.total  # the instrumented counter
    assert peak >= work.srs_bytes(CIRCUIT) + ws  # partitions did reserve


def test_a_job_larger_than_the_whole_budget_fails_at_once():
    small = EngineConfig(backend="cpu", memory_budget=fits(1) - 1)
    with Engine(small) as e:  # the job fails before any worker process is started
        r = e.submit(ProofRequest(circuit=CIRCUIT, seed=1)).result(WAIT)
        assert r.status is JobStatus.FAILED
        assert r.error.startswith("BudgetExceededError: a partition of porep-tiny needs ")
        assert f"whole memory budget is {fits(1) - 1}" in r.error
        assert e.status().synthesis_workers.pids == []


def test_the_queue_limit_refuses_and_shutdown_waits_for_accepted_work(engine):
    gate = Gate()
    HOOKS.set("before_gpu", gate)
    hs = [engine.submit(ProofRequest(circuit=CIRCUIT, seed=200 + j)) for j in range(3)]
    assert gate.entered.wait(WAIT)
    with pytest.raises(QueueFullError, match="queue limit is 3"):
        engine.submit(ProofRequest(circuit=CIRCUIT, seed=300))
    gate.open()
    engine.shutdown(wait=True)
    for j, h in enumerate(hs):
        r = h.result(0)
        assert_proofs(r, CIRCUIT, seeded(CIRCUIT, 200 + j))
        assert spans(r, "queue_wait")
    assert in_flight_beyond_srs(engine) == 0
    with pytest.raises(ShuttingDownError):
        engine.submit(ProofRequest(circuit=CIRCUIT, seed=301))
