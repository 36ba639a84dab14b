"""Per-phase medians of native Groth16 proving on the CPU backend.

    python benchmarks/prove_cpu.py [--circuit porep-small] [--runs 5] [--batch 1] [--json out.json]

Parameters are generated once (cached under the user cache dir) and made
resident before timing: the figure is the proving time with parameters
loaded, as the engine runs. Each run proves a fresh instance (seed = run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from rich.console import Console
from rich.table import Table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--circuit", default="porep-small")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--json", help="also write the medians here")
    args = ap.parse_args(argv)

    from cuzk.backends import get_backend
    from cuzk.circuits import get_circuit
    from cuzk.groth16 import load_or_create_parameters, make_resident, prove
    from cuzk.instrument import Timeline

    con = Console(stderr=True)
    backend = get_backend(args.backend)
    circuit = get_circuit(args.circuit)
    t = time.perf_counter()
    topo = circuit.topology()
    con.print(f"topology: {topo.num_constraints} constraints, {time.perf_counter() - t:.2f} s")
    t = time.perf_counter()
    _, params = load_or_create_parameters(circuit.name, topo, topo.hash, backend, progress=con.print)
    srs = make_resident(params, topo, backend)
    con.print(f"parameters ready in {time.perf_counter() - t:.2f} s")
    # warm-up: numba's first calls load compiled code from its cache
    prove(topo, [circuit.witness(circuit.random_instance(seed=10_000))], srs)

    per_phase: dict[str, list[float]] = {}
    totals: list[float] = []
    for run in range(args.runs):
        tl = Timeline()
        t0 = time.perf_counter()
        with tl.span("witness"):
            wits = [
                circuit.witness(circuit.random_instance(seed=run * args.batch + j)) for j in range(args.batch)
            ]
        prove(topo, wits, srs, timeline=tl)
        totals.append(time.perf_counter() - t0)
        for name, secs in tl.totals().items():
            per_phase.setdefault(name, []).append(secs)
        con.print(f"run {run}: {totals[-1]:.3f} s")

    table = Table(title=f"{args.circuit} x{args.batch} on {backend.name}: median of {args.runs}")
    table.add_column("phase")
    table.add_column("median ms", justify="right")
    table.add_column("min ms", justify="right")
    medians = {k: statistics.median(v) for k, v in per_phase.items()}
    for name, vals in per_phase.items():
        table.add_row(name, f"{medians[name] * 1e3:.1f}", f"{min(vals) * 1e3:.1f}")
    table.add_row(
        "total (witness..verify)", f"{statistics.median(totals) * 1e3:.1f}", f"{min(totals) * 1e3:.1f}"
    )
    Console().print(table)
    print(f"constraints={topo.num_constraints} backend={backend.describe()}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {"circuit": args.circuit, "medians_s": medians, "total_s": statistics.median(totals)}, fh
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
