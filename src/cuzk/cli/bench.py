"""`cuzk bench`: microbenchmarks, one sub-command each (registered in SUBCOMMANDS).

`cuzk bench synth --circuit NAME` times per-proof synthesis without a GPU or
an SRS: the witness program, the three sparse products a = A.w, b = B.w,
c = C.w, and the density step (gathering the scalars of the A and B queries),
and prints per-step medians, constraints per second, and peak memory.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from cuzk.cli.bench_ab import register as _register_ab
from cuzk.cli.bench_batch import register as _register_batch
from cuzk.cli.bench_single import register as _register_single
from cuzk.cli.output import (
    add_backend_option,
    add_timeline_option,
    check_output_paths,
    nonnegative_int,
    positive_int,
    require_subcommand,
    write_timeline,
)

STEPS = ("witness", "matvec_a", "matvec_b", "matvec_c", "density")


def _register_synth(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("synth", help="synthesis-only microbenchmark: witness program + A.w, B.w, C.w")
    p.add_argument("--circuit", required=True, help="a registered circuit (see `cuzk circuits`)")
    p.add_argument(
        "--iterations", type=positive_int, default=5, help="timed runs after one warm-up (default 5)"
    )
    p.add_argument("--seed", type=nonnegative_int, default=0, help="instance seed")
    add_backend_option(p)
    p.add_argument("--profile", action="store_true", help="add a cProfile summary of the top functions")
    p.add_argument("--no-cache", action="store_true", help="record the topology instead of using the cache")
    add_timeline_option(p)
    p.set_defaults(func=run_synth)


#: name -> function adding that sub-command's parser to `cuzk bench`'s sub-parsers.
SUBCOMMANDS: dict[str, Callable[[argparse._SubParsersAction], None]] = {
    "synth": _register_synth,
    "single": _register_single,
    "ab": _register_ab,
    "batch": _register_batch,
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="benchmarks: single (prove), synth (synthesis only), ab (A/B)")
    bench_sub = p.add_subparsers(dest="bench_command", metavar="BENCH")
    for reg in SUBCOMMANDS.values():
        reg(bench_sub)
    require_subcommand(p)


def synth_once(c: Any, topo: Any, inst: Any, backend: Any, tl: Any) -> None:
    """One per-proof synthesis, each step in a span of the timeline."""
    import numpy as np

    with tl.span("witness"):
        wit = c.witness(inst)
    w = backend.to_device(wit.full())
    for name, m in (("matvec_a", topo.A), ("matvec_b", topo.B), ("matvec_c", topo.C)):
        with tl.span(name):
            backend.spmv(m, w)
            backend.synchronize()
    with tl.span("density"):
        ni = topo.num_inputs
        np.concatenate([wit.inputs, wit.aux[topo.a_aux_density]])
        np.concatenate([wit.inputs[topo.b_input_density], wit.aux[topo.b_aux_density]])
    _ = ni


def run_synth(args: argparse.Namespace) -> int:
    import numba

    from cuzk.backends import get_backend
    from cuzk.circuits import get_circuit
    from cuzk.instrument.spans import Timeline

    check_output_paths(args.timeline)
    c = get_circuit(args.circuit)
    backend = get_backend(args.backend)
    t0 = time.perf_counter()
    topo = c.topology(use_cache=not args.no_cache)
    print(
        f"circuit {c.name}: {topo.num_constraints:,} constraints, {topo.num_aux:,} aux, {topo.num_inputs} inputs"
    )
    print(f"topology: {c.cache_status} in {time.perf_counter() - t0:.2f} s; hash {topo.hash[:16]}")
    inst = c.random_instance(args.seed)
    topo.check(c.witness(inst), backend)  # warm-up (numba compiles) and a correctness check
    tracemalloc.start()
    synth_once(c, topo, inst, backend, Timeline())
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    profiler = cProfile.Profile() if args.profile else None
    runs = []
    timelines = []
    for i in range(args.iterations):
        tl = Timeline(job=f"{c.name}-{i}")
        timelines.append(tl)
        if profiler:
            profiler.enable()
        t = time.perf_counter()
        synth_once(c, topo, inst, backend, tl)
        total = time.perf_counter() - t
        if profiler:
            profiler.disable()
        runs.append((tl.totals(), total))
    write_timeline(args.timeline, timelines)
    threads = numba.get_num_threads()
    print(f"backend {backend.name}, {threads} threads, {args.iterations} iterations (medians):")
    for step in STEPS:
        med = statistics.median(r[0].get(step, 0.0) for r in runs)
        print(f"  {step:10s} {1e3 * med:10.2f} ms")
    total = statistics.median(r[1] for r in runs)
    rate = topo.num_constraints / total
    print(f"  {'total':10s} {1e3 * total:10.2f} ms")
    print(f"constraints/s: {rate / 1e6:.3f} M total, {rate / threads / 1e6:.3f} M per core ({threads} cores)")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"peak memory: {traced_peak / 2**20:.1f} MiB allocated by one synthesis; process peak RSS {rss:.1f} MiB"
    )
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(20)
        print(out.getvalue())
    return 0
