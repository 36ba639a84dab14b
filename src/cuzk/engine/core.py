"""The engine's core: one loop that alone owns jobs, batches and units.

Every change of a job's status, a unit's state or the job table happens here, on the loop's
thread, in answer to an event from the inbox (cuzk.engine.events). The stages (dispatch and
feeders in stages.py, GPU workers in gpu.py, finalizers in finalize.py, the synthesis pool's
callbacks) never touch the records: they get a frozen work message, do the slow part (an SRS
load, a wait for memory, a synthesis, the device) and post an event back. So a question such as
"what happens to a unit whose job is cancelled while it waits for a GPU worker" has one answer,
in one place: `_job_ended`.

A turn of the loop takes every event waiting, applies the cancels first (the fixed point where
cancellation takes effect), then the rest in arrival order. An event with a reply gets it
(or the exception its handler raised) in that turn. The loop never blocks but on its inbox: it
only puts into unbounded queues, so a stage that waits for a reply cannot deadlock it.

Resource rules, all kept here: a unit gives back its witnesses and memory exactly once
(`_finish_unit`), before any of its jobs' results is visible; a batch's SRS lease goes back when
its last partition is finished or dropped; `wait_idle` waits for no job in flight and no
partition unfinished.
"""

from __future__ import annotations

import collections
import functools
import itertools
import logging
import operator
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from cuzk.engine import events as ev
from cuzk.engine.keys import is_zkey
from cuzk.engine.memory import MemoryBudget
from cuzk.engine.model import PARTITION_VIEW, Batch, Job, JobResult, Member, Unit, UnitState
from cuzk.engine.notify import Notifier
from cuzk.engine.request import JobStatus, Priority, ProofRequest
from cuzk.engine.scheduler import Scheduler, WorkQueue
from cuzk.engine.settings import EngineConfig
from cuzk.engine.stats import JobProgress, PartitionState, RecentJob, job_counts
from cuzk.errors import QueueFullError, ShuttingDownError, UnknownJobError
from cuzk.instrument import Span

log = logging.getLogger("cuzk.engine")

T = TypeVar("T")
Listener = Callable[[JobResult, ProofRequest], None]


@dataclass
class CoreView:
    """The core's part of EngineStats, taken in one loop turn."""

    jobs: dict[str, int]
    by_kind: dict[str, dict[str, int]]
    counters: dict[str, int]
    in_flight: list[JobProgress]
    families: dict[str, str]
    recent: list[RecentJob]
    by_family: dict[str, dict[str, int]]
    synthesis_queued: int


class EngineCore:
    """The loop over the inbox; see the module docstring. `post` and `call` are thread-safe."""

    def __init__(
        self,
        config: EngineConfig,
        *,
        scheduler: Scheduler,
        budget: MemoryBudget,
        synth_queue: WorkQueue[int],
        gpu_queues: dict[int, WorkQueue[int]],
        cancel_synthesis: Callable[[str], object],
        abc_on_worker: bool,
        urgent_lane: bool,
    ) -> None:
        self.config = config
        self.scheduler = scheduler
        self.budget = budget
        self.synth_queue = synth_queue  # batch seqs with partitions not yet units
        self.gpu_queues = gpu_queues  # unit ids with every witness in
        self._cancel_synthesis = cancel_synthesis
        self.abc_on_worker = abc_on_worker
        self.urgent_lane = urgent_lane
        self._inbox: queue.SimpleQueue[ev.Event] = queue.SimpleQueue()
        self._seq = itertools.count(1)
        self._batch_seq = itertools.count(1)
        self._unit_seq = itertools.count(1)
        self._jobs: dict[str, Job] = {}
        self._by_request: dict[str, Job] = {}
        self._batches: dict[int, Batch] = {}
        self._units: dict[int, Unit] = {}
        self._closed = False
        self.counters = {"submitted": 0, "completed": 0, "failed": 0, "cancelled": 0}
        self._by_family: dict[str, dict[str, int]] = {}  # status -> family -> jobs
        self._recent: collections.deque[RecentJob] = collections.deque(maxlen=20)  # the status page's
        # the two counts wait_idle reads, behind their own condition (the loop's only lock)
        self._idle = threading.Condition(threading.Lock())
        self._active = 0  # jobs accepted and not ended, or ended with listeners still to run
        #: per device, partitions dispatched and not yet finished or dropped (the dispatcher's backlog)
        self._planned_on: dict[int, int] = {}
        #: called on this loop's thread whenever dispatched partitions finish or are dropped
        #: (the engine points it at the dispatcher, which dispatches as its backlog drains)
        self.on_drain: Callable[[], object] | None = None
        self._stopped = False
        self._post_lock = threading.Lock()
        self._notify = Notifier(self._job_gone)  # listeners run there, off this loop
        self._thread = threading.Thread(target=self._run, name="cuzk-core", daemon=True)
        self._thread.start()

    # --- the inbox -----------------------------------------------------------------------------
    def post(self, event: ev.Event) -> None:
        """Queue an event for the loop (after Stop: applied at once in the caller's thread).

        From the loop's own thread (a `Query` function that posts) the event is applied at once
        too: waiting there for the loop would wait forever."""
        if threading.current_thread() is self._thread:
            self._apply(event)
            return
        with self._post_lock:
            if not self._stopped:
                self._inbox.put(event)
                return
            self._apply(event)  # the loop has ended (shutdown is over): nothing else runs

    def call(self, event: Any) -> Any:
        """Post an event with a reply and wait for it; its handler's exception is raised here."""
        self.post(event)
        return event.reply.result()

    def query(self, fn: Callable[[EngineCore], T]) -> T:
        """`fn(core)` run in the loop: a read of the records consistent with one turn."""
        result: T = self.call(ev.Query(fn))
        return result

    def stop(self) -> None:
        """End the loop once every stage has stopped (shutdown's last step)."""
        self._inbox.put(ev.Stop())
        self._thread.join()
        self._notify.stop()

    def _run(self) -> None:
        while True:
            batch = [self._inbox.get()]
            while True:
                try:
                    batch.append(self._inbox.get_nowait())
                except queue.Empty:
                    break
            # the fixed point: cancels take effect before anything else of this turn
            for e in batch:
                if isinstance(e, ev.Cancelled):
                    self._apply(e)
            stop = False
            for e in batch:
                if isinstance(e, ev.Stop):
                    stop = True
                elif not isinstance(e, ev.Cancelled):
                    self._apply(e)
            if stop:
                with self._post_lock:
                    self._stopped = True
                    while True:  # anything posted during the last turn
                        try:
                            e = self._inbox.get_nowait()
                        except queue.Empty:
                            break
                        if not isinstance(e, ev.Stop):
                            self._apply(e)
                return

    def _apply(self, e: ev.Event) -> None:
        reply: Future[Any] | None = getattr(e, "reply", None)
        try:
            out = self._handle(e)
        except Exception as exc:
            if reply is None:
                log.exception("the engine core failed on %s", type(e).__name__)
            else:
                reply.set_exception(exc)
            return
        if reply is not None:
            reply.set_result(out)

    def _handle(self, e: ev.Event) -> Any:
        if isinstance(e, ev.Submitted):
            return self._submit(e.request)
        if isinstance(e, ev.Cancelled):
            return self._cancel(e)
        if isinstance(e, ev.Query):
            return e.fn(self)
        if isinstance(e, ev.Taken):
            return self._taken(e)
        if isinstance(e, ev.Dispatched):
            return self._dispatched(e)
        if isinstance(e, ev.JobsFailed):
            for job in self._lookup(e.job_ids):
                self._finish(job, JobStatus.FAILED, e.message)
            return None
        if isinstance(e, ev.NextUnit):
            return self._next_unit(e.batch_seq)
        if isinstance(e, ev.Reserved):
            return self._reserved(e)
        if isinstance(e, ev.Synthesized):
            return self._synthesized(e)
        if isinstance(e, ev.TakeGpu):
            return self._take_gpu(e.unit_id)
        if isinstance(e, ev.Proved):
            return self._proved(e)
        if isinstance(e, ev.Finalized):
            return self._finalized(e)
        if isinstance(e, ev.UnitFailed):
            return self._unit_failed(e.unit_id, e.message)
        if isinstance(e, ev.UnitDropped):
            unit = self._units.get(e.unit_id)
            if unit is not None:
                self._finish_unit(unit, UnitState.DROPPED)
            return None
        raise TypeError(f"the engine core has no handler for {type(e).__name__}")

    # --- jobs ----------------------------------------------------------------------------------
    def _submit(self, request: ProofRequest) -> Job:
        if self._closed:
            raise ShuttingDownError("the engine is shutting down and accepts no new jobs")
        self._prune()
        if request.request_id and request.request_id in self._by_request:
            return self._by_request[request.request_id]
        if self._active >= self.config.queue_limit:
            raise QueueFullError(
                f"{self._active} jobs in flight, the queue limit is {self.config.queue_limit}"
            )
        job = Job(request, next(self._seq), time.perf_counter(), self.config.params_dir)
        self._jobs[job.job_id] = job
        if request.request_id:
            self._by_request[request.request_id] = job
        with self._idle:
            self._active += 1
        self.counters["submitted"] += 1
        try:
            job.queue_position = self.scheduler.push(job)
        except ShuttingDownError:
            self._finish(job, JobStatus.CANCELLED, "the engine shut down before the job was queued")
            raise
        return job

    def lookup(self, job_id: str) -> Job:
        """The job (UnknownJobError when never submitted or pruned); for `Query`."""
        self._prune()
        job = self._jobs.get(job_id)
        if job is None:
            raise UnknownJobError(f"no job {job_id!r} (never submitted, or its result was pruned)")
        return job

    def _lookup(self, job_ids: tuple[str, ...]) -> list[Job]:
        return [j for i in job_ids if (j := self._jobs.get(i)) is not None]

    def _cancel(self, e: ev.Cancelled) -> bool:
        job = self.lookup(e.job_id)
        if job.finished:
            return False
        self.scheduler.remove(job.job_id)
        return self._finish(job, e.status, e.message)

    def close(self) -> list[str]:
        """Accept no more jobs; the ids of those in flight (for `Query`)."""
        self._closed = True
        return [j.job_id for j in self._jobs.values() if not j.finished]

    @property
    def closed(self) -> bool:
        return self._closed

    def add_listener(self, fn: Listener) -> None:
        self._notify.add(fn)

    def _finish(self, job: Job, status: JobStatus, error: str | None = None) -> bool:
        """The one place a job becomes terminal; False if it already was."""
        if job.finished:
            return False
        if status is JobStatus.COMPLETED:
            proofs = [job.proofs[p] for p in range(job.partitions)]
            inputs = [job.inputs[p] for p in range(job.partitions)]
        else:
            proofs, inputs = [], []
        job.status = status
        job.result = JobResult(job.job_id, job.request_id, status, proofs, inputs, error, job.timeline)
        job.proofs.clear()
        job.finished_at = self.config.clock()
        job.done.set()
        self.counters[status.value] += 1
        family = self._by_family.setdefault(status.value, {})
        family[job.request.family] = family.get(job.request.family, 0) + 1
        spans = [r for r in job.timeline.records() if r["depth"] == 0]
        self._recent.append(RecentJob(job.job_id, status.value, spans))
        units, job.units = job.units, []  # a kept result holds no unit (nor what a unit holds)
        if status is not JobStatus.COMPLETED:
            self._job_ended(job, units)
        self._notify.ended(job.result, job.request)  # the job leaves `_active` once they have run
        return True

    def _job_gone(self) -> None:
        """An ended job's listeners have run (the notifier's thread): it is no longer in flight."""
        with self._idle:
            self._active -= 1
            self._idle.notify_all()

    def _job_ended(self, job: Job, units: list[Unit]) -> None:
        """A job failed or was cancelled: stop the work done only for it, wherever it is."""
        self._cancel_synthesis(job.job_id)
        for unit in units:
            if all(m.job.finished for m in unit.members):
                unit.dead.set()  # a feeder waiting for its memory gives up
                if unit.state is UnitState.QUEUED:  # waiting for a GPU worker: out of the queue
                    self.gpu_queues[unit.batch.device].remove_if(functools.partial(operator.eq, unit.uid))
                    self._finish_unit(unit, UnitState.DROPPED)
        for seq in self.synth_queue.remove_if(lambda s: s not in self._batches or self._batches[s].dead()):
            if seq in self._batches:
                self._drop_rest(self._batches[seq])

    def _fail(self, job: Job, message: str) -> None:
        self._finish(job, JobStatus.FAILED, message)

    def _prune(self) -> None:
        """Forget finished jobs kept longer than result_retention_s."""
        cutoff = self.config.clock() - self.config.result_retention_s
        old = [j for j in self._jobs.values() if j.finished_at is not None and j.finished_at <= cutoff]
        for j in old:
            del self._jobs[j.job_id]
            if j.request_id and self._by_request.get(j.request_id) is j:
                del self._by_request[j.request_id]

    # --- batches -------------------------------------------------------------------------------
    def _taken(self, e: ev.Taken) -> list[Job]:
        jobs = [j for j in self._lookup(e.job_ids) if not j.finished]
        for j in jobs:
            j.status = JobStatus.RUNNING
            j.add_spans([Span("queue_wait", j.submitted, e.at, attrs={"priority": j.priority.name})])
        return jobs

    def _dispatched(self, e: ev.Dispatched) -> None:
        jobs = [j for j in self._lookup(e.job_ids) if not j.finished]
        if not jobs:  # every job ended while its parameters loaded
            e.lease.release()
            return
        for j in jobs:
            j.add_spans(list(e.spans))
        batch = Batch(jobs, e.device, e.lease, next(self._batch_seq), toggles=self.config.toggles, ws=e.ws)
        self._batches[batch.seq] = batch
        with self._idle:
            # each is finished or dropped exactly once
            self._planned_on[batch.device] = self._planned_on.get(batch.device, 0) + batch.partitions
        self.synth_queue.put(batch.key(), batch.seq)

    def _drop_rest(self, batch: Batch) -> None:
        """Give back the partitions of a batch that never became units."""
        n = batch.partitions - batch.next_partition
        batch.next_partition = batch.partitions
        if n:
            self._partitions_done(batch, n)

    def _partitions_done(self, batch: Batch, n: int) -> None:
        batch.left -= n
        if batch.left == 0:
            batch.lease.release()
            self._batches.pop(batch.seq, None)
        with self._idle:
            self._planned_on[batch.device] -= n
            self._idle.notify_all()
        if self.on_drain is not None:
            self.on_drain()

    # --- units ---------------------------------------------------------------------------------
    def _next_unit(self, seq: int) -> ev.SynthWork | None:
        """The batch's next partition as a unit (the batch goes back for the rest)."""
        batch = self._batches.get(seq)
        if batch is None or batch.next_partition >= batch.partitions:
            return None
        if batch.dead():
            self._drop_rest(batch)
            return None
        p = batch.next_partition
        batch.next_partition += 1
        if batch.next_partition < batch.partitions:
            try:
                self.synth_queue.put(batch.key(), seq)
            except ShuttingDownError:  # shutdown(wait=False) closed the queue: drop the rest
                self._drop_rest(batch)
        unit = Unit(next(self._unit_seq), batch, p)
        self._units[unit.uid] = unit
        if not unit.members:
            self._finish_unit(unit, UnitState.DROPPED)
            return None
        for m in unit.members:
            m.job.units.append(unit)
        zkey = is_zkey(batch.circuit)
        members = tuple(
            ev.SynthMember(
                m.job.job_id,
                m.job.done,
                None if zkey else m.job.task(p, self.abc_on_worker),
                m.job.request.witnesses[p] if zkey and m.job.request.witnesses is not None else None,
            )
            for m in unit.members
        )
        urgent = batch.priority >= Priority.HIGH
        return ev.SynthWork(
            unit.uid, p, batch.circuit, unit.key, urgent, self.urgent_lane and urgent,
            batch.ws.total * unit.k, unit.dead, members, zkey,
        )  # fmt: skip

    def _reserved(self, e: ev.Reserved) -> None:
        unit = self._units.get(e.unit_id)
        if unit is None:  # dropped meanwhile
            e.reservation.release()
            return
        unit.reservation = e.reservation  # a member whose job ended meanwhile comes back as
        unit.state = UnitState.SYNTHESIZING  # Synthesized(None) from the feeder, like any other

    def _synthesized(self, e: ev.Synthesized) -> None:
        unit = self._units.get(e.unit_id)
        m = unit.member(e.job_id) if unit is not None else None
        job = m.job if m is not None else self._jobs.get(e.job_id)
        if job is not None and e.spans:
            job.add_spans(list(e.spans))
        if job is not None and e.failure is not None:
            self._fail(job, e.failure)
        if unit is None or m is None or m.resolved or unit.state is not UnitState.SYNTHESIZING:
            if e.result is not None:  # a late word (a hook that raised after the hand-off): no witness
                e.result.close()
            return
        m.resolved = True
        if e.result is None or m.job.finished:
            if e.result is not None:
                e.result.close()
            unit.drop(m)
        else:
            m.result = e.result
        if all(x.resolved for x in unit.members):
            self._to_gpu(unit)

    def _to_gpu(self, unit: Unit) -> None:
        if unit.state is not UnitState.SYNTHESIZING:
            return
        if not unit.drop_ended():
            self._finish_unit(unit, UnitState.DROPPED)
            return
        unit.state = UnitState.QUEUED
        try:
            self.gpu_queues[unit.batch.device].put(unit.key, unit.uid)
        except ShuttingDownError:  # the queue closed under us: shutdown(wait=False)
            self._finish_unit(unit, UnitState.DROPPED)

    def _take_gpu(self, uid: int) -> ev.GpuWork | None:
        unit = self._units.get(uid)
        if unit is None or unit.state is not UnitState.QUEUED:
            return None
        if not unit.drop_ended():  # every job of the unit ended while it waited
            self._finish_unit(unit, UnitState.DROPPED)
            return None
        unit.state = UnitState.PROVING
        results = tuple(m.result for m in unit.members)
        for m in unit.members:
            m.result = None  # the worker's to close from here on
        b = unit.batch
        return ev.GpuWork(
            uid, unit.label, unit.partition, b.device, int(b.priority),
            tuple(m.job.job_id for m in unit.members), b.lease.value, b.windows, results,
            unit.k * b.ws.device_peak, unit.dead,
        )  # fmt: skip

    def _proved(self, e: ev.Proved) -> ev.FinalizeWork | None:
        unit = self._units.get(e.unit_id)
        if unit is None:
            return None
        if unit.reservation is not None:  # the a/b/c vectors are gone: their share goes back
            unit.reservation.release(min(unit.batch.ws.abc * unit.k, unit.reservation.nbytes))
        self._record(unit, e.timeline, e.attrs)
        unit.state = UnitState.FINALIZING
        b = unit.batch
        return ev.FinalizeWork(
            unit.uid, unit.key, unit.label, unit.partition, b.device,
            tuple(m.job.job_id for m in unit.members), e.pending, b.lease.value, b.windows,
        )  # fmt: skip

    def _finalized(self, e: ev.Finalized) -> None:
        """Route a unit's verified proofs to their jobs; complete the jobs whose slots are all filled."""
        unit = self._units.get(e.unit_id)
        if unit is None:
            return
        self._record(unit, e.timeline, e.attrs)
        outcomes: list[tuple[Job, str | None]] = []
        for j, m in enumerate(unit.members):
            job = m.job
            if job.finished:
                continue
            if j in e.errors:
                outcomes.append((job, e.errors[j]))
                continue
            job.proofs[unit.partition] = e.proofs[j]  # type: ignore[assignment]
            job.inputs[unit.partition] = e.inputs[j]
            if len(job.proofs) == job.partitions:
                outcomes.append((job, None))
        self._finish_unit(unit, UnitState.DONE)  # memory back before the results are visible
        for job, error in outcomes:
            if error is None:
                self._finish(job, JobStatus.COMPLETED)
            else:
                self._fail(job, error)

    def _unit_failed(self, uid: int, message: str) -> None:
        unit = self._units.get(uid)
        if unit is None:
            return
        jobs = [m.job for m in unit.members]
        self._finish_unit(unit, UnitState.DROPPED)  # memory back first: no result before its unit gave back
        for job in jobs:
            self._fail(job, message)

    def _finish_unit(self, unit: Unit, state: UnitState) -> None:
        """The unit is done (proved, failed or dropped): give back everything it still holds."""
        if self._units.pop(unit.uid, None) is None:
            return
        unit.state = state
        unit.release()
        self._partitions_done(unit.batch, 1)

    @staticmethod
    def _record(unit: Unit, tl: Any, attrs: Any) -> None:
        import dataclasses

        for m in unit.members:
            m.job.add_spans([dataclasses.replace(s, attrs={**attrs, **s.attrs}) for s in tl.spans])

    # --- views (run in the loop through `query`) -----------------------------------------------
    def view(self) -> CoreView:
        self._prune()
        jobs, by_kind = job_counts(
            (j.status.value, j.finished, j.request.family, j.status is JobStatus.RUNNING)
            for j in self._jobs.values()
        )
        return CoreView(
            jobs=jobs,
            by_kind=by_kind,
            counters=dict(self.counters),
            in_flight=[self._progress(j) for j in self._jobs.values() if not j.finished],
            families={j.job_id: j.request.family for j in self._jobs.values()},
            recent=list(self._recent),
            by_family={k: dict(v) for k, v in self._by_family.items()},
            synthesis_queued=sum(b.partitions - b.next_partition for b in self._batches.values()),
        )

    @staticmethod
    def _progress(job: Job) -> JobProgress:
        """A job in flight, partition by partition (for the status page), from its units' states."""
        states = ["pending"] * job.partitions
        for unit in job.units:
            if unit.partition >= job.partitions:
                continue
            view = PARTITION_VIEW[unit.state]
            member: Member | None = unit.member(job.job_id)
            if unit.state is UnitState.SYNTHESIZING and member is not None and member.result is not None:
                view = "synth_done"  # its witness is in; the unit's others are not yet
            states[unit.partition] = view
        for p in job.proofs:
            states[p] = "done"
        return JobProgress(
            job_id=job.job_id,
            family=job.request.family,
            circuit=job.key,
            status=job.status.value,
            started_secs_ago=time.perf_counter() - job.submitted,
            partitions=[PartitionState(i, st) for i, st in enumerate(states)],
        )

    def planned_on(self, device: int) -> int:
        """Partitions dispatched to `device` and not yet finished or dropped (any thread)."""
        with self._idle:
            return self._planned_on.get(device, 0)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no job is in flight and every partition has given back its memory."""
        with self._idle:
            return self._idle.wait_for(
                lambda: self._active == 0 and not any(self._planned_on.values()), timeout
            )


__all__ = ["CoreView", "EngineCore"]
