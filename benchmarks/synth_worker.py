"""A synthesis worker's per-partition host work, as the engine runs it: witness + hand-off.

The worker computes the witness straight into the shared-memory block it hands to the
engine (engine/synth_worker.py `WitnessBlock`), so `handoff` is only the block's close (and the
a/b/c copy with --abc). `--prefault both` alternates blocks whose pages are mapped before the
program writes them with blocks that fault them in as it writes (A, B, A, B, ...) and prints the
ratio of the medians. Prints each run and the medians; run it on the machine whose synthesis
throughput matters (the device host has 16 cores; one worker is one core).

    python benchmarks/synth_worker.py --circuit porep-32g --runs 3 --prefault both [--abc]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid

from cuzk.backends import get_backend
from cuzk.engine import synth, work
from cuzk.engine.synth_worker import SHM_DIR, WitnessBlock
from cuzk.groth16.prover import evaluate


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--circuit", default="porep-medium")
    ap.add_argument("--runs", type=int, default=5, help="runs per arm")
    ap.add_argument("--prefault", choices=("on", "off", "both"), default="on")
    ap.add_argument(
        "--abc", action="store_true", help="also a = A.w, b = B.w, c = C.w (synthesis.abc_on=worker)"
    )
    args = ap.parse_args()
    c = work.circuit(args.circuit)
    cpu = get_backend("cpu")
    c.witness(c.random_instance(seed=1))  # recording, numba compiles: not timed
    arms = [True, False] if args.prefault == "both" else [args.prefault == "on"]
    rows: dict[bool, list[tuple[float, float, float, float]]] = {a: [] for a in arms}
    for i in range(args.runs):
        for prefault in arms:
            inst = c.random_instance(seed=2 + i)
            name = f"{synth.SHM_PREFIX}bench-{uuid.uuid4().hex[:8]}"
            t0 = time.perf_counter()
            block = WitnessBlock(name, c, with_abc=args.abc, prefault=prefault)
            wit = c.witness(inst, out=block.witness)
            t1 = time.perf_counter()
            abc = evaluate(c.topology(), cpu, wit.full()) if args.abc else None
            del wit
            t2 = time.perf_counter()
            if abc is not None:
                block.put_abc(abc)
            block.close()
            t3 = time.perf_counter()
            os.unlink(os.path.join(SHM_DIR, name))
            rows[prefault].append((t1 - t0, t2 - t1, t3 - t2, t3 - t0))
            print(f"run {i} prefault {'on' if prefault else 'off'}: witness {t1 - t0:.3f} s, "
                  f"matvec {t2 - t1:.3f} s, handoff {t3 - t2:.3f} s, total {t3 - t0:.3f} s", flush=True)  # fmt: skip
    med = {a: [statistics.median(r[i] for r in rs) for i in range(4)] for a, rs in rows.items()}
    for a, m in med.items():
        print(f"{args.circuit}, prefault {'on' if a else 'off'}, median of {args.runs}: witness {m[0]:.3f} s, "
              f"matvec {m[1]:.3f} s, handoff {m[2]:.3f} s, total {m[3]:.3f} s")  # fmt: skip
    if len(med) == 2:
        print(f"prefault on / off, total: {med[True][3] / med[False][3]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
