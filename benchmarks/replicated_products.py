"""A replicated circuit's A.w, B.w, C.w on a backend: one `spmv_copies` per matrix against the
per-copy gathers it replaced (GPU_NOTES v35), on one random witness of the circuit's width.

    python benchmarks/replicated_products.py --circuit porep-32g --backend cuda --runs 3

Prints the median of `--runs` for each path, their ratio, whether both gave the same a, b, c,
and each matrix's `spmv_copies` alone; on the CUDA backend also with the rows in their natural
order, the kernel before rows went longest first (GPU_NOTES v36), and that both orders agree.
The witness is random (not a satisfying one): the products, not the satisfaction check, are
what is timed. On the CPU backend both paths gather
(the default `spmv_copies`), so the ratio there is ~1.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.backends import get_backend
from cuzk.backends.cuda import CudaBackend
from cuzk.circuits import get_circuit
from cuzk.r1cs.replicate import ReplicatedTopology


def median_ms(be: Any, fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(runs):
        out = None  # the previous result's memory goes back first
        be.synchronize()
        t = time.perf_counter()
        out = fn()
        be.synchronize()
        times.append((time.perf_counter() - t) * 1e3)
    return round(statistics.median(times), 2), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--circuit", default="winning-32g")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    t = time.perf_counter()
    topo = get_circuit(args.circuit).topology()
    if not isinstance(topo, ReplicatedTopology):
        ap.error(f"{args.circuit} is not a replicated circuit (try porep-32g, wpost-32g, winning-32g)")
    print(
        f"{args.circuit}: topology in {time.perf_counter() - t:.1f} s, {topo.num_constraints:,} rows",
        flush=True,
    )
    be = get_backend(args.backend)
    xp, lay = be.xp, topo.layout
    rng = np.random.default_rng(1)
    host = rng.integers(0, 1 << 62, size=(topo.num_columns, 4), dtype=np.uint64)
    host[0] = FR.one()
    w = be.to_device(host)
    del host
    d_in = w[: lay.num_inputs]

    def gather(cols: Any) -> Any:
        return xp.take(w, cols, axis=0)

    old_ms, old = median_ms(be, lambda: topo._products(be, gather, d_in), args.runs)
    old = [be.to_host(v) for v in old]
    new_ms, new = median_ms(be, lambda: topo._products(be, gather, d_in, whole=w), args.runs)
    same = all(np.array_equal(be.to_host(v), o) for v, o in zip(new, old, strict=True))
    del old, new
    print(f"per-copy gathers {old_ms} ms, spmv_copies {new_ms} ms: ratio {new_ms / old_ms:.3f}, "
          f"same a, b, c: {same}", flush=True)  # fmt: skip
    local = topo._backend_cols(be)[1]
    out = xp.empty((lay.copies * lay.unit_rows, 4), dtype=xp.uint64)
    with be.activate():
        for which, name in enumerate("ABC"):
            cols, strides = local[which]
            mat = topo._local[which].matrix
            call = partial(be.spmv_copies, mat, w, cols, strides, lay.copies, out)
            ms, _ = median_ms(be, call, args.runs)
            line = f"{name}: spmv_copies {ms} ms ({mat.nnz:,} entries per copy, {lay.copies} copies)"
            if isinstance(be, CudaBackend):
                sorted_out = out.copy()
                ms_natural = natural_order_ms(be, mat, w, cols, strides, lay.copies, out, args.runs)
                agree = bool((out == sorted_out).all())
                same &= agree
                del sorted_out
                line += (
                    f"; rows in natural order {ms_natural} ms (ratio {ms / ms_natural:.3f}, same: {agree})"
                )
            print(line, flush=True)
    return 0 if same else 1


def natural_order_ms(
    be: Any, mat: Any, w: Any, cols: Any, strides: Any, copies: int, out: Any, runs: int
) -> float:
    """The same launch with the identity row order: the baseline of v36, in the same run."""
    from dataclasses import replace

    from cuzk.backends.cuda import spmv as cuda_spmv

    dev = be._spmv.get(mat)
    natural = replace(dev, order=be.xp.arange(dev.rows, dtype=np.int32))
    ms, _ = median_ms(be, partial(cuda_spmv.spmv_copies, be.rt, natural, w, cols, strides, copies, out), runs)
    return ms


if __name__ == "__main__":
    raise SystemExit(main())
