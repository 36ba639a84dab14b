"""CPU backend benchmark: medians of MSM, NTT and field multiplication, with py_arkworks alongside.

    python benchmarks/cpu.py                 # the full table (a few minutes on 2 cores)
    python benchmarks/cpu.py --quick         # every other size, 2 runs each
    python benchmarks/cpu.py --max-log 14 --json out.json

Rows: MSM G1 2^10..2^18 and MSM G2 2^10..2^16 (ours vs py_arkworks multiexp in
the same run; arkworks is timed including its conversion from our arrays, i.e.
building the G1Point/G2Point and Scalar objects, since that is what using it
would cost), NTT 2^12..2^22 (twiddles for the size cached by a warm-up call, as
in a prover that reuses its domain), and Fr / Fq multiplication throughput.
Scalars are uniform in Fr (no 0/1 fast path). Record figures only on a quiet
machine: a shared, busy one makes every number slower and noisier.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class Row:
    series: str
    log_n: int
    ours_s: float | None = None
    arkworks_s: float | None = None
    rate: float | None = None  # M mul/s for throughput rows
    runs: int = 0

    @property
    def ratio(self) -> float | None:
        if self.ours_s is None or self.arkworks_s is None:
            return None
        return self.ours_s / self.arkworks_s


def median_time(fn: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def sizes(lo: int, hi: int, max_log: int, quick: bool) -> list[int]:
    top = min(hi, max_log)
    return list(range(lo, top + 1, 2 if quick else 1))


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def bench_msm(group: str, logs: list[int], runs: int, rng: np.random.Generator) -> list[Row]:
    import py_arkworks_bls12381 as ark

    from cuzk.algebra import FR, G1, G2
    from cuzk.algebra import encoding as E
    from cuzk.backends.cpu import CpuBackend

    if not logs:
        return []
    cpu = CpuBackend()
    curve = G1 if group == "g1" else G2
    cls = ark.G1Point if group == "g1" else ark.G2Point
    to_ark = E.to_arkworks_g1 if group == "g1" else E.to_arkworks_g2
    n_max = 1 << logs[-1]
    say(f"MSM {group}: generating {n_max} random bases (fixed-base multiples of a random point)")
    bases = cpu.fixed_base_mul(curve.random(1, rng), FR.random(n_max, rng), group)
    scalars_all = FR.random(n_max, rng)
    handle = cpu.load_bases(bases, group)
    cpu.msm(handle, scalars_all[:64])  # load the compiled kernels before timing
    rows = []
    for log_n in logs:
        n = 1 << log_n
        scalars = scalars_all[:n]
        ours = median_time(lambda s=scalars: cpu.msm(handle, s), runs)

        def arkworks(b=bases[:n], s=scalars) -> Any:
            return cls.multiexp_unchecked(to_ark(b), E.to_arkworks_scalars(s))

        theirs = median_time(arkworks, runs)
        row = Row(f"MSM {group.upper()}", log_n, ours, theirs, runs=runs)
        say(f"  2^{log_n}: ours {ours:.4f} s, arkworks {theirs:.4f} s, ratio {row.ratio:.2f}")
        rows.append(row)
    return rows


def bench_ntt(logs: list[int], runs: int, rng: np.random.Generator) -> list[Row]:
    from cuzk.algebra import FR
    from cuzk.algebra import constants as C
    from cuzk.backends.cpu import CpuBackend

    cpu = CpuBackend()
    rows = []
    for log_n in logs:
        a = FR.random(1 << log_n, rng)
        omega = C.root_of_unity(log_n)
        cpu.ntt(a, omega)  # twiddles and kernels ready
        t = median_time(lambda a=a, w=omega: cpu.ntt(a, w), runs)
        say(f"NTT 2^{log_n}: {t:.4f} s")
        rows.append(Row("NTT", log_n, t, runs=runs))
    return rows


def bench_mul(log_n: int, runs: int, rng: np.random.Generator) -> list[Row]:
    from cuzk.algebra import FQ, FR

    rows = []
    for F in (FR, FQ):
        a, b = F.random(1 << log_n, rng), F.random(1 << log_n, rng)
        F.mul(a[:8], b[:8])
        t = median_time(lambda a=a, b=b, F=F: F.mul(a, b), runs)
        rate = (1 << log_n) / t / 1e6
        say(f"{F.name} mul, 2^{log_n} elements: {rate:.1f} M mul/s")
        rows.append(Row(f"{F.name} mul", log_n, t, rate=rate, runs=runs))
    return rows


def machine() -> dict[str, Any]:
    import numba

    from cuzk.backends.cpu import CpuBackend

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "commit": commit,
        "python": platform.python_version(),
        "numba": numba.__version__,
        "cpu": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_1min_at_start": load,
        **CpuBackend().describe(),
    }


def render(rows: list[Row], info: dict[str, Any], command: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"cuzk cpu benchmark: medians, {info['commit']}, {info['cpus']} cpus, {info['date']}",
        title_justify="left",
    )
    for col, justify in (
        ("series", "left"),
        ("n", "right"),
        ("ours s", "right"),
        ("arkworks s", "right"),
        ("ours/arkworks", "right"),
        ("M mul/s", "right"),
        ("runs", "right"),
    ):
        table.add_column(col, justify=justify)
    for r in rows:
        table.add_row(
            r.series,
            f"2^{r.log_n}",
            f"{r.ours_s:.4f}" if r.ours_s is not None else "",
            f"{r.arkworks_s:.4f}" if r.arkworks_s is not None else "",
            f"{r.ratio:.2f}" if r.ratio is not None else "",
            f"{r.rate:.1f}" if r.rate is not None else "",
            str(r.runs),
        )
    con = Console()
    con.print(table)
    con.print(f"command: {command}")
    if info.get("load_1min_at_start") is not None:
        con.print(f"1-minute load average at start: {info['load_1min_at_start']:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="every other size and 2 runs each")
    parser.add_argument("--runs", type=int, default=None, help="runs per measurement (default 5, quick 2)")
    parser.add_argument("--max-log", type=int, default=22, help="cap every series at 2^MAX_LOG")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random inputs")
    args = parser.parse_args(argv)
    runs = args.runs or (2 if args.quick else 5)
    if runs < 1:
        parser.error("--runs must be at least 1")
    rng = np.random.default_rng(args.seed)
    command = "python benchmarks/cpu.py " + " ".join(sys.argv[1:] if argv is None else argv)
    info = machine()
    rows: list[Row] = []
    rows += bench_msm("g1", sizes(10, 18, args.max_log, args.quick), runs, rng)
    rows += bench_msm("g2", sizes(10, 16, args.max_log, args.quick), runs, rng)
    rows += bench_ntt(sizes(12, 22, args.max_log, args.quick), runs, rng)
    rows += bench_mul(min(20, args.max_log), runs, rng)
    render(rows, info, command)
    if args.json:
        payload = {
            "machine": info,
            "command": command,
            "results": [{**asdict(r), "n": 1 << r.log_n, "ratio": r.ratio} for r in rows],
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
