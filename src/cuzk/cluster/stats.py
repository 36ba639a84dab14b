"""Engine status as the fleet reads it, and the fleet's status in the engine's shape.

`engine_stats` is the one place that reads an engine's status (the engine's status type may
change; only this function follows it). `fleet_status` merges the engines' statuses into the
shape `Engine.status()` has, so the daemon's GetStatus, /status page and /metrics show the
fleet unchanged, with each device, SRS entry, worker and job tagged with its node, and a
`fleet` key listing the nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def engine_stats(engine: Any) -> dict[str, Any]:
    """An engine's status as plain data (picklable: it crosses from the actor to the front)."""
    st = engine.status()
    return dict(st) if isinstance(st, Mapping) else dict(st.as_dict())


def hot_circuits(st: Mapping[str, Any]) -> frozenset[str]:
    """Circuits whose parameters are loaded (hot) in an engine status."""
    out = set()
    for e in st.get("srs", []):
        if str(e.get("tier")) == "hot":
            key = e["key"]
            out.add(str(key[0] if isinstance(key, list | tuple) else key))
    return frozenset(out)


def fleet_status(engines: Mapping[str, Mapping[str, Any] | None], front: Mapping[str, Any]) -> dict[str, Any]:
    """The fleet as one engine status: engines {engine id: status or None (unreachable)}.

    Devices are numbered across the fleet in engine order; `front` carries what only the front
    knows (its queue, counters, jobs by kind and family, the per-node rows of `fleet`).
    """
    devices: dict[int, dict[str, Any]] = {}
    workers: list[dict[str, Any]] = []
    srs: list[dict[str, Any]] = []
    in_flight: list[dict[str, Any]] = []
    recent: list[dict[str, Any]] = []
    gpu_q: dict[int, int] = {}
    per_device: dict[int, float] = {}
    seconds: dict[int, float] = {}
    memory = {"total": 0, "used": 0, "available": 0, "peak": 0, "waiters": 0}
    queues: dict[str, Any] = {
        "intake": int(front.get("queued", 0)),
        "synthesis": 0,
        "finalize": 0,
        "device_room": [],
    }
    synth: dict[str, Any] = {"workers": 0, "busy": 0, "pids": []}
    ordinal = 0
    for eid, st in engines.items():
        if st is None:
            continue
        local: dict[int, int] = {}
        for d in sorted(st.get("devices", {})):
            local[int(d)] = ordinal
            info = dict(st["devices"][d])
            info["name"] = f"{eid}: {info.get('name', f'device {d}')}"
            info["node"] = eid
            devices[ordinal] = info
            ordinal += 1
        for w in st.get("gpu_workers", []):
            workers.append({**w, "device": local.get(int(w["device"]), int(w["device"])), "node": eid})
        srs.extend({**e, "node": eid} for e in st.get("srs", []))
        in_flight.extend({**j, "node": eid} for j in st.get("jobs_in_flight", []))
        recent.extend({**j, "node": eid} for j in st.get("recent_jobs", []))
        q = st.get("queues", {})
        queues["intake"] += int(q.get("intake", 0))
        queues["synthesis"] += int(q.get("synthesis", 0))
        queues["finalize"] += int(q.get("finalize", 0))
        queues["device_room"] += list(q.get("device_room", []))
        for d, n in q.get("gpu", {}).items():
            gpu_q[local.get(int(d), int(d))] = int(n)
        busy = st.get("gpu_busy", {})
        for d, f in busy.get("per_device", {}).items():
            per_device[local.get(int(d), int(d))] = float(f)
        for d, s in busy.get("seconds", {}).items():
            seconds[local.get(int(d), int(d))] = float(s)
        for k in memory:
            memory[k] += int(st.get("memory", {}).get(k, 0))
        sw = st.get("synthesis_workers", {})
        synth["workers"] += int(sw.get("workers", 0))
        synth["busy"] += int(sw.get("busy", 0))
    return {
        "srs": srs,
        "queues": {**queues, "gpu": gpu_q},
        "synthesis_workers": synth,
        "gpu_workers": workers,
        "devices": devices,
        "jobs_in_flight": in_flight,
        "recent_jobs": recent[-20:],
        "completed_by_family": dict(front.get("completed_by_family", {})),
        "failed_by_family": dict(front.get("failed_by_family", {})),
        "memory": memory,
        "jobs": dict(front.get("jobs", {})),
        "jobs_by_kind": dict(front.get("jobs_by_kind", {})),
        "counters": dict(front.get("counters", {})),
        "gpu_busy": {
            "per_device": per_device,
            "fraction": sum(per_device.values()) / len(per_device) if per_device else 0.0,
            "seconds": seconds,
        },
        "fleet": list(front.get("nodes", [])),
        "fleet_queue": int(front.get("queued", 0)),
    }
