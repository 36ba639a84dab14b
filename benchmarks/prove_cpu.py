"""Per-phase medians of native Groth16 proving on the CPU backend (issue: porep-small < 5 s).

    python benchmarks/prove_cpu.py [--circuit porep-small] [--runs 5] [--batch 1] [--json out.json]

The same measurement as `cuzk bench single --backend cpu`: parameters are
generated once (cached) and resident before timing; every run proves and
verifies a fresh instance.
"""

from __future__ import annotations

import sys

from cuzk.cli.main import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--circuit" not in args:
        args = ["--circuit", "porep-small", *args]
    if "--runs" not in args:
        args = ["--runs", "5", *args]
    sys.exit(main(["bench", "single", "--backend", "cpu", *args]))
