"""Run speed of the CPU backend's hot kernels, for before/after comparisons of kernel changes.

A 2^k G1 MSM (random bases and scalars, none 0 or 1, so all of it goes through Pippenger),
a 2^k G2 MSM of the same kind (2^(k-2) points: G2 is ~3x slower per point), and a forward
2^k NTT; each timed `--runs` times after one warm-up call (which also compiles), median and
minimum printed. Compile time is excluded.

    python tools/kernel_speed.py --log 16 --runs 7
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """(median, min) seconds of `runs` calls after one warm-up call."""
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log", type=int, default=16, help="log2 of the sizes (default 16)")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)

    import numpy as np

    from cuzk.algebra import G1, G2
    from cuzk.algebra.constants import root_of_unity
    from cuzk.algebra.fields import FR
    from cuzk.backends.cpu import CpuBackend

    rng = np.random.default_rng(1)
    be = CpuBackend()
    n = 1 << args.log
    cases: list[tuple[str, Callable[[], object]]] = []
    for curve, count in ((G1, n), (G2, n >> 2)):
        pts = curve.random(count, rng)
        bases = be.load_bases(pts, "g1" if curve is G1 else "g2")
        scalars = FR.random(count, rng)
        cases.append(
            (f"msm {curve.name} 2^{count.bit_length() - 1}", lambda b=bases, s=scalars: be.msm(b, s))
        )
    coeffs = FR.random(n, rng)
    omega = root_of_unity(args.log)
    cases.append((f"ntt 2^{args.log}", lambda: be.ntt(coeffs, omega)))
    for name, fn in cases:
        med, low = timed(fn, args.runs)
        print(f"{name:14s} median {med * 1e3:8.1f} ms  min {low * 1e3:8.1f} ms  ({args.runs} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
