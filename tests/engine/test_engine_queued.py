"""Queued jobs cost O(1) each, whatever their partition count, and cancelling them is immediate.

Issue 32 item 17: 200 queued jobs of 1,024 partitions held 450 MiB that stayed after they were
cancelled, and cancelling took 20.8 s: the dispatcher made one Unit per partition up front, and
each cancel searched every queued unit. Now a dispatched batch waits in the synthesis queue as
one entry whose partitions become units one at a time, as the feeder takes them.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest
from engine_helpers import WAIT, Gate, assert_proofs, in_flight_beyond_srs, seeded

from cuzk.engine import Engine, EngineConfig, EngineHooks, JobStatus, ProofRequest
from cuzk.engine import model as engine_module

CIRCUIT = "porep-tiny"
JOBS, PARTITIONS = 200, 1024
HOOKS = EngineHooks()


@pytest.fixture()
def engine() -> Iterator[Engine]:
    cfg = EngineConfig(
        backend="cpu",
        synthesis_workers=1,
        memory_budget="1GiB",
        queue_limit=JOBS + 1,
        hooks=HOOKS,
        dispatch_ahead=(JOBS + 1) * PARTITIONS,
    )  # every job past the dispatcher: this is about the synthesis queue's cost
    with Engine(cfg) as e:
        yield e
    HOOKS.clear()


def units_alive() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is engine_module.Unit)


def test_queued_partitions_are_not_made_until_fed_and_cancel_drops_them_at_once(engine: Engine) -> None:
    gate = Gate()
    HOOKS.set("before_synth", gate)
    first = engine.submit(ProofRequest(circuit=CIRCUIT, seed=7))
    assert gate.entered.wait(WAIT)  # the feeder holds job 1's unit: everything after it queues
    dispatched = threading.Semaphore(0)
    HOOKS.set("dispatched", lambda j, p: dispatched.release() if p == 0 else None)
    queued = [
        engine.submit(ProofRequest(circuit=CIRCUIT, seed=1, partitions=PARTITIONS)) for _ in range(JOBS)
    ]
    for _ in queued:
        assert dispatched.acquire(timeout=WAIT)  # every job is past the dispatcher, in the synthesis queue
    assert engine.status().queues.synthesis == JOBS * PARTITIONS
    assert units_alive() <= 2  # job 1's, and at most the one the feeder made next: not 204,800

    for h in queued:
        assert h.cancel()
    st = engine.status()
    assert st.queues.synthesis == 0  # dropped by the cancels themselves, nothing left to drain
    assert all(h.result(0).status is JobStatus.CANCELLED for h in queued)
    gate.open()
    assert_proofs(first.result(WAIT), CIRCUIT, seeded(CIRCUIT, 7))
    assert engine.wait_idle(WAIT) and in_flight_beyond_srs(engine) == 0
    assert units_alive() <= 3  # at most the last one each stage thread (feeder, GPU, finalizer) saw
