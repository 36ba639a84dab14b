"""Several keys' sets on one card (issue 34): a batch whose set fits the card alone but not beside
the others there evicts the idle ones, or waits (parked) for the ones in use; batches of its
priority or lower wait behind it, higher ones pass. At real size porep-32g's set (47.55 GB)
and wpost-32g's (69.3 GB) fit an H200 beside a unit by only 3.4 GB by the model, and not an 80
GB card or a larger MSM chunk; before this, a second set was loaded whether or not it fitted.

The engine proves on the CPU here; its dispatcher is told it is on a GPU whose card is a
FakeCard, with each circuit's device set sized by a patched `srs_footprint`."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from engine_helpers import WAIT, Events, Gate, assert_proofs, chain, seeded, spans

from cuzk.engine import Engine, EngineConfig, EngineHooks, JobStatus, Priority, ProofRequest, work

POREP, WPOST, WINNING = "porep-tiny", "wpost-tiny", "winning-tiny"
GIB = 1 << 30
SETS = {POREP: 10 * GIB, WPOST: 12 * GIB, WINNING: 1 << 20}  # device bytes per set


class FakeCard:
    """The engine's own backend, reporting a card of `total` bytes."""

    def __init__(self, backend: Any, total: int) -> None:
        self._backend = backend
        self.total = total

    def memory_info(self) -> dict[str, Any]:
        return {"total": self.total, "budget": None}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)


def peak(circuit: str) -> int:
    return work.working_set(circuit, on_device=True, abc_on_worker=False).device_peak


@pytest.fixture
def engine(monkeypatch, request) -> Iterator[Engine]:
    """An engine whose card holds either large set with a unit, and the tiny set beside one,
    but never both large sets. Parametrized (indirect): its dispatch_ahead (default auto)."""
    cfg = EngineConfig(
        backend="cpu",
        synthesis_workers=1,
        gpu_workers_per_device=1,
        urgent_lane=True,
        hooks=EngineHooks(),
        dispatch_ahead=getattr(request, "param", 0),
    )  # the lane: a CRITICAL job needs no worker the held porep job has
    e = Engine(cfg)
    largest = max(SETS[POREP], SETS[WPOST]) + max(peak(c) for c in SETS)
    card = work.DEVICE_MARGIN_BYTES + largest + 2 * SETS[WINNING]
    assert card - work.DEVICE_MARGIN_BYTES < SETS[POREP] + SETS[WPOST]  # the two large sets never fit
    stage = e.dispatcher
    stage.on_device, stage.abc_on_worker = True, False
    monkeypatch.setitem(e.backends, 0, FakeCard(e.backends[0], card))
    monkeypatch.setattr("cuzk.engine.stages.srs_footprint", lambda cfg, circuit, backend: (0, SETS[circuit]))
    yield e
    e.shutdown(wait=False)


@pytest.fixture
def gate(engine) -> Iterator[Gate]:
    """Holds porep-1 at the GPU stage (its set's lease held); opened at the latest at teardown."""
    g = Gate(lambda j, p: j == "porep-1")
    engine.hooks.set("before_gpu", g)
    yield g
    g.open()


def hot(engine: Engine) -> set[str]:
    return {s.key[0] for s in engine.srs.status() if s.tier == "hot"}


def test_an_idle_set_is_evicted_to_make_room_for_another(engine):
    assert_proofs(engine.submit(ProofRequest(circuit=POREP, seed=1)).result(WAIT), POREP, seeded(POREP, 1))
    assert hot(engine) == {POREP}
    r = engine.submit(ProofRequest(circuit=WPOST, seed=2)).result(WAIT)
    assert_proofs(r, WPOST, seeded(WPOST, 2))
    assert hot(engine) == {WPOST}  # porep's set went; it was idle, so nothing waited
    assert not spans(r, "device_room_wait")
    # and back: porep's set reloads in wpost's place
    assert_proofs(engine.submit(ProofRequest(circuit=POREP, seed=3)).result(WAIT), POREP, seeded(POREP, 3))
    assert hot(engine) == {POREP}
    assert engine.dispatcher.parked == []


def test_a_high_job_waits_for_the_set_in_use_and_lower_ones_wait_behind_it(engine, gate):
    events = Events()
    engine.hooks.set("parked", events.hook("parked"))
    engine.hooks.set("dispatched", events.hook("dispatched"))
    porep1 = engine.submit(ProofRequest(circuit=POREP, seed=10, request_id="porep-1"))
    assert gate.entered.wait(WAIT)
    wpost = engine.submit(ProofRequest(circuit=WPOST, seed=11, request_id="wpost", priority=Priority.HIGH))
    events.wait("parked", "wpost")
    porep2 = engine.submit(ProofRequest(circuit=POREP, seed=12, request_id="porep-2"))
    events.wait("parked", "porep-2")  # its set is loaded, but it would keep it leased: it waits
    assert engine.dispatcher.parked == ["wpost", "porep-2"] == engine.status().queues.device_room
    # a CRITICAL job whose set fits beside the busy one passes the parked ones
    win = engine.submit(ProofRequest(circuit=WINNING, seed=13, request_id="win", priority=Priority.CRITICAL))
    assert_proofs(win.result(WAIT), WINNING, seeded(WINNING, 13))
    assert not porep1.done() and not wpost.done()
    assert hot(engine) == {POREP, WINNING}
    gate.open()
    assert_proofs(porep1.result(WAIT), POREP, seeded(POREP, 10))
    r = wpost.result(WAIT)
    assert_proofs(r, WPOST, seeded(WPOST, 11))
    assert_proofs(porep2.result(WAIT), POREP, seeded(POREP, 12))
    assert events.jobs("dispatched") == ["porep-1", "win", "wpost", "porep-2"]
    (wait,) = spans(r, "device_room_wait")
    assert "porep-tiny 10.0 GiB (1 batch(es) in flight)" in wait.attrs["waited_for"]
    (behind,) = spans(porep2.result(0), "device_room_wait")
    assert "wpost-tiny 12.0 GiB" in behind.attrs["waited_for"]  # last waited for wpost's set in use
    assert engine.dispatcher.parked == []
    assert engine.wait_idle(WAIT)


def park_wpost(engine: Engine, gate: Gate, seed: int) -> tuple[Events, Any, Any]:
    """porep-1 (seed) held at the GPU stage with its set leased, wpost (seed + 1) parked."""
    events = Events()
    engine.hooks.set("parked", events.hook("parked"))
    porep1 = engine.submit(ProofRequest(circuit=POREP, seed=seed, request_id="porep-1"))
    assert gate.entered.wait(WAIT)
    wpost = engine.submit(
        ProofRequest(circuit=WPOST, seed=seed + 1, request_id="wpost", priority=Priority.HIGH)
    )
    events.wait("parked", "wpost")
    return events, porep1, wpost


def test_a_parked_job_cancelled_ends_and_loads_nothing(engine, gate):
    events, porep1, wpost = park_wpost(engine, gate, 20)
    assert engine.cancel("wpost")
    assert wpost.result(WAIT).status is JobStatus.CANCELLED
    done = threading.Event()
    engine.hooks.set(
        "dispatched", chain(events.hook("dispatched"), lambda j, p: done.set() if j == "porep-2" else None)
    )
    porep2 = engine.submit(ProofRequest(circuit=POREP, seed=22, request_id="porep-2"))
    assert done.wait(WAIT)  # nothing parked ahead of it any more: it went straight in
    gate.open()
    assert_proofs(porep1.result(WAIT), POREP, seeded(POREP, 20))
    assert_proofs(porep2.result(WAIT), POREP, seeded(POREP, 22))
    assert hot(engine) == {POREP}  # wpost's set was never loaded
    assert engine.dispatcher.parked == [] and engine.wait_idle(WAIT)


def test_shutdown_finishes_a_parked_job(engine, gate):
    _, porep1, wpost = park_wpost(engine, gate, 30)
    closing = threading.Thread(target=engine.shutdown, kwargs={"wait": True})
    closing.start()
    while not engine.scheduler.closed:  # intake closed with wpost still parked
        closing.join(0.01)
    assert engine.dispatcher.parked == ["wpost"]
    gate.open()
    closing.join(WAIT)
    assert not closing.is_alive()
    assert_proofs(porep1.result(0), POREP, seeded(POREP, 30))
    assert_proofs(wpost.result(0), WPOST, seeded(WPOST, 31))


@pytest.mark.parametrize(("engine", "bounded"), [(1, True), (1000, False)], indirect=["engine"])
def test_a_parked_high_job_waits_for_the_porep_in_flight_not_for_the_porep_queue(engine, gate, bounded):
    """porep-2 and porep-3 were submitted before the HIGH wpost job. With the dispatch bounded
    (dispatch_ahead 1: porep-1 in flight fills it) they stay queued, so wpost parks only
    until porep-1 is done and goes before them. Dispatched eagerly (dispatch_ahead 1000, the
    engine before), they held porep's set too, and wpost waited for all three."""
    events = Events()
    for point in ("parked", "dispatched"):
        engine.hooks.set(point, events.hook(point))
    porep1 = engine.submit(ProofRequest(circuit=POREP, seed=40, request_id="porep-1"))
    assert gate.entered.wait(WAIT)
    rest = [
        engine.submit(ProofRequest(circuit=POREP, seed=s, request_id=f"porep-{s - 39}")) for s in (41, 42)
    ]
    if bounded:
        assert engine.status().jobs["queued"] == 2  # past the depth: they keep their place in the queue
    else:
        for r in rest:
            events.wait("dispatched", r.job_id)
    wpost = engine.submit(ProofRequest(circuit=WPOST, seed=43, request_id="wpost", priority=Priority.HIGH))
    events.wait("parked", "wpost")
    gate.open()
    for h, circuit, seed in (
        (porep1, POREP, 40),
        (rest[0], POREP, 41),
        (rest[1], POREP, 42),
        (wpost, WPOST, 43),
    ):
        assert_proofs(h.result(WAIT), circuit, seeded(circuit, seed))
    order = events.jobs("dispatched")
    if bounded:
        assert order == ["porep-1", "wpost", "porep-2", "porep-3"]
    else:
        assert order == ["porep-1", "porep-2", "porep-3", "wpost"]
    assert engine.dispatcher.parked == []
    assert engine.wait_idle(WAIT)
