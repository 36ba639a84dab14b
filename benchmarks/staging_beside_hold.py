"""Where a GPU worker's staging waits when the other worker holds the device (GPU_NOTES v39).

    python benchmarks/staging_beside_hold.py --out $OUT --runs 3

In the engine at porep-32g a 4.3 GB witness staging took 1.5 s beside the other worker's hold
and 0.2 s on an idle device, ending ~0.2 s after that hold each time (H100, 2026-12-07). Here
one thread stages (`Backend.stage`, pinned, its parts timed) while another holds the device,
in variants that each add one suspect:

- `alone`: no holder (the baseline of every ratio);
- `hold`: a run of G1 MSMs over device scalars (each MSM waits on the host for its counts and
  its result);
- `hold+upload`: a third thread uploads 1 GB with `to_device`, ordered on the compute stream
  (the finalizer's G2 scalars);
- `hold+download`: the holder ends with a 4.3 GB `to_host`;
- `edge`: the card nearly full, with the pool's free blocks cached in the compute stream's
  arena: the staging's block (the upload stream's arena) then needs a cudaMalloc that fails, and
  CuPy frees the cached blocks (cudaFree waits for all queued device work) before it retries;
- `hold+sampler`, `edge+sampler`: `hold` and `edge` with a thread reading `memory_info` every
  50 ms, as realsize_engine's sampler does (CuPy's `memGetInfo` keeps the GIL);
- `ntt`: the holder runs NTTs instead, queued with no host wait between them;
- `ntt+sync`, `ntt+get`: the same NTTs with a host wait every `--ntt-wait-every` of them, a
  stream synchronize or an 8-byte download: the holder's MSMs wait on the host like this, the
  NTT phase of an engine hold does not;
- `ntt+eventget`: the download after an event recorded on the compute stream has completed
  (the copy then finds no queued work): the candidate fix, if `ntt+get` is the slow one.

On an H100 (2026-12-07) the staging beside MSMs took the hold's length in every variant, the
time in `enqueue` (queueing the copies on the upload stream), not in the pool; the last three
variants tell whether the holder's host waits are what the enqueue waits for.

Prints per variant the median of `--runs`: the staging's seconds and its parts, its ratio to
`alone`, the hold's seconds, how long after the hold's end the staging ended, and the pool's
device allocations (all and full-device ones) it took. Every staged copy is checked. CUDA only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cuzk.algebra.constants import root_of_unity
from cuzk.algebra.curves import G1
from cuzk.backends.cuda import CudaBackend
from gpu import make_bases, random_fr_device

VARIANTS = (
    "alone",
    "hold",
    "hold+upload",
    "hold+download",
    "edge",
    "hold+sampler",
    "edge+sampler",
    "ntt",
    "ntt+sync",
    "ntt+get",
    "ntt+eventget",
)


class Bench:
    def __init__(self, log_n: int, stage_rows: int, hold_msms: int, hold_ntts: int, wait_every: int) -> None:
        self.be = be = CudaBackend(pinned_staging=True)
        self.cp: Any = be.rt.xp  # CuPy
        self.bases, _ = make_bases(be, G1, "g1", log_n, 1)
        self.scalars = random_fr_device(be, 1 << log_n, 2)
        be.msm(self.bases, self.scalars)  # kernels compiled, scratch cached
        self.omega = root_of_unity(log_n)
        be.ntt(self.scalars, self.omega)
        rng = np.random.default_rng(3)
        self.host = np.empty((stage_rows, 4), dtype=np.uint64)
        self.host[:] = rng.integers(0, 2**63, size=(1, 4), dtype=np.uint64)  # every page touched
        self.host[:, 0] = np.arange(stage_rows, dtype=np.uint64)  # each row its own
        self.upload_rows = np.ones((stage_rows // 4, 4), dtype=np.uint64)
        self.hold_msms, self.hold_ntts, self.wait_every = hold_msms, hold_ntts, wait_every
        self._filler: Any = None  # the `edge` variant's hold on the rest of the card

    def holder(self, out: dict[str, float], started: threading.Event, download: bool, kind: str) -> None:
        """MSMs (`kind` "msm"), or NTTs with no host wait ("ntt") or one every `wait_every` of
        them ("ntt+sync": a stream synchronize, "ntt+get": an 8-byte download, "ntt+eventget":
        the same after an event's completion)."""
        be = self.be
        with be.activate():
            dev = self.cp.empty(self.host.shape, dtype=np.uint64) if download else None
            started.set()
            t0 = time.perf_counter()
            if kind == "msm":
                for _ in range(self.hold_msms):
                    be.msm(self.bases, self.scalars)
            else:
                for k in range(1, self.hold_ntts + 1):
                    y = be.ntt(self.scalars, self.omega)
                    if k % self.wait_every == 0 and kind == "ntt+sync":
                        be.synchronize()
                    elif k % self.wait_every == 0 and kind == "ntt+get":
                        be.to_host(y[:1, :1])
                    elif k % self.wait_every == 0 and kind == "ntt+eventget":
                        be.rt.compute.record().synchronize()  # type: ignore[attr-defined]
                        be.to_host(y[:1, :1])
                be.synchronize()
            if dev is not None:
                be.to_host(dev)
            out["hold_end"] = time.perf_counter()
            out["hold"] = out["hold_end"] - t0

    def uploader(self) -> None:
        with self.be.activate():
            x = self.be.to_device(self.upload_rows)
            self.be.synchronize()
            del x

    def sampler(self, stop: threading.Event, reads: list[float]) -> None:
        while not stop.wait(0.05):
            t0 = time.perf_counter()
            self.be.memory_info()
            reads.append(time.perf_counter() - t0)

    def once(
        self, holder: str | None, download: bool = False, upload: bool = False, sampler: bool = False
    ) -> dict[str, Any]:
        be = self.be
        be.synchronize()
        res: dict[str, Any] = {}
        threads = []
        stop, reads = threading.Event(), list[float]()
        if sampler:
            threads.append(threading.Thread(target=self.sampler, args=(stop, reads)))
            threads[-1].start()
        if holder:
            started = threading.Event()
            threads.append(threading.Thread(target=self.holder, args=(res, started, download, holder)))
            threads[-1].start()
            started.wait()
            time.sleep(0.15)  # the holder's first kernels are queued (a benchmark, not a test)
        if upload:
            threads.append(threading.Thread(target=self.uploader))
            threads[-1].start()
        before = be.memory_info()
        times: dict[str, float] = {}
        t0 = time.perf_counter()
        out = be.stage(self.host, times=times)
        end = time.perf_counter()
        after = be.memory_info()
        stop.set()
        for t in threads:
            t.join()
        if reads:
            res["sampler_max_read"] = max(reads)
        rows = [0, len(self.host) // 2, len(self.host) - 1]
        got = np.concatenate([be.to_host(out[r : r + 1]) for r in rows])
        if not np.array_equal(got, self.host[rows]):
            raise AssertionError("the staged copy differs from the host rows")
        del out
        res.update(stage=end - t0, parts=times)
        res["mallocs"] = int(after.get("mallocs") or 0) - int(before.get("mallocs") or 0)
        res["mallocs_full"] = int(after.get("mallocs_full") or 0) - int(before.get("mallocs_full") or 0)
        if holder:
            res["end_after_hold"] = end - res["hold_end"]
        return res

    def edge(self) -> Callable[[], None]:
        """Fill the card to within ~3 GiB, with 6 GiB of free blocks cached in the compute
        stream's arena; returns the call that caches those blocks again before each run."""
        rt: Any = self.be.rt  # a CupyRuntime: its pool and device
        cp = self.cp
        self._filler = None  # a previous edge's, and its cached block
        cp.get_default_memory_pool().free_all_blocks()
        with rt.guard("clean pool"):
            rt.pool.free_all_blocks()
        self.be.msm(self.bases, self.scalars)

        def recache() -> None:
            with rt.guard("cache in the compute arena"):
                a = cp.empty(6 << 30, dtype=np.uint8)
                del a

        recache()
        free = int(rt.device.mem_info[0])
        self._filler = cp.empty(max(0, free - (3 << 30)), dtype=np.uint8)  # CuPy's default pool, live
        return recache


def median(rows: list[dict[str, Any]], key: str) -> float | None:
    vals = [r[key] for r in rows if key in r]
    return statistics.median(vals) if vals else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--log-n", type=int, default=24, help="the holder's MSM size (2^n points)")
    ap.add_argument("--hold-msms", type=int, default=8, help="MSMs in one hold")
    ap.add_argument("--hold-ntts", type=int, default=200, help="NTTs in one hold (the ntt variants)")
    ap.add_argument("--ntt-wait-every", type=int, default=20, help="NTTs between host waits")
    ap.add_argument("--stage-rows", type=int, default=1 << 27, help="Fr rows staged (2^27: 4.3 GB)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    args = ap.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        ap.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    bench = Bench(args.log_n, args.stage_rows, args.hold_msms, args.hold_ntts, args.ntt_wait_every)
    results: dict[str, Any] = {"args": vars(args) | {"out": str(args.out)}, "device": bench.be.describe()}
    base = None
    print(f"{'variant':14s} {'stage ms':>9s} {'x alone':>8s} {'hold ms':>8s} {'end-hold':>9s} "
          f"{'mallocs':>8s} {'full':>5s}  parts (ms)")  # fmt: skip
    for name in variants:
        before: Callable[[], None] | None = bench.edge() if name.startswith("edge") else None
        rows = []
        for _ in range(args.runs):
            if before is not None:
                before()
            rows.append(
                bench.once(
                    holder=None if name == "alone" else (name if name.startswith("ntt") else "msm"),
                    download=name == "hold+download",
                    upload=name == "hold+upload",
                    sampler=name.endswith("+sampler"),
                )
            )
        stage = median(rows, "stage") or 0.0
        if name == "alone":
            base = stage
        parts = {k: round(1e3 * statistics.median(r["parts"].get(k, 0.0) for r in rows), 1)
                 for k in sorted({k for r in rows for k in r["parts"]})}  # fmt: skip
        hold, after = median(rows, "hold"), median(rows, "end_after_hold")
        slowest_read = max((r.get("sampler_max_read", 0.0) for r in rows), default=0.0)
        results[name] = {"runs": rows, "stage_ms": round(stage * 1e3, 1), "parts_ms": parts}
        print(
            f"{name:14s} {stage * 1e3:9.1f} {(stage / base if base else float('nan')):8.2f} "
            f"{(hold or float('nan')) * 1e3:8.1f} {(after or float('nan')) * 1e3:9.1f} "
            f"{median(rows, 'mallocs'):8.0f} {median(rows, 'mallocs_full'):5.0f}  {parts}"
            + (f"  slowest memory_info {slowest_read * 1e3:.1f} ms" if slowest_read else ""),
            flush=True,
        )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "staging_beside_hold.json").write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
