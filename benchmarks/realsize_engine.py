"""porep-32g sectors through the engine on one GPU, with WinningPoSt probes under that load.

    python benchmarks/realsize_engine.py --out DIR [--sectors 3] [--partitions 10]
        [--synthesis-workers 5] [--gpu-workers 2] [--memory-budget 48GiB] [--probes 3]
        [--winning winning-32g | --winning ''] [--warmup-partitions 2] [--deadline-s 560]

Set-up (each step timed): the porep-32g and winning-32g topologies (recorded or from the
cache), an engine on the CUDA backend with the G2 MSM on the GPU, both parameter sets
preloaded (generated into residency: no files at this size), one warm-up job per circuit.
Then `--sectors` PoRep jobs of `--partitions` partitions each are submitted at once (NORMAL),
and while they fill the engine a winning-32g job (CRITICAL) is submitted every
`--probe-every-s` seconds, one at a time: its latency is submission to verified proof.
Samplers record the device memory the CuPy pool holds and the host RSS of this process
and its synthesis workers. Every proof is verified by the engine before it is returned.

Figures (printed as a table; DIR/realsize_engine.json holds all): steady seconds per sector
(spacing of sector completions after the first, and from partition completions: sectors
submitted together interleave, so the two can differ), GPU busy (cuzk.instrument.busy: the figure
`cuzk bench batch` prints), the GPU part per partition by phase (median over partitions of
the device-lock spans ntt_h, msm_h, ...), synthesis per partition, peak host RSS, peak device
memory, winning latencies. Sections stop being started near --deadline-s and unfinished jobs
are cancelled, so that one device call always returns its figures.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

T0 = time.perf_counter()
RESULTS: dict[str, Any] = {}
PHASES = ("matvec", "ntt_h", "upload_witness", "msm_h", "msm_l", "msm_a", "msm_b_g1", "msm_b_g2", "epilogue")
#: the synthesis worker's parts (synth_worker.Worker.run): a circuit's first use in a worker
#: loads its program (load), a seeded request makes its random instance (instance, a test
#: input a real request brings), then the witness and the hand-off
SYNTH_PARTS = ("synthesis", "load", "instance", "witness", "handoff")


def now() -> float:
    return time.perf_counter() - T0


def say(msg: str) -> None:
    print(f"[{now():7.1f}s] {msg}", flush=True)


def save(out: Path) -> None:
    (out / "realsize_engine.json").write_text(json.dumps(RESULTS, indent=2, default=str) + "\n")


def rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


class Sampler(threading.Thread):
    """Peak host RSS (this process + the synthesis workers) and device memory in use, every 50 ms."""

    def __init__(self, engine: Any, backend: Any) -> None:
        super().__init__(daemon=True)
        self.engine, self.backend = engine, backend
        self.stop = threading.Event()
        self.host_peak = self.dev_peak = self.workers_peak = 0
        # (s, GiB in use, GiB the card has handed out, GiB the runtime's pool holds, GiB CuPy's
        # default pool holds, the pools' device allocations so far, those that found the card
        # full): a drop in the third is a pool giving its cached blocks back (CuPy does that when
        # an allocation fails, then retries); card less pools is held elsewhere. A block passed
        # between the pool's per-stream arenas shows in the counts only: the total stays level
        self.series: list[tuple[float, ...]] = []

    def run(self) -> None:
        pids: list[int] = []
        tick = 0
        while not self.stop.wait(0.05):
            if tick % 20 == 0:  # the worker list changes rarely
                pids = list(self.engine.status().synthesis_workers.pids)
            tick += 1
            workers = sum(rss_bytes(p) for p in pids)
            self.workers_peak = max(self.workers_peak, workers)
            self.host_peak = max(self.host_peak, rss_bytes(os.getpid()) + workers)
            mem = self.backend.memory_info()
            used = int(mem.get("used") or 0)
            self.dev_peak = max(self.dev_peak, used)
            held = int(mem.get("total") or 0) - int(mem.get("free") or 0)
            pools = (int(mem.get("pool_held") or 0), int(mem.get("default_pool_held") or 0))
            counts = (int(mem.get("mallocs") or 0), int(mem.get("mallocs_full") or 0))
            point = (round(now(), 2), *(round(v / 2**30, 1) for v in (used, held, *pools)), *counts)
            if not self.series or point[1:] != self.series[-1][1:]:
                self.series.append(point)


def unit_of(span: Any) -> str:
    """The partition (or unit) a span belongs to: spans of one job are summed or ended per unit."""
    return str(span.attrs.get("partition", span.attrs.get("unit", "")))


def phase_table(results: list[Any]) -> dict[str, float]:
    """Median seconds per partition of each phase, over every partition of these jobs."""
    per: dict[str, list[float]] = {}
    for r in results:
        by_unit: dict[tuple[str, str], float] = {}
        for s in r.timeline.spans:
            if s.name in PHASES or s.name in SYNTH_PARTS or s.name in ("device_lock", "lock_wait"):
                key = (s.name, unit_of(s))
                by_unit[key] = by_unit.get(key, 0.0) + s.seconds
        for (name, _), sec in by_unit.items():
            per.setdefault(name, []).append(sec)
    return {k: round(statistics.median(v), 3) for k, v in sorted(per.items())}


def overlap_split(results: list[Any], phase: str = "msm_h", other: str = "gpu_prepare") -> dict[str, Any]:
    """`phase` seconds split by whether another unit's `other` span ran beside it (> 10% overlap):
    the same run's test of whether staging the next unit slows the unit on the device."""
    spans = [s for r in results for s in r.timeline.spans]  # a unit stages before its own hold
    theirs = [t for t in spans if t.name == other]
    beside: list[float] = []
    alone: list[float] = []
    for s in (x for x in spans if x.name == phase):
        o = sum(max(0.0, min(s.end, t.end) - max(s.start, t.start)) for t in theirs)
        (beside if o > 0.1 * s.seconds else alone).append(s.seconds)
    med = lambda v: round(statistics.median(v), 3) if v else None  # noqa: E731
    return {"with_" + other: {"n": len(beside), "median_s": med(beside)},
            "without": {"n": len(alone), "median_s": med(alone)}}  # fmt: skip


def partition_spacing(results: list[Any], partitions: int) -> dict[str, Any]:
    """Throughput from partition completions (each partition's last device-lock release): sectors
    submitted together interleave their partitions, so sector spacing alone can mislead."""
    last: dict[tuple[str, str], float] = {}
    for r in results:
        for s in r.timeline.spans:
            if s.name == "device_lock":
                key = (r.job_id, unit_of(s))
                last[key] = max(last.get(key, 0.0), s.end)
    ends = sorted(last.values())
    if len(ends) < 3:
        return {}
    gaps = [b - a for a, b in itertools.pairwise(ends)]
    s_per_partition = (ends[-1] - ends[0]) / (len(ends) - 1)
    return {"partitions_seen": len(ends), "s_per_partition": round(s_per_partition, 3),
            "median_gap_s": round(statistics.median(gaps), 3),
            "s_per_sector_from_partitions": round(s_per_partition * partitions, 2)}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--circuit", default="porep-32g")
    ap.add_argument("--winning", default="winning-32g", help="the CRITICAL probes' circuit; '' for none")
    ap.add_argument("--warmup-partitions", type=int, default=2)
    ap.add_argument("--sectors", type=int, default=3)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--synthesis-workers", type=int, default=5)
    ap.add_argument("--gpu-workers", type=int, default=2)
    ap.add_argument("--memory-budget", default="48GiB")
    ap.add_argument("--probes", type=int, default=3)
    ap.add_argument("--probe-every-s", type=float, default=15.0)
    ap.add_argument("--deadline-s", type=float, default=560.0)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument(
        "--high",
        default="",
        help="a circuit whose one-partition HIGH job is submitted --high-at-s into the load (e.g. wpost-32g: "
        "its set may not fit beside the load's, so it waits for room, docs/ENGINE.md)",
    )
    ap.add_argument("--high-at-s", type=float, default=10.0)
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a toggle or engine setting, as `cuzk bench batch --set` (e.g. msm.split=on)",
    )
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    from cuzk.circuits import get_circuit
    from cuzk.cli.bench_batch import busy_figures
    from cuzk.engine import Engine, EngineConfig, JobStatus, Priority, ProofRequest
    from cuzk.engine.loader import copies_plan, g2_placement

    RESULTS["args"] = vars(args)
    circuits = [c for c in (args.circuit, args.winning) if c]
    n_probes = args.probes if args.winning else 0
    for name in circuits:
        t = time.perf_counter()
        topo = get_circuit(name).topology()
        RESULTS[f"topology_{name}_s"] = round(time.perf_counter() - t, 2)
        say(f"{name}: topology {RESULTS[f'topology_{name}_s']} s, {topo.num_constraints:,} constraints")
    cfg = EngineConfig(
        backend=args.backend,
        synthesis_workers=args.synthesis_workers,
        gpu_workers_per_device=args.gpu_workers,
        memory_budget=args.memory_budget,
        g2_on="device",
        result_retention_s=3600,
    )
    cfg = cfg.with_settings(dict(kv.split("=", 1) for kv in args.set))
    engine = Engine(cfg)
    backend = engine.backends[0]  # the engine's own, its settings fixed
    RESULTS["backend"] = backend.describe()
    RESULTS["urgent_lane"] = engine.urgent_lane
    ws = engine.working_set(args.circuit)
    RESULTS["model"] = {"host_per_partition": ws.total, "device_staged": ws.device_staged,
                        "device_peak": ws.device_peak}  # fmt: skip
    sampler = Sampler(engine, backend)
    sampler.start()
    status = 0
    try:
        for name in circuits:
            t = time.perf_counter()
            engine.preload(name)
            RESULTS[f"preload_{name}_s"] = round(time.perf_counter() - t, 2)
            RESULTS[f"device_after_preload_{name}"] = backend.memory_info()
            RESULTS[f"copies_{name}"] = copies_plan(cfg, name, backend)  # msm.precompute, auto resolved
            RESULTS[f"g2_on_{name}"] = g2_placement(cfg, name, backend)  # msm.g2_on, auto resolved
            say(
                f"{name}: parameters in {RESULTS[f'preload_{name}_s']} s (copies {RESULTS[f'copies_{name}']}, G2 "
                f"{RESULTS[f'g2_on_{name}']}); "
                f"device {backend.memory_info()}"
            )
            save(args.out)
        t = time.perf_counter()  # warm-up: every synthesis worker loads its program, kernels compile
        sizes = {args.winning: 1, args.circuit: args.warmup_partitions}
        warm = [engine.submit(ProofRequest(circuit=c, seed=10**6, partitions=sizes[c])) for c in circuits]
        for h in warm:  # bounded by the deadline: a call that runs out still says where it was
            r = h.result(timeout=max(1.0, args.deadline_s - 15 - now()))
            if r.status is not JobStatus.COMPLETED:
                raise RuntimeError(f"warm-up failed: {r.error}")
        RESULTS["warmup_s"] = round(time.perf_counter() - t, 2)
        RESULTS["warmup_phases"] = phase_table([warm[0].result()])
        say(f"warm-up {RESULTS['warmup_s']} s: {RESULTS['warmup_phases']}")
        alone = []  # winning-32g CRITICAL on an idle engine: the latency floor under the load's figure
        for i in range(n_probes):
            t = time.perf_counter()
            r = engine.submit(
                ProofRequest(circuit=args.winning, seed=500 + i, priority=Priority.CRITICAL)
            ).result()
            alone.append({"latency_s": round(time.perf_counter() - t, 3), "status": r.status.value,
                          "error": r.error, "phases": phase_table([r])})  # fmt: skip
            if r.status is not JobStatus.COMPLETED:
                status = 1
        RESULTS["winning_alone"] = alone
        say(f"winning alone: {[a['latency_s'] for a in alone]} s")
        save(args.out)
        # the load: every sector at once; a winning probe every probe_every_s while they run
        t_load = time.perf_counter()
        mallocs_before = backend.memory_info()
        sectors = [engine.submit(ProofRequest(circuit=args.circuit, seed=1000 * (j + 1), partitions=args.partitions,
                                              request_id=f"sector-{j}")) for j in range(args.sectors)]  # fmt: skip
        high: list[Any] = []
        if args.high:
            timer = threading.Timer(args.high_at_s, lambda: high.append((time.perf_counter(), engine.submit(
                ProofRequest(circuit=args.high, seed=7, priority=Priority.HIGH, request_id="high")))))  # fmt: skip
            timer.start()
        probes: list[dict[str, Any]] = []
        for i in range(n_probes):
            if threading.Event().wait(args.probe_every_s) or now() > args.deadline_s - 60:
                break
            if all(h.done() for h in sectors):
                break
            t = time.perf_counter()
            r = engine.submit(
                ProofRequest(circuit=args.winning, seed=i + 1, priority=Priority.CRITICAL)
            ).result()
            lat = time.perf_counter() - t
            probes.append({"latency_s": round(lat, 3), "status": r.status.value, "error": r.error,
                           "phases": phase_table([r]), "at_s": round(t - t_load, 1)})  # fmt: skip
            say(f"winning probe {i}: {lat:.3f} s ({r.status.value}) {r.error or ''} {probes[-1]['phases']}")
            if r.status is not JobStatus.COMPLETED:
                status = 1  # a CRITICAL job that failed under load fails the run
        RESULTS["winning_probes"] = probes
        done_at = []
        results = []
        for h in sectors:
            left = args.deadline_s - 15 - now()
            try:
                r = h.result(timeout=max(1.0, left))
            except Exception as exc:  # out of time: cancel the rest, report what finished
                say(f"{h.job_id}: not finished ({type(exc).__name__}); cancelling")
                for x in sectors:
                    engine.cancel(x.job_id)
                status = 1
                break
            done_at.append(time.perf_counter() - t_load)
            results.append(r)
            say(
                f"{r.request_id}: {r.status.value} at {done_at[-1]:.1f} s ({len(r.proofs)} proofs) {r.error or ''}"
            )
        if args.high:
            timer.join()
            t_high, h = high[0]
            r = h.result(timeout=max(1.0, args.deadline_s - 15 - now()))
            span_s = {n: [round(x.seconds, 3) for x in r.timeline.spans if x.name == n]
                      for n in ("device_room_wait", "srs_load")}  # fmt: skip
            RESULTS["high_job"] = {
                "circuit": args.high, "submitted_at_s": round(t_high - t_load, 1),
                "latency_s": round(max((x.end for x in r.timeline.spans), default=t_high) - t_high, 2),
                "status": r.status.value, "error": r.error, "phases": phase_table([r]), **span_s,
            }  # fmt: skip
            say(f"high job: {RESULTS['high_job']}")
            if r.status is not JobStatus.COMPLETED:
                status = 1
        ok = [r for r in results if r.status is JobStatus.COMPLETED]
        RESULTS["sectors_done_s"] = [round(x, 2) for x in done_at]
        RESULTS["sectors_completed"] = len(ok)
        if len(done_at) > 1:
            RESULTS["steady_s_per_sector"] = round((done_at[-1] - done_at[0]) / (len(done_at) - 1), 2)
        if done_at:
            RESULTS["wall_s_per_sector"] = round(done_at[-1] / len(done_at), 2)
        RESULTS["phases_per_partition"] = phase_table(ok)
        RESULTS["partition_spacing"] = partition_spacing(ok, args.partitions)
        RESULTS["msm_h_by_staging"] = overlap_split(ok)
        mallocs_after = backend.memory_info()
        RESULTS["pool_mallocs_under_load"] = {  # level in a steady engine (GPU_NOTES v39)
            k: int(mallocs_after.get(k) or 0) - int(mallocs_before.get(k) or 0)
            for k in ("mallocs", "mallocs_full")
        }
        RESULTS["spans"] = [x.as_dict(r.request_id or "") for r in ok for x in r.timeline.spans
                            if x.name in PHASES or x.name in ("gpu_prepare", "device_lock", "lock_wait")]  # fmt: skip
        RESULTS.update(
            {k: v for k, v in busy_figures([r.timeline for r in ok]).items() if k != "gpu_busy_devices"}
        )
        RESULTS["host_budget_peak"] = engine.budget.peak()
    except Exception as exc:  # report and return every figure so far
        import traceback

        traceback.print_exc()
        RESULTS["error"] = f"{type(exc).__name__}: {exc}"
        RESULTS["jobs_in_flight_at_error"] = engine.status().as_dict()["jobs_in_flight"]
        status = 1
    finally:
        sampler.stop.set()
        RESULTS["peak_host_rss_gib"] = round(sampler.host_peak / 2**30, 2)
        RESULTS["peak_workers_rss_gib"] = round(sampler.workers_peak / 2**30, 2)
        RESULTS["peak_device_used_gib"] = round(sampler.dev_peak / 2**30, 2)
        RESULTS["device_series"] = sampler.series
        RESULTS["wall_s"] = round(now(), 1)
        save(args.out)
        engine.shutdown(wait=False)
    brief = {k: v for k, v in RESULTS.items() if k not in ("backend", "spans", "device_series")}
    print(json.dumps(brief, indent=1, default=str))  # the series and spans: in the JSON file
    return status


if __name__ == "__main__":
    sys.exit(main())
