"""Cross-check the timeline's GPU busy % against CUDA-event ground truth (issue 13, on the device).

The engine computes GPU busy from the union of its device-lock holds (spans on the host clock).
The ground truth here is the device's own clock: with CUZK_PROFILE_KERNELS=1 the CUDA runtime
brackets every kernel launch with a pair of CUDA events; mapped onto the host clock through one
reference event recorded (and waited for) at a known host time, the union of those kernel
intervals over the same window is the fraction of time a kernel was running. The two agree when
the work inside the lock is kernels; they differ by the host work done while holding it.

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

PHASES = ("device_lock", "gpu_prepare", "ntt_h", "msm_h", "msm_l", "msm_a", "msm_b_g1", "msm_b_g2")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--circuit", default="porep-medium")
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--partitions", type=int, default=1)
    ap.add_argument("--synthesis-workers", type=int, default=4)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)

    rt = get_backend("cuda", device=0).rt  # type: ignore[attr-defined]
    if rt.profile is None:
        print("kernel profiling is off: set CUZK_PROFILE_KERNELS=1", file=sys.stderr)
        return 2
    cp = rt.cp
    cfg = EngineConfig(backend="cuda", synthesis_workers=args.synthesis_workers)
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
        "jobs": args.count,
        "partitions": args.partitions,
        "window_s": t1 - t0,
        "kernel_launches": len(kernels),
        "timeline_busy_pct": 100 * timeline_busy,
        "cuda_event_busy_pct": 100 * truth,
        "difference_points": 100 * (timeline_busy - truth),
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
    for name, v in report["phases_ms_per_job"].items():
        print(f"  {name:12s} span {v['span']:8.2f} ms per job, kernels running {v['kernels']:8.2f} ms")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
