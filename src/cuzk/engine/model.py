"""The engine's data: jobs, their results and handles, batches, and units (one partition index of
one batch, through synthesis, the GPU and finalize).

Plain records owned by one thread, the core's loop (cuzk.engine.core): a job's identity fields
(request, key, partitions, priority) are fixed at construction and may be read anywhere; its
state (status, units, proofs, result) and every batch and unit are read and written by the core
only. Nothing here calls back into the engine: a JobHandle cancels through the object it was
given.
"""

from __future__ import annotations

import enum
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from cuzk.engine import work
from cuzk.engine.keys import KeyId
from cuzk.engine.memory import Reservation
from cuzk.engine.request import JobStatus, Priority, ProofRequest
from cuzk.engine.srs import SrsLease
from cuzk.engine.synth import SynthResult, SynthTask
from cuzk.errors import DeadlineExceededError
from cuzk.groth16.proof import Proof, proofs_to_bytes
from cuzk.instrument import Span, Timeline

#: Proof families whose jobs may share a batch (the reference batches PoRep and SnapDeals only).
BATCHABLE_FAMILIES = frozenset({"porep", "snap"})


class _Canceller(Protocol):
    def cancel(self, job_id: str) -> bool: ...


# --- jobs and results ----------------------------------------------------------------------------


@dataclass
class JobResult:
    """A finished job: its proofs (one per partition, in partition order) or why there are none.

    `proofs` and `public_inputs` are what LocalProver's ProveResult holds (Proof objects, for
    `cuzk.groth16.verify`); `proof_bytes()` is the wire form, 192 bytes per proof."""

    job_id: str
    request_id: str
    status: JobStatus
    proofs: list[Proof] = field(default_factory=list)  # as LocalProver's ProveResult.proofs
    public_inputs: list[list[int]] = field(default_factory=list)  # one list per partition
    error: str | None = None
    timeline: Timeline = field(default_factory=Timeline)

    def proof_bytes(self) -> bytes:
        return proofs_to_bytes(self.proofs)


class Job:
    """One accepted request inside the engine (the Scheduler's Schedulable)."""

    def __init__(
        self, request: ProofRequest, seq: int, submitted: float, default_params_dir: str | None = None
    ) -> None:
        self.request = request
        self.seq = seq
        # the request id becomes the job id verbatim, as in the reference (its clients await by it)
        self.job_id = request.request_id or f"job-{seq}-{uuid.uuid4().hex[:8]}"
        self.request_id = request.request_id
        #: the proving key (cuzk.engine.keys): `key` is its ref, the circuit or "zkey:<abs path>"
        self.key_id = KeyId.of(request, default_params_dir=default_params_dir)
        self.key = self.key_id.ref
        self.priority: Priority = request.effective_priority
        options = ",".join(f"{k}={v}" for k, v in sorted(request.options.items()))
        self.batch_key = self.key_id.batch_key(options)
        self.batchable = request.family in BATCHABLE_FAMILIES
        self.partitions = request.partition_count
        self.status = JobStatus.QUEUED
        self.timeline = Timeline(self.job_id)
        self.submitted = submitted  # perf_counter
        self.finished_at: float | None = None  # config.clock
        self.result: JobResult | None = None
        self.done = threading.Event()
        self.units: list[Unit] = []
        self.proofs: dict[int, Proof] = {}
        self.inputs: dict[int, list[int]] = {}
        self.queue_position = 0  # jobs ahead of it in the intake queue when it was accepted

    @property
    def finished(self) -> bool:
        return self.done.is_set()

    def add_spans(self, spans: list[Span]) -> None:  # the core's
        tmp = Timeline(self.job_id)
        tmp.spans = spans
        self.timeline.merge(tmp)

    def task(self, partition: int, compute_abc: bool) -> SynthTask:
        req = self.request
        if req.options.get("synthesis.abc_on", "auto") != "auto":
            compute_abc = req.options["synthesis.abc_on"] == "worker"
        if req.instances is not None:
            inst = {k: np.asarray(v) for k, v in req.instances[partition].items()}
            return SynthTask(self.job_id, partition, req.circuit or "", None, inst, compute_abc)
        return SynthTask(self.job_id, partition, req.circuit or "", req.seed + partition, None, compute_abc)


class JobHandle:
    """What `submit` returns: the job's id and a way to wait for its result."""

    def __init__(self, engine: _Canceller, job: Job) -> None:
        self._engine = engine
        self._job = job
        self.job_id = job.job_id
        self.request_id = job.request_id

    @property
    def status(self) -> JobStatus:
        return self._job.status

    def done(self) -> bool:
        return self._job.finished

    @property
    def queue_position(self) -> int:
        """Jobs ahead of this one in the intake queue when it was accepted (0: next)."""
        return self._job.queue_position

    def result(self, timeout: float | None = None) -> JobResult:
        """The job's result, waiting up to `timeout` seconds (DeadlineExceededError after that)."""
        if not self._job.done.wait(timeout):
            raise DeadlineExceededError(f"job {self.job_id} did not finish within {timeout} s")
        assert self._job.result is not None
        return self._job.result

    def cancel(self) -> bool:
        return self._engine.cancel(self.job_id)


# --- batches and units: data the core owns; no callbacks, no back-reference to the engine -----------


class UnitState(enum.Enum):
    """Where a unit is; only the core (cuzk.engine.core) changes it, on an event."""

    PLANNED = "planned"  # made by the core for a feeder; its memory not yet reserved
    SYNTHESIZING = "synthesizing"  # memory reserved; its members' witnesses being made
    QUEUED = "queued"  # every witness in: waiting in its device's GPU queue
    PROVING = "proving"  # a GPU worker took it (its witnesses are the worker's now)
    FINALIZING = "finalizing"  # `start` done: G2 MSM, assembly, verification
    DONE = "done"  # its proofs went to their jobs; everything given back
    DROPPED = "dropped"  # failed, or every job of it ended; everything given back


#: What the status page shows for a partition in each unit state.
PARTITION_VIEW = {
    UnitState.PLANNED: "pending",
    UnitState.SYNTHESIZING: "synthesizing",
    UnitState.QUEUED: "synth_done",
    UnitState.PROVING: "gpu",
    UnitState.FINALIZING: "finalizing",
    UnitState.DONE: "done",
    UnitState.DROPPED: "pending",
}


@dataclass
class Member:
    """One job's share of a unit: its witness (None until synthesized or once handed on)."""

    job: Job
    result: SynthResult | WitnessHandOver | None = None
    resolved: bool = False


class Batch:
    """Jobs dispatched together: one device, one SRS lease, one unit per partition index."""

    def __init__(
        self, jobs: list[Job], device: int, lease: SrsLease, seq: int, *, toggles: Mapping[str, Any],
        ws: work.WorkingSet | None = None,
    ) -> None:  # fmt: skip
        self.jobs = jobs
        self.device = device
        self.lease = lease
        self.seq = seq
        self.priority = max(j.priority for j in jobs)
        self.circuit = jobs[0].key
        from cuzk.toggles import windows

        # the batch's jobs share their options (they are part of the batch key)
        self.windows = windows({**toggles, **jobs[0].request.options})
        self.ws = ws or work.working_set(self.circuit)  # the engine's model for its backend
        self.partitions = max(j.partitions for j in jobs)
        #: the next partition index to become a Unit: units are made one at a time as a feeder
        #: asks for them, so a queued job costs O(1) whatever its partition count (issue 32)
        self.next_partition = 0
        self.left = self.partitions  # partitions not yet finished or dropped; the lease goes at 0

    def key(self) -> tuple[int, int, int]:
        """Its place in the synthesis queue: priority, then batch order, then partition."""
        return (-int(self.priority), self.seq, self.next_partition)

    def dead(self) -> bool:
        return all(j.finished for j in self.jobs)


class Unit:
    """Partition `partition` of every live job of a batch that has one: k witnesses, one batched pass."""

    def __init__(self, uid: int, batch: Batch, partition: int) -> None:
        self.uid = uid
        self.batch = batch
        self.partition = partition
        self.members = [Member(j) for j in batch.jobs if j.partitions > partition and not j.finished]
        self.state = UnitState.PLANNED
        self.reservation: Reservation | None = None
        #: set once every member's job has ended: a feeder waiting for memory gives up on it
        self.dead = threading.Event()
        self.label = f"batch-{batch.seq}/p{partition}"

    @property
    def key(self) -> tuple[int, int, int]:
        return (-int(self.batch.priority), self.batch.seq, self.partition)

    @property
    def k(self) -> int:
        return len(self.members)

    def member(self, job_id: str) -> Member | None:
        return next((m for m in self.members if m.job.job_id == job_id), None)

    def drop(self, m: Member) -> None:
        """Take a member out (its job ended): its witness closed, its share of memory given back."""
        if m.result is not None:
            m.result.close()
            m.result = None
        if self.reservation is not None:
            self.reservation.release(min(self.batch.ws.total, self.reservation.nbytes))
        self.members = [x for x in self.members if x is not m]

    def drop_ended(self) -> bool:
        """Drop the members whose job has ended; any left?"""
        for m in [m for m in self.members if m.job.finished]:
            self.drop(m)
        return bool(self.members)

    def release(self) -> None:
        """Give back everything the unit still holds (its witnesses and its memory)."""
        for m in self.members:
            if m.result is not None:
                m.result.close()
                m.result = None
        if self.reservation is not None:
            self.reservation.release()


@dataclass
class WitnessHandOver:
    """A zkey partition's hand-over: its circom witness (a .wtns path or an (nVars, 4) array)."""

    source: Any
    abc: None = None

    def close(self) -> None:
        pass
