"""The pipelined engine: intake -> batches -> synthesis processes -> GPU workers -> finalizers.

    with Engine(EngineConfig(backend="cpu")) as engine:
        h = engine.submit(ProofRequest(circuit="porep-tiny", seed=1))
        r = h.result(timeout=600)      # JobResult: status, proofs, public_inputs, error, timeline

Stages and who owns what (each arrow is a hand-off; the sender keeps its
memory reservation until the receiver has the item):

- intake: `submit` validates the request and pushes the job to the Scheduler
  (priority classes, FIFO within one, the batch collector);
- dispatcher (one thread): takes a batch, picks the device with the shortest
  GPU queue, leases the circuit's parameters there (SrsManager, loading them
  on demand), and queues one *unit* per partition index: partition j of every
  job in the batch, proved later as one batched pass of k witnesses;
- feeder (one thread): takes the highest-priority unit, reserves its working
  set from the memory budget (before synthesis starts), and hands each
  member to the synthesis pool when a worker is free (so priorities decide
  what is synthesized next, not the order things were queued in the pool);
- synthesis pool callbacks: collect the unit's witnesses, then queue it for
  its device's GPU workers;
- GPU workers (gpu.py), finalizers (finalize.py), result routing (`_deliver`):
  proofs land in their job's slot for that partition; the job completes when
  every slot is filled, its proofs concatenated in partition order.

A job's first failing partition fails it (the message names the partition
and the cause); its other partitions are dropped wherever they are, their
memory given back. Every accepted job ends in exactly one terminal status.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import itertools
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cuzk.engine import work
from cuzk.engine.finalize import Finalizer
from cuzk.engine.gpu import DeviceLock, GpuWorker, busy_seconds
from cuzk.engine.keys import KeyId, SrsKey, is_zkey, zkey_ref
from cuzk.engine.memory import MemoryBudget, Reservation, auto_budget
from cuzk.engine.request import JobStatus, Priority, ProofRequest
from cuzk.engine.scheduler import BatchCollector, Scheduler, WorkQueue
from cuzk.engine.srs import SrsLease, SrsManager
from cuzk.engine.synth import SynthFailure, SynthPool, SynthResult, SynthTask
from cuzk.errors import (
    BudgetExceededError,
    CuzkError,
    DeadlineExceededError,
    EngineError,
    JobCancelledError,
    QueueFullError,
    ShuttingDownError,
    UnknownJobError,
    UsageError,
)
from cuzk.groth16.proof import Proof, proofs_to_bytes
from cuzk.instrument import Span, Timeline
from cuzk.units import parse_size

log = logging.getLogger("cuzk.engine")

#: Proof families whose jobs may share a batch (the reference batches PoRep and SnapDeals only).
BATCHABLE_FAMILIES = frozenset({"porep", "snap"})
#: Named toggles (cuzk.toggles) that are EngineConfig fields: toggle -> (field, value as the field holds it).
TOGGLE_FIELDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "batch.max_size": ("max_batch_size", int),
    "gpu.workers_per_device": ("gpu_workers_per_device", int),
    "synthesis.workers": ("synthesis_workers", int),
    "msm.g2_on": ("g2_on_cpu", lambda v: v == "cpu"),
    "synthesis.abc_on": ("abc_on_worker", lambda v: None if v == "auto" else v == "worker"),
    "finalize.split": ("split_finalize", bool),
    "upload.prestage": ("prestage_uploads", bool),
    "msm.precompute": ("msm_precompute", int),
}
#: Toggles a single request may set (ProofRequest.options): they change how its partitions are proved,
#: not the engine's shape. Jobs with different options never share a batch.
REQUEST_TOGGLES = ("synthesis.abc_on", "msm.window.h", "msm.window.l", "msm.window.a", "msm.window.b_g1",
                   "msm.window.b_g2")  # fmt: skip


# --- configuration -------------------------------------------------------------------------------


class EngineHooks:
    """Test hooks: callables the stages call at named points with (job_id, partition).

    A hook runs on the stage's own thread, so a hook that waits on an event holds that stage
    (how tests make orderings certain without sleeping); a hook that raises fails the partition.
    """

    POINTS = ("dispatched", "before_synth", "synth_hold", "after_synth", "before_gpu", "after_gpu",
              "before_finalize")  # fmt: skip
    # dispatched: the job's unit for that partition is queued for synthesis;
    # synth_hold: may return a folder for SynthTask.hold (the worker blocks there: kill tests);
    # after_synth: the partition's witness is handed to the GPU stage.

    def __init__(self, **hooks: Callable[[str, int], Any]) -> None:
        self._hooks: dict[str, Callable[[str, int], Any]] = {}
        for name, fn in hooks.items():
            self.set(name, fn)

    def set(self, name: str, fn: Callable[[str, int], Any] | None) -> None:
        if name not in self.POINTS:
            raise UsageError(f"unknown hook {name!r}; hooks are {', '.join(self.POINTS)}")
        if fn is None:
            self._hooks.pop(name, None)
        else:
            self._hooks[name] = fn

    def clear(self) -> None:
        self._hooks.clear()

    def has(self, name: str) -> bool:
        return name in self._hooks

    def call(self, name: str, job_id: str, partition: int) -> Any:
        fn = self._hooks.get(name)
        return fn(job_id, partition) if fn is not None else None


@dataclass(frozen=True)
class EngineConfig:
    """Every engine setting, validated; defaults follow the reference where they mean the same here.

    Sizes take a byte count or text ("14GiB", "512MiB"). `memory_budget` "auto" is the
    memory available now minus `memory_margin`.
    """

    backend: str = "auto"  # cpu | cuda | auto
    devices: tuple[int, ...] = (0,)  # device ordinals (with cpu: that many CPU "devices")
    gpu_workers_per_device: int = 2  # the reference's default
    synthesis_workers: int = 2  # worker processes; each gets cores / workers numba threads
    finalizer_workers: int = 2
    max_batch_size: int = 1  # the reference's default: batching off
    max_batch_wait_ms: int = 10_000  # the reference's default
    memory_budget: int | str = "auto"
    memory_margin: int | str = "2GiB"
    result_retention_s: float = 600.0  # the reference keeps results forever; we prune
    min_srs_idle_s: float = 300.0  # an idle SRS entry is evictable after this long
    queue_limit: int = 1000  # jobs accepted and not yet finished
    #: a/b/c computed in the synthesis worker (True) or on the device (False); None: by backend,
    #: on the device with CUDA (porep-full on an H200: 3.88 s per sector against 6.83 s, where the
    #: workers' CPU SpMV bound the run), in the worker on the CPU backend (else the SpMV moves
    #: onto the one "device" stage).
    abc_on_worker: bool | None = None
    split_finalize: bool = True  # finalize in finalizer threads (else in the GPU worker, after the lock)
    prestage_uploads: bool = True  # a unit's vectors go to the device before the lock is taken
    #: shifted copies of each G1 query base kept with a loaded SRS (1: none); their bytes count
    #: in the SRS's reservation (the msm.precompute toggle; CUDA backend only)
    msm_precompute: int = 1
    toggles: Mapping[str, Any] = field(
        default_factory=dict
    )  # the other named toggles (msm.window.*, staging)
    g2_on_cpu: bool = True  # the B MSM on G2 in the finalizer, on the CPU (the reference's split)
    cache_dir: str | None = None  # CUZK_CACHE_DIR for the workers (None: inherited)
    #: the parameter folder of requests that name none, and of preload/evict (the daemon's
    #: srs.param_cache); None: the user cache
    params_dir: str | None = None
    hooks: EngineHooks | None = field(default=None, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    #: Fields `with_settings` (the CLI's --set) may change; hooks and clock are for code only.
    SETTABLE = (
        "backend", "devices", "gpu_workers_per_device", "synthesis_workers", "finalizer_workers",
        "max_batch_size", "max_batch_wait_ms", "memory_budget", "memory_margin", "result_retention_s",
        "min_srs_idle_s", "queue_limit", "abc_on_worker", "g2_on_cpu", "cache_dir", "split_finalize",
        "prestage_uploads", "params_dir",
    )  # fmt: skip

    def __post_init__(self) -> None:
        from cuzk.backends import NAMES

        if self.backend not in NAMES:
            raise UsageError(f"backend must be one of {', '.join(NAMES)}, not {self.backend!r}")
        devices = tuple(self.devices) if isinstance(self.devices, list | tuple) else None
        if not devices or any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in devices):
            raise UsageError(f"devices must be a non-empty list of device ordinals, not {self.devices!r}")
        if len(set(devices)) != len(devices):
            raise UsageError(f"devices lists a device twice: {list(devices)}")
        object.__setattr__(self, "devices", devices)
        for name in ("gpu_workers_per_device", "synthesis_workers", "finalizer_workers",
                     "max_batch_size", "queue_limit", "msm_precompute"):  # fmt: skip
            _positive_int(name, getattr(self, name))
        _positive_int("max_batch_wait_ms", self.max_batch_wait_ms, minimum=0)
        for name in ("result_retention_s", "min_srs_idle_s"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not v >= 0:
                raise UsageError(f"{name} must be a non-negative number of seconds, not {v!r}")
        if self.abc_on_worker is not None and not isinstance(self.abc_on_worker, bool):
            raise UsageError(
                f"abc_on_worker must be true, false or None (by backend), not {self.abc_on_worker!r}"
            )
        for name in ("g2_on_cpu", "split_finalize", "prestage_uploads"):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be true or false, not {getattr(self, name)!r}")
        if self.memory_budget != "auto":
            parse_size(self.memory_budget)
        parse_size(self.memory_margin)
        if self.params_dir is not None:
            if not isinstance(self.params_dir, str | os.PathLike):
                raise UsageError(f"params_dir must be a folder path or None, not {self.params_dir!r}")
            object.__setattr__(self, "params_dir", os.fspath(self.params_dir))
        if self.hooks is not None and not isinstance(self.hooks, EngineHooks):
            raise UsageError("hooks must be an EngineHooks")

    def budget_bytes(self) -> int:
        if self.memory_budget == "auto":
            return auto_budget(parse_size(self.memory_margin))
        return parse_size(self.memory_budget)

    def with_settings(self, settings: Mapping[str, str]) -> EngineConfig:
        """A copy with `key=value` texts applied (the CLI's --set): named toggles (cuzk.toggles) or
        EngineConfig fields; unknown keys and bad values are refused with the valid ones."""
        from cuzk.toggles import TOGGLES

        parsed: dict[str, Any] = {}
        changes: dict[str, Any] = {}
        for key, text in settings.items():
            if key in TOGGLES:
                parsed[key] = TOGGLES[key].parse(text)
            elif key in self.SETTABLE:
                changes[key] = _parse_setting(key, text, getattr(self, key))
            else:
                raise UsageError(
                    f"unknown setting {key!r}; toggles: {', '.join(TOGGLES)}; "
                    f"engine settings: {', '.join(self.SETTABLE)}"
                )
        return dataclasses.replace(self, **changes).with_toggles(parsed)

    def with_toggles(self, values: Mapping[str, Any]) -> EngineConfig:
        """A copy with parsed toggle values applied: engine toggles to their fields, the rest kept."""
        from cuzk.toggles import resolved

        resolved(values)  # unknown names refused
        changes: dict[str, Any] = {}
        rest = dict(self.toggles)
        for key, value in values.items():
            if key in TOGGLE_FIELDS:
                name, convert = TOGGLE_FIELDS[key]
                changes[name] = convert(value)
            else:
                rest[key] = value
        return dataclasses.replace(self, **changes, toggles=rest)

    @classmethod
    def from_toggles(cls, values: Mapping[str, Any], **fields: Any) -> EngineConfig:
        """An EngineConfig with these fields and named toggles (the engine mode of `bench ab`)."""
        return cls(**fields).with_toggles(values)


def _positive_int(name: str, v: Any, *, minimum: int = 1) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise UsageError(f"{name} must be an integer >= {minimum}, not {v!r}")


def _parse_setting(key: str, text: str, current: Any) -> Any:
    t = text.strip()
    if key == "devices":
        try:
            return tuple(int(x) for x in t.split(",") if x.strip())
        except ValueError:
            raise UsageError(f"devices must be comma-separated ordinals (0,1), not {text!r}") from None
    if key == "abc_on_worker" and t.lower() in ("auto", "none", ""):
        return None
    if isinstance(current, bool) or key == "abc_on_worker":
        if t.lower() in ("1", "true", "yes", "on"):
            return True
        if t.lower() in ("0", "false", "no", "off"):
            return False
        raise UsageError(f"{key} must be true or false, not {text!r}")
    if key in ("memory_budget", "memory_margin"):
        return t if t == "auto" else parse_size(t)
    if key in ("cache_dir", "params_dir"):
        return t or None
    kind = {int: "an integer", float: "a number"}.get(type(current))
    try:
        return type(current)(t) if kind else t
    except ValueError:
        raise UsageError(f"{key} must be {kind}, not {text!r}") from None


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
        self.lock = threading.Lock()
        self.queue_position = 0  # jobs ahead of it in the intake queue when it was accepted

    @property
    def finished(self) -> bool:
        return self.done.is_set()

    def add_spans(self, spans: list[Span]) -> None:
        tmp = Timeline(self.job_id)
        tmp.spans = spans
        with self.lock:
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

    def __init__(self, engine: Engine, job: Job) -> None:
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


# --- units: one partition index of one batch, through synthesis, GPU and finalize ----------------


@dataclass
class Member:
    job: Job
    result: SynthResult | None = None
    resolved: bool = False


class Batch:
    """Jobs dispatched together: one device, one SRS lease, one unit per partition index."""

    def __init__(self, engine: Engine, jobs: list[Job], device: int, lease: SrsLease, seq: int) -> None:
        self.engine = engine
        self.jobs = jobs
        self.device = device
        self.lease = lease
        self.seq = seq
        self.priority = max(j.priority for j in jobs)
        self.circuit = jobs[0].key
        from cuzk.toggles import windows

        # the batch's jobs share their options (they are part of the batch key)
        self.windows = windows({**engine.config.toggles, **jobs[0].request.options})
        self.ws = work.working_set(self.circuit)
        self.partitions = max(j.partitions for j in jobs)
        #: the next partition index to become a Unit: units are made one at a time as the feeder
        #: takes them, so a queued job costs O(1) whatever its partition count (issue 32)
        self.next_partition = 0
        self._left = self.partitions
        self._lock = threading.Lock()

    def key(self) -> tuple[int, int, int]:
        """Its place in the synthesis queue: priority, then batch order, then partition."""
        return (-int(self.priority), self.seq, self.next_partition)

    def dead(self) -> bool:
        return all(j.finished for j in self.jobs)

    def unit_finished(self, n: int = 1) -> None:
        """`n` of its partitions are done with (proved, failed, or dropped before becoming units)."""
        with self._lock:
            self._left -= n
            last = self._left == 0
        if last:
            self.lease.release()


class Unit:
    """Partition `partition` of every job of a batch that has one: k witnesses, one batched pass."""

    def __init__(self, batch: Batch, partition: int) -> None:
        self.batch = batch
        self.partition = partition
        self.members = [Member(j) for j in batch.jobs if j.partitions > partition]
        self.reservation: Reservation | None = None
        self.pending: Any = None
        self.dead = threading.Event()  # set once every member's job has ended
        self._lock = threading.Lock()
        self._finished = False
        self.label = f"batch-{batch.seq}/p{partition}"

    key = property(lambda self: (-int(self.batch.priority), self.batch.seq, self.partition))
    circuit = property(lambda self: self.batch.circuit)
    device = property(lambda self: self.batch.device)
    resident = property(lambda self: self.batch.lease.value)
    windows = property(lambda self: self.batch.windows)
    k = property(lambda self: len(self.members))

    def check_dead(self) -> None:
        if all(m.job.finished for m in self.members):
            self.dead.set()

    def _drop(self, m: Member) -> None:
        if m.result is not None:
            m.result.close()
            m.result = None
        if self.reservation is not None:
            self.reservation.release(min(self.batch.ws.total, self.reservation.nbytes))

    def drop_dead(self) -> bool:
        """Drop the members whose job has ended (their buffers and memory released); any left?"""
        with self._lock:
            live = []
            for m in self.members:
                if m.job.finished:
                    self._drop(m)
                else:
                    live.append(m)
            self.members = live
            return bool(live)

    def resolve(self, m: Member, result: SynthResult | None) -> bool:
        """Record one member's synthesis outcome (None: dropped); True once the unit is complete."""
        with self._lock:
            m.resolved = True
            if result is None or m.job.finished:
                if result is not None:
                    result.close()
                self._drop(m)
                self.members = [x for x in self.members if x is not m]
            else:
                m.result = result
            return all(x.resolved for x in self.members)

    def results(self) -> list[SynthResult]:
        return [m.result for m in self.members]  # type: ignore[misc]

    def close_results(self) -> None:
        for m in self.members:
            if m.result is not None:
                m.result.close()
                m.result = None

    def release_abc(self) -> None:
        if self.reservation is not None:
            self.reservation.release(min(self.batch.ws.abc * self.k, self.reservation.nbytes))

    def record(self, tl: Timeline, attrs: Mapping[str, Any]) -> None:
        for m in self.members:
            spans = [dataclasses.replace(s, attrs={**attrs, **s.attrs}) for s in tl.spans]
            m.job.add_spans(spans)

    def finish(self) -> None:
        """The unit is done (proved, failed or dropped): give back everything it still holds."""
        with self._lock:
            if self._finished:
                return
            self._finished = True
            for m in self.members:
                if m.result is not None:
                    m.result.close()
                    m.result = None
            if self.reservation is not None:
                self.reservation.release()
            self.pending = None
        self.batch.unit_finished()
        self.batch.engine._unit_done()


# --- the SRS loader ------------------------------------------------------------------------------


class _Loader:
    """SrsLoader for the engine: keys are SrsKey(ref, device, params_dir) (cuzk.engine.keys)."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config

    def size(self, key: Hashable) -> int:
        name, device, _ = SrsKey(*key)  # type: ignore[misc]
        return srs_size(self.config, name, device)

    def load(self, key: Hashable) -> Any:
        name, device, params_dir = SrsKey(*key)  # type: ignore[misc]
        cfg = self.config
        return work.load_resident(
            name,
            cfg.backend,
            device,
            g2_on_cpu=cfg.g2_on_cpu,
            params_dir=params_dir,
            precompute=cfg.msm_precompute,
        )

    def unload(self, key: Hashable, value: Any) -> None:
        """Free the entry's device bases now (no lease holds it: the manager unloads only idle
        entries), so the backend's memory and its `resident` count drop at eviction, not at the
        next garbage collection; precomputed copies can be tens of GiB."""
        from cuzk.groth16.srs import release_queries

        release_queries(value.srs)


def srs_size(cfg: EngineConfig, circuit: str, device: int) -> int:
    """Bytes a loaded SRS of `circuit` holds on `device`, with its precomputed copies."""
    if cfg.msm_precompute <= 1:
        return work.srs_bytes(circuit)
    backend = work.device_backend(cfg.backend, device)
    return work.srs_bytes(circuit, precompute=cfg.msm_precompute, backend=backend)


# --- the engine ----------------------------------------------------------------------------------


class Engine:
    """The pipelined prover; see the module docstring. Thread-safe; a context manager."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = cfg = config or EngineConfig()
        self.hooks = cfg.hooks or EngineHooks()
        self.budget = MemoryBudget(cfg.budget_bytes())
        self.srs = SrsManager(self.budget, _Loader(cfg), min_idle_s=cfg.min_srs_idle_s, clock=cfg.clock)
        self.scheduler = Scheduler(
            BatchCollector(max_batch_size=cfg.max_batch_size, max_batch_wait_s=cfg.max_batch_wait_ms / 1e3),
            clock=cfg.clock,
        )
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._seq = itertools.count(1)
        self._batch_seq = itertools.count(1)
        self._turn = itertools.count()
        self._jobs: dict[str, Job] = {}
        self._by_request: dict[str, Job] = {}
        self._active = 0
        self._units = 0
        self._closed = False
        self.counters = {"submitted": 0, "completed": 0, "failed": 0, "cancelled": 0}
        self._by_family: dict[str, dict[str, int]] = {}  # status -> family -> jobs
        self._recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=20)  # for the status page
        self._listeners: list[Callable[[JobResult, ProofRequest], None]] = []
        self._started = time.perf_counter()
        # started on first use: an engine that never proves spawns no process
        self._pool: SynthPool | None = None
        self._slots = threading.Semaphore(cfg.synthesis_workers)
        self.synth_queue: WorkQueue[Batch] = WorkQueue()  # batches with partitions not yet units
        self.gpu_queues: dict[int, WorkQueue[Unit]] = {d: WorkQueue() for d in cfg.devices}
        self.finalize_queue: WorkQueue[Unit] = WorkQueue()
        self.locks = {d: DeviceLock(d) for d in cfg.devices}
        for d in cfg.devices:  # backend-level toggles (staging.pinned) that were set explicitly
            work.device_backend(cfg.backend, d).apply_toggles(cfg.toggles)
        self.abc_on_worker = (
            cfg.abc_on_worker
            if cfg.abc_on_worker is not None
            else work.device_backend(cfg.backend, cfg.devices[0]).name != "cuda"
        )
        # finalize.split off: the GPU worker finalizes its unit itself once the lock is released
        inline = Finalizer(index=0, queue=self.finalize_queue, deliver=self._deliver, fail=self._fail_unit,
                           hooks=self.hooks)  # fmt: skip
        handoff = self._to_finalize if cfg.split_finalize else inline.finalize_unit
        self.gpu_workers = [
            GpuWorker(
                device=d, index=i, backend_name=cfg.backend, lock=self.locks[d], queue=self.gpu_queues[d],
                handoff=handoff, fail=self._fail_unit, hooks=self.hooks, prestage=cfg.prestage_uploads,
            )
            for d in cfg.devices
            for i in range(cfg.gpu_workers_per_device)
        ]  # fmt: skip
        self.finalizers = [
            Finalizer(index=i, queue=self.finalize_queue, deliver=self._deliver, fail=self._fail_unit,
                      hooks=self.hooks)
            for i in range(cfg.finalizer_workers)
        ]  # fmt: skip
        self._dispatcher = threading.Thread(target=self._dispatch_loop, name="cuzk-dispatch", daemon=True)
        self._feeder = threading.Thread(target=self._feed_loop, name="cuzk-feed", daemon=True)
        for t in (*self.gpu_workers, *self.finalizers, self._dispatcher, self._feeder):
            t.start()

    # --- public API ---
    def submit(self, request: ProofRequest) -> JobHandle:
        """Accept a job (or return the one with the same request id: in flight, or its kept result)."""
        if not isinstance(request, ProofRequest):
            raise UsageError(f"submit takes a ProofRequest, not {type(request).__name__}")
        unknown = sorted(set(request.options) - set(REQUEST_TOGGLES))
        if unknown:
            raise UsageError(
                f"request option(s) {', '.join(unknown)} apply to the whole engine (set them in its "
                f"EngineConfig); a request may set {', '.join(REQUEST_TOGGLES)}"
            )
        if request.zkey is not None:
            work.zkey(zkey_ref(request.zkey))  # an unreadable or malformed key fails now
        else:
            work.circuit(request.circuit or "")  # UnknownCircuitError now, not in a worker
        with self._lock:
            if self._closed:
                raise ShuttingDownError("the engine is shutting down and accepts no new jobs")
            self._prune()
            if request.request_id and request.request_id in self._by_request:
                return JobHandle(self, self._by_request[request.request_id])
            if self._active >= self.config.queue_limit:
                raise QueueFullError(
                    f"{self._active} jobs in flight, the queue limit is {self.config.queue_limit}"
                )
            job = Job(request, next(self._seq), time.perf_counter(), self.config.params_dir)
            self._jobs[job.job_id] = job
            if request.request_id:
                self._by_request[request.request_id] = job
            self._active += 1
            self.counters["submitted"] += 1
        try:
            job.queue_position = self.scheduler.push(job)
        except ShuttingDownError:
            self._finish(job, JobStatus.CANCELLED, "the engine shut down before the job was queued")
            raise
        return JobHandle(self, job)

    def get(self, job_id: str) -> JobHandle:
        with self._lock:
            self._prune()
            job = self._jobs.get(job_id)
        if job is None:
            raise UnknownJobError(f"no job {job_id!r} (never submitted, or its result was pruned)")
        return JobHandle(self, job)

    def cancel(self, job_id: str) -> bool:
        """Cancel a queued or running job; False if it had already finished."""
        job = self.get(job_id)._job
        if job.finished:
            return False
        self.scheduler.remove(job_id)
        return self._finish(job, JobStatus.CANCELLED, "cancelled")

    def preload(self, circuit: str, *, params_dir: str | None = None) -> dict[int, tuple[bool, float]]:
        """Load a key's parameters on every device now: {device: (already_loaded, seconds)}.

        `circuit` is a registry circuit (its parameters from `params_dir`, else the engine's
        `params_dir`, as requests find them) or a zkey file's path (cuzk.engine.keys)."""
        key = self._key_named(circuit, params_dir)
        return {d: self.srs.preload(key.srs(d)) for d in self.config.devices}

    def evict(self, circuit: str, *, params_dir: str | None = None) -> dict[int, tuple[bool, int]]:
        """Drop a key's parameters from every device: {device: (was_loaded, bytes_freed)}."""
        key = self._key_named(circuit, params_dir)
        return {d: self.srs.evict(key.srs(d)) for d in self.config.devices}

    def _key_named(self, name: str, params_dir: str | os.PathLike[str] | None) -> KeyId:
        folder = params_dir if params_dir is not None else self.config.params_dir
        return KeyId.named(name, params_dir=None if folder is None else os.fspath(folder))

    def status(self) -> dict[str, Any]:
        with self._lock:
            self._prune()
            jobs = {s.value: 0 for s in JobStatus}
            by_kind: dict[str, dict[str, int]] = {}
            for j in self._jobs.values():
                jobs[j.status.value] += 1
                if not j.finished:
                    kind = by_kind.setdefault(j.request.family, {"queued": 0, "running": 0})
                    kind[j.status.value] += 1
            counters = dict(self.counters)
            in_flight = [self._progress(j) for j in self._jobs.values() if not j.finished]
            families = {j.job_id: j.request.family for j in self._jobs.values()}
            recent = list(self._recent)
            by_family = {k: dict(v) for k, v in self._by_family.items()}
        now = time.perf_counter()
        busy = {d: busy_seconds(lk.snapshot(), self._started, now) for d, lk in self.locks.items()}
        wall = max(now - self._started, 1e-9)
        worker_states = [w.status() for w in self.gpu_workers]
        return {
            "srs": [dataclasses.asdict(e) for e in self.srs.status()],
            "queues": {
                "intake": len(self.scheduler),
                "synthesis": sum(b.partitions - b.next_partition for b in self.synth_queue.items()),
                "gpu": {d: len(q) for d, q in self.gpu_queues.items()},
                "finalize": len(self.finalize_queue),
            },
            "synthesis_workers": {
                "workers": self.config.synthesis_workers,
                "busy": self._pool.busy() if self._pool is not None else 0,
                "pids": self._pool.worker_pids() if self._pool is not None else [],
            },
            "gpu_workers": [{**w, "family": families.get(w["job"] or "", "")} for w in worker_states],
            "devices": {d: self._device_info(d) for d in self.config.devices},
            "jobs_in_flight": in_flight,
            "recent_jobs": recent,
            "completed_by_family": by_family.get("completed", {}),
            "failed_by_family": by_family.get("failed", {}),
            "memory": self.budget.snapshot(),
            "jobs": jobs,
            "jobs_by_kind": by_kind,  # in flight, per proof family: queued / running
            "counters": counters,
            "gpu_busy": {
                "per_device": {d: b / wall for d, b in busy.items()},
                "fraction": self.gpu_busy(self._started, now),
                "seconds": busy,
            },
        }

    def _device_info(self, device: int) -> dict[str, Any]:
        """The device's name and memory as its backend reports them (0 where unknown)."""
        try:
            be = work.device_backend(self.config.backend, device)
            desc, mem = be.describe(), be.memory_info()
        except Exception as exc:  # a status query must answer even when a device is unwell
            return {"name": f"device {device} ({type(exc).__name__})", "total_bytes": 0, "free_bytes": 0}
        return {
            "name": str(desc.get("device") or desc.get("label") or f"device {device}"),
            "total_bytes": int(mem.get("total") or 0),
            "free_bytes": int(mem.get("free") or 0),
            "resident_bytes": int(mem.get("resident") or 0),
        }

    def _progress(self, job: Job) -> dict[str, Any]:
        """A job in flight, partition by partition (for the status page): caller holds the lock."""
        states = ["pending"] * job.partitions
        for unit in list(job.units):
            if unit.partition >= job.partitions:
                continue
            member = next((m for m in unit.members if m.job is job), None)
            if unit.pending is not None:  # the GPU part is done: G2 MSM and assembly on the CPU
                states[unit.partition] = "finalizing"
            elif member is not None and member.result is not None:
                states[unit.partition] = "synth_done"  # waiting for a GPU worker
            elif member is not None and member.resolved:  # its synthesis result went to a GPU worker
                states[unit.partition] = "gpu"
            elif unit.reservation is not None:
                states[unit.partition] = "synthesizing"
        for p in job.proofs:
            states[p] = "done"
        return {
            "job_id": job.job_id,
            "family": job.request.family,
            "circuit": job.key,
            "status": job.status.value,
            "started_secs_ago": time.perf_counter() - job.submitted,
            "partitions": [{"index": i, "state": st} for i, st in enumerate(states)],
        }

    def add_listener(self, fn: Callable[[JobResult, ProofRequest], None]) -> None:
        """Call `fn(result, request)` once per job as it reaches its terminal status (metrics, journals)."""
        with self._lock:
            self._listeners.append(fn)

    def gpu_busy(self, since: float, until: float | None = None) -> float:
        """Fraction of [since, until] (perf_counter) in which some device held its lock."""
        until = time.perf_counter() if until is None else until
        intervals = [iv for lk in self.locks.values() for iv in lk.snapshot()]
        return busy_seconds(intervals, since, until) / max(until - since, 1e-9)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no job is in flight and every unit has given back its memory."""
        with self._idle:
            return self._idle.wait_for(lambda: self._active == 0 and self._units == 0, timeout)

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking jobs; wait=True finishes the accepted ones, wait=False cancels them."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pending = [j for j in self._jobs.values() if not j.finished]
        if not wait:
            for job in pending:
                self.scheduler.remove(job.job_id)
                self._finish(job, JobStatus.CANCELLED, "cancelled: the engine shut down")
        self.scheduler.close()
        self._dispatcher.join()
        self.wait_idle()
        self.synth_queue.close()
        for q in (*self.gpu_queues.values(), self.finalize_queue):
            q.close()
        for t in (self._feeder, *self.gpu_workers, *self.finalizers):
            t.join()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_pending=True)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(wait=exc[0] is None)

    # --- bookkeeping ---
    def _prune(self) -> None:
        """Forget finished jobs kept longer than result_retention_s (caller holds the lock)."""
        cutoff = self.config.clock() - self.config.result_retention_s
        old = [j for j in self._jobs.values() if j.finished_at is not None and j.finished_at <= cutoff]
        for j in old:
            del self._jobs[j.job_id]
            if j.request_id and self._by_request.get(j.request_id) is j:
                del self._by_request[j.request_id]

    def _finish(self, job: Job, status: JobStatus, error: str | None = None) -> bool:
        """The one place a job becomes terminal; False if it already was."""
        with job.lock:
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
            job.done.set()
        with self._lock:
            job.finished_at = self.config.clock()
            self._active -= 1
            self.counters[status.value] += 1
            family = self._by_family.setdefault(status.value, {})
            family[job.request.family] = family.get(job.request.family, 0) + 1
            spans = [r for r in job.timeline.records() if r["depth"] == 0]
            self._recent.append({"job_id": job.job_id, "status": status.value, "spans": spans})
            listeners = list(self._listeners)
            self._idle.notify_all()
        assert job.result is not None
        for fn in listeners:
            try:
                fn(job.result, job.request)
            except Exception:  # a listener's bug must not change the job's outcome
                log.exception("job listener %r failed for %s", fn, job.job_id)
        units, job.units = job.units, []  # a kept result holds no unit (nor what a unit holds)
        if status is not JobStatus.COMPLETED:
            if self._pool is not None:
                self._pool.cancel(job.job_id)
            for unit in units:
                unit.check_dead()
            for batch in self.synth_queue.remove_if(lambda b: b.dead()):
                self._drop_rest(batch)
            for q in self.gpu_queues.values():
                for unit in q.remove_if(lambda u: u.dead.is_set()):
                    unit.finish()
        return True

    def _fail(self, job: Job, message: str) -> None:
        self._finish(job, JobStatus.FAILED, message)

    def _unit_done(self) -> None:
        with self._lock:
            self._units -= 1
            self._idle.notify_all()

    # --- stage: dispatcher ---
    def _dispatch_loop(self) -> None:
        while (batch := self.scheduler.next_batch()) is not None:
            jobs = [j for j in batch if not j.finished]  # type: ignore[attr-defined]
            if jobs:
                try:
                    self._dispatch(jobs)  # type: ignore[arg-type]
                except Exception as exc:  # never lose a job to a stray error
                    for j in jobs:
                        self._fail(j, f"dispatch failed: {type(exc).__name__}: {exc}")  # type: ignore[arg-type]

    def _dispatch(self, jobs: list[Job]) -> None:
        now = time.perf_counter()
        for j in jobs:
            j.status = JobStatus.RUNNING
            j.add_spans([Span("queue_wait", j.submitted, now, attrs={"priority": j.priority.name})])
        devs = self.config.devices
        turn = next(self._turn) % len(devs)  # round robin among the devices with the shortest queue
        device = min(devs, key=lambda d: (len(self.gpu_queues[d]), (devs.index(d) - turn) % len(devs)))
        circuit = jobs[0].key
        key = jobs[0].key_id.srs(device)
        ws = work.working_set(circuit)
        need = ws.total * len(jobs) + srs_size(self.config, circuit, device)
        if need > self.budget.total:
            for j in jobs:
                self._fail(j, f"{BudgetExceededError.__name__}: a partition of {circuit} needs {need} bytes "
                              f"({len(jobs)} x {ws.total} working set + the SRS) but the whole memory budget "
                              f"is {self.budget.total}")  # fmt: skip
            return
        t0 = time.perf_counter()
        try:
            lease = self.srs.acquire(key)
        except CuzkError as exc:
            for j in jobs:
                self._fail(j, f"loading the parameters of {circuit} failed: {type(exc).__name__}: {exc}")
            return
        t1 = time.perf_counter()
        for j in jobs:
            j.add_spans([Span("srs_load", t0, t1, attrs={"device": device, "circuit": circuit})])
        batch = Batch(self, jobs, device, lease, next(self._batch_seq))
        with self._lock:
            self._units += batch.partitions  # planned: each is finished or dropped exactly once
        self.synth_queue.put(batch.key(), batch)
        if self.hooks.has("dispatched"):
            for j in jobs:
                for p in range(j.partitions):
                    self.hooks.call("dispatched", j.job_id, p)

    @property
    def pool(self) -> SynthPool:
        """The synthesis pool, started on first use (by the feeder thread)."""
        if self._pool is None:
            self._pool = SynthPool(self.config.synthesis_workers, cache_dir=self.config.cache_dir)
        return self._pool

    # --- stage: feeder (memory, then the synthesis pool) ---
    def _feed_loop(self) -> None:
        while (batch := self.synth_queue.get()) is not None:
            unit = self._next_unit(batch)
            if unit is None:
                continue
            try:
                self._feed(unit)
            except Exception as exc:
                self._fail_unit(
                    unit, f"partition {unit.partition} synthesis failed: {type(exc).__name__}: {exc}"
                )

    def _next_unit(self, batch: Batch) -> Unit | None:
        """The batch's next partition as a Unit (the batch goes back in the queue for the rest);
        None when every job of the batch has ended (its partitions left are dropped)."""
        if batch.dead():
            self._drop_rest(batch)
            return None
        with batch._lock:
            p = batch.next_partition
            batch.next_partition += 1
        if batch.next_partition < batch.partitions:
            try:
                self.synth_queue.put(batch.key(), batch)
            except ShuttingDownError:  # shutdown(wait=False) closed the queue: drop the rest
                self._drop_rest(batch)
        unit = Unit(batch, p)
        for m in unit.members:
            m.job.units.append(unit)
        unit.check_dead()
        return unit

    def _drop_rest(self, batch: Batch) -> None:
        """Give back the partitions of a batch that never became units."""
        with batch._lock:
            n = batch.partitions - batch.next_partition
            batch.next_partition = batch.partitions
        if n:
            batch.unit_finished(n)
            with self._lock:
                self._units -= n
                self._idle.notify_all()

    def _feed(self, unit: Unit) -> None:
        if not unit.drop_dead():
            unit.finish()
            return
        ws = unit.batch.ws
        try:
            unit.reservation = self.budget.reserve(
                ws.total * unit.k, tag=f"partitions:{unit.circuit}", cancelled=unit.dead
            )
        except JobCancelledError:
            unit.finish()
            return
        except EngineError as exc:  # BudgetExceededError, DeadlineExceededError
            self._fail_unit(unit, f"partition {unit.partition}: {type(exc).__name__}: {exc}")
            return
        if is_zkey(unit.circuit):  # a circom witness needs no synthesis process: the GPU stage loads it
            for m in list(unit.members):
                hand = _WitnessHandOver(m.job.request.witnesses[unit.partition])  # type: ignore[index]
                if unit.resolve(m, hand):  # type: ignore[arg-type]
                    self._to_gpu(unit)
            return
        for m in list(unit.members):
            self._slots.acquire()
            if m.job.finished:
                self._slots.release()
                if unit.resolve(m, None):
                    self._to_gpu(unit)
                continue
            try:
                self.hooks.call("before_synth", m.job.job_id, unit.partition)
                task = m.job.task(unit.partition, self.abc_on_worker)
                task.hold = self.hooks.call("synth_hold", m.job.job_id, unit.partition)
                self.pool.submit(task, functools.partial(self._synth_done, unit, m), key=unit.key)
            except Exception as exc:
                self._slots.release()
                self._fail(m.job, f"partition {unit.partition} synthesis failed: {type(exc).__name__}: {exc}")
                if unit.resolve(m, None):
                    self._to_gpu(unit)

    def _synth_done(self, unit: Unit, m: Member, out: SynthResult | SynthFailure) -> None:
        try:
            m.job.add_spans(_synth_spans(out, unit.partition))
            if isinstance(out, SynthFailure):
                if out.kind in ("job", "worker"):
                    self._fail(m.job, f"partition {unit.partition} synthesis failed: {out.message}")
                complete = unit.resolve(m, None)
            else:
                complete = unit.resolve(m, out)
            if complete:
                self._to_gpu(unit)
            if isinstance(out, SynthResult):
                self.hooks.call("after_synth", m.job.job_id, unit.partition)
        except Exception as exc:
            self._fail(
                m.job, f"partition {unit.partition} synthesis hand-off failed: {type(exc).__name__}: {exc}"
            )
            if unit.resolve(m, None):
                self._to_gpu(unit)
        finally:
            self._slots.release()

    def _to_gpu(self, unit: Unit) -> None:
        if not unit.drop_dead():
            unit.finish()
            return
        try:
            self.gpu_queues[unit.device].put(unit.key, unit)
        except Exception:  # the queue closed under us: shutdown(wait=False)
            unit.finish()

    # --- stage: GPU -> finalize -> result routing ---
    def _to_finalize(self, unit: Unit) -> None:
        try:
            self.finalize_queue.put(unit.key, unit)
        except Exception:
            unit.finish()

    def _fail_unit(self, unit: Unit, message: str) -> None:
        jobs = [m.job for m in unit.members]
        unit.finish()  # memory back first: a job's result is never seen before its unit gave back
        for job in jobs:
            self._fail(job, message)

    def _deliver(
        self, unit: Unit, proofs: list[Proof | None], inputs: list[list[int]], errors: dict[int, str]
    ) -> None:
        """Route a unit's verified proofs to their jobs; complete the jobs whose slots are all filled."""
        outcomes: list[tuple[Job, str | None]] = []
        for j, m in enumerate(unit.members):
            job = m.job
            if job.finished:
                continue
            if j in errors:
                outcomes.append((job, errors[j]))
                continue
            with job.lock:
                job.proofs[unit.partition] = proofs[j]  # type: ignore[assignment]
                job.inputs[unit.partition] = inputs[j]
                if len(job.proofs) == job.partitions:
                    outcomes.append((job, None))
        unit.finish()  # memory back before the results are visible
        for job, error in outcomes:
            if error is None:
                self._finish(job, JobStatus.COMPLETED)
            else:
                self._fail(job, error)


@dataclass
class _WitnessHandOver:
    """A zkey partition's hand-over: its circom witness (a .wtns path or an (nVars, 4) array)."""

    source: Any
    abc: None = None

    def close(self) -> None:
        pass


def _synth_spans(out: SynthResult | SynthFailure, partition: int) -> list[Span]:
    """The worker's spans (dicts, perf_counter times) under one `synthesis` span of the job."""
    raw = out.spans
    if not raw:
        return []
    attrs = {"worker": f"synth-{out.worker}", "pid": out.pid, "partition": partition}
    start, end = min(s["start"] for s in raw), max(s["end"] for s in raw)
    spans = [Span("synthesis", start, end, depth=0, attrs=dict(attrs))]
    spans += [Span(s["name"], s["start"], s["end"], depth=1, attrs=dict(attrs)) for s in raw]
    return spans
