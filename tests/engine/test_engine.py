"""The engine end to end on the CPU backend, real synthesis processes, porep-tiny.

One engine serves the module (starting worker processes and loading kernels
costs seconds): one synthesis worker, one GPU worker, one finalizer, so test
hooks (events, gates) make every ordering certain; no test sleeps. Every
proof a test gets back is verified against the circuit's vk, and a tampered
public input is rejected.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator

import pytest
from engine_helpers import (
    WAIT,
    Events,
    FakeClock,
    Gate,
    Hold,
    assert_proofs,
    chain,
    in_flight_beyond_srs,
    seeded,
    spans,
)

from cuzk.circuits import get_circuit
from cuzk.engine import Engine, EngineConfig, EngineHooks, JobStatus, Priority, ProofRequest, work
from cuzk.errors import DeadlineExceededError, EngineError, UnknownCircuitError, UnknownJobError, UsageError

CIRCUIT = "porep-tiny"
CLOCK = FakeClock()
HOOKS = EngineHooks()


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
        clock=CLOCK,
        dispatch_ahead=64,  # these tests order the stages: every job past the dispatcher at once
    )
    with Engine(cfg) as e:
        yield e
    assert e.status().jobs["running"] == 0 and e.status().jobs["queued"] == 0


@pytest.fixture(autouse=True)
def events(engine) -> Iterator[Events]:
    ev = Events()
    for point in EngineHooks.POINTS:
        if point != "synth_hold":
            HOOKS.set(point, ev.hook(point))
    yield ev
    HOOKS.clear()
    assert engine.wait_idle(WAIT)
    assert in_flight_beyond_srs(engine) == 0  # every partition gave its memory back


def req(seed: int, **kw) -> ProofRequest:
    return ProofRequest(circuit=CIRCUIT, seed=seed, **kw)


def test_a_job_and_its_partitions_are_proved_in_order(engine):
    r = engine.submit(req(10, partitions=3, request_id="three")).result(WAIT)
    assert_proofs(r, CIRCUIT, seeded(CIRCUIT, 10, 3))
    names = {s.name for s in r.timeline.spans}
    for name in ("queue_wait", "srs_load", "synthesis", "witness", "matvec", "lock_wait", "device_lock",
                 "ntt_h", "msm_h", "upload_witness", "msm_l", "msm_a", "msm_b_g1", "finalize", "msm_b_g2", "epilogue", "verify"):  # fmt: skip
        assert name in names, name
    for s in spans(r, "device_lock") + spans(r, "finalize") + spans(r, "synthesis"):
        assert {"worker", "partition"} <= set(s.attrs)
    assert sorted(s.attrs["partition"] for s in spans(r, "ntt_h")) == [0, 1, 2]
    assert all(s.attrs["device"] == 0 for s in spans(r, "device_lock"))


def test_the_abc_share_goes_back_when_the_gpu_is_done_the_rest_when_finalized(engine):
    seen: dict[str, int] = {}
    HOOKS.set("before_gpu", lambda j, p: seen.setdefault("gpu", in_flight_beyond_srs(engine)))
    HOOKS.set("before_finalize", lambda j, p: seen.setdefault("finalize", in_flight_beyond_srs(engine)))
    assert_proofs(engine.submit(req(96)).result(WAIT), CIRCUIT, seeded(CIRCUIT, 96))
    ws = work.working_set(CIRCUIT)
    assert seen == {"gpu": ws.total, "finalize": ws.total - ws.abc}
    assert in_flight_beyond_srs(engine) == 0


def test_job_two_synthesizes_while_job_one_is_on_the_gpu(engine, events):
    # job 1 reaches the GPU only once job 2's witness is in; so the GPU stage ran while synthesis did
    ids: dict[str, str] = {}
    submitted = threading.Event()

    def hold_first(job_id: str, partition: int) -> None:
        assert submitted.wait(WAIT)
        if job_id == ids["first"]:
            events.wait("after_synth", ids["second"])

    HOOKS.set("before_gpu", hold_first)
    first, second = engine.submit(req(1)), engine.submit(req(2))
    ids.update(first=first.job_id, second=second.job_id)
    submitted.set()
    r1, r2 = first.result(WAIT), second.result(WAIT)
    assert_proofs(r1, CIRCUIT, seeded(CIRCUIT, 1))
    assert_proofs(r2, CIRCUIT, seeded(CIRCUIT, 2))
    job2_synth_start = min(s.start for s in spans(r2, "synthesis"))
    job1_gpu_end = max(s.end for s in spans(r1, "device_lock"))
    assert job2_synth_start < job1_gpu_end


def test_critical_job_is_next_synthesized_and_next_on_the_gpu(engine, events):
    gpu_gate, synth_gate = Gate(), Gate(count=2)  # synth: the 1st call passes below, the 2nd blocks
    synth_calls = []

    def before_synth(j, p):
        synth_calls.append(j)
        if len(synth_calls) == 2:
            synth_gate(j, p)

    HOOKS.set("before_gpu", chain(events.hook("before_gpu"), gpu_gate))
    HOOKS.set("before_synth", chain(events.hook("before_synth"), before_synth))
    j1 = engine.submit(req(40))
    assert gpu_gate.entered.wait(WAIT)  # job 1 holds the only GPU worker
    n2 = engine.submit(req(41))
    assert synth_gate.entered.wait(WAIT)  # job 2 holds the only synthesis slot
    n3, n4 = engine.submit(req(42)), engine.submit(req(43))
    c = engine.submit(req(44, priority=Priority.CRITICAL))
    for h in (n3, n4, c):
        events.wait("dispatched", h.job_id)
    synth_gate.open()
    for h in (n2, c, n3, n4):
        events.wait("after_synth", h.job_id)  # all four wait for the GPU now
    gpu_gate.open()
    for h, seed in ((j1, 40), (n2, 41), (n3, 42), (n4, 43), (c, 44)):
        assert_proofs(h.result(WAIT), CIRCUIT, seeded(CIRCUIT, seed))
    ids = [j1.job_id, n2.job_id, c.job_id, n3.job_id, n4.job_id]
    assert events.jobs("before_synth") == ids
    assert events.jobs("before_gpu") == [j1.job_id, c.job_id, n2.job_id, n3.job_id, n4.job_id]


def test_a_bad_partition_fails_its_job_only(engine, events):
    c = get_circuit(CIRCUIT)
    good = seeded(CIRCUIT, 20, 3)
    bad = [good[0], c.corrupt(good[1]), good[2]]
    before = engine.submit(req(30))
    broken = engine.submit(ProofRequest(circuit=CIRCUIT, instances=bad))
    after = engine.submit(req(31))
    r = broken.result(WAIT)
    assert r.status is JobStatus.FAILED and r.proofs == []
    assert r.error.startswith("partition 1 synthesis failed: ") and "is not satisfied" in r.error
    assert_proofs(before.result(WAIT), CIRCUIT, seeded(CIRCUIT, 30))
    assert_proofs(after.result(WAIT), CIRCUIT, seeded(CIRCUIT, 31))
    assert events.partitions("before_synth", broken.job_id) == [0, 1]  # partition 2 was skipped


def test_cancel_a_queued_job(engine, events):
    gate = Gate()
    HOOKS.set("before_synth", chain(events.hook("before_synth"), gate))
    first = engine.submit(req(50))
    assert gate.entered.wait(WAIT)
    queued = engine.submit(req(51))
    events.wait("dispatched", queued.job_id)
    assert engine.cancel(queued.job_id) is True
    assert queued.result(0).status is JobStatus.CANCELLED
    assert engine.cancel(queued.job_id) is False  # one terminal status, once
    gate.open()
    assert_proofs(first.result(WAIT), CIRCUIT, seeded(CIRCUIT, 50))
    engine.wait_idle(WAIT)
    assert queued.job_id not in events.jobs("before_synth")
    with pytest.raises(UnknownJobError, match="no job 'nope'"):
        engine.cancel("nope")


def test_cancel_a_running_job_drops_its_other_partitions(engine, events):
    gate = Gate()
    HOOKS.set("before_gpu", chain(events.hook("before_gpu"), gate))
    h = engine.submit(req(60, partitions=3))
    assert gate.entered.wait(WAIT)  # partition 0 is at the GPU
    assert h.status is JobStatus.RUNNING
    with pytest.raises(DeadlineExceededError, match="did not finish within 0 s"):
        h.result(timeout=0)
    assert h.cancel() is True
    gate.open()
    r = h.result(0)
    assert r.status is JobStatus.CANCELLED and r.proofs == [] and r.error == "cancelled"
    assert engine.wait_idle(WAIT)
    assert events.partitions("before_gpu", h.job_id) == [0]
    assert h.job_id not in events.jobs("before_finalize")
    nxt = engine.submit(req(61)).result(WAIT)
    assert_proofs(nxt, CIRCUIT, seeded(CIRCUIT, 61))


def test_a_killed_synthesis_worker_fails_that_job_and_the_next_succeeds(engine, tmp_path):
    hold = Hold(tmp_path / "hold")
    HOOKS.set("synth_hold", lambda j, p: hold.folder)
    h = engine.submit(req(70))
    pid = hold.pid()
    HOOKS.set("synth_hold", None)
    os.kill(pid, signal.SIGKILL)
    r = h.result(WAIT)
    assert r.status is JobStatus.FAILED
    assert r.error.startswith(f"partition 0 synthesis failed: synthesis worker {pid} died (signal 9")
    assert_proofs(engine.submit(req(71)).result(WAIT), CIRCUIT, seeded(CIRCUIT, 71))
    assert pid not in engine.status().synthesis_workers.pids


def test_request_ids_are_idempotent_and_results_are_pruned(engine):
    gate = Gate()
    HOOKS.set("before_gpu", gate)
    h = engine.submit(req(80, request_id="idem"))
    assert gate.entered.wait(WAIT)
    again = engine.submit(req(99, request_id="idem"))  # in flight: the same job
    assert again.job_id == h.job_id
    gate.open()
    r = h.result(WAIT)
    assert_proofs(r, CIRCUIT, seeded(CIRCUIT, 80))
    stored = engine.submit(req(99, request_id="idem"))  # finished: its stored result
    assert stored.job_id == h.job_id and stored.result(0) is r
    CLOCK.advance(61)  # past result_retention_s
    with pytest.raises(UnknownJobError):
        engine.get(h.job_id)
    fresh = engine.submit(req(81, request_id="idem"))
    assert fresh.job_id == "idem" and fresh._job is not h._job  # a new job; the request id is its id
    assert_proofs(fresh.result(WAIT), CIRCUIT, seeded(CIRCUIT, 81))


def test_status_reports_srs_queues_workers_memory_and_busy(engine):
    gate = Gate()
    HOOKS.set("before_gpu", gate)
    h = engine.submit(req(90))
    assert gate.entered.wait(WAIT)
    st = engine.status()
    (w,) = st.gpu_workers
    assert w.device == 0 and w.job == h.job_id and w.partition == 0 and w.state == "preparing"
    assert w.family == "porep"
    assert st.jobs["running"] >= 1 and st.jobs_by_kind["porep"].running >= 1
    with pytest.raises(EngineError):  # in use: never evicted
        engine.evict(CIRCUIT)
    gate.open()
    h.result(WAIT)
    engine.wait_idle(WAIT)
    st = engine.status()
    (entry,) = [e for e in st.srs if e.key == (CIRCUIT, 0, None)]
    assert entry.tier == "hot" and entry.ref_count == 0 and entry.size_bytes > 0
    assert entry.loads >= 1 and entry.load_seconds > 0
    assert set(st.as_dict()["queues"]) == {"intake", "synthesis", "gpu", "finalize", "device_room"}
    assert st.queues.device_room == []  # nothing parked for room on a card
    assert st.memory.total == 1 << 30 and st.memory.peak >= st.memory.used > 0
    assert st.counters["completed"] >= 1
    assert 0 < st.gpu_busy.fraction <= 1
    assert st.gpu_workers[0].state == "idle"
    assert json.loads(json.dumps(st.as_dict(), default=str))["memory"]["total"] == 1 << 30  # JSON-able


def test_evict_and_preload(engine):
    size = engine.status().srs[0].size_bytes
    assert size > 0 and engine.evict(CIRCUIT) == {0: (True, size)}
    assert engine.status().memory.by_tag.get("srs", 0) == 0
    already, seconds = engine.preload(CIRCUIT)[0]
    assert already is False and seconds > 0
    assert engine.preload(CIRCUIT)[0][0] is True
    assert_proofs(engine.submit(req(95)).result(WAIT), CIRCUIT, seeded(CIRCUIT, 95))


def test_a_witness_handed_over_alone_gets_its_products_on_the_device(engine):
    r = engine.submit(req(97, options={"synthesis.abc_on": "device"})).result(WAIT)
    assert_proofs(r, CIRCUIT, seeded(CIRCUIT, 97))
    on_gpu = lambda s: s.attrs.get("worker", "").startswith("cuzk-gpu")  # noqa: E731
    assert all(on_gpu(s) for s in spans(r, "matvec"))  # the worker ran the witness program only
    (lock,) = spans(r, "device_lock")
    (spmv,) = [s for s in spans(r, "matvec") if on_gpu(s)]
    assert lock.start <= spmv.start and spmv.end <= lock.end  # the SpMV is device work, under the lock
    (prep,) = spans(r, "gpu_prepare")  # upload.prestage: the witness is stacked and uploaded before it
    assert prep.end <= lock.start
    bad = get_circuit(CIRCUIT).corrupt(seeded(CIRCUIT, 98)[0])
    r = engine.submit(
        ProofRequest(circuit=CIRCUIT, instances=[bad], options={"synthesis.abc_on": "device"})
    ).result(WAIT)
    assert r.status is JobStatus.FAILED and r.error.startswith(
        "partition 0 GPU prove failed: UnsatisfiedError"
    )


def test_a_prestaged_hand_over_is_closed_after_the_device_is_given_back(engine, monkeypatch):
    """Unmapping a hand-over (0.4-0.6 s for a porep-32g witness) comes after the device lock's
    hold, not between the prepare and the lock queue, where the device sat idle (H100, 2026-12-07)."""
    import time

    from cuzk.engine.synth import SynthResult

    closed: list[float] = []
    real_close = SynthResult.close

    def close(self: SynthResult) -> None:
        if self.job_id == "close-order":
            closed.append(time.perf_counter())
        real_close(self)

    monkeypatch.setattr(SynthResult, "close", close)
    r = engine.submit(
        ProofRequest(
            circuit=CIRCUIT, seed=99, request_id="close-order", options={"synthesis.abc_on": "device"}
        )
    ).result(WAIT)
    assert_proofs(r, CIRCUIT, seeded(CIRCUIT, 99))
    (prep,) = spans(r, "gpu_prepare")
    (lock,) = spans(r, "device_lock")
    assert prep.end <= lock.start and closed and min(closed) >= lock.end


def test_bad_requests_are_refused_at_submit(engine):
    with pytest.raises(UsageError, match="unknown toggle 'turbo'"):
        engine.submit(req(1, options={"turbo": True}))
    with pytest.raises(UsageError, match="apply to the whole engine"):
        engine.submit(req(1, options={"batch.max_size": 2}))
    with pytest.raises(UnknownCircuitError):
        engine.submit(ProofRequest(circuit="no-such-circuit"))
    with pytest.raises(UsageError, match=r"k\.zkey: cannot read the zkey"):
        engine.submit(ProofRequest(zkey="k.zkey", witnesses=["w.wtns"]))
    with pytest.raises(UsageError, match="ProofRequest"):
        engine.submit("porep-tiny")  # type: ignore[arg-type]


def test_config_is_validated():
    with pytest.raises(UsageError, match="devices"):
        EngineConfig(devices=())
    with pytest.raises(UsageError, match="gpu_workers_per_device"):
        EngineConfig(gpu_workers_per_device=0)
    with pytest.raises(UsageError, match="backend"):
        EngineConfig(backend="tpu")
    with pytest.raises(UsageError):
        EngineConfig(memory_budget="lots")
    with pytest.raises(UsageError, match="engine settings: backend, devices"):
        EngineConfig().with_settings({"max_batch": "2"})
    with pytest.raises(UsageError, match="max_batch_size must be an integer"):
        EngineConfig().with_settings({"max_batch_size": "two"})
    cfg = EngineConfig().with_settings({"max_batch_size": "2", "devices": "0,1", "g2_on": "device",
                                        "memory_budget": "512MiB"})  # fmt: skip
    assert (cfg.max_batch_size, cfg.devices, cfg.g2_on, cfg.memory_budget) == (2, (0, 1), "device", 1 << 29)
    assert EngineConfig().with_settings({"msm.g2_on": "stream"}).g2_on == "stream"
    with pytest.raises(UsageError, match="g2_on must be one of auto, cpu, device, stream, not 'gpu'"):
        EngineConfig(g2_on="gpu")
    with pytest.raises(UsageError, match="dispatch_ahead must be an integer >= 0"):
        EngineConfig(dispatch_ahead=-1)
    assert EngineConfig(synthesis_workers=8, gpu_workers_per_device=2).dispatch_depth == 20
    assert EngineConfig(dispatch_ahead=3).dispatch_depth == 3
    with pytest.raises(UsageError, match="unknown hook"):
        EngineHooks(after_everything=print)
