"""A synthesis worker's per-partition host work, as the engine runs it: witness + hand-off.

The worker computes the witness straight into the shared-memory block it hands to the
engine (engine/synth.py `_WitnessBlock`), so `handoff` is only the block's close (and the
a/b/c copy with --abc). Prints each run and the medians; run it on the machine whose
synthesis throughput matters (the device host has 16 cores; one worker is one core).

    python benchmarks/synth_worker.py --circuit porep-13m --runs 5 [--abc]
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from multiprocessing.shared_memory import SharedMemory

from cuzk.backends import get_backend
from cuzk.engine import synth, work
from cuzk.groth16.prover import evaluate


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--circuit", default="porep-medium")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--abc", action="store_true", help="also a = A.w, b = B.w, c = C.w (synthesis.abc_on=worker)"
    )
    args = ap.parse_args()
    c = work.circuit(args.circuit)
    cpu = get_backend("cpu")
    c.witness(c.random_instance(seed=1))  # recording, numba compiles: not timed
    rows = []
    for seed in range(2, 2 + args.runs):
        inst = c.random_instance(seed=seed)
        name = f"{synth.SHM_PREFIX}bench-{uuid.uuid4().hex[:8]}"
        t0 = time.perf_counter()
        block = synth._WitnessBlock(name, c, with_abc=args.abc)
        wit = c.witness(inst, out=block.witness)
        t1 = time.perf_counter()
        abc = evaluate(c.topology(), cpu, wit.full()) if args.abc else None
        del wit
        t2 = time.perf_counter()
        if abc is not None:
            block.put_abc(abc)
        block.close()
        t3 = time.perf_counter()
        SharedMemory(name=name).unlink()
        rows.append((t1 - t0, t2 - t1, t3 - t2, t3 - t0))
        print(f"seed {seed}: witness {t1 - t0:.3f} s, matvec {t2 - t1:.3f} s, handoff {t3 - t2:.3f} s, "
              f"total {t3 - t0:.3f} s", flush=True)  # fmt: skip
    med = [statistics.median(r[i] for r in rows) for i in range(4)]
    print(f"{args.circuit}, median of {args.runs}: witness {med[0]:.3f} s, matvec {med[1]:.3f} s, "
          f"handoff {med[2]:.3f} s, total {med[3]:.3f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
