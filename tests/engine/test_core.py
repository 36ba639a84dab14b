"""The engine core on its own (issue 30): the loop owns jobs and units and changes them only on
events; cancels take effect at the top of a turn; a unit's state is explicit and its memory and
the batch's SRS lease go back exactly once. No processes, no device: the stages are played by
the test, posting the events a real stage would."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from cuzk.engine import events as ev
from cuzk.engine.core import EngineCore
from cuzk.engine.memory import MemoryBudget
from cuzk.engine.model import UnitState
from cuzk.engine.request import JobStatus, ProofRequest
from cuzk.engine.scheduler import BatchCollector, Scheduler, WorkQueue
from cuzk.engine.settings import EngineConfig
from cuzk.engine.work import WorkingSet

WAIT = 30.0
WS = WorkingSet(total=1000, abc=300)


class Lease:
    """An SRS lease that counts its releases."""

    value = "resident"

    def __init__(self) -> None:
        self.released = 0

    def release(self) -> None:
        self.released += 1


class Witness:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def core() -> Any:
    budget = MemoryBudget(1 << 20)
    scheduler = Scheduler(BatchCollector())
    c = EngineCore(
        EngineConfig(backend="cpu"), scheduler=scheduler, budget=budget, synth_queue=WorkQueue(),
        gpu_queues={0: WorkQueue()}, cancel_synthesis=lambda job_id: None, abc_on_worker=True,
        urgent_lane=False,
    )  # fmt: skip
    yield c
    c.stop()


def submit(core: EngineCore, seed: int, partitions: int = 1) -> Any:
    job = core.call(ev.Submitted(ProofRequest(circuit="porep-tiny", seed=seed, partitions=partitions)))
    batch = core.scheduler.next_batch(timeout=0)  # batches of one: ready at once
    assert batch is not None and [j.job_id for j in batch] == [job.job_id]
    core.call(ev.Taken((job.job_id,), 0.0))
    return job


def dispatch(core: EngineCore, job: Any) -> Lease:
    lease = Lease()
    core.call(ev.Dispatched((job.job_id,), 0, lease, WS))  # type: ignore[arg-type]
    return lease


def units(core: EngineCore) -> dict[int, UnitState]:
    return core.query(lambda c: {uid: u.state for uid, u in c._units.items()})


def test_a_unit_goes_through_its_states_on_events_and_gives_back_once(core: EngineCore) -> None:
    job = submit(core, 1)
    lease = dispatch(core, job)
    seq = core.synth_queue.get(timeout=0)
    work: ev.SynthWork = core.call(ev.NextUnit(seq))
    assert work.nbytes == WS.total and [m.job_id for m in work.members] == [job.job_id]
    assert units(core) == {work.unit_id: UnitState.PLANNED}
    core.post(ev.Reserved(work.unit_id, core.budget.reserve(work.nbytes)))
    witness = Witness()
    core.call(ev.Synthesized(work.unit_id, job.job_id, witness))
    assert units(core) == {work.unit_id: UnitState.QUEUED}
    assert core.gpu_queues[0].get(timeout=0) == work.unit_id
    gpu: ev.GpuWork = core.call(ev.TakeGpu(work.unit_id))
    assert gpu.results == (witness,) and not witness.closed  # the worker's to close now
    assert units(core) == {work.unit_id: UnitState.PROVING}
    fin: ev.FinalizeWork = core.call(ev.Proved(work.unit_id, "pending", _timeline(), {}))
    assert core.budget.snapshot()["used"] == WS.total - WS.abc  # the a/b/c share went back
    assert fin.pending == "pending" and units(core) == {work.unit_id: UnitState.FINALIZING}
    core.post(ev.Finalized(work.unit_id, ("proof",), ([1],), {}, _timeline(), {}))
    assert core.wait_idle(WAIT)
    assert job.status is JobStatus.COMPLETED and job.result.proofs == ["proof"]
    assert core.budget.snapshot()["used"] == 0 and lease.released == 1 and units(core) == {}


def test_cancels_take_effect_before_the_other_events_of_their_turn(core: EngineCore) -> None:
    job = submit(core, 2)
    lease = dispatch(core, job)
    work: ev.SynthWork = core.call(ev.NextUnit(core.synth_queue.get(timeout=0)))
    core.post(ev.Reserved(work.unit_id, core.budget.reserve(work.nbytes)))
    held, go = threading.Event(), threading.Event()
    core.post(ev.Query(lambda c: (held.set(), go.wait(WAIT))))  # holds the loop: the next two share a turn
    assert held.wait(WAIT)
    witness = Witness()
    synthesized = ev.Synthesized(work.unit_id, job.job_id, witness)
    seen = ev.Query(lambda c: (job.status, {u: x.state for u, x in c._units.items()}))
    cancelled = ev.Cancelled(job.job_id)
    for e in (synthesized, seen, cancelled):  # one turn, in this arrival order ...
        core.post(e)
    go.set()
    assert cancelled.reply.result(WAIT) is True
    # ... but the cancel was applied first: the unit never reached a GPU queue
    assert seen.reply.result(WAIT) == (JobStatus.CANCELLED, {})
    assert witness.closed and len(core.gpu_queues[0]) == 0
    assert core.wait_idle(WAIT) and lease.released == 1 and core.budget.snapshot()["used"] == 0


def test_a_cancel_removes_a_queued_unit_and_the_rest_of_its_batch(core: EngineCore) -> None:
    job = submit(core, 3, partitions=3)
    lease = dispatch(core, job)
    work: ev.SynthWork = core.call(ev.NextUnit(core.synth_queue.get(timeout=0)))
    core.post(ev.Reserved(work.unit_id, core.budget.reserve(work.nbytes)))
    witness = Witness()
    core.call(ev.Synthesized(work.unit_id, job.job_id, witness))
    assert len(core.gpu_queues[0]) == 1 and len(core.synth_queue) == 1  # partitions 1 and 2 not yet units
    assert core.call(ev.Cancelled(job.job_id)) is True
    assert len(core.gpu_queues[0]) == 0 and len(core.synth_queue) == 0 and witness.closed
    assert core.wait_idle(WAIT) and lease.released == 1 and core.budget.snapshot()["used"] == 0
    assert core.call(ev.Cancelled(job.job_id)) is False  # already ended


def test_a_failed_unit_gives_back_before_its_job_fails(core: EngineCore) -> None:
    job = submit(core, 4)
    dispatch(core, job)
    work: ev.SynthWork = core.call(ev.NextUnit(core.synth_queue.get(timeout=0)))
    core.post(ev.Reserved(work.unit_id, core.budget.reserve(work.nbytes)))
    seen: list[int] = []
    core.call(ev.Query(lambda c: c.add_listener(lambda r, q: seen.append(core.budget.snapshot()["used"]))))
    core.post(ev.UnitFailed(work.unit_id, "partition 0 GPU prove failed: boom"))
    assert core.wait_idle(WAIT)
    assert job.status is JobStatus.FAILED and job.result.error == "partition 0 GPU prove failed: boom"
    assert seen == [0]  # the listener saw the job end with the unit's memory already back


def _timeline() -> Any:
    from cuzk.instrument import Timeline

    return Timeline(sinks=[])


def test_a_slow_listener_does_not_hold_up_the_loop(core: EngineCore) -> None:
    """A listener blocked in I/O (the journal's fsync) leaves the loop free: other jobs still
    end and queries answer; the blocked job counts as in flight until its listeners have run,
    and every job reaches the listeners once, in the order the jobs ended."""
    release, entered = threading.Event(), threading.Event()
    seen: list[str] = []

    def slow(result: Any, _request: Any) -> None:
        seen.append(result.job_id)
        if len(seen) == 1:
            entered.set()
            assert release.wait(WAIT)

    core.call(ev.Query(lambda c: c.add_listener(slow)))
    first, second = submit(core, 1), submit(core, 2)
    assert core.call(ev.Cancelled(first.job_id)) is True
    assert entered.wait(WAIT)  # the listener now blocks on the notifier's thread
    assert core.call(ev.Cancelled(second.job_id)) is True  # the loop answers meanwhile
    assert second.status is JobStatus.CANCELLED and second.done.is_set()
    assert core.query(lambda c: c.lookup(first.job_id).status) is JobStatus.CANCELLED
    assert not core.wait_idle(0)  # the first job's listeners have not finished
    release.set()
    assert core.wait_idle(WAIT)
    assert seen == [first.job_id, second.job_id]


def test_a_failing_listener_is_logged_and_the_next_still_runs(core: EngineCore, caplog: Any) -> None:
    seen: list[str] = []

    def broken(result: Any, _request: Any) -> None:
        raise RuntimeError("listener bug")

    core.call(ev.Query(lambda c: c.add_listener(broken)))
    core.call(ev.Query(lambda c: c.add_listener(lambda r, q: seen.append(r.job_id))))
    job = submit(core, 3)
    core.call(ev.Cancelled(job.job_id))
    assert core.wait_idle(WAIT)
    assert seen == [job.job_id] and "listener bug" in caplog.text


def test_listeners_after_stop_run_in_the_callers_thread() -> None:
    from cuzk.engine.notify import Notifier

    gone: list[int] = []
    notifier = Notifier(lambda: gone.append(1))
    threads: list[str] = []
    notifier.add(lambda r, q: threads.append(threading.current_thread().name))
    notifier.ended("a", None)
    notifier.stop()  # delivers what was queued before it returns
    assert threads == ["cuzk-notify"] and gone == [1]
    notifier.ended("b", None)
    assert threads == ["cuzk-notify", threading.current_thread().name] and gone == [1, 1]
