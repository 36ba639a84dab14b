"""Issue 34's priorities, at CI scale: the ordering the real sizes need, with events and gates.

While PoRep partitions fill the engine (the real porep-32g: 10 partitions of 130M constraints
per sector), a WinningPoSt job (CRITICAL) and a WindowPoSt job (HIGH) must not wait for the
queued partitions: each is synthesized, and goes on the GPU, before every PoRep partition that
was still waiting. Same engine shape as test_engine.py (one synthesis worker, one GPU worker),
real synthesis processes, no sleeps; every proof is verified.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from engine_helpers import WAIT, Events, FakeClock, Gate, assert_proofs, chain, seeded

from cuzk.engine import Engine, EngineConfig, EngineHooks, Priority, ProofRequest

HOOKS = EngineHooks()
POREP, WPOST, WINNING = "porep-tiny", "wpost-tiny", "winning-tiny"


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    cfg = EngineConfig(
        backend="cpu",
        synthesis_workers=1,
        gpu_workers_per_device=1,
        finalizer_workers=1,
        memory_budget="1GiB",
        result_retention_s=60,
        hooks=HOOKS,
        clock=FakeClock(),
    )
    with Engine(cfg) as e:
        yield e


@pytest.fixture(autouse=True)
def events(engine) -> Iterator[Events]:
    ev = Events()
    for point in EngineHooks.POINTS:
        if point != "synth_hold":
            HOOKS.set(point, ev.hook(point))
    yield ev
    HOOKS.clear()
    assert engine.wait_idle(WAIT)


def test_post_jobs_overtake_queued_porep_partitions(engine, events):
    for name in (POREP, WPOST, WINNING):  # keys loaded first: the ordering is the scheduler's alone
        engine.submit(ProofRequest(circuit=name, seed=1)).result(WAIT)
    events.calls.clear()
    gpu_gate, synth_gate = Gate(), Gate(count=2)
    synth_calls = []

    def before_synth(j, p):
        synth_calls.append((j, p))
        if len(synth_calls) == 2:
            synth_gate(j, p)

    HOOKS.set("before_gpu", chain(events.hook("before_gpu"), gpu_gate))
    HOOKS.set("before_synth", chain(events.hook("before_synth"), before_synth))
    porep = engine.submit(ProofRequest(circuit=POREP, seed=60, partitions=4))
    assert gpu_gate.entered.wait(WAIT)  # partition 0 holds the only GPU worker
    assert synth_gate.entered.wait(WAIT)  # partition 1 holds the only synthesis slot
    wpost = engine.submit(ProofRequest(circuit=WPOST, seed=61, priority=Priority.HIGH))
    winning = engine.submit(ProofRequest(circuit=WINNING, seed=62, priority=Priority.CRITICAL))
    for h in (wpost, winning):
        events.wait("dispatched", h.job_id)
    synth_gate.open()
    for h in (wpost, winning):
        events.wait("after_synth", h.job_id)
    gpu_gate.open()
    assert_proofs(porep.result(WAIT), POREP, seeded(POREP, 60, 4))
    assert_proofs(wpost.result(WAIT), WPOST, seeded(WPOST, 61))
    assert_proofs(winning.result(WAIT), WINNING, seeded(WINNING, 62))
    p, w, c = porep.job_id, wpost.job_id, winning.job_id
    synth = list(
        zip(events.jobs("before_synth"), [pp for _, pp in events.calls["before_synth"]], strict=True)
    )
    gpu = list(zip(events.jobs("before_gpu"), [pp for _, pp in events.calls["before_gpu"]], strict=True))
    # partitions 0 and 1 were taken before the PoSt jobs came; then CRITICAL, HIGH, the rest
    assert synth == [(p, 0), (p, 1), (c, 0), (w, 0), (p, 2), (p, 3)]
    assert gpu == [(p, 0), (c, 0), (w, 0), (p, 1), (p, 2), (p, 3)]
