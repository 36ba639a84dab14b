"""The fleet front's overhead on one machine, and its re-dispatch time after a node is killed (issue 33).

    python benchmarks/fleet_overhead.py --jobs 24 --circuit porep-tiny

1. One engine with 3 CPU devices, 3 synthesis workers (one GPU worker per device): the daemon's
   engine, in process. 2. A local Ray cluster (cluster_utils: a head that runs nothing and 3
   node processes) with one engine per node, 1 synthesis worker and 1 device each: the same
   workers in total, through the fleet front. Both: parameters preloaded, one warm-up job, then
   --jobs jobs submitted at once; jobs per minute from the first submit to the last result, every
   proof verified by the engine. 3. On the cluster: a 24-partition job, its node SIGKILLed
   while the job runs there; the time until the front re-dispatched it and until it completed.
Wall-clock figures: on a shared machine, say so beside them.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time

from cuzk.engine import Engine, EngineConfig, JobStatus, ProofRequest

PER_NODE = {"backend": "cpu", "synthesis_workers": 1, "gpu_workers_per_device": 1, "finalizer_workers": 1,
            "memory_budget": "2GiB"}  # fmt: skip


def run_jobs(submit, circuit: str, n: int, base: int) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    handles = [submit(ProofRequest(circuit=circuit, seed=base + i)) for i in range(n)]
    for h in handles:
        r = h.result(timeout=1800)
        assert r.status is JobStatus.COMPLETED, r.error
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=24)
    ap.add_argument("--circuit", default="porep-tiny")
    args = ap.parse_args()
    os.environ.setdefault("CUZK_CACHE_DIR", tempfile.mkdtemp(prefix="cuzk-fleet-bench-"))

    cfg = EngineConfig(**{**PER_NODE, "devices": (0, 1, 2), "synthesis_workers": 3, "finalizer_workers": 3})
    with Engine(cfg) as engine:
        engine.preload(args.circuit)
        run_jobs(engine.submit, args.circuit, 1, 10_000)
        c0 = time.process_time()
        wall = run_jobs(engine.submit, args.circuit, args.jobs, 0)
        single = args.jobs / wall * 60
        print(f"one engine, 3 devices, 3 synthesis workers: {args.jobs} jobs in {wall:.1f} s = {single:.1f} jobs/min "
              f"(front process CPU {time.process_time() - c0:.1f} s)", flush=True)  # fmt: skip

    from ray.cluster_utils import Cluster

    from cuzk.cluster.front import Fleet, FleetConfig

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    for _ in range(3):
        cluster.add_node(num_cpus=1, resources={"cuzk": 1})
    cluster.wait_for_nodes()
    try:
        fleet = Fleet(
            FleetConfig(address=cluster.address, engine=PER_NODE, resources={"cuzk": 1}, watch_s=0.5)
        )
        assert fleet.wait_engines(3, timeout=600)
        fleet.preload(args.circuit)
        run_jobs(fleet.submit, args.circuit, 3, 10_000)
        c0 = time.process_time()
        wall = run_jobs(fleet.submit, args.circuit, args.jobs, 0)
        multi = args.jobs / wall * 60
        print(f"fleet of 3 nodes, 1 device and 1 synthesis worker each: {args.jobs} jobs in {wall:.1f} s = "
              f"{multi:.1f} jobs/min ({100 * (multi / single - 1):+.1f}% against one engine; front process CPU "
              f"{time.process_time() - c0:.1f} s)", flush=True)  # fmt: skip

        long = fleet.submit(ProofRequest(circuit=args.circuit, seed=50_000, partitions=24, request_id="long"))
        tick = threading.Event()
        victim = None
        while victim is None:
            victim = next(
                (j["node"] for j in fleet.fleet_status()["jobs_in_flight"] if j["job_id"] == "long"), None
            )
            tick.wait(0.05)
        ray_node = fleet.engines()[victim]["ray_node"]
        node = next(n for n in cluster.list_all_nodes() if n.node_id == ray_node)
        t0 = time.perf_counter()
        cluster.remove_node(node, allow_graceful=False)
        while long.node in (None, victim):
            tick.wait(0.01)
        moved = time.perf_counter() - t0
        r = long.result(timeout=1800)
        assert r.status is JobStatus.COMPLETED, r.error
        print(f"node killed mid-job: re-dispatched after {moved:.2f} s, completed {time.perf_counter() - t0:.1f} s "
              f"after the kill on {long.node}", flush=True)  # fmt: skip
        fleet.shutdown()
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
