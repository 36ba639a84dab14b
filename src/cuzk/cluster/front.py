"""The fleet front: the engine's API over one engine actor per Ray node, and its gRPC daemon.

`Fleet` has the calls of `cuzk.engine.Engine` that the daemon and Python callers use (submit,
get, cancel, preload, evict, status, add_listener, wait_idle, shutdown), so the daemon's own
servicer, journal, status page and metrics serve a fleet unchanged (`FleetDaemon`, started by
`cuzk daemon` when the config has a `[cluster]` section).

How a job travels: `submit` puts it in the fleet queue; `_dispatch` asks the routing policy
(`cuzk.cluster.policy.plan`, the code the simulation measures) where each queued job goes and
calls that engine actor's `prove`, whose answer is the job's result. One collector thread waits
on those answers. An answer that is an actor or node failure means the engine is gone: its
jobs go back to the queue (`on_lost = "rerun"`, at most MAX_ATTEMPTS runs, as the daemon's
journal re-runs jobs after a restart) or are FAILED with the reason (`"fail"`). A job becomes
terminal in one place (`_finish`), once. A watcher thread places engines on nodes that join
and refreshes what each engine has hot.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cuzk.cluster.policy import POLICIES, HotFirst, JobSpec, NodeView, Policy, TableCosts, plan
from cuzk.cluster.stats import fleet_status, hot_circuits
from cuzk.engine.request import JobStatus, ProofRequest
from cuzk.engine.stats import EngineStats, job_counts
from cuzk.errors import (
    DeadlineExceededError,
    QueueFullError,
    ShuttingDownError,
    UnknownJobError,
    UsageError,
)

log = logging.getLogger("cuzk.cluster")

#: Runs of one job that lost engines may interrupt before it is failed (the journal's rule).
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class FleetConfig:
    """How the front finds Ray and places engines; `engine` is every engine's EngineConfig kwargs."""

    address: str = ""  # "": start a local Ray; "auto": the running cluster; or host:port / ray://...
    engines_per_node: int = 1
    num_cpus: float = 1.0  # Ray resources each engine actor holds
    num_gpus: float = 0.0
    resources: Mapping[str, float] = field(default_factory=dict)  # custom resources per engine
    slots: int = 2  # jobs an engine takes at once before the front holds them (policy.admissible)
    policy: str = "hot-first"
    on_lost: str = "rerun"  # jobs of a lost engine: "rerun" elsewhere or "fail" them
    watch_s: float = 2.0  # how often the watcher looks for joining nodes and refreshes hot sets
    engine: Mapping[str, Any] = field(default_factory=dict)
    runtime_env: Mapping[str, Any] | None = None  # passed to ray.init (e.g. env_vars for workers)
    ready_timeout_s: float = 600.0  # an engine that is not up by then is given up on

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise UsageError(f"cluster.policy: {self.policy!r}; policies are {', '.join(POLICIES)}")
        if self.on_lost not in ("rerun", "fail"):
            raise UsageError(f"on_lost: expected rerun or fail, got {self.on_lost!r}")
        if self.engines_per_node < 1 or self.slots < 1:
            raise UsageError("cluster.engines_per_node and cluster.slots must be at least 1")


@dataclass
class _Engine:
    engine_id: str
    ray_node: str
    actor: Any
    ready: bool = False
    alive: bool = True
    host: str = ""
    hot: frozenset[str] = frozenset()
    memory_total: int = 0
    memory_free: int = 0
    lost_reason: str = ""


class _Job:
    def __init__(self, request: ProofRequest, seq: int) -> None:
        self.request = request
        self.job_id = request.request_id
        self.spec = JobSpec(
            self.job_id, request.key_name, int(request.effective_priority), request.partition_count, seq
        )
        self.status = JobStatus.QUEUED
        self.engine: str | None = None
        self.ref: Any = None
        self.attempts = 0
        self.nodes: list[str] = []  # engines it ran on, in order
        self.result: Any = None
        self.done = threading.Event()
        self.queue_position = 0
        self.finished_at: float | None = None

    @property
    def finished(self) -> bool:
        return self.done.is_set()


class FleetHandle:
    """What `Fleet.submit` returns; the calls of cuzk.engine.JobHandle."""

    def __init__(self, fleet: Fleet, job: _Job) -> None:
        self._fleet, self._job = fleet, job
        self.job_id = job.job_id
        self.request_id = job.request.request_id

    @property
    def status(self) -> JobStatus:
        return self._job.status

    @property
    def queue_position(self) -> int:
        return self._job.queue_position

    @property
    def node(self) -> str | None:
        """The engine the job runs (or ran) on; None while it waits in the fleet queue."""
        return self._job.engine

    def done(self) -> bool:
        return self._job.finished

    def result(self, timeout: float | None = None) -> Any:
        if not self._job.done.wait(timeout):
            raise DeadlineExceededError(f"job {self.job_id} did not finish within {timeout} s")
        return self._job.result

    def cancel(self) -> bool:
        return self._fleet.cancel(self.job_id)


class Fleet:
    """A fleet of engines on a Ray cluster behind the Engine's calls (module docstring)."""

    def __init__(self, config: FleetConfig | None = None, *, queue_limit: int = 1000,
                 result_retention_s: float = 3600.0) -> None:  # fmt: skip
        import ray

        self.config = cfg = config or FleetConfig()
        self._ray = ray
        self._own_ray = not ray.is_initialized()
        if self._own_ray:
            # ray.init sets its own SIGTERM handler (exit at once); the daemon's drain must stay
            handlers = {}
            if threading.current_thread() is threading.main_thread():
                handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
            ray.init(
                address=cfg.address or None,
                runtime_env=dict(cfg.runtime_env) if cfg.runtime_env else None,
                include_dashboard=False,
                logging_level=logging.WARNING,
                log_to_driver=False,
            )
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
        # hot-first gathers same-circuit jobs on a node up to the engines' batch size
        batch = int(cfg.engine.get("max_batch_size", 1))
        self.policy: Policy = HotFirst(batch=batch) if cfg.policy == "hot-first" else POLICIES[cfg.policy]()
        self.costs = TableCosts()
        self.queue_limit = queue_limit
        self.result_retention_s = result_retention_s
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)  # any job or engine changed state
        self._engines: dict[str, _Engine] = {}
        self._jobs: dict[str, _Job] = {}
        self._queue: list[_Job] = []
        self._by_ref: dict[Any, _Job] = {}
        self._seq = itertools.count()
        self._listeners: list[Callable[[Any, ProofRequest], None]] = []
        self._closed = False
        self._stop = threading.Event()
        self.counters = {"submitted": 0, "completed": 0, "failed": 0, "cancelled": 0, "redispatched": 0}
        self._by_family: dict[str, dict[str, int]] = {"completed": {}, "failed": {}}
        self._threads = [
            threading.Thread(target=self._collect_loop, name="cuzk-fleet-collect", daemon=True),
            threading.Thread(target=self._watch_loop, name="cuzk-fleet-watch", daemon=True),
        ]
        self._place()
        if not self._engines:  # jobs wait in the front's queue until a node with the resources joins
            log.warning("no node of the Ray cluster has the resources of an engine (%s); waiting for one to join",
                        self._need())  # fmt: skip
        else:
            self.wait_engines(1, timeout=cfg.ready_timeout_s)
        for t in self._threads:
            t.start()

    # --- engines ---
    def _need(self) -> dict[str, float]:
        """The Ray resources a node needs for its engines (engines_per_node of them)."""
        cfg, n = self.config, self.config.engines_per_node
        need = {
            "CPU": cfg.num_cpus * n,
            "GPU": cfg.num_gpus * n,
            **{k: v * n for k, v in cfg.resources.items()},
        }
        return {k: v for k, v in need.items() if v > 0}

    def _fits(self, node: Mapping[str, Any]) -> bool:
        have = node.get("Resources", {})
        return all(have.get(k, 0.0) >= v for k, v in self._need().items())

    def _place(self) -> None:
        """One engine (or engines_per_node) on every alive node that has the resources and none yet."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from cuzk.cluster.actor import EngineNode

        cfg = self.config
        remote = self._ray.remote(EngineNode)
        for node in self._ray.nodes():
            nid = node["NodeID"]
            with self._lock:
                placed = any(e.ray_node == nid for e in self._engines.values())
                if not node.get("Alive"):
                    for e in self._engines.values():
                        if e.ray_node == nid and e.alive:
                            self._lose(e, "its Ray node died")
                    continue
            if placed or not self._fits(node):
                continue
            for i in range(cfg.engines_per_node):
                eid = f"{node.get('NodeManagerAddress', '?')}/{nid[:8]}/{i}"
                actor = remote.options(
                    num_cpus=cfg.num_cpus,
                    num_gpus=cfg.num_gpus,
                    resources=dict(cfg.resources),
                    scheduling_strategy=NodeAffinitySchedulingStrategy(nid, soft=False),
                    max_concurrency=1000,
                ).remote(eid, dict(cfg.engine))
                with self._lock:
                    self._engines[eid] = _Engine(eid, nid, actor)
                threading.Thread(target=self._bring_up, args=(eid,), daemon=True).start()

    def _bring_up(self, eid: str) -> None:
        e = self._engines[eid]
        try:
            info = self._ray.get(e.actor.info.remote(), timeout=self.config.ready_timeout_s)
            st = self._ray.get(e.actor.stats.remote(), timeout=self.config.ready_timeout_s)
        except Exception as exc:
            with self._lock:
                self._lose(e, f"did not start: {type(exc).__name__}: {exc}")
            return
        with self._lock:
            e.host = str(info.get("host", ""))
            self._refresh(e, st)
            e.ready = True
            log.info("engine %s is up on %s", eid, e.host)
            self._dispatch()
            self._changed.notify_all()

    def _refresh(self, e: _Engine, st: Mapping[str, Any]) -> None:
        e.hot = hot_circuits(st)
        mem = st.get("memory", {})
        e.memory_total, e.memory_free = int(mem.get("total", 0)), int(mem.get("available", 0))

    def wait_engines(self, count: int, timeout: float | None = None) -> bool:
        """Wait until at least `count` engines are up (a node that joins later brings its own)."""

        def up() -> int:
            return sum(e.ready and e.alive for e in self._engines.values())

        def settled() -> bool:  # enough engines, or every engine placed so far is lost
            return up() >= count or (bool(self._engines) and not any(e.alive for e in self._engines.values()))

        with self._changed:
            return self._changed.wait_for(settled, timeout) and up() >= count

    def engines(self) -> dict[str, dict[str, Any]]:
        """The engines: id -> {host, ray node, ready, alive, hot circuits, jobs in flight}."""
        with self._lock:
            return {
                eid: {"host": e.host, "ray_node": e.ray_node, "ready": e.ready, "alive": e.alive,
                      "hot": sorted(e.hot), "jobs": sum(1 for j in self._jobs.values()
                                                        if j.engine == eid and not j.finished),
                      "lost": e.lost_reason}
                for eid, e in self._engines.items()
            }  # fmt: skip

    def _lose(self, e: _Engine, why: str) -> None:
        """An engine is gone (caller holds the lock); its jobs are handled as their calls fail."""
        if e.alive:
            log.warning("engine %s lost: %s", e.engine_id, why)
        e.alive, e.lost_reason = False, why
        self._changed.notify_all()

    # --- the engine's API ---
    def submit(self, request: ProofRequest) -> FleetHandle:
        """Accept a job into the fleet queue (or return the one with the same request id)."""
        if not isinstance(request, ProofRequest):
            raise UsageError(f"submit takes a ProofRequest, not {type(request).__name__}")
        if request.circuit is not None:
            from cuzk.circuits import get_circuit

            get_circuit(request.circuit)  # UnknownCircuitError now, not on a node
        if not request.request_id:
            request = dataclasses.replace(request, request_id=f"job-{uuid.uuid4().hex[:12]}")
        with self._lock:
            if self._closed:
                raise ShuttingDownError("the fleet is shutting down and accepts no new jobs")
            self._prune()
            known = self._jobs.get(request.request_id)
            if known is not None:
                return FleetHandle(self, known)
            active = sum(1 for j in self._jobs.values() if not j.finished)
            if active >= self.queue_limit:
                raise QueueFullError(f"{active} jobs in flight, the queue limit is {self.queue_limit}")
            job = _Job(request, next(self._seq))
            job.queue_position = len(self._queue)
            self._jobs[job.job_id] = job
            self._queue.append(job)
            self.counters["submitted"] += 1
            self._dispatch()
        return FleetHandle(self, job)

    def get(self, job_id: str) -> FleetHandle:
        with self._lock:
            self._prune()
            job = self._jobs.get(job_id)
        if job is None:
            raise UnknownJobError(f"no job {job_id!r} (never submitted, or its result was pruned)")
        return FleetHandle(self, job)

    def cancel(self, job_id: str) -> bool:
        """Cancel a queued job here, or a dispatched one on its engine; False if it had finished."""
        with self._lock:
            job = self.get(job_id)._job
            if job.finished:
                return False
            if job.engine is None:
                self._queue.remove(job)
                return self._finish(job, JobStatus.CANCELLED, "cancelled")
            actor = self._engines[job.engine].actor
        with contextlib.suppress(Exception):  # the engine is gone: the job is lost with it; cancel here
            self._ray.get(actor.cancel.remote(job_id), timeout=30)
        with self._lock:
            return self._finish(job, JobStatus.CANCELLED, "cancelled")

    def _targets(self, nodes: list[str] | None) -> list[_Engine]:
        with self._lock:
            live = [e for e in self._engines.values() if e.alive and e.ready]
        if not nodes:
            return live
        picked = [e for e in live if any(n in (e.engine_id, e.ray_node, e.host) or
                                         e.engine_id.startswith(n) for n in nodes)]  # fmt: skip
        if not picked:
            raise UsageError(
                f"no live engine matches {', '.join(nodes)}; engines: {', '.join(self._engines)}"
            )
        return picked

    def preload(self, circuit: str, *, nodes: list[str] | None = None) -> dict[Any, tuple[bool, float]]:
        """Load the circuit on every engine (or those named): {(engine, device): (already, seconds)}."""
        from cuzk.circuits import get_circuit

        get_circuit(circuit)
        out: dict[Any, tuple[bool, float]] = {}
        for e, res in self._each(self._targets(nodes), "preload", circuit):
            out.update({(e.engine_id, d): v for d, v in res.items()})
            with self._lock:
                e.hot = e.hot | {circuit}
        return out

    def evict(self, circuit: str, *, nodes: list[str] | None = None) -> dict[Any, tuple[bool, int]]:
        """Drop the circuit from every engine (or those named): {(engine, device): (was_loaded, bytes)}."""
        out: dict[Any, tuple[bool, int]] = {}
        for e, res in self._each(self._targets(nodes), "evict", circuit):
            out.update({(e.engine_id, d): v for d, v in res.items()})
            with self._lock:
                e.hot = e.hot - {circuit}
        return out

    def _each(self, engines: list[_Engine], method: str, *args: Any) -> list[tuple[_Engine, Any]]:
        refs = [(e, getattr(e.actor, method).remote(*args)) for e in engines]
        out = []
        for e, ref in refs:
            try:
                out.append((e, self._ray.get(ref)))
            except self._ray.exceptions.RayTaskError as exc:
                raise exc.as_instanceof_cause() from None
        return out

    def status(self) -> EngineStats:
        """The fleet as one engine's status, typed as `Engine.status()` is (the daemon reads it)."""
        return EngineStats.from_dict(self.fleet_status())

    def fleet_status(self) -> dict[str, Any]:
        """The fleet as one engine's status as plain data (cuzk.cluster.stats.fleet_status), plus
        `fleet`: the nodes, `fleet_queue` and each row's node."""
        with self._lock:
            engines = [e for e in self._engines.values() if e.alive and e.ready]
        refs = {e.engine_id: e.actor.stats.remote() for e in engines}
        per: dict[str, Any] = {}
        for eid, ref in refs.items():
            try:
                per[eid] = self._ray.get(ref, timeout=10)
            except Exception:
                per[eid] = None
        with self._lock:
            for eid, st in per.items():
                if st is not None:
                    self._refresh(self._engines[eid], st)
            jobs, by_kind = job_counts(
                (j.status.value, j.finished, j.request.family, bool(j.engine)) for j in self._jobs.values()
            )
            nodes = []
            for eid, e in self._engines.items():
                st = per.get(eid)
                busy = (st or {}).get("gpu_busy", {}).get("fraction", 0.0)
                nodes.append({
                    "engine": eid, "host": e.host, "ray_node": e.ray_node, "alive": e.alive,
                    "ready": e.ready, "lost": e.lost_reason, "hot": sorted(e.hot),
                    "jobs": sum(1 for j in self._jobs.values() if j.engine == eid and not j.finished),
                    "queue": int((st or {}).get("queues", {}).get("intake", 0)),
                    "devices": len((st or {}).get("devices", {})), "busy": float(busy),
                    "memory_total": e.memory_total, "memory_free": e.memory_free,
                })  # fmt: skip
            front = {
                "queued": len(self._queue),
                "counters": dict(self.counters),
                "jobs": jobs,
                "jobs_by_kind": by_kind,
                "completed_by_family": dict(self._by_family["completed"]),
                "failed_by_family": dict(self._by_family["failed"]),
                "nodes": nodes,
            }
        return fleet_status(per, front)

    def add_listener(self, fn: Callable[[Any, ProofRequest], None]) -> None:
        """Call `fn(result, request)` once per job as it reaches its terminal status."""
        with self._lock:
            self._listeners.append(fn)

    def wait_idle(self, timeout: float | None = None) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: all(j.finished for j in self._jobs.values()), timeout)

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking jobs; wait=True lets the accepted ones finish, wait=False cancels them."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            pending = [j for j in self._jobs.values() if not j.finished]
        if not wait:
            for j in pending:
                self.cancel(j.job_id)
        self.wait_idle()
        self._stop.set()
        with self._changed:
            self._changed.notify_all()
        for t in self._threads:
            if t.is_alive():
                t.join()
        for e in list(self._engines.values()):
            if e.alive:
                try:
                    self._ray.get(e.actor.shutdown.remote(True), timeout=60)
                except Exception as exc:
                    log.debug("engine %s did not shut down cleanly: %s", e.engine_id, exc)
            self._ray.kill(e.actor)
        if self._own_ray:
            self._ray.shutdown()

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(wait=exc[0] is None)

    # --- placement ---
    def _view(self, e: _Engine) -> NodeView:
        mine = [j for j in self._jobs.values() if j.engine == e.engine_id and not j.finished]
        backlog: dict[int, float] = {}
        waiting: dict[str, int] = {}
        loading: dict[str, float] = {}
        for j in mine:
            c = j.spec.circuit
            backlog[j.spec.priority] = backlog.get(
                j.spec.priority, 0.0
            ) + j.spec.partitions * self.costs.partition_s(c)
            waiting[c] = waiting.get(c, 0) + 1
            if c not in e.hot:
                loading[c] = self.costs.load_s(c)
        return NodeView(
            node_id=e.engine_id, slots=self.config.slots, in_flight=len(mine), hot=e.hot, loading=loading,
            load_queue_s=sum(loading.values()), backlog_s=backlog, memory_total=e.memory_total,
            memory_free=e.memory_free, waiting=waiting, alive=e.alive and e.ready,
        )  # fmt: skip

    def _dispatch(self) -> None:
        """Place what the policy places now (caller holds the lock)."""
        if not self._queue:
            return
        views = [self._view(e) for e in self._engines.values()]
        by_id = {j.job_id: j for j in self._queue}
        for spec, eid in plan([j.spec for j in self._queue], views, self.policy, self.costs):
            job = by_id[spec.job_id]
            self._queue.remove(job)
            job.engine = eid
            job.nodes.append(eid)
            job.attempts += 1
            job.status = JobStatus.RUNNING
            job.ref = self._engines[eid].actor.prove.remote(job.request)
            self._by_ref[job.ref] = job
            log.debug("job %s -> %s", job.job_id, eid)
        self._changed.notify_all()

    def _collect_loop(self) -> None:
        ray = self._ray
        while not self._stop.is_set():
            with self._changed:
                refs = list(self._by_ref)
                if not refs:
                    self._changed.wait(1.0)  # woken by a dispatch; the timeout only re-checks _stop
                    continue
            ready, _ = ray.wait(refs, num_returns=1, timeout=0.5)
            for ref in ready:
                self._collect(ref)

    def _collect(self, ref: Any) -> None:
        ray = self._ray
        with self._lock:
            job = self._by_ref.pop(ref, None)
        if job is None:
            return
        try:
            fields = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the engine refused or failed the job itself
            with self._lock:
                self._finish(job, JobStatus.FAILED, _cause(exc))
            return
        except ray.exceptions.RayError as exc:  # the actor or its node is gone
            with self._lock:
                e = self._engines[job.engine or ""]
                self._lose(e, f"{type(exc).__name__}")
                self._lost(job, e)
            return
        from cuzk.cluster.actor import to_result

        eid = job.engine or ""
        result = to_result(fields, eid)
        with self._lock:
            done_on = self._engines.get(eid)
            if done_on is not None and result.status is JobStatus.COMPLETED:
                done_on.hot = done_on.hot | {job.spec.circuit}
                self._learn(job, result)
            self._finish(job, result.status, result.error, result)

    def _lost(self, job: _Job, e: _Engine) -> None:
        """A job whose engine died under it: re-run it elsewhere or fail it (caller holds the lock)."""
        if job.finished:
            return
        why = f"engine {e.engine_id} was lost while the job ran ({e.lost_reason})"
        if self.config.on_lost == "rerun" and job.attempts < MAX_ATTEMPTS:
            job.engine, job.ref, job.status = None, None, JobStatus.QUEUED
            self._queue.append(job)
            self.counters["redispatched"] += 1
            log.warning("%s; re-dispatching %s (run %d)", why, job.job_id, job.attempts + 1)
            self._dispatch()
            return
        if self.config.on_lost == "rerun":
            why = f"{why}; lost {job.attempts} times, not re-run again"
        self._finish(job, JobStatus.FAILED, why)

    def _learn(self, job: _Job, result: Any) -> None:
        """The costs the policy plans with, from what finished jobs took."""
        totals = result.timeline.totals()
        spans = result.timeline.spans
        c = job.spec.circuit
        if spans:
            wall = max(s.end for s in spans) - min(s.start for s in spans) - totals.get("srs_load", 0.0)
            per = max(wall, 0.0) / max(job.spec.partitions, 1)
            old = self.costs.partition.get(c)
            self.costs.partition[c] = per if old is None else 0.8 * old + 0.2 * per
        if totals.get("srs_load", 0.0) > 0:
            self.costs.load[c] = totals["srs_load"]

    def _finish(self, job: _Job, status: JobStatus, error: str | None = None, result: Any = None) -> bool:
        """The one place a job becomes terminal (caller holds the lock); False if it already was."""
        from cuzk.engine.engine import JobResult

        if job.finished:
            return False
        if result is None or result.status is not status:
            result = JobResult(job.job_id, job.request.request_id, status, error=error)
        job.status, job.result, job.finished_at = status, result, time.monotonic()
        if job.ref is not None:
            self._by_ref.pop(job.ref, None)
        self.counters[status.value] = self.counters.get(status.value, 0) + 1
        if status.value in self._by_family:
            fam = self._by_family[status.value]
            fam[job.request.family] = fam.get(job.request.family, 0) + 1
        job.done.set()
        for fn in list(self._listeners):
            try:
                fn(result, job.request)
            except Exception:  # a listener's bug must not lose the job's status
                log.exception("listener failed for job %s", job.job_id)
        self._dispatch()
        self._changed.notify_all()
        return True

    def _prune(self) -> None:
        cutoff = time.monotonic() - self.result_retention_s
        for jid in [
            j.job_id for j in self._jobs.values() if j.finished_at is not None and j.finished_at <= cutoff
        ]:
            del self._jobs[jid]

    def _watch_loop(self) -> None:
        """Place engines on nodes that joined, notice nodes that left, refresh hot sets."""
        while not self._stop.wait(self.config.watch_s):
            try:
                self._place()
            except Exception as exc:  # Ray's view may be briefly unavailable; try again next round
                log.debug("placement round failed: %s", exc)


def _cause(exc: Any) -> str:
    """The message of the exception a Ray task raised, without Ray's wrapper lines."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return str(cause) or type(cause).__name__
    return str(exc).strip().splitlines()[-1]
