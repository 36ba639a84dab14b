"""What `Engine.status()` returns: typed, so the service, the status page and the metrics read
fields, not string keys (issue 30). `as_dict()` is the JSON form (dataclasses.asdict)."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cuzk.engine.srs import SrsEntryStatus


def job_counts(
    rows: Iterable[tuple[str, bool, str, bool]],
) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """(status, finished, family, running) per job -> jobs per status, and the unfinished per
    family as queued/running: what an engine's and a fleet's status both report."""
    from cuzk.engine.request import JobStatus

    jobs = {s.value: 0 for s in JobStatus}
    by_kind: dict[str, dict[str, int]] = {}
    for status, finished, family, running in rows:
        jobs[status] += 1
        if not finished:
            kind = by_kind.setdefault(family, {"queued": 0, "running": 0})
            kind["running" if running else "queued"] += 1
    return jobs, by_kind


@dataclass(frozen=True)
class QueueStats:
    """Items waiting per stage: jobs in intake, partitions waiting for synthesis, units per GPU queue;
    `device_room`: jobs taken from intake that wait for room beside other keys' sets on their
    card (the dispatcher's parked batches, in the order they will go)."""

    intake: int
    synthesis: int
    gpu: dict[int, int]
    finalize: int
    device_room: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SynthesisStats:
    workers: int
    busy: int  # tasks running now
    pids: list[int]


@dataclass(frozen=True)
class GpuWorkerStats:
    device: int
    worker: int
    state: str  # idle | preparing | waiting | proving
    job: str | None
    partition: int | None
    family: str  # the proof family of `job` ("" when idle)


@dataclass(frozen=True)
class DeviceStats:
    """The device's name and memory as its backend reports them (0 where unknown)."""

    name: str
    total_bytes: int = 0
    free_bytes: int = 0
    resident_bytes: int = 0


@dataclass(frozen=True)
class PartitionState:
    index: int
    state: str  # pending | synthesizing | synth_done | gpu | finalizing | done


@dataclass(frozen=True)
class JobProgress:
    """A job in flight, partition by partition (the status page's pipelines)."""

    job_id: str
    family: str
    circuit: str  # its key's ref (cuzk.engine.keys)
    status: str
    started_secs_ago: float
    partitions: list[PartitionState]


@dataclass(frozen=True)
class RecentJob:
    """A finished job and its top-level spans (records of instrument.Timeline) for the rolling waterfall."""

    job_id: str
    status: str
    spans: list[dict[str, Any]]


@dataclass(frozen=True)
class MemoryStats:
    """The byte budget now; `by_tag` is what each kind of reservation holds ("untagged" for none)."""

    total: int
    used: int
    available: int
    peak: int
    waiters: int
    by_tag: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, snapshot: dict[str, int]) -> MemoryStats:
        snap = dict(snapshot)
        head = {k: snap.pop(k) for k in ("total", "used", "available", "peak", "waiters")}
        return cls(**head, by_tag=snap)


@dataclass(frozen=True)
class KindCounts:
    queued: int = 0
    running: int = 0


@dataclass(frozen=True)
class GpuBusy:
    """Since the engine started: each device's busy fraction and seconds, and the union's fraction."""

    per_device: dict[int, float]
    fraction: float
    seconds: dict[int, float]


@dataclass(frozen=True)
class EngineStats:
    srs: list[SrsEntryStatus]
    queues: QueueStats
    synthesis_workers: SynthesisStats
    gpu_workers: list[GpuWorkerStats]
    devices: dict[int, DeviceStats]
    jobs_in_flight: list[JobProgress]
    recent_jobs: list[RecentJob]
    completed_by_family: dict[str, int]
    failed_by_family: dict[str, int]
    memory: MemoryStats
    jobs: dict[str, int]  # jobs known now, by status (queued, running, completed, failed, cancelled)
    jobs_by_kind: dict[str, KindCounts]  # in flight, per proof family
    counters: dict[str, int]  # since start: submitted, completed, failed, cancelled
    gpu_busy: GpuBusy

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EngineStats:
        """The inverse of `as_dict` (keys beyond the fields are ignored): a status that crossed a
        process boundary as plain data, or one merged from several engines (cuzk.cluster)."""
        out = _build(cls, data)
        assert isinstance(out, EngineStats)
        return out


def _build(tp: Any, value: Any) -> Any:
    """`value` (plain data) as type `tp`: dataclasses by field, lists and dicts element-wise."""
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = typing.get_type_hints(tp)
        names = {f.name for f in dataclasses.fields(tp)}
        return tp(**{k: _build(hints[k], v) for k, v in value.items() if k in names})
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is list:
        return [_build(args[0], v) for v in value]
    if origin is dict:
        return {_build(args[0], k): _build(args[1], v) for k, v in value.items()}
    if tp is int and isinstance(value, str | float):
        return int(value)
    return value
