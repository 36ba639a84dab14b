"""What travels between the engine's core and its stages: events in, work messages out.

The core (cuzk.engine.core) is the one thread that owns jobs, batches and units; everything
else talks to it by posting an event to its inbox. Events and messages are frozen: a stage that
holds one never sees it change, and nothing a stage does changes the core's records behind its
back. An event that needs an answer carries a `reply` future the core completes (vLLM's
utility calls); the others are fire-and-forget.

The hand-offs, in the order a partition meets them:

    facade   --Submitted / Cancelled / Query-->                              core
    dispatch --Taken (reply: the live jobs) / Dispatched / JobsFailed-->     core
    feeder   --NextUnit (reply: SynthWork) / Reserved / UnitDropped-->       core
    pool     --Synthesized-->                                                core  --unit id--> GPU queue
    gpu      --TakeGpu (reply: GpuWork) / Proved (reply: FinalizeWork)-->    core
    finalize --Finalized-->                                                  core
    any stage --UnitFailed-->                                                core

Whatever a message hands over (a unit's witnesses in GpuWork, its Pending in FinalizeWork) is
the receiver's from then on: it closes it, the core no longer does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cuzk.engine.request import JobStatus, ProofRequest
from cuzk.instrument import Span, Timeline

if TYPE_CHECKING:
    from cuzk.engine import work
    from cuzk.engine.model import Job
    from cuzk.engine.srs import SrsLease
    from cuzk.engine.synth import SynthResult, SynthTask
    from cuzk.groth16.proof import Proof

# --- from the facade --------------------------------------------------------------------------


@dataclass(frozen=True)
class Submitted:
    """A validated request; the reply is its Job (or the kept one with the same request id)."""

    request: ProofRequest
    reply: Future[Job] = field(default_factory=Future)


@dataclass(frozen=True)
class Cancelled:
    """End a job (cancel, or shutdown without waiting); applied at the top of a loop turn, before
    the turn's other events. The reply: False when it had already ended."""

    job_id: str
    status: JobStatus = JobStatus.CANCELLED
    message: str = "cancelled"
    reply: Future[bool] = field(default_factory=Future)


@dataclass(frozen=True)
class Query:
    """Run a read (`fn`, given the core) in the loop, for a consistent view: get, status, close."""

    fn: Callable[[Any], Any]
    reply: Future[Any] = field(default_factory=Future)


@dataclass(frozen=True)
class Stop:
    """The last event: the loop ends after this turn (every stage has stopped by then)."""


# --- from the dispatcher --------------------------------------------------------------------


@dataclass(frozen=True)
class Taken:
    """The dispatcher took a batch from intake at `at`; the reply is the jobs still live (now RUNNING)."""

    job_ids: tuple[str, ...]
    at: float
    reply: Future[list[Job]] = field(default_factory=Future)


@dataclass(frozen=True)
class Dispatched:
    """A batch with its device and its SRS lease: the core makes it a Batch for the feeders."""

    job_ids: tuple[str, ...]
    device: int
    lease: SrsLease
    ws: work.WorkingSet
    spans: tuple[Span, ...] = ()
    reply: Future[None] = field(default_factory=Future)


@dataclass(frozen=True)
class JobsFailed:
    """Jobs that failed before they had units (a refusal, a failed SRS load)."""

    job_ids: tuple[str, ...]
    message: str


# --- feeders, synthesis, GPU workers, finalizers --------------------------------------------


@dataclass(frozen=True)
class SynthMember:
    """One job's share of a unit for the feeder: its task, or its witness for a zkey job."""

    job_id: str
    done: Any  # the job's threading.Event: set once the job ended (the feeder skips it)
    task: SynthTask | None
    witness: Any = None


@dataclass(frozen=True)
class SynthWork:
    """A unit to synthesize: reserve `nbytes`, then each member through the pool."""

    unit_id: int
    partition: int
    circuit: str
    key: tuple[int, ...]
    urgent: bool  # HIGH or CRITICAL: an urgent slot
    reserve_urgent: bool  # the urgent lane's reservation that jumps the line
    nbytes: int
    dead: Any  # threading.Event: every job of it ended (a wait for memory gives up)
    members: tuple[SynthMember, ...]
    zkey: bool = False  # a circom witness needs no synthesis process


@dataclass(frozen=True)
class NextUnit:
    """A feeder took batch `batch_seq` from the synthesis queue: the reply is its next unit (or None)."""

    batch_seq: int
    reply: Future[SynthWork | None] = field(default_factory=Future)


@dataclass(frozen=True)
class Reserved:
    """The unit's memory is reserved (the Reservation is the core's from here on)."""

    unit_id: int
    reservation: Any


@dataclass(frozen=True)
class Synthesized:
    """One member's synthesis outcome: its witness, or None (dropped; `failure` fails its job)."""

    unit_id: int
    job_id: str
    result: SynthResult | Any | None
    spans: tuple[Span, ...] = ()
    failure: str | None = None
    reply: Future[None] = field(default_factory=Future)


@dataclass(frozen=True)
class GpuWork:
    """A unit for a GPU worker: its witnesses (the worker's to close) and what `start` needs."""

    unit_id: int
    label: str
    partition: int
    device: int
    priority: int
    job_ids: tuple[str, ...]
    resident: Any  # work.Resident
    windows: Mapping[str, Any]
    results: tuple[Any, ...]
    need: int  # device bytes while proving (the device lock's yield test)
    dead: Any  # threading.Event

    @property
    def k(self) -> int:
        return len(self.job_ids)


@dataclass(frozen=True)
class TakeGpu:
    """A GPU worker took unit `unit_id` from its queue: the reply is its GpuWork (None: dropped)."""

    unit_id: int
    reply: Future[GpuWork | None] = field(default_factory=Future)


@dataclass(frozen=True)
class FinalizeWork:
    """A unit whose `start` is done, for a finalizer: its Pending (the finalizer's)."""

    unit_id: int
    key: tuple[int, ...]  # its place in the finalizers' queue: priority, batch, partition
    label: str
    partition: int
    device: int
    job_ids: tuple[str, ...]
    pending: Any
    resident: Any
    windows: Mapping[str, Any]

    @property
    def k(self) -> int:
        return len(self.job_ids)


@dataclass(frozen=True)
class Proved:
    """The unit's `start` is done: the core gives back its a/b/c share and replies the FinalizeWork."""

    unit_id: int
    pending: Any
    timeline: Timeline
    attrs: Mapping[str, Any]
    reply: Future[FinalizeWork | None] = field(default_factory=Future)


@dataclass(frozen=True)
class Finalized:
    """The unit's proofs, verified: `errors` names the members whose proof failed verification."""

    unit_id: int
    proofs: tuple[Proof | None, ...]
    inputs: tuple[list[int], ...]
    errors: Mapping[int, str]
    timeline: Timeline
    attrs: Mapping[str, Any]


@dataclass(frozen=True)
class UnitFailed:
    """A stage failed the unit: its memory back first, then every job of it fails with `message`."""

    unit_id: int
    message: str


@dataclass(frozen=True)
class UnitDropped:
    """A stage let go of a unit whose jobs had all ended (memory back, no job changes)."""

    unit_id: int


Event = (
    Submitted | Cancelled | Query | Stop | Taken | Dispatched | JobsFailed | NextUnit | Reserved
    | Synthesized | TakeGpu | Proved | Finalized | UnitFailed | UnitDropped
)  # fmt: skip
