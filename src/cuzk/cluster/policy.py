"""Where a proof job runs in a fleet of engines: one routing policy over plain data.

The fleet front (cuzk.cluster.front) and the fleet simulation (cuzk.cluster.simulate) both
describe each node as a `NodeView` and each job as a `JobSpec`, and both call `plan` with the
same `Policy`; nothing here imports Ray, so the policy the simulation measures is the one the
front runs.

The policy (`HotFirst`), as issue 33 puts it:

- a job goes to a node whose parameters (SRS) for its circuit are hot, when one can take it;
- else to the node that can load them soonest (a load already under way, or the node's
  loader queue plus the load time);
- but a job waits in the fleet queue when a hot node that is full now will start it sooner
  than a load elsewhere would finish (no load, no eviction, for nothing);
- within that, by the engines' own backpressure: the work queued ahead of the job at its
  priority or above, jobs in flight against the node's slots, free memory;
- a CRITICAL job goes where it can start first anywhere in the fleet (an engine gives it the
  next partition boundary), and is never held back by a full node;
- same-circuit jobs may batch: a node that already holds not-yet-started jobs of the circuit
  is preferred among the hot ones, up to the engines' batch size.

`RoundRobin` and `LeastLoaded` are the baselines the simulation compares it against. All
three share the admission rule (`admissible`), so the comparison is of placement alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

#: Priority numbers as cuzk.engine.Priority (the reference's wire enum): higher runs first.
LOW, NORMAL, HIGH, CRITICAL = 1, 2, 3, 4


@dataclass(frozen=True)
class JobSpec:
    """A job as the router sees it."""

    job_id: str
    circuit: str
    priority: int = NORMAL
    partitions: int = 1
    seq: int = 0  # arrival order: FIFO within a priority


@dataclass(frozen=True)
class NodeView:
    """One engine (a node, or a GPU set of one) as the router sees it; all times in seconds."""

    node_id: str
    slots: int = 2  # jobs it takes at once; beyond that the front keeps them (CRITICAL excepted)
    in_flight: int = 0  # jobs dispatched to it and unfinished
    hot: frozenset[str] = frozenset()  # circuits whose SRS is loaded
    loading: Mapping[str, float] = field(default_factory=dict)  # circuit -> seconds until loaded
    load_queue_s: float = 0.0  # seconds of loads ahead of a new one (one loader per node)
    backlog_s: Mapping[int, float] = field(default_factory=dict)  # priority -> partition work queued
    current_s: float = 0.0  # seconds left of the partition on the GPU now: the next boundary
    memory_total: int = 0  # the engine's budget in bytes (0: unknown, not a limit)
    memory_free: int = 0
    waiting: Mapping[str, int] = field(default_factory=dict)  # circuit -> queued jobs not started
    alive: bool = True

    def wait_s(self, priority: int) -> float:
        """Seconds until a job of this priority reaches the GPU here: work at its priority or above."""
        return self.current_s + sum(s for p, s in self.backlog_s.items() if p >= priority)

    def ready_s(self, circuit: str, costs: Costs) -> float:
        """Seconds until the circuit's SRS is hot here."""
        if circuit in self.hot:
            return 0.0
        if circuit in self.loading:
            return self.loading[circuit]
        return self.load_queue_s + costs.load_s(circuit)


class Costs(Protocol):
    """What work costs: the front learns it from finished jobs, the simulation from its figures."""

    def partition_s(self, circuit: str) -> float: ...
    def load_s(self, circuit: str) -> float: ...
    def srs_bytes(self, circuit: str) -> int: ...


@dataclass
class TableCosts:
    """Costs from tables, with defaults for circuits not in them."""

    partition: dict[str, float] = field(default_factory=dict)
    load: dict[str, float] = field(default_factory=dict)
    size: dict[str, int] = field(default_factory=dict)
    default_partition_s: float = 1.0
    default_load_s: float = 1.0

    def partition_s(self, circuit: str) -> float:
        return self.partition.get(circuit, self.default_partition_s)

    def load_s(self, circuit: str) -> float:
        return self.load.get(circuit, self.default_load_s)

    def srs_bytes(self, circuit: str) -> int:
        return self.size.get(circuit, 0)


def admissible(job: JobSpec, node: NodeView, costs: Costs) -> bool:
    """The node is alive, could ever hold the SRS, and has a free slot or will run the job next.

    The slot cap keeps a node's queue short so that placement stays open; a job that outranks
    every job queued on the node waits only for its next partition boundary there, so it needs
    no slot (a CRITICAL job never does).
    """
    if not node.alive:
        return False
    if node.memory_total and costs.srs_bytes(job.circuit) > node.memory_total:
        return False
    if job.priority >= CRITICAL or node.in_flight < node.slots:
        return True
    return not any(s > 0 for p, s in node.backlog_s.items() if p >= job.priority)


class Policy(Protocol):
    name: str

    def choose(self, job: JobSpec, nodes: Sequence[NodeView], costs: Costs) -> str | None:
        """The node_id the job goes to, or None to keep it in the fleet queue for now."""
        ...


@dataclass
class HotFirst:
    """Issue 33's policy (the module docstring); `batch` is the engines' max_batch_size."""

    batch: int = 1
    name: str = "hot-first"

    def choose(self, job: JobSpec, nodes: Sequence[NodeView], costs: Costs) -> str | None:
        best: tuple[object, ...] | None = None
        chosen = None
        hot_wait = float("inf")  # the soonest start on a hot node that is full now
        chosen_start, chosen_hot = 0.0, False
        for n in nodes:
            if not admissible(job, n, costs):
                if n.alive and job.circuit in n.hot:
                    hot_wait = min(hot_wait, n.wait_s(job.priority))
                continue
            hot = job.circuit in n.hot
            wait = n.wait_s(job.priority)
            start = max(n.ready_s(job.circuit, costs), wait)
            company = min(n.waiting.get(job.circuit, 0), self.batch - 1) if hot else 0
            load = n.in_flight / max(n.slots, 1)
            if job.priority >= CRITICAL:  # the first boundary anywhere
                key: tuple[object, ...] = (start, not hot, load, -n.memory_free, n.node_id)
            else:  # hot first; else the soonest load
                key = (not hot, 0.0 if hot else start, -company, wait, load, -n.memory_free, n.node_id)
            if best is None or key < best:
                best, chosen, chosen_start, chosen_hot = key, n.node_id, start, hot
        if chosen is not None and not chosen_hot and job.priority < CRITICAL and chosen_start > hot_wait:
            return None  # a full hot node frees up before a load would finish: wait for it
        return chosen


@dataclass
class RoundRobin:
    """Baseline: the next admissible node in turn, blind to SRS and queues."""

    name: str = "round-robin"
    _last: str = ""

    def choose(self, job: JobSpec, nodes: Sequence[NodeView], costs: Costs) -> str | None:
        ids = sorted(n.node_id for n in nodes if admissible(job, n, costs))
        if not ids:
            return None
        after = [i for i in ids if i > self._last]
        self._last = after[0] if after else ids[0]
        return self._last


@dataclass
class LeastLoaded:
    """Baseline: the admissible node with the fewest jobs per slot, then the least queued work."""

    name: str = "least-loaded"

    def choose(self, job: JobSpec, nodes: Sequence[NodeView], costs: Costs) -> str | None:
        cands = [n for n in nodes if admissible(job, n, costs)]
        if not cands:
            return None
        return min(cands, key=lambda n: (n.in_flight / max(n.slots, 1), n.wait_s(LOW), n.node_id)).node_id


POLICIES: dict[str, type] = {"hot-first": HotFirst, "round-robin": RoundRobin, "least-loaded": LeastLoaded}


def order(queue: Sequence[JobSpec]) -> list[JobSpec]:
    """The fleet queue's order: priority first (fleet-wide), then arrival."""
    return sorted(queue, key=lambda j: (-j.priority, j.seq))


def assigned(view: NodeView, job: JobSpec, costs: Costs) -> NodeView:
    """The node's view once the job is placed there (so one plan places many jobs consistently)."""
    backlog = dict(view.backlog_s)
    backlog[job.priority] = backlog.get(job.priority, 0.0) + job.partitions * costs.partition_s(job.circuit)
    waiting = dict(view.waiting)
    waiting[job.circuit] = waiting.get(job.circuit, 0) + 1
    loading, queue_s = dict(view.loading), view.load_queue_s
    if job.circuit not in view.hot and job.circuit not in loading:
        queue_s += costs.load_s(job.circuit)
        loading[job.circuit] = queue_s
    return dataclasses.replace(
        view, in_flight=view.in_flight + 1, backlog_s=backlog, waiting=waiting, loading=loading,
        load_queue_s=queue_s,
    )  # fmt: skip


def plan(
    queue: Sequence[JobSpec], nodes: Sequence[NodeView], policy: Policy, costs: Costs
) -> list[tuple[JobSpec, str]]:
    """Place what can be placed now, highest priority first: [(job, node_id)].

    Jobs that no node can take stay out of the answer (the caller keeps them queued); a job
    held back does not block the ones behind it (another circuit may fit elsewhere).
    """
    views = {n.node_id: n for n in nodes}
    out = []
    refused: set[tuple[str, int]] = set()  # placing jobs only fills nodes: a refused kind stays refused
    for job in order(queue):
        if (job.circuit, job.priority) in refused:
            continue
        node_id = policy.choose(job, list(views.values()), costs)
        if node_id is None:
            refused.add((job.circuit, job.priority))
            continue
        views[node_id] = assigned(views[node_id], job, costs)
        out.append((job, node_id))
    return out
