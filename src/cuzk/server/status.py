"""The status JSON of `GET /status`: the reference's fields (REFERENCE_API.md 4.1), filled truthfully.

Every key the reference's web UIs read is present (optional values null); the
values come from engine.status(). Ours are added beside them: `queues` (by
stage and by kind) and `recent_jobs` (the spans of the last jobs, for the live
page's rolling waterfall).
"""

from __future__ import annotations

import time
from typing import Any

from cuzk.engine.stats import EngineStats
from cuzk.instrument.waterfall import colour
from cuzk.server.service import display_kind, srs_circuit_id

NINE_GIB = 9 << 30  # the reference's display-only divisor for synthesis.max_concurrent


def _backend_name(engine: Any) -> str:
    """The backend the engine's first device runs ("cpu", "cuda"; "" when it cannot be told)."""
    try:
        return str(engine.backends[engine.config.devices[0]].name)
    except Exception:  # a status must answer; the page then keeps its GPU wording
        return ""


def status_json(engine: Any, *, started: float) -> dict[str, Any]:
    st: EngineStats = engine.status()
    mem = st.memory
    counters = st.counters
    pipelines = []
    for job in st.jobs_in_flight:
        pipelines.append(
            {
                "job_id": job.job_id,
                "proof_kind": display_kind(job.family),
                "started_secs_ago": job.started_secs_ago,
                "total_partitions": len(job.partitions),
                "partitions_done": sum(1 for p in job.partitions if p.state == "done"),
                "partitions": [{"index": p.index, "state": p.state} for p in job.partitions],
            }
        )
    workers = [
        {
            "worker_id": i,
            "gpu_ordinal": w.device,
            "state": "idle" if w.state == "idle" else "proving",
            "current_job": w.job,
            "current_partition": w.partition,
            "busy_secs": None,
        }
        for i, w in enumerate(st.gpu_workers)
    ]
    now = time.monotonic()
    srs = [
        {
            "circuit_id": srs_circuit_id(e.key),
            "bytes": int(e.size_bytes),
            "last_used_secs_ago": 0.0 if e.ref_count else float(e.last_used_s_ago or 0.0),
            "evictable": e.ref_count == 0,
            "tier": e.tier,
            "ref_count": e.ref_count,
        }
        for e in st.srs
    ]
    by_kind = st.jobs_by_kind
    return {
        "backend": _backend_name(engine),  # the status page's labels: "CPU workers" on the CPU backend
        "uptime_secs": now - started,
        "memory": {
            "total_bytes": mem.total,
            "used_bytes": mem.used,
            "available_bytes": mem.available,
            "peak_bytes": mem.peak,
        },
        "synthesis": {
            "max_concurrent": mem.total // NINE_GIB,
            "active": st.synthesis_workers.busy,
            "workers": st.synthesis_workers.workers,
        },
        "pipelines": pipelines,
        "gpu_workers": workers,
        "allocations": {"srs": srs, "pce": []},
        "counters": {
            "total_completed": int(counters.get("completed", 0)),
            "total_failed": int(counters.get("failed", 0)),
            "completed_by_kind": {display_kind(k): v for k, v in st.completed_by_family.items()},
            "failed_by_kind": {display_kind(k): v for k, v in st.failed_by_family.items()},
            "queue_depth": st.queues.intake,
        },
        "buffers": {
            "synth_in_flight": st.queues.synthesis,
            "provers_in_flight": sum(st.queues.gpu.values()),
            "aux_in_flight": 0,
            "shells_in_flight": st.queues.finalize,
            "pending_handles": int(st.jobs.get("queued", 0) + st.jobs.get("running", 0)),
        },
        "queues": [
            {"proof_kind": display_kind(k), "pending": q.queued, "in_progress": q.running}
            for k, q in sorted(by_kind.items())
        ],
        "gpu_busy": st.gpu_busy.per_device,
        "recent_jobs": [
            {
                "job_id": j.job_id,
                "status": j.status,
                "spans": [
                    {"name": s["name"], "start": s["start"], "end": s["end"], "colour": colour(s["name"])}
                    for s in j.spans
                ],
            }
            for j in st.recent_jobs
        ],
    }
