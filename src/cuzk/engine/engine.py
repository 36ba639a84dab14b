"""The pipelined engine's facade: submit, get, cancel, preload, evict, status, shutdown.

    with Engine(EngineConfig(backend="cpu")) as engine:
        h = engine.submit(ProofRequest(circuit="porep-tiny", seed=1))
        r = h.result(timeout=600)      # JobResult: status, proofs, public_inputs, error, timeline

Who owns what (docs/ENGINE.md has the whole picture):

- the core (core.py): one loop that alone owns jobs, batches and units and changes them only on
  an event from its inbox (events.py); this facade posts Submitted, Cancelled and Query there;
- the stages, each on its own threads, take a message in and post an event out: the
  dispatcher and the feeders (stages.py), the synthesis pool (synth.py), the GPU workers
  (gpu.py), the finalizers (finalize.py);
- the resources the stages share, each behind its own lock: the memory budget (memory.py), the
  SRS manager (srs.py), the device locks (gpu.py), the queues and slots (scheduler.py);
- the engine's backends, one per device, made here with the engine's settings and fixed for its
  life (cuzk.backends.get_backend(settings=...)); SRS entries load on them, so every stage proves
  on them.

The data (jobs, batches, units, their states) is in model.py, the settings in settings.py, the
key identity in keys.py, the typed status in stats.py.

A job's first failing partition fails it (the message names the partition and the cause); its
other partitions are dropped wherever they are, their memory given back. Every accepted job
ends in exactly one terminal status.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from cuzk.engine import events as ev
from cuzk.engine import work
from cuzk.engine.core import EngineCore
from cuzk.engine.finalize import Finalizer
from cuzk.engine.gpu import DeviceLock, GpuWorker, busy_seconds
from cuzk.engine.keys import KeyId, zkey_ref
from cuzk.engine.loader import Loader, engine_backend
from cuzk.engine.memory import MemoryBudget
from cuzk.engine.model import Job, JobHandle, JobResult
from cuzk.engine.request import JobStatus, ProofRequest
from cuzk.engine.scheduler import URGENT_KEY, BatchCollector, Scheduler, Slots, WorkQueue
from cuzk.engine.settings import REQUEST_TOGGLES, EngineConfig, EngineHooks
from cuzk.engine.srs import SrsManager
from cuzk.engine.stages import Dispatcher, Feeder
from cuzk.engine.stats import (
    DeviceStats,
    EngineStats,
    GpuBusy,
    GpuWorkerStats,
    KindCounts,
    MemoryStats,
    QueueStats,
    SynthesisStats,
)
from cuzk.engine.synth import SynthPool
from cuzk.errors import UsageError

__all__ = ["Engine", "EngineConfig", "EngineHooks", "JobHandle", "JobResult"]


class Engine:
    """The pipelined prover; see the module docstring. Thread-safe; a context manager."""

    def __init__(self, config: EngineConfig | None = None) -> None:
        self.config = cfg = config or EngineConfig()
        self.hooks = cfg.hooks or EngineHooks()
        #: this engine's backend per device, its settings fixed (no run-time toggling)
        self.backends = {d: engine_backend(cfg, d) for d in cfg.devices}
        self.on_device = self.backends[cfg.devices[0]].name != "cpu"
        self.abc_on_worker = cfg.abc_on_worker_for(self.backends[cfg.devices[0]].name)
        #: the urgent lane: one more synthesis process and one more GPU worker per device that
        #: serve only HIGH and CRITICAL units (on by default with a GPU backend)
        self.urgent_lane = cfg.urgent_lane_for(self.on_device)
        self.budget = MemoryBudget(cfg.budget_bytes())
        self.srs = SrsManager(self.budget, Loader(cfg, self.backends), min_idle_s=cfg.min_srs_idle_s,
                              clock=cfg.clock)  # fmt: skip
        self.scheduler = Scheduler(
            BatchCollector(max_batch_size=cfg.max_batch_size, max_batch_wait_s=cfg.max_batch_wait_ms / 1e3),
            clock=cfg.clock,
        )
        self._started = time.perf_counter()
        self._pool: SynthPool | None = None  # started on first use: an engine that never proves spawns none
        self._pool_lock = threading.Lock()
        self.synth_queue: WorkQueue[int] = WorkQueue()  # batch seqs with partitions not yet units
        self.gpu_queues: dict[int, WorkQueue[int]] = {d: WorkQueue() for d in cfg.devices}  # unit ids
        self.finalize_queue: WorkQueue[ev.FinalizeWork] = WorkQueue()
        self.locks = {d: DeviceLock(d) for d in cfg.devices}
        self.core = EngineCore(
            cfg, scheduler=self.scheduler, budget=self.budget, synth_queue=self.synth_queue,
            gpu_queues=self.gpu_queues, cancel_synthesis=self._cancel_synthesis,
            abc_on_worker=self.abc_on_worker, urgent_lane=self.urgent_lane,
        )  # fmt: skip
        self.dispatcher = Dispatcher(
            core=self.core, scheduler=self.scheduler, config=cfg, budget=self.budget, srs=self.srs,
            backends=self.backends, gpu_queues=self.gpu_queues, hooks=self.hooks, on_device=self.on_device,
            abc_on_worker=self.abc_on_worker,
        )  # fmt: skip
        self.core.on_drain = self.dispatcher.wake  # dispatch as the devices' backlogs drain
        slots = Slots(cfg.synthesis_workers, 1 if self.urgent_lane else 0)
        self.feeders = [
            Feeder(core=self.core, queue=self.synth_queue, budget=self.budget, slots=slots,
                   pool=lambda: self.pool, hooks=self.hooks, max_first=first)
            for first in ([None, URGENT_KEY] if self.urgent_lane else [None])
        ]  # fmt: skip
        # finalize.split off: the GPU worker finalizes its unit itself once the lock is released
        inline = Finalizer(core=self.core, index=0, queue=self.finalize_queue, hooks=self.hooks)
        handoff: Callable[[ev.FinalizeWork], None] = (
            self._to_finalize if cfg.split_finalize else inline.finalize_unit
        )
        workers = [(d, i, False) for d in cfg.devices for i in range(cfg.gpu_workers_per_device)]
        if self.urgent_lane:  # one more per device, for HIGH and CRITICAL units only
            workers += [(d, cfg.gpu_workers_per_device, True) for d in cfg.devices]
        self.gpu_workers = [
            GpuWorker(core=self.core, device=d, index=i, lock=self.locks[d], queue=self.gpu_queues[d],
                      handoff=handoff, hooks=self.hooks, prestage=cfg.prestage_uploads, urgent_only=urgent)
            for d, i, urgent in workers
        ]  # fmt: skip
        self.finalizers = [
            Finalizer(core=self.core, index=i, queue=self.finalize_queue, hooks=self.hooks)
            for i in range(cfg.finalizer_workers)
        ]
        for t in (*self.gpu_workers, *self.finalizers, self.dispatcher, *self.feeders):
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
        job: Job = self.core.call(ev.Submitted(request))
        return JobHandle(self, job)

    def get(self, job_id: str) -> JobHandle:
        return JobHandle(self, self.core.query(lambda core: core.lookup(job_id)))

    def cancel(self, job_id: str) -> bool:
        """Cancel a queued or running job; False if it had already finished."""
        done: bool = self.core.call(ev.Cancelled(job_id))
        self.dispatcher.wake()  # a parked batch of it is dropped now
        return done

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
        view = self.core.query(lambda core: core.view())
        now = time.perf_counter()
        busy = {d: busy_seconds(lk.snapshot(), self._started, now) for d, lk in self.locks.items()}
        wall = max(now - self._started, 1e-9)
        worker_states = [w.status() for w in self.gpu_workers]
        return EngineStats(
            srs=self.srs.status(),
            queues=QueueStats(
                intake=len(self.scheduler),
                synthesis=view.synthesis_queued,
                gpu={d: len(q) for d, q in self.gpu_queues.items()},
                finalize=len(self.finalize_queue),
                device_room=self.dispatcher.parked,
            ),
            synthesis_workers=SynthesisStats(
                workers=self.config.synthesis_workers,
                busy=self._pool.busy() if self._pool is not None else 0,
                pids=self._pool.worker_pids() if self._pool is not None else [],
            ),
            gpu_workers=[
                GpuWorkerStats(
                    w.device, w.index, w.state, w.job, w.partition, view.families.get(w.job or "", "")
                )
                for w in worker_states
            ],
            devices={d: self._device_info(d) for d in self.config.devices},
            jobs_in_flight=view.in_flight,
            recent_jobs=view.recent,
            completed_by_family=view.by_family.get("completed", {}),
            failed_by_family=view.by_family.get("failed", {}),
            memory=MemoryStats.of(self.budget.snapshot()),
            jobs=view.jobs,
            jobs_by_kind={k: KindCounts(**v) for k, v in view.by_kind.items()},
            counters=view.counters,
            gpu_busy=GpuBusy(
                per_device={d: b / wall for d, b in busy.items()},
                fraction=self.gpu_busy(self._started, now),
                seconds=busy,
            ),
        )

    def _device_info(self, device: int) -> DeviceStats:
        """The device's name and memory as its backend reports them (0 where unknown)."""
        try:
            be = self.backends[device]
            desc, mem = be.describe(), be.memory_info()
        except Exception as exc:  # a status query must answer even when a device is unwell
            return DeviceStats(f"device {device} ({type(exc).__name__})")
        return DeviceStats(
            name=str(desc.get("device") or desc.get("label") or f"device {device}"),
            total_bytes=int(mem.get("total") or 0),
            free_bytes=int(mem.get("free") or 0),
            resident_bytes=int(mem.get("resident") or 0),
        )

    def add_listener(self, fn: Callable[[JobResult, ProofRequest], None]) -> None:
        """Call `fn(result, request)` once per job as it reaches its terminal status (metrics, journals);
        it runs on the core's loop, so it must be quick."""
        self.core.query(lambda core: core.add_listener(fn))

    def gpu_busy(self, since: float, until: float | None = None) -> float:
        """Fraction of [since, until] (perf_counter) in which some device held its lock."""
        until = time.perf_counter() if until is None else until
        intervals = [iv for lk in self.locks.values() for iv in lk.snapshot()]
        return busy_seconds(intervals, since, until) / max(until - since, 1e-9)

    def working_set(self, circuit: str) -> work.WorkingSet:
        """One partition's bytes under this engine's settings (work.working_set's model)."""
        return self.dispatcher.working_set(circuit)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until no job is in flight and every unit has given back its memory."""
        return self.core.wait_idle(timeout)

    @property
    def pool(self) -> SynthPool:
        """The synthesis pool, started on first use (by a feeder thread)."""
        with self._pool_lock:  # two feeders may ask first at once
            if self._pool is None:
                cfg = self.config
                self._pool = SynthPool(
                    cfg.synthesis_workers + (1 if self.urgent_lane else 0),
                    cache_dir=cfg.cache_dir,
                    threads_per_worker=cfg.synthesis_threads or None,
                )
            return self._pool

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking jobs; wait=True finishes the accepted ones, wait=False cancels them."""
        pending: list[str] | None = self.core.query(lambda core: None if core.closed else core.close())
        if pending is None:
            return
        if not wait:
            for job_id in pending:
                self.core.call(ev.Cancelled(job_id, JobStatus.CANCELLED, "cancelled: the engine shut down"))
            self.dispatcher.wake()
        self.scheduler.close()
        self.dispatcher.join()
        self.core.wait_idle()
        self.synth_queue.close()
        for q in self.gpu_queues.values():
            q.close()
        self.finalize_queue.close()
        for t in (*self.feeders, *self.gpu_workers, *self.finalizers):
            t.join()
        self.core.stop()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_pending=True)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(wait=exc[0] is None)

    # --- the seams the stages call ---
    def _cancel_synthesis(self, job_id: str) -> None:
        if self._pool is not None:
            self._pool.cancel(job_id)

    def _to_finalize(self, unit: ev.FinalizeWork) -> None:
        try:
            self.finalize_queue.put(unit.key, unit)
        except Exception:  # the queue closed under us: shutdown(wait=False)
            self.core.post(ev.UnitDropped(unit.unit_id))
