"""`cuzk bench ab`: the regression hunt in one command. A and B settings, alternated, judged per phase.

    cuzk bench ab --circuit porep-small --a '' --b 'msm.window.l=2' --runs 5
    cuzk bench ab --circuit porep-medium --a 'staging.pinned=off' --b 'staging.pinned=on' --engine --count 4

Runs alternate A and B (ABAB, after one warm-up proof each, so drift hits
both), on the same instance seeds. Per phase it prints A's and B's medians,
the delta, the noise band estimated from the repeats and a verdict
(cuzk.instrument.abtest); it names the toggles that differ and writes both
waterfalls. Exit status 1 when B's total regresses beyond the noise band, so
it can guard CI; `--json` writes the report. Below 5 runs per side every
verdict is "too few runs" (the noise cannot be estimated) and the exit is 0.

Single-proof mode proves through two LocalProvers (parameters resident, one
per side); `--engine` runs batches of `--count` jobs through two engines and
compares per-job phase medians and the steady-state seconds per job.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import time
from pathlib import Path
from typing import Any

from cuzk.cli.output import (
    add_backend_option,
    add_timeline_option,
    check_output_dir,
    check_output_paths,
    output_dir,
    output_file,
    positive_int,
    write_timeline,
)
from cuzk.instrument.abtest import MIN_RUNS

#: toggles that act only inside the engine (no effect on one proof in the caller's thread)
ENGINE_ONLY = (
    "batch.max_size",
    "gpu.workers_per_device",
    "synthesis.workers",
    "finalize.split",
    "upload.prestage",
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ab", help="A/B: alternate two settings, per-phase medians, noise band and verdicts")
    p.add_argument("--circuit", default="porep-tiny", help="a registered circuit (default porep-tiny)")
    p.add_argument("--a", default="", help="settings of side A: 'key=value ...' (default: the defaults)")
    p.add_argument("--b", default="", help="settings of side B: 'key=value ...'")
    p.add_argument(
        "--runs",
        type=positive_int,
        default=MIN_RUNS,
        help=f"timed runs per side after a warm-up (default {MIN_RUNS}; fewer: 'too few runs', no verdict)",
    )
    p.add_argument("--engine", action="store_true", help="run batches of jobs through the pipelined engine")
    p.add_argument("--count", type=positive_int, default=4, help="--engine: jobs per batch (default 4)")
    p.add_argument(
        "--out-dir",
        type=output_dir,
        default=Path("bench-ab"),
        help="waterfalls and timelines (default ./bench-ab)",
    )
    p.add_argument("--json", type=output_file, help="write the report as JSON here")
    add_timeline_option(p)
    add_backend_option(p)
    p.set_defaults(func=cmd_ab)


def _settings(text: str) -> dict[str, Any]:
    from cuzk.toggles import parse_settings

    return parse_settings(shlex.split(text))


def _phases(tl: Any) -> dict[str, float]:
    """Top-level spans of one proof (or job), summed by name."""
    out: dict[str, float] = {}
    for s in tl.spans:
        if s.depth == 0:
            out[s.name] = out.get(s.name, 0.0) + s.seconds
    return out


class _Side:
    """One side's prover: a LocalProver on a backend configured by the side's toggles."""

    def __init__(self, circuit: str, settings: dict[str, Any], backend_name: str | None) -> None:
        from cuzk.backends import backend_settings, get_backend
        from cuzk.engine import LocalProver, work
        from cuzk.toggles import resolved

        self.values = resolved(settings)
        self.settings = settings
        self.circuit = circuit
        # each side's own backend, its settings fixed (one instance where the two sides agree)
        self.backend = get_backend(backend_name, settings=backend_settings(self.values))
        from cuzk.engine.loader import resolve_g2

        g2_on = resolve_g2(self.values["msm.g2_on"], circuit, self.backend)
        g2 = work.g2_backend(g2_on, self.backend)
        self.prover = LocalProver(self.backend, g2_backend=g2, precompute=self.values["msm.precompute"])

    def run(self, seed: int) -> tuple[dict[str, float], Any]:
        from cuzk.engine import ProofRequest
        from cuzk.instrument import Timeline

        tl = Timeline(self.circuit)
        request = ProofRequest(circuit=self.circuit, seed=seed, options=self.settings)
        t0 = time.perf_counter()
        self.prover.prove(request, timeline=tl)
        wall = time.perf_counter() - t0
        phases = _phases(tl)
        for loading in ("topology", "load_params", "make_resident"):
            phases.pop(loading, None)
        phases["total"] = wall
        return phases, tl


class _EngineSide:
    """One side's engine: batches of `count` jobs; phases are per-job medians, total is seconds per job."""

    def __init__(self, circuit: str, settings: dict[str, Any], backend_name: str | None, count: int) -> None:
        from cuzk.engine import Engine, EngineConfig

        self.circuit, self.settings, self.count = circuit, settings, count
        self.engine = Engine(EngineConfig.from_toggles(settings, backend=backend_name or "auto"))

    def run(self, seed: int) -> tuple[dict[str, float], Any]:
        from cuzk.engine import JobStatus, ProofRequest
        from cuzk.errors import ProofError
        from cuzk.instrument import Timeline

        t0 = time.perf_counter()
        handles = [
            self.engine.submit(
                ProofRequest(circuit=self.circuit, seed=seed * self.count + j, options=self.settings)
            )
            for j in range(self.count)
        ]
        results = [h.result() for h in handles]
        wall = time.perf_counter() - t0
        bad = [r for r in results if r.status is not JobStatus.COMPLETED]
        if bad:
            raise ProofError(f"{len(bad)} engine job(s) did not complete: {bad[0].error}")
        per_job = [_phases(r.timeline) for r in results]
        names = list(dict.fromkeys(p for d in per_job for p in d))
        phases = {p: statistics.median(d.get(p, 0.0) for d in per_job) for p in names}
        phases["total"] = wall / self.count
        merged = Timeline(self.circuit)
        for r in results:
            merged.merge(r.timeline)
        return phases, merged

    def close(self) -> None:
        self.engine.shutdown(wait=True)


def run_ab(
    circuit: str,
    a: dict[str, Any],
    b: dict[str, Any],
    *,
    runs: int,
    backend_name: str | None = None,
    engine: bool = False,
    count: int = 4,
    say: Any = None,
) -> dict[str, Any]:
    """Alternate A and B; the report with per-phase verdicts and the last timelines of each side."""
    from cuzk.instrument.abtest import TOO_FEW, alternate, compare
    from cuzk.toggles import differing

    say = say or (lambda _m: None)
    sides: dict[str, Any] = {}
    try:
        for name, settings in (("a", a), ("b", b)):
            sides[name] = (
                _EngineSide(circuit, settings, backend_name, count)
                if engine
                else _Side(circuit, settings, backend_name)
            )
        for name in ("a", "b"):
            say(f"warm-up {name.upper()}")
            sides[name].run(10_000)
        runs_by_side: dict[str, list[dict[str, float]]] = {"a": [], "b": []}
        last: dict[str, Any] = {}
        for i, name in enumerate(alternate(runs)):
            phases, tl = sides[name].run(i // 2)
            runs_by_side[name].append(phases)
            last[name] = tl
            say(f"run {i + 1}/{2 * runs} ({name.upper()}): {phases['total'] * 1e3:.1f} ms")
    finally:
        for side in sides.values():
            if hasattr(side, "close"):
                side.close()
    verdicts = compare(runs_by_side["a"], runs_by_side["b"])
    return {
        "circuit": circuit,
        "mode": "engine" if engine else "single",
        "runs": runs,
        "a": {k: str(v) for k, v in a.items()},
        "b": {k: str(v) for k, v in b.items()},
        "differing": differing(a, b),
        "phases": [
            {
                "phase": v.phase,
                "a_median_ms": v.a_median * 1e3,
                "b_median_ms": v.b_median * 1e3,
                "delta_ms": v.delta * 1e3,
                "ratio": v.ratio,
                "band_ms": v.band * 1e3,
                "verdict": v.verdict,
            }
            for v in verdicts
        ],
        "regressed": next(v.verdict for v in verdicts if v.phase == "total") == "regressed",
        "too_few_runs": any(v.verdict == TOO_FEW for v in verdicts),
        "timelines": last,
    }


def cmd_ab(args: argparse.Namespace) -> int:
    from rich.table import Table

    from cuzk.cli.output import console, progress_printer
    from cuzk.instrument.waterfall import render
    from cuzk.toggles import resolved

    check_output_paths(args.json, args.timeline)
    check_output_dir(args.out_dir)
    a, b = _settings(args.a), _settings(args.b)
    if not args.engine:
        engine_only = [k for k in ENGINE_ONLY if resolved(a)[k] != resolved(b)[k]]
        if engine_only:
            from cuzk.errors import UsageError

            raise UsageError(f"{', '.join(engine_only)} act only inside the engine: add --engine")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    report = run_ab(
        args.circuit, a, b, runs=args.runs, backend_name=args.backend, engine=args.engine, count=args.count,
        say=progress_printer(),
    )  # fmt: skip
    con = console()
    table = Table(
        title=f"bench ab {args.circuit} ({report['mode']}, {args.runs} runs per side, ABAB): "
        f"differs in {', '.join(report['differing']) or 'nothing (A vs A)'}",
        title_justify="left",
    )
    for col in ("phase", "A ms", "B ms", "delta ms", "B/A", "noise ms", "verdict"):
        table.add_column(col, justify="left" if col in ("phase", "verdict") else "right", no_wrap=True)
    for row in report["phases"]:
        colour = {"regressed": "red", "improved": "green"}.get(row["verdict"], "")
        table.add_row(
            row["phase"],
            f"{row['a_median_ms']:.1f}",
            f"{row['b_median_ms']:.1f}",
            f"{row['delta_ms']:+.1f}",
            f"{row['ratio']:.2f}",
            f"±{row['band_ms']:.1f}",
            f"[{colour}]{row['verdict']}[/{colour}]" if colour else row["verdict"],
        )
    con.print(table)
    for name in ("a", "b"):
        tl = report["timelines"][name]
        jsonl = args.out_dir / f"{name}.jsonl"
        jsonl.write_text("".join(json.dumps(r) + "\n" for r in tl.records()))
        render(tl.records(), args.out_dir / f"{name}.png", title=f"{args.circuit} side {name.upper()}")
    write_timeline(args.timeline, [report["timelines"]["a"], report["timelines"]["b"]])
    con.print(f"waterfalls: {args.out_dir / 'a.png'}, {args.out_dir / 'b.png'} (timelines beside them)")
    if args.json:
        args.json.write_text(
            json.dumps({k: v for k, v in report.items() if k != "timelines"}, indent=2) + "\n"
        )
    if report["regressed"]:
        con.print("[red]B's total regressed beyond the noise band[/red]")
        return 1
    if report["too_few_runs"]:
        con.print(
            f"too few runs: {args.runs} per side cannot estimate the noise; no verdict "
            f"(--runs {MIN_RUNS} or more)"
        )
    return 0
