"""The engine with batching on and two CPU "devices": size and timeout flushes end to end,
a batched pass of k witnesses, a proof that fails verification, and shutdown(wait=False).

The batch wait is an hour on a fake clock, so a batch flushes only when it is
full or when the test moves the clock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from engine_helpers import WAIT, FakeClock, Gate, assert_proofs, in_flight_beyond_srs, seeded, spans

from cuzk.engine import Engine, EngineConfig, EngineHooks, JobStatus, ProofRequest, work
from cuzk.errors import ShuttingDownError

CIRCUIT = "porep-tiny"
CLOCK = FakeClock()
HOOKS = EngineHooks()


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    cfg = EngineConfig(
        backend="cpu",
        devices=(0, 1),
        gpu_workers_per_device=1,
        synthesis_workers=2,
        max_batch_size=2,
        max_batch_wait_ms=3_600_000,
        memory_budget="1GiB",
        hooks=HOOKS,
        clock=CLOCK,
    )
    e = Engine(cfg)
    yield e
    e.shutdown(wait=False)


@pytest.fixture(autouse=True)
def clean(engine) -> Iterator[None]:
    yield
    HOOKS.clear()
    if not engine.core.closed:
        assert engine.wait_idle(WAIT)
        assert in_flight_beyond_srs(engine) == 0


def req(seed: int, **kw) -> ProofRequest:
    return ProofRequest(circuit=CIRCUIT, seed=seed, **kw)


def unit_of(result) -> tuple[str, int]:
    (s,) = spans(result, "device_lock")
    return s.attrs["unit"], s.attrs["k"]


def test_a_full_batch_is_one_pass_of_two_witnesses(engine):
    a, b = engine.submit(req(1)), engine.submit(req(2))
    ra, rb = a.result(WAIT), b.result(WAIT)
    assert_proofs(ra, CIRCUIT, seeded(CIRCUIT, 1))
    assert_proofs(rb, CIRCUIT, seeded(CIRCUIT, 2))
    assert unit_of(ra) == unit_of(rb) and unit_of(ra)[1] == 2


def test_a_lone_job_waits_for_the_batch_timeout(engine):
    h = engine.submit(req(3))
    assert h.status is JobStatus.QUEUED and len(engine.scheduler) == 1
    CLOCK.advance(3600)
    engine.scheduler.wake()
    r = h.result(WAIT)
    assert_proofs(r, CIRCUIT, seeded(CIRCUIT, 3))
    assert unit_of(r)[1] == 1
    assert r.timeline.spans[0].name == "queue_wait"


def test_batches_go_to_both_devices(engine):
    hs = [engine.submit(req(10 + j)) for j in range(4)]
    results = [h.result(WAIT) for h in hs]
    for j, r in enumerate(results):
        assert_proofs(r, CIRCUIT, seeded(CIRCUIT, 10 + j))
    assert {spans(r, "device_lock")[0].attrs["device"] for r in results} == {0, 1}
    assert {e.key for e in engine.status().srs} >= {(CIRCUIT, 0, None), (CIRCUIT, 1, None)}


def test_a_proof_that_fails_verification_fails_its_job_only(engine, monkeypatch):
    real = work.finalize

    def swap_first(pending, resident, timeline, windows=None):
        proofs = real(pending, resident, timeline, windows)
        return [proofs[1], *proofs[1:]] if len(proofs) == 2 else proofs  # job a gets b's proof

    monkeypatch.setattr(work, "finalize", swap_first)
    a, b = engine.submit(req(20)), engine.submit(req(21))
    ra, rb = a.result(WAIT), b.result(WAIT)
    assert ra.status is JobStatus.FAILED and ra.proofs == []
    assert ra.error == "partition 0 proof failed verification; refusing to return it"
    assert_proofs(rb, CIRCUIT, seeded(CIRCUIT, 21))


def test_shutdown_without_waiting_cancels_everything(engine):
    gate = Gate(count=2)  # holds one batch at each device's GPU worker
    HOOKS.set("before_gpu", gate)
    running = [engine.submit(req(30 + j)) for j in range(4)]
    gate.wait_held(2)
    queued = [engine.submit(req(34))]  # waits in the batch collector
    stopper = threading.Thread(target=engine.shutdown, kwargs={"wait": False})
    stopper.start()
    for h in running + queued:
        assert h.result(WAIT).status is JobStatus.CANCELLED
    with pytest.raises(ShuttingDownError):
        engine.submit(req(35))
    gate.open()
    stopper.join(WAIT)
    assert not stopper.is_alive()
    assert in_flight_beyond_srs(engine) == 0
    assert engine.status().counters["cancelled"] == 5
