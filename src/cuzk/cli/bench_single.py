"""`cuzk bench single`: prove one circuit repeatedly with parameters resident, per-phase medians.

The main job in miniature: the topology and parameters are loaded once (the
parameters generated and cached on first use), then each run makes a fresh
instance, synthesizes, proves and verifies it, timing every phase. The first
proof is a warm-up (numba loads its compiled kernels), reported separately.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from cuzk.cli.output import (
    add_backend_option,
    add_settings_option,
    add_timeline_option,
    check_output_paths,
    input_dir,
    output_file,
    positive_int,
    write_timeline,
)
from cuzk.errors import UsageError
from cuzk.paths import write_atomic


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("single", help="prove one circuit N times with parameters loaded: per-phase medians")
    p.add_argument("--circuit", default="porep-tiny", help="a registered circuit (default porep-tiny)")
    p.add_argument("--runs", type=positive_int, default=3, help="timed proofs after the warm-up (default 3)")
    p.add_argument("--batch", type=positive_int, default=1, help="circuits per proof pass (default 1)")
    p.add_argument("--params", type=input_dir, help="a `cuzk setup` directory (default: the cache)")
    add_backend_option(p)
    p.add_argument("--g2-on-cpu", action="store_true", help="the G2 MSM on the CPU backend")
    p.add_argument("--json", type=output_file, help="also write the figures here")
    add_settings_option(p)
    add_timeline_option(p)
    p.set_defaults(func=cmd_single)


def run_single(
    circuit_name: str,
    *,
    runs: int = 3,
    batch: int = 1,
    backend_name: str | None = None,
    params_dir: Path | None = None,
    g2_on_cpu: bool = False,
    settings: dict[str, Any] | None = None,
    say: Any = None,
) -> dict[str, Any]:
    """Prove `runs` times; returns per-phase medians (seconds), setup facts and the timelines."""
    from cuzk.backends import backend_settings, get_backend
    from cuzk.circuits import get_circuit
    from cuzk.engine import LocalProver, ProofRequest, work
    from cuzk.instrument import Timeline

    if runs < 1 or batch < 1:
        raise UsageError("--runs and --batch must be at least 1")
    say = say or (lambda _m: None)
    from cuzk.toggles import resolved

    values = resolved(settings)
    backend = get_backend(backend_name, settings=backend_settings(values))  # its settings fixed
    from cuzk.engine.loader import resolve_g2

    g2_on = "cpu" if g2_on_cpu else resolve_g2(values["msm.g2_on"], circuit_name, backend)
    local = LocalProver(
        backend,
        g2_backend=work.g2_backend(g2_on, backend),
        progress=say,
        precompute=values["msm.precompute"],
    )
    timelines = []
    load = Timeline()
    local.resident(ProofRequest(circuit=circuit_name, params_dir=params_dir), timeline=load)
    loading = load.totals()
    t_topo = loading.get("topology", 0.0)
    t_params = loading.get("load_params", 0.0) + loading.get("make_resident", 0.0)
    topo = get_circuit(circuit_name).topology()  # recorded once per process: no second recording

    def one(seed: int) -> tuple[dict[str, float], float]:
        tl = Timeline(job=f"{circuit_name}-{seed}")
        t0 = time.perf_counter()
        request = ProofRequest(
            circuit=circuit_name,
            seed=seed * batch,
            partitions=batch,
            params_dir=params_dir,
            options=settings or {},
        )
        local.prove(request, timeline=tl)
        timelines.append(tl)
        return tl.totals(), time.perf_counter() - t0

    say("warm-up proof")
    _, warm_total = one(10_000)
    results = []
    for r in range(runs):
        results.append(one(r))
        say(f"run {r + 1}/{runs}: {results[-1][1]:.3f} s")
    phases = list(results[0][0])
    return {
        "circuit": circuit_name,
        "constraints": topo.num_constraints,
        "batch": batch,
        "runs": runs,
        "backend": backend.describe(),
        "topology_s": t_topo,
        "params_s": t_params,
        "warmup_s": warm_total,
        "phases_median_s": {p: statistics.median(r[0][p] for r in results) for p in phases},
        "total_median_s": statistics.median(r[1] for r in results),
        "total_min_s": min(r[1] for r in results),
        "timelines": timelines[1:],  # the timed runs (not the warm-up)
    }


def cmd_single(args: argparse.Namespace) -> int:
    from rich.table import Table

    from cuzk.cli.output import compile_seconds, console, progress_printer

    check_output_paths(args.json, args.timeline)
    res = run_single(
        args.circuit,
        runs=args.runs,
        batch=args.batch,
        backend_name=args.backend,
        params_dir=args.params,
        g2_on_cpu=args.g2_on_cpu,
        settings=args.settings,
        say=progress_printer(),
    )
    write_timeline(args.timeline, res.pop("timelines"))
    table = Table(
        title=f"{res['circuit']} ({res['constraints']:,} constraints) x{res['batch']} on "
        f"{res['backend']['backend']}: median of {res['runs']} proofs",
        title_justify="left",
    )
    table.add_column("phase")
    table.add_column("median ms", justify="right")
    for name, secs in res["phases_median_s"].items():
        table.add_row(name, f"{secs * 1e3:.1f}")
    table.add_row("total (witness..verify)", f"{res['total_median_s'] * 1e3:.1f}")
    con = console()
    con.print(table)
    con.print(
        f"topology {res['topology_s']:.2f} s, parameters {res['params_s']:.2f} s, "
        f"warm-up proof {res['warmup_s']:.2f} s"
        + (
            f"; {compile_seconds():.1f} s of these compiling CPU kernels (once)"
            if compile_seconds() >= 0.05
            else ""
        )
        + "; every proof verified"
    )
    if args.json:
        try:
            write_atomic(args.json, json.dumps(res, indent=2) + "\n")
        except OSError as exc:
            raise UsageError(f"{args.json}: cannot write: {exc.strerror or exc}") from exc
    return 0
