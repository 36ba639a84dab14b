"""The status JSON of `GET /status`: the reference's fields (REFERENCE_API.md 4.1), filled truthfully.

Every key the reference's web UIs read is present (optional values null); the
values come from engine.status(). Ours are added beside them: `queues` (by
stage and by kind) and `recent_jobs` (the spans of the last jobs, for the live
page's rolling waterfall).
"""

from __future__ import annotations

import time
from typing import Any

from cuzk.instrument.waterfall import colour
from cuzk.server.service import display_kind

NINE_GIB = 9 << 30  # the reference's display-only divisor for synthesis.max_concurrent


def _backend_name(engine: Any) -> str:
    """The backend the engine's first device runs ("cpu", "cuda"; "" when it cannot be told)."""
    from cuzk.engine import work

    try:
        return str(work.device_backend(engine.config.backend, engine.config.devices[0]).name)
    except Exception:  # a status must answer; the page then keeps its GPU wording
        return ""


def status_json(engine: Any, *, started: float) -> dict[str, Any]:
    st = engine.status()
    mem = st["memory"]
    counters = st["counters"]
    pipelines = []
    for job in st.get("jobs_in_flight", []):
        pipelines.append(
            {
                "job_id": job["job_id"],
                "proof_kind": display_kind(job["family"]),
                "started_secs_ago": job["started_secs_ago"],
                "total_partitions": len(job["partitions"]),
                "partitions_done": sum(1 for p in job["partitions"] if p["state"] == "done"),
                "partitions": job["partitions"],
            }
        )
    workers = [
        {
            "worker_id": i,
            "gpu_ordinal": w["device"],
            "state": "idle" if w["state"] == "idle" else "proving",
            "current_job": w.get("job"),
            "current_partition": w.get("partition"),
            "busy_secs": None,
        }
        for i, w in enumerate(st["gpu_workers"])
    ]
    now = time.monotonic()
    srs = [
        {
            "circuit_id": str(e["key"][0] if isinstance(e["key"], list | tuple) else e["key"]),
            "bytes": int(e["size_bytes"]),
            "last_used_secs_ago": 0.0 if e["ref_count"] else float(e.get("last_used_s_ago") or 0.0),
            "evictable": e["ref_count"] == 0,
            "tier": e["tier"],
            "ref_count": e["ref_count"],
        }
        for e in st["srs"]
    ]
    by_kind = st.get("jobs_by_kind", {})
    return {
        "backend": _backend_name(engine),  # the status page's labels: "CPU workers" on the CPU backend
        "uptime_secs": now - started,
        "memory": {
            "total_bytes": int(mem["total"]),
            "used_bytes": int(mem["used"]),
            "available_bytes": int(mem["available"]),
            "peak_bytes": int(mem.get("peak", 0)),
        },
        "synthesis": {
            "max_concurrent": int(mem["total"]) // NINE_GIB,
            "active": int(st["synthesis_workers"]["busy"]),
            "workers": int(st["synthesis_workers"]["workers"]),
        },
        "pipelines": pipelines,
        "gpu_workers": workers,
        "allocations": {"srs": srs, "pce": []},
        "counters": {
            "total_completed": int(counters.get("completed", 0)),
            "total_failed": int(counters.get("failed", 0)),
            "completed_by_kind": {display_kind(k): v for k, v in st.get("completed_by_family", {}).items()},
            "failed_by_kind": {display_kind(k): v for k, v in st.get("failed_by_family", {}).items()},
            "queue_depth": int(st["queues"].get("intake", 0)),
        },
        "buffers": {
            "synth_in_flight": int(st["queues"].get("synthesis", 0)),
            "provers_in_flight": sum(int(v) for v in st["queues"].get("gpu", {}).values()),
            "aux_in_flight": 0,
            "shells_in_flight": int(st["queues"].get("finalize", 0)),
            "pending_handles": int(st["jobs"].get("queued", 0) + st["jobs"].get("running", 0)),
        },
        "queues": [
            {"proof_kind": display_kind(k), "pending": q["queued"], "in_progress": q["running"]}
            for k, q in sorted(by_kind.items())
        ],
        "gpu_busy": st.get("gpu_busy", {}).get("per_device", {}),
        "recent_jobs": [
            {
                "job_id": j["job_id"],
                "status": j["status"],
                "spans": [
                    {"name": s["name"], "start": s["start"], "end": s["end"], "colour": colour(s["name"])}
                    for s in j["spans"]
                ],
            }
            for j in st.get("recent_jobs", [])
        ],
    }
