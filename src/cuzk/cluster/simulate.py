"""A discrete-event simulation of the fleet's routing policy (issue 33, item 5).

It runs the same `cuzk.cluster.policy` code as the fleet front over a modelled fleet of GPU
nodes, so a policy can be judged at a scale no test machine has: 100+ nodes, hours of
PoRep sectors streaming in, every provider's WindowPoSt deadlines (HIGH, every 30 minutes) and
rare WinningPoSt jobs (CRITICAL, a block needs its proof within ~25 s).

The node model is the engine's, reduced to what placement changes:

- one GPU that proves one partition at a time; at each partition boundary it takes the
  highest-priority job whose parameters are hot (FIFO within a priority), as the engine's
  scheduler does;
- parameters (SRS) that must be hot before a job's partitions run; one loader per node, loads
  one after another; a node holds `param_bytes` of parameters and evicts the least recently
  used entry that no job on it needs to make room;
- the front keeps jobs no node can take (`policy.admissible`) and places them as nodes free up.

Every cost comes from a named figure (`FIGURES`). Seeded and deterministic: the same scenario
and seed give the same numbers. `benchmarks/fleet_sim.py` prints the table and draws the plot.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cuzk.cluster.policy import CRITICAL, HIGH, NORMAL, JobSpec, NodeView, Policy, TableCosts, plan

GIB = 1 << 30


@dataclass(frozen=True)
class Figure:
    value: float
    source: str


#: Per-partition GPU seconds, SRS sizes and load times at the real sizes, each with its source.
FIGURES: dict[str, dict[str, Figure]] = {
    "porep": {
        "partition_s": Figure(
            3.7,
            "CONTEXT.md: the reference's sustained 36.7-37.7 s per 10-partition "
            "32 GiB PoRep (130,278,541 constraints per partition)",
        ),
        "srs_bytes": Figure(44 * GIB, "CONTEXT.md: PoRep C2 params 44 GiB"),
        "load_s": Figure(
            60.0,
            "CONTEXT.md: SRS residency saves 30-90 s per proof; the middle, 60 s "
            "for 44 GiB (0.73 GiB/s), scales the others by size",
        ),
    },
    "wpost": {
        "partition_s": Figure(3.56, "PoRep's 3.7 s scaled by constraints (125,279,217 / 130,278,541)"),
        "srs_bytes": Figure(57 * GIB, "CONTEXT.md: WindowPoSt params 57 GiB"),
        "load_s": Figure(77.7, "57 GiB at PoRep's 0.73 GiB/s"),
    },
    "winning": {
        "partition_s": Figure(
            0.11,
            "PoRep's 3.7 s scaled by constraints (370,590) = 0.01 s, plus 0.1 s "
            "per job fixed (an assumption: transfers, assembly)",
        ),
        "srs_bytes": Figure(184 * (1 << 20), "CONTEXT.md: WinningPoSt params 184 MiB"),
        "load_s": Figure(0.25, "184 MiB at PoRep's 0.73 GiB/s"),
    },
}
PARTITIONS = {"porep": 10, "wpost": 1, "winning": 1}
PRIORITY = {"porep": NORMAL, "wpost": HIGH, "winning": CRITICAL}
WINNING_TARGET_S = 25.0  # a block needs its WinningPoSt within about this
DEADLINE_S = 1800.0  # a WindowPoSt deadline window: 30 minutes, 48 a day


def figure_costs() -> TableCosts:
    return TableCosts(
        partition={c: f["partition_s"].value for c, f in FIGURES.items()},
        load={c: f["load_s"].value for c, f in FIGURES.items()},
        size={c: int(f["srs_bytes"].value) for c, f in FIGURES.items()},
    )


@dataclass(frozen=True)
class Scenario:
    """A fleet and its work. The defaults are the table in docs/BENCHMARKS.md."""

    nodes: int = 128
    hours: float = 2.0
    seed: int = 1
    slots: int = 2  # jobs a node takes at once (one on the GPU, one ready)
    param_bytes: int = 100 * GIB  # one of PoRep's 44 GiB and WindowPoSt's 57 GiB, not both (see docs)
    porep_load: float = 0.85  # PoRep sectors arrive at this fraction of the fleet's GPU capacity
    providers: int = 40
    wpost_partitions: tuple[int, int] = (1, 4)  # per provider and deadline, drawn once per provider
    winning_every_s: float = 60.0  # mean gap between WinningPoSt jobs, fleet-wide (Poisson)


@dataclass
class _Job:
    spec: JobSpec
    arrived: float
    due: float | None = None
    left: int = 0  # partitions not yet proved
    started: bool = False
    finished: float | None = None


@dataclass
class _Node:
    node_id: str
    capacity: int
    hot: dict[str, float] = field(default_factory=dict)  # circuit -> last used (LRU)
    loading: tuple[str, float] | None = None  # circuit, done at
    load_queue: list[str] = field(default_factory=list)
    jobs: list[_Job] = field(default_factory=list)
    gpu_until: float = 0.0
    gpu_job: _Job | None = None
    busy_s: float = 0.0
    loads: int = 0
    view: NodeView | None = None  # the router's view, rebuilt after the node changes


class Simulation:
    """One run of a scenario under one policy; `run()` returns the figures."""

    def __init__(self, scenario: Scenario, policy: Policy) -> None:
        self.sc = scenario
        self.policy = policy
        self.costs = figure_costs()
        self.rng = random.Random(scenario.seed)
        self.now = 0.0
        self.end = scenario.hours * 3600.0
        self._events: list[tuple[float, int, str, Any]] = []
        self._seq = itertools.count()
        self.nodes = {f"n{i:03d}": _Node(f"n{i:03d}", scenario.param_bytes) for i in range(scenario.nodes)}
        self.queues: dict[tuple[str, int], list[_Job]] = {}  # the front's queue per kind, oldest first
        self.jobs: list[_Job] = []

    # --- events ---
    def _at(self, t: float, kind: str, data: Any = None) -> None:
        heapq.heappush(self._events, (t, next(self._seq), kind, data))

    def _arrivals(self) -> None:
        sc, rng, c = self.sc, self.rng, self.costs
        per_provider = [rng.randint(*sc.wpost_partitions) for _ in range(sc.providers)]
        offsets = [rng.uniform(0, DEADLINE_S) for _ in range(sc.providers)]
        wpost_gpu_s = sum(per_provider) * c.partition_s("wpost") / DEADLINE_S  # GPU-seconds per second
        capacity = sc.nodes - wpost_gpu_s
        sector_s = PARTITIONS["porep"] * c.partition_s("porep")
        rate = sc.porep_load * capacity / sector_s  # sectors per second
        t = rng.expovariate(rate)
        while t < self.end:
            self._at(t, "arrive", "porep")
            t += rng.expovariate(rate)
        for p in range(sc.providers):
            t = offsets[p]
            while t < self.end:
                for _ in range(per_provider[p]):
                    self._at(t, "arrive", ("wpost", t + DEADLINE_S))
                t += DEADLINE_S
        t = rng.expovariate(1 / sc.winning_every_s)
        while t < self.end:
            self._at(t, "arrive", "winning")
            t += rng.expovariate(1 / sc.winning_every_s)

    def run(self) -> dict[str, Any]:
        self._arrivals()
        while self._events:
            t, _, kind, data = heapq.heappop(self._events)
            if t > self.end:
                break
            self.now = t
            if kind == "arrive":
                circuit, due = data if isinstance(data, tuple) else (data, None)
                spec = JobSpec(f"j{len(self.jobs)}", circuit, PRIORITY[circuit], PARTITIONS[circuit],
                               seq=len(self.jobs))  # fmt: skip
                job = _Job(spec, t, due, left=spec.partitions)
                self.jobs.append(job)
                self.queues.setdefault((spec.circuit, spec.priority), []).append(job)
                self._dispatch()
            elif kind == "loaded":
                node = self.nodes[data]
                assert node.loading is not None
                node.hot[node.loading[0]] = t
                node.loading = None
                node.view = None
                node.loads += 1
                self._start_load(node)
                self._start_gpu(node)
            elif kind == "partition":
                self._partition_done(self.nodes[data])
        return self.figures()

    # --- the front ---
    def _dispatch(self) -> None:
        if not any(self.queues.values()):
            return
        views = [n.view or self._view(n) for n in self.nodes.values()]
        # One plan places at most nodes x (slots + 1) jobs of a kind (a slot each, or one outranking
        # job per node; CRITICAL ones are rare), so only the oldest that many of each kind can move:
        # the same plan as over the whole queue, without sorting thousands of waiting sectors.
        cap = len(self.nodes) * (self.sc.slots + 1)
        heads = [j for q in self.queues.values() for j in q[:cap]]
        by_id = {j.spec.job_id: j for j in heads}
        placed = plan([j.spec for j in heads], views, self.policy, self.costs)
        for spec, node_id in placed:
            job = by_id.pop(spec.job_id)
            node = self.nodes[node_id]
            node.jobs.append(job)
            node.view = None
            c = spec.circuit
            if (
                c not in node.hot
                and c not in node.load_queue
                and (node.loading is None or node.loading[0] != c)
            ):
                node.load_queue.append(c)
                self._start_load(node)
            self._start_gpu(node)
        if placed:
            moved = {spec.job_id for spec, _ in placed}
            for k, q in self.queues.items():
                self.queues[k] = [j for j in q[:cap] if j.spec.job_id not in moved] + q[cap:]

    def _view(self, n: _Node) -> NodeView:
        c = self.costs
        backlog: dict[int, float] = {}
        waiting: dict[str, int] = {}
        for j in n.jobs:
            backlog[j.spec.priority] = backlog.get(j.spec.priority, 0.0) + j.left * c.partition_s(
                j.spec.circuit
            )
            if not j.started:
                waiting[j.spec.circuit] = waiting.get(j.spec.circuit, 0) + 1
        loading: dict[str, float] = {}
        ahead = 0.0
        if n.loading is not None:
            ahead = n.loading[1] - self.now
            loading[n.loading[0]] = ahead
        for q in n.load_queue:
            ahead += c.load_s(q)
            loading[q] = ahead
        used = sum(c.srs_bytes(h) for h in n.hot)
        n.view = NodeView(
            node_id=n.node_id, slots=self.sc.slots, in_flight=len(n.jobs), hot=frozenset(n.hot),
            loading=loading, load_queue_s=ahead, backlog_s=backlog,
            current_s=max(0.0, n.gpu_until - self.now) if n.gpu_job else 0.0,
            memory_total=n.capacity, memory_free=n.capacity - used, waiting=waiting,
        )  # fmt: skip
        return n.view

    # --- a node ---
    def _needed(self, n: _Node) -> set[str]:
        return {j.spec.circuit for j in n.jobs}

    def _start_load(self, n: _Node) -> None:
        """Start the next queued load once it fits, evicting least recently used unneeded entries."""
        if n.loading is not None or not n.load_queue:
            return
        c = n.load_queue[0]
        size = self.costs.srs_bytes
        needed = self._needed(n)
        used = sum(size(h) for h in n.hot)
        for h in sorted((h for h in n.hot if h not in needed), key=lambda h: n.hot[h]):
            if used + size(c) <= n.capacity:
                break
            del n.hot[h]
            used -= size(h)
        if used + size(c) > n.capacity:
            return  # retried when a job on the node finishes and frees its entry
        n.load_queue.pop(0)
        n.view = None
        n.loading = (c, self.now + self.costs.load_s(c))
        self._at(n.loading[1], "loaded", n.node_id)

    def _start_gpu(self, n: _Node) -> None:
        if n.gpu_job is not None:
            return
        ready = [j for j in n.jobs if j.left > 0 and j.spec.circuit in n.hot]
        if not ready:
            return
        job = min(ready, key=lambda j: (-j.spec.priority, j.spec.seq))
        job.started = True
        n.view = None
        d = self.costs.partition_s(job.spec.circuit)
        n.gpu_job, n.gpu_until = job, self.now + d
        n.hot[job.spec.circuit] = self.now
        n.busy_s += min(d, max(0.0, self.end - self.now))
        self._at(n.gpu_until, "partition", n.node_id)

    def _partition_done(self, n: _Node) -> None:
        job = n.gpu_job
        assert job is not None
        n.gpu_job = None
        n.view = None
        job.left -= 1
        if job.left == 0:
            job.finished = self.now
            n.jobs.remove(job)
            self._start_load(n)  # its entry may be evictable now
        self._start_gpu(n)
        if job.left == 0:
            self._dispatch()

    # --- the figures ---
    def figures(self) -> dict[str, Any]:
        hours = self.end / 3600.0
        porep = [j for j in self.jobs if j.spec.circuit == "porep" and j.finished is not None]
        win = sorted(
            (j.finished if j.finished is not None else self.end) - j.arrived
            for j in self.jobs if j.spec.circuit == "winning"
        )  # fmt: skip
        wpost = [
            j for j in self.jobs if j.spec.circuit == "wpost" and j.due is not None and j.due <= self.end
        ]
        missed = sum(1 for j in wpost if j.finished is None or j.finished > (j.due or 0))
        return {
            "policy": self.policy.name,
            "nodes": self.sc.nodes,
            "hours": hours,
            "porep_sectors_per_hour": len(porep) / hours,
            "gpu_utilization": sum(n.busy_s for n in self.nodes.values()) / (len(self.nodes) * self.end),
            "winning_jobs": len(win),
            "winning_p50_s": _quantile(win, 0.50),
            "winning_p99_s": _quantile(win, 0.99),
            "winning_over_target": sum(1 for w in win if w > WINNING_TARGET_S),
            "wpost_due": len(wpost),
            "wpost_missed": missed,
            "srs_loads": sum(n.loads for n in self.nodes.values()),
            "porep_queued_at_end": sum(
                1 for j in self.jobs if j.spec.circuit == "porep" and j.finished is None
            ),
        }


def _quantile(values: list[float], q: float) -> float:
    """The nearest-rank quantile of sorted values (0.0 for none)."""
    if not values:
        return 0.0
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


def compare(scenario: Scenario, policies: Mapping[str, Policy] | None = None) -> list[dict[str, Any]]:
    """Each policy over the same scenario (the same arrivals: one seed)."""
    from cuzk.cluster.policy import HotFirst, LeastLoaded, RoundRobin

    chosen = policies or {"hot-first": HotFirst(), "round-robin": RoundRobin(), "least-loaded": LeastLoaded()}
    return [Simulation(scenario, p).run() for p in chosen.values()]
