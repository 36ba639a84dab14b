"""The urgent lane (issue 34): a WinningPoSt job is proved while PoRep partitions hold every
normal synthesis slot and GPU worker, and a unit on the device yields it between phases to a
waiting unit of higher priority. Real synthesis processes, gates instead of sleeps."""

from __future__ import annotations

import threading

import pytest
from engine_helpers import WAIT, Gate, assert_proofs, chain, seeded

from cuzk.backends import get_backend
from cuzk.engine import Engine, EngineConfig, EngineHooks, Priority, ProofRequest
from cuzk.engine.gpu import DeviceLock
from cuzk.engine.scheduler import URGENT_KEY, Slots, WorkQueue
from cuzk.instrument import Timeline


def test_winning_is_proved_while_porep_holds_every_normal_slot_and_worker():
    hooks = EngineHooks()
    cfg = EngineConfig(backend="cpu", synthesis_workers=1, gpu_workers_per_device=1, finalizer_workers=1,
                       memory_budget="1GiB", urgent_lane=True, hooks=hooks)  # fmt: skip
    with Engine(cfg) as engine:
        for name in ("porep-tiny", "winning-tiny"):  # keys loaded first
            engine.submit(ProofRequest(circuit=name, seed=1)).result(WAIT)
        is_porep = lambda j, p: j == "porep-load"  # noqa: E731
        gpu_gate = Gate(is_porep)  # partition 0 holds the only normal GPU worker
        synth_gate = Gate(lambda j, p: is_porep(j, p) and p == 1)  # partition 1 holds the only normal slot
        hooks.set("before_gpu", gpu_gate)
        hooks.set("before_synth", chain(synth_gate))
        porep = engine.submit(
            ProofRequest(circuit="porep-tiny", seed=60, partitions=3, request_id="porep-load")
        )
        assert gpu_gate.entered.wait(WAIT) and synth_gate.entered.wait(WAIT)
        winning = engine.submit(ProofRequest(circuit="winning-tiny", seed=62, priority=Priority.CRITICAL))
        assert_proofs(winning.result(WAIT), "winning-tiny", seeded("winning-tiny", 62))
        assert not porep.done()  # the load is still held at both gates
        gpu_gate.open()
        synth_gate.open()
        assert_proofs(porep.result(WAIT), "porep-tiny", seeded("porep-tiny", 60, 3))
        hooks.clear()


def test_slots_keep_one_for_urgent_units():
    slots = Slots(1, 1)
    assert slots.acquire(urgent=False) == "normal"
    assert slots.acquire(urgent=True) == "urgent"  # the normal one is taken: the kept one
    got: list[str] = []
    t = threading.Thread(target=lambda: got.append(slots.acquire(urgent=True)))
    t.start()
    slots.release("normal")  # an urgent unit takes a normal slot when that frees first
    t.join(WAIT)
    assert got == ["normal"]
    slots.release("urgent")


def test_the_urgent_reader_takes_only_high_and_critical_items():
    q: WorkQueue[str] = WorkQueue()
    q.put((-int(Priority.NORMAL), 1), "porep")
    assert q.get(timeout=0, max_first=URGENT_KEY) is None
    q.put((-int(Priority.CRITICAL), 2), "winning")
    assert q.get(max_first=URGENT_KEY) == "winning"
    assert q.get() == "porep"


def test_a_holder_yields_between_phases_to_a_higher_priority_waiter_that_fits():
    lock, be = DeviceLock(0), get_backend("cpu")
    order: list[str] = []
    room = {"bytes": 10}
    in_phase, go = threading.Event(), threading.Event()

    def holder() -> None:
        with lock.hold(Timeline(sinks=[]), be, priority=1, room=lambda: room["bytes"]) as checkpoint:
            order.append("porep phase 1")
            in_phase.set()
            assert go.wait(WAIT)
            checkpoint()  # nobody of higher priority fits yet: goes on
            order.append("porep phase 2")
            room["bytes"] = 100
            checkpoint()  # now the CRITICAL waiter fits: it runs here
            order.append("porep phase 3")

    def waiter(name: str, priority: int, need: int) -> None:
        with lock.hold(Timeline(sinks=[]), be, priority=priority, need=need):
            order.append(name)

    h = threading.Thread(target=holder)
    h.start()
    assert in_phase.wait(WAIT)
    same = threading.Thread(target=waiter, args=("porep-2", 1, 0))
    same.start()
    assert lock.waiting(1, timeout=WAIT)
    crit = threading.Thread(target=waiter, args=("winning", 3, 50))
    crit.start()
    assert lock.waiting(2, timeout=WAIT)
    go.set()
    for t in (h, same, crit):
        t.join(WAIT)
    # the holder went back ahead of the waiter of its own priority
    assert order == ["porep phase 1", "porep phase 2", "winning", "porep phase 3", "porep-2"]


class _ClockedBackend:
    """The CPU backend's stand-in with a real DeviceClock (one measurer at a time) on fake events
    stamped with the host clock, as the CUDA backend's: every phase is one run on the device."""

    def __init__(self) -> None:
        import time
        from types import SimpleNamespace

        from cuzk.backends.cuda.clock import DeviceClock

        self.clock = DeviceClock(
            lambda: SimpleNamespace(t=time.perf_counter(), synchronize=lambda: None),
            lambda a, b: (b.t - a.t) * 1e3,
        )

    def device_clock(self):
        return self.clock.measure()

    def synchronize(self) -> None:
        self.clock.quiet()

    def phase(self) -> None:
        self.clock.launching()
        self.clock.quiet()


def test_a_yielding_holder_hands_the_device_clock_to_the_waiter():
    """The waiter that runs in a holder's yield measures its own busy time; the holder's runs
    before and after the yield are kept too. (The holder kept measuring across its yield and the
    waiter's measurement was refused: WinningPoSt probes failed beside porep-32g, 2026-12-07.)"""
    lock, be = DeviceLock(0), _ClockedBackend()
    order: list[str] = []
    in_phase, go = threading.Event(), threading.Event()

    def holder() -> None:
        with lock.hold(Timeline(sinks=[]), be, priority=1, room=lambda: 100) as checkpoint:
            be.phase()
            in_phase.set()
            assert go.wait(WAIT)
            checkpoint()  # the CRITICAL waiter runs here
            be.phase()
            order.append("porep done")

    def waiter() -> None:
        with lock.hold(Timeline(sinks=[]), be, priority=3, need=10):
            be.phase()
            order.append("winning done")

    h = threading.Thread(target=holder)
    h.start()
    assert in_phase.wait(WAIT)
    crit = threading.Thread(target=waiter)
    crit.start()
    assert lock.waiting(1, timeout=WAIT)
    go.set()
    for t in (h, crit):
        t.join(WAIT)
    assert order == ["winning done", "porep done"]
    assert len(lock.snapshot()) == 3  # the holder's two runs and the waiter's one


def test_a_worker_stages_its_next_unit_while_the_last_ones_hand_over_is_closed(monkeypatch):
    """The GPU worker's "-after" thread closes a proved unit's hand-over and only then posts
    Proved (the budget's share goes back once the pages have); the worker meanwhile takes its
    next unit. Here the first partition's close is held: the other partition still reaches the
    device, and the job completes once the close is let go. (On the worker's own thread the
    close, 0.34 s at porep-32g, lay between two holds: H100, 2026-12-07.)"""
    from cuzk.engine.synth import SynthResult

    held: list[int] = []  # the partition whose close is held
    closing, let_go = threading.Event(), threading.Event()
    on_gpu: list[int] = []
    other = threading.Event()
    real_close = SynthResult.close

    def close(self: SynthResult) -> None:
        if self.job_id == "after-thread" and not let_go.is_set() and not held and self.partition in on_gpu:
            held.append(self.partition)
            closing.set()
            assert let_go.wait(WAIT)
        real_close(self)

    def before_gpu(job: str, p: int) -> None:
        if job == "after-thread":
            on_gpu.append(p)
            if len(on_gpu) == 2:
                other.set()

    monkeypatch.setattr(SynthResult, "close", close)
    hooks = EngineHooks()
    cfg = EngineConfig(backend="cpu", synthesis_workers=2, gpu_workers_per_device=1, finalizer_workers=1,
                       memory_budget="1GiB", urgent_lane=False, hooks=hooks)  # fmt: skip
    with Engine(cfg) as engine:
        hooks.set("before_gpu", before_gpu)
        job = engine.submit(ProofRequest(circuit="porep-tiny", seed=70, partitions=2, request_id="after-thread",
                                         options={"synthesis.abc_on": "device"}))  # fmt: skip
        assert closing.wait(WAIT)  # the first partition proved, its hand-over being closed
        assert other.wait(WAIT)  # the one GPU worker went on to the other partition meanwhile
        assert not job.done()  # the first partition is not Proved before its close ends
        let_go.set()
        assert_proofs(job.result(WAIT), "porep-tiny", seeded("porep-tiny", 70, 2))
        hooks.clear()


@pytest.mark.parametrize("g2_on", ["device", "cpu", "stream"])
def test_a_device_g2_msm_runs_under_the_units_own_hold_a_cpu_one_in_the_finalizer(g2_on):
    """Left to the finalizer, a device G2 MSM queued on the GPU's shared stream behind the next
    holder's kernels and ran inside that hold (1.07 s of a 3.07 s WinningPoSt probe beside
    porep-32g, H100 2026-12-07); under the unit's own hold it waits for nothing. On the CPU
    (msm.g2_on=cpu) it stays the finalizer's, off the device lock; streamed, it is device work."""
    from engine_helpers import spans

    def inside(s, outer) -> bool:
        return outer.start <= s.start and s.end <= outer.end

    cfg = EngineConfig(backend="cpu", synthesis_workers=1, gpu_workers_per_device=1, finalizer_workers=1,
                       memory_budget="1GiB", urgent_lane=True, g2_on=g2_on)  # fmt: skip
    with Engine(cfg) as engine:
        results = {
            prio: engine.submit(ProofRequest(circuit="winning-tiny", seed=64, priority=prio)).result(WAIT)
            for prio in (Priority.CRITICAL, Priority.NORMAL)
        }
    for prio, r in results.items():
        assert_proofs(r, "winning-tiny", seeded("winning-tiny", 64))
        (g2,), (hold,), (fin,) = spans(r, "msm_b_g2"), spans(r, "device_lock"), spans(r, "finalize")
        on_cpu = g2_on == "cpu"
        assert inside(g2, hold) is not on_cpu and inside(g2, fin) is on_cpu, prio
