"""Cross-check the timeline's GPU busy % against CUDA-event ground truth (issue 13, on the device).

The engine computes GPU busy from its device clock (cuzk.backends.cuda.clock: two CUDA events
per run of kernels, runs ended at downloads and synchronisations), the `device_busy` spans of
the timeline. The ground truth here is finer: with CUZK_PROFILE_KERNELS=1 the CUDA runtime
brackets every kernel launch with a pair of CUDA events; mapped onto the host clock through one
reference event recorded (and waited for) at a known host time, the union of those kernel
intervals over the same window is the fraction of time a kernel was running. Also printed: the
union of the device-lock holds (the engine's figure before the device clock), and the
waterfall's own figure from the jobs' timelines (its window: first span to last).

    CUZK_PROFILE_KERNELS=1 python3 benchmarks/gpu_busy.py --circuit porep-medium --count 8
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("CUZK_PROFILE_KERNELS", "1")  # before cuzk reads the environment

from cuzk.backends import get_backend
from cuzk.engine import Engine, EngineConfig, JobStatus, ProofRequest
from cuzk.engine.gpu import busy_seconds
from cuzk.instrument.waterfall import build

PHASES = (
    "device_lock",
    "device_busy",
    "gpu_prepare",
    "upload_witness",
    "ntt_h",
    "msm_h",
    "msm_l",
    "msm_a",
    "msm_b_g1",
    "msm_b_g2",
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--circuit", default="porep-medium")
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--synthesis-workers", type=int, default=4)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="toggles, as bench batch")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)

    rt = get_backend("cuda", device=0).rt  # type: ignore[attr-defined]
    if rt.profile is None:
        print("kernel profiling is off: set CUZK_PROFILE_KERNELS=1", file=sys.stderr)
        return 2
    cp = rt.cp
    settings = dict(item.split("=", 1) for item in args.set)
    cfg = EngineConfig(backend="cuda", synthesis_workers=args.synthesis_workers).with_settings(settings)
    with Engine(cfg) as engine:
        engine.preload(args.circuit)
        warm = engine.submit(ProofRequest(circuit=args.circuit, seed=10**6, partitions=args.partitions))
        assert warm.result().status is JobStatus.COMPLETED, warm.result().error
        with rt.guard("reference event"):
            rt.compute.synchronize()
            rt.profile.clear()
            ref = cp.cuda.Event()
            ref.record(rt.compute)
            ref.synchronize()
            t_ref = time.perf_counter()
        t0 = time.perf_counter()
        handles = [
            engine.submit(ProofRequest(circuit=args.circuit, seed=1 + j * args.partitions,
                                       partitions=args.partitions))
            for j in range(args.count)
        ]  # fmt: skip
        results = [h.result() for h in handles]
        t1 = time.perf_counter()
        failed = [r.error for r in results if r.status is not JobStatus.COMPLETED]
        if failed:
            print(f"{len(failed)} jobs failed: {failed[0]}", file=sys.stderr)
            return 1
        timeline_busy = engine.gpu_busy(t0, t1)
        with rt.guard("reading events"):
            rt.compute.synchronize()
            kernels = [
                (
                    t_ref + cp.cuda.get_elapsed_time(ref, a) / 1e3,
                    t_ref + cp.cuda.get_elapsed_time(ref, b) / 1e3,
                )
                for _name, a, b in rt.profile
            ]
    truth = busy_seconds(kernels, t0, t1) / (t1 - t0)
    spans = [s for r in results for s in r.timeline.spans]
    holds = busy_seconds([(s.start, s.end) for s in spans if s.name == "device_lock"], t0, t1) / (t1 - t0)
    records = [rec for r in results for rec in r.timeline.records()]
    wf = build(records)
    w0 = min(rec["start"] for rec in records)
    wf_busy = sum(wf.busy.values())  # one device
    wf_truth = busy_seconds(kernels, w0, w0 + wf.window) / wf.window
    # Where the lock holds time without a kernel running: kernel coverage of each span inside it.
    phases: dict[str, list[float]] = {}
    for r in results:
        for s in r.timeline.spans:
            if s.name in PHASES:
                cover = busy_seconds(kernels, s.start, s.end)
                acc = phases.setdefault(s.name, [0.0, 0.0])
                acc[0] += s.end - s.start
                acc[1] += cover
    report = {
        "circuit": args.circuit,
        "settings": settings,
        "jobs": args.count,
        "partitions": args.partitions,
        "window_s": t1 - t0,
        "kernel_launches": len(kernels),
        "timeline_busy_pct": 100 * timeline_busy,
        "cuda_event_busy_pct": 100 * truth,
        "difference_points": 100 * (timeline_busy - truth),
        "lock_hold_busy_pct": 100 * holds,
        "waterfall_busy_pct": 100 * wf_busy,
        "waterfall_cuda_event_busy_pct": 100 * wf_truth,
        "waterfall_window_s": wf.window,
        "phases_ms_per_job": {
            k: {"span": 1e3 * v[0] / args.count, "kernels": 1e3 * v[1] / args.count}
            for k, v in phases.items()
        },
    }
    print(
        f"{args.circuit} x{args.count}: window {report['window_s']:.3f} s, {len(kernels)} kernel launches; "
        f"GPU busy from the timeline {report['timeline_busy_pct']:.1f}%, from CUDA events "
        f"{report['cuda_event_busy_pct']:.1f}%, difference {report['difference_points']:+.1f} points"
    )
    print(
        f"  device-lock holds {report['lock_hold_busy_pct']:.1f}%; the waterfall (window "
        f"{wf.window:.3f} s) {report['waterfall_busy_pct']:.1f}% against CUDA events "
        f"{report['waterfall_cuda_event_busy_pct']:.1f}% over its window"
    )
    for name, v in report["phases_ms_per_job"].items():
        print(f"  {name:12s} span {v['span']:8.2f} ms per job, kernels running {v['kernels']:8.2f} ms")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
