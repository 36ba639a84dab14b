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
  on demand), and queues the batch for synthesis as one entry;
- feeder (one thread): takes the highest-priority batch and makes its next
  partition a *unit* (partition j of every job in the batch, proved later as
  one batched pass of k witnesses; the batch goes back for the rest, so a
  queued job costs O(1) whatever its partitions), reserves the unit's working
  set from the memory budget (before synthesis starts), and hands each
  member to the synthesis pool when a worker is free (so priorities decide
  what is synthesized next, not the order things were queued in the pool);
- synthesis pool callbacks: collect the unit's witnesses, then queue it for
  its device's GPU workers;
- GPU workers (gpu.py), finalizers (finalize.py), result routing (`_deliver`):
  proofs land in their job's slot for that partition; the job completes when
  every slot is filled, its proofs in partition order.

The data (jobs, batches, units, results) is in model.py, the settings in settings.py, the key
identity in keys.py, the typed status in stats.py.

A job's first failing partition fails it (the message names the partition
and the cause); its other partitions are dropped wherever they are, their
memory given back. Every accepted job ends in exactly one terminal status.
"""

from __future__ import annotations

import collections
import functools
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable

from cuzk.engine import work
from cuzk.engine.finalize import Finalizer
from cuzk.engine.gpu import DeviceLock, GpuWorker, busy_seconds
from cuzk.engine.keys import KeyId, is_zkey, zkey_ref
from cuzk.engine.loader import Loader, srs_footprint
from cuzk.engine.memory import MemoryBudget
from cuzk.engine.model import Batch, Job, JobHandle, JobResult, Member, Unit, WitnessHandOver
from cuzk.engine.request import JobStatus, Priority, ProofRequest
from cuzk.engine.scheduler import URGENT_KEY, BatchCollector, Scheduler, Slots, WorkQueue
from cuzk.engine.settings import REQUEST_TOGGLES, EngineConfig, EngineHooks
from cuzk.engine.srs import SrsManager
from cuzk.engine.stats import (
    DeviceStats,
    EngineStats,
    GpuBusy,
    GpuWorkerStats,
    JobProgress,
    KindCounts,
    MemoryStats,
    PartitionState,
    QueueStats,
    RecentJob,
    SynthesisStats,
)
from cuzk.engine.synth import SynthFailure, SynthPool, SynthResult
from cuzk.errors import (
    BudgetExceededError,
    CuzkError,
    EngineError,
    JobCancelledError,
    QueueFullError,
    ShuttingDownError,
    UnknownJobError,
    UsageError,
)
from cuzk.groth16.proof import Proof
from cuzk.instrument import Span

log = logging.getLogger("cuzk.engine")


# --- the engine ----------------------------------------------------------------------------------


class Engine:
    """The pipelined prover; see the module docstring. Thread-safe; a context manager."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = cfg = config or EngineConfig()
        self.hooks = cfg.hooks or EngineHooks()
        self.budget = MemoryBudget(cfg.budget_bytes())
        self.srs = SrsManager(self.budget, Loader(cfg), min_idle_s=cfg.min_srs_idle_s, clock=cfg.clock)
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
        self._recent: collections.deque[RecentJob] = collections.deque(maxlen=20)  # for the status page
        self._listeners: list[Callable[[JobResult, ProofRequest], None]] = []
        self._started = time.perf_counter()
        # started on first use: an engine that never proves spawns no process
        self._pool: SynthPool | None = None
        self.on_device = work.device_backend(cfg.backend, cfg.devices[0]).name != "cpu"
        #: the urgent lane: one more synthesis process and one more GPU worker per device that
        #: serve only HIGH and CRITICAL units (on by default with a GPU backend)
        self.urgent_lane = cfg.urgent_lane if cfg.urgent_lane is not None else self.on_device
        self._slots = Slots(cfg.synthesis_workers, 1 if self.urgent_lane else 0)
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
        if self.urgent_lane:  # one more per device, for HIGH and CRITICAL units only
            self.gpu_workers += [
                GpuWorker(
                    device=d, index=cfg.gpu_workers_per_device, backend_name=cfg.backend, lock=self.locks[d],
                    queue=self.gpu_queues[d], handoff=handoff, fail=self._fail_unit, hooks=self.hooks,
                    prestage=cfg.prestage_uploads, urgent_only=True,
                )
                for d in cfg.devices
            ]  # fmt: skip
        self.finalizers = [
            Finalizer(index=i, queue=self.finalize_queue, deliver=self._deliver, fail=self._fail_unit,
                      hooks=self.hooks)
            for i in range(cfg.finalizer_workers)
        ]  # fmt: skip
        self._dispatcher = threading.Thread(target=self._dispatch_loop, name="cuzk-dispatch", daemon=True)
        self._feeders = [threading.Thread(target=self._feed_loop, name="cuzk-feed", daemon=True)]
        if self.urgent_lane:
            self._feeders.append(
                threading.Thread(
                    target=self._feed_loop, args=(URGENT_KEY,), name="cuzk-feed-urgent", daemon=True
                )
            )
        for t in (*self.gpu_workers, *self.finalizers, self._dispatcher, *self._feeders):
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

    def status(self) -> EngineStats:
        """The engine now, typed (cuzk.engine.stats); `.as_dict()` for JSON."""
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
        return EngineStats(
            srs=self.srs.status(),
            queues=QueueStats(
                intake=len(self.scheduler),
                synthesis=sum(b.partitions - b.next_partition for b in self.synth_queue.items()),
                gpu={d: len(q) for d, q in self.gpu_queues.items()},
                finalize=len(self.finalize_queue),
            ),
            synthesis_workers=SynthesisStats(
                workers=self.config.synthesis_workers,
                busy=self._pool.busy() if self._pool is not None else 0,
                pids=self._pool.worker_pids() if self._pool is not None else [],
            ),
            gpu_workers=[
                GpuWorkerStats(w.device, w.index, w.state, w.job, w.partition, families.get(w.job or "", ""))
                for w in worker_states
            ],
            devices={d: self._device_info(d) for d in self.config.devices},
            jobs_in_flight=in_flight,
            recent_jobs=recent,
            completed_by_family=by_family.get("completed", {}),
            failed_by_family=by_family.get("failed", {}),
            memory=MemoryStats.of(self.budget.snapshot()),
            jobs=jobs,
            jobs_by_kind={k: KindCounts(**v) for k, v in by_kind.items()},
            counters=counters,
            gpu_busy=GpuBusy(
                per_device={d: b / wall for d, b in busy.items()},
                fraction=self.gpu_busy(self._started, now),
                seconds=busy,
            ),
        )

    def _device_info(self, device: int) -> DeviceStats:
        """The device's name and memory as its backend reports them (0 where unknown)."""
        try:
            be = work.device_backend(self.config.backend, device)
            desc, mem = be.describe(), be.memory_info()
        except Exception as exc:  # a status query must answer even when a device is unwell
            return DeviceStats(f"device {device} ({type(exc).__name__})")
        return DeviceStats(
            name=str(desc.get("device") or desc.get("label") or f"device {device}"),
            total_bytes=int(mem.get("total") or 0),
            free_bytes=int(mem.get("free") or 0),
            resident_bytes=int(mem.get("resident") or 0),
        )

    def _progress(self, job: Job) -> JobProgress:
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
        return JobProgress(
            job_id=job.job_id,
            family=job.request.family,
            circuit=job.key,
            status=job.status.value,
            started_secs_ago=time.perf_counter() - job.submitted,
            partitions=[PartitionState(i, st) for i, st in enumerate(states)],
        )

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
        for t in (*self._feeders, *self.gpu_workers, *self.finalizers):
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
            self._recent.append(RecentJob(job.job_id, status.value, spans))
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
        ws = self.working_set(circuit)
        srs_host, srs_dev = srs_footprint(self.config, circuit, device)
        need = ws.total * len(jobs) + srs_host
        if need > self.budget.total:
            for j in jobs:
                self._fail(j, f"{BudgetExceededError.__name__}: a partition of {circuit} needs {need} bytes "
                              f"({len(jobs)} x {ws.total} working set + the SRS) but the whole memory budget "
                              f"is {self.budget.total}")  # fmt: skip
            return
        refused = self._device_refusal(circuit, device, len(jobs), ws, srs_dev)
        if refused:
            for j in jobs:
                self._fail(j, f"{BudgetExceededError.__name__}: {refused}")
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
        batch = Batch(
            jobs,
            device,
            lease,
            next(self._batch_seq),
            toggles=self.config.toggles,
            on_unit_done=self._unit_done,
            ws=ws,
        )
        with self._lock:
            self._units += batch.partitions  # planned: each is finished or dropped exactly once
        self.synth_queue.put(batch.key(), batch)
        if self.hooks.has("dispatched"):
            for j in jobs:
                for p in range(j.partitions):
                    self.hooks.call("dispatched", j.job_id, p)

    def working_set(self, circuit: str) -> work.WorkingSet:
        """One partition's bytes under this engine's settings (work.working_set's model)."""
        return work.working_set(circuit, on_device=self.on_device, abc_on_worker=self.abc_on_worker,
                                g2_on_cpu=self.config.g2_on_cpu)  # fmt: skip

    def _device_refusal(self, circuit: str, device: int, k: int, ws: work.WorkingSet, srs: int) -> str | None:
        """Why a batch of k jobs of `circuit` cannot fit on `device`, or None. Only one unit runs
        `start` at a time per device (the device lock), so the card must hold the SRS, one unit's
        peak and the other GPU workers' staged units; the backend would otherwise fail mid-run."""
        if not self.on_device:
            return None
        mem = work.device_backend(self.config.backend, device).memory_info()
        card = int(mem.get("budget") or mem.get("total") or 0)
        if not card:
            return None
        room = card - work.DEVICE_MARGIN_BYTES
        others = self.config.gpu_workers_per_device - 1
        need = srs + k * ws.device_peak + others * k * ws.device_staged
        if need <= room:
            return None
        gib = lambda b: f"{b / 2**30:.1f} GiB"  # noqa: E731
        return (
            f"{k} partition(s) of {circuit} need {gib(need)} of device {device}'s memory (the SRS "
            f"{gib(srs)} + {gib(k * ws.device_peak)} while proving + {others} other GPU worker(s) x "
            f"{gib(k * ws.device_staged)} staged) but it has {gib(room)} ({gib(card)} less a "
            f"{gib(work.DEVICE_MARGIN_BYTES)} margin); use fewer GPU workers per device "
            f"(gpu.workers_per_device), a smaller batch (batch.max_size), or msm.g2_on=cpu"
        )

    @property
    def pool(self) -> SynthPool:
        """The synthesis pool, started on first use (by the feeder thread)."""
        if self._pool is None:
            cfg = self.config
            self._pool = SynthPool(
                cfg.synthesis_workers + (1 if self.urgent_lane else 0),
                cache_dir=cfg.cache_dir,
                threads_per_worker=cfg.synthesis_threads or None,
            )
        return self._pool

    # --- stage: feeder (memory, then the synthesis pool) ---
    def _feed_loop(self, max_first: int | None = None) -> None:
        """Batches' next partitions to synthesis; with `max_first` (the urgent feeder) only
        HIGH and CRITICAL batches, so that one never waits behind a normal unit's slot."""
        while (batch := self.synth_queue.get(max_first=max_first)) is not None:
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
                ws.total * unit.k, tag=f"partitions:{unit.circuit}", cancelled=unit.dead,
                urgent=self.urgent_lane and unit.batch.priority >= Priority.HIGH,
            )  # fmt: skip
        except JobCancelledError:
            unit.finish()
            return
        except EngineError as exc:  # BudgetExceededError, DeadlineExceededError
            self._fail_unit(unit, f"partition {unit.partition}: {type(exc).__name__}: {exc}")
            return
        if is_zkey(unit.circuit):  # a circom witness needs no synthesis process: the GPU stage loads it
            for m in list(unit.members):
                hand = WitnessHandOver(m.job.request.witnesses[unit.partition])  # type: ignore[index]
                if unit.resolve(m, hand):  # type: ignore[arg-type]
                    self._to_gpu(unit)
            return
        urgent = unit.batch.priority >= Priority.HIGH
        for m in list(unit.members):
            slot = self._slots.acquire(urgent)
            if m.job.finished:
                self._slots.release(slot)
                if unit.resolve(m, None):
                    self._to_gpu(unit)
                continue
            try:
                self.hooks.call("before_synth", m.job.job_id, unit.partition)
                task = m.job.task(unit.partition, self.abc_on_worker)
                task.hold = self.hooks.call("synth_hold", m.job.job_id, unit.partition)
                self.pool.submit(task, functools.partial(self._synth_done, unit, m, slot), key=unit.key)
            except Exception as exc:
                self._slots.release(slot)
                self._fail(m.job, f"partition {unit.partition} synthesis failed: {type(exc).__name__}: {exc}")
                if unit.resolve(m, None):
                    self._to_gpu(unit)

    def _synth_done(self, unit: Unit, m: Member, slot: str, out: SynthResult | SynthFailure) -> None:
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
            self._slots.release(slot)

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
