"""`cuzk bench batch`: N jobs through an in-process engine, then the same jobs one after another.

The engine run gives per-job lines (latency, queue wait, synthesis, GPU-lock
and finalize time, device) and a summary: steady-state seconds per job (the
spacing of completions after the first, so start-up is not counted), proofs
per minute, GPU busy (cuzk.instrument.busy, from the run's own timeline: the figure the
waterfall and `timeline idle` of that timeline print), peak RSS of this process
and of its synthesis workers, and queue waits. Then the same
jobs (same seeds) are proved in this process without the pipeline, and the
ratio of the two wall times is the pipeline's gain. Parameters are loaded and
one warm-up job is run before either timing, so both are warm.

With `--addr`, the jobs go to a running daemon instead (cli/bench_remote.py):
the same per-job lines and summary, from the timings the daemon returns, and
every proof verified here against the circuit's vk.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cuzk.cli.output import (
    add_backend_option,
    add_timeline_option,
    check_output_paths,
    input_file,
    nonnegative_int,
    output_file,
    positive_int,
    write_timeline,
)
from cuzk.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("batch", help="N jobs through the pipelined engine vs one after another")
    p.add_argument("--circuit", required=True, help="a registered circuit (see `cuzk circuits`)")
    p.add_argument("--count", type=positive_int, required=True, help="jobs to prove")
    p.add_argument("--concurrency", type=positive_int, help="jobs in flight at once (default: all)")
    p.add_argument("--partitions", type=positive_int, default=1, help="partitions per job (default 1)")
    p.add_argument(
        "--seed", type=nonnegative_int, default=0, help="job j proves seeds seed + j * partitions ..."
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a named toggle (cuzk.toggles, e.g. batch.max_size=2) or an EngineConfig field "
        "(e.g. memory_budget=8GiB); repeatable",
    )
    p.add_argument("--no-baseline", action="store_true", help="skip the one-after-another run")
    p.add_argument("--json", type=output_file, help="also write the figures here")
    p.add_argument(
        "--addr",
        help="drive a running daemon (unix:///path/cuzk.sock or host:port) instead of an in-process engine",
    )
    p.add_argument("--token", help="with --addr: the daemon's bearer token (default: CUZK_TOKEN)")
    p.add_argument(
        "--vk",
        type=input_file,
        help="with --addr: the circuit's .vk to verify the daemon's proofs against "
        "(default: the one in the local parameter cache)",
    )
    add_timeline_option(p)
    add_backend_option(p)
    p.set_defaults(func=cmd_batch)


def engine_config(backend: str | None, settings: list[str]) -> Any:
    """EngineConfig from --backend and --set KEY=VALUE texts (UsageError naming the valid keys)."""
    from cuzk.engine import EngineConfig

    pairs: dict[str, str] = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set takes KEY=VALUE, not {item!r}; keys: {', '.join(EngineConfig.SETTABLE)}")
        pairs[key.strip()] = value
    base = EngineConfig(backend=backend or "auto")
    return base.with_settings(pairs)


def _seconds(result: Any, name: str) -> float:
    return sum(s.seconds for s in result.timeline.spans if s.name == name)


@contextlib.contextmanager
def progress_bar(con: Any, label: str, count: int) -> Iterator[tuple[Any, Any]]:
    """A transient bar of jobs done, above which the per-job lines are printed."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=con, transient=True) as bar:  # fmt: skip
        yield bar, bar.add_task("jobs", total=count)


def job_name(j: int) -> str:
    """The engine request id of job `j`: how the job is named in its timeline, waterfall and idle report."""
    return f"job-{j}"


def busy_figures(timelines: list[Any]) -> dict[str, Any]:
    """GPU busy of the run from its timelines, by cuzk.instrument.busy (what the waterfall shows)."""
    from cuzk.instrument.busy import device_busy, headline
    from cuzk.instrument.waterfall import build

    records = [rec for tl in timelines for rec in tl.records()]
    if not records:
        return {}
    figures = device_busy(build(records).bars)
    if not figures:
        return {}
    return {
        "gpu_busy": sum(b.fraction for b in figures.values()) / len(figures),
        "gpu_busy_devices": {d: b.fraction for d, b in figures.items()},
        "gpu_busy_line": headline(figures),
    }


def job_line(row: dict[str, Any]) -> str:
    """One job's line: its status, latency and the phase times known for it (None: not measured)."""
    parts = [f"{name} {row[key]:.3f}" for name, key in _PHASES if row.get(key) is not None]
    if row.get("devices") is not None:
        parts[-1] += f"; device {row['devices']}"
    return (
        f"{job_name(row['job'])} seed {row['seed']}: {row['status']} in {row['latency_s']:.3f} s ({', '.join(parts)})"
        + (f": {row['error']}" if row.get("error") else "")
    )


_PHASES = (("queue", "queue_wait_s"), ("srs", "srs_load_s"), ("synthesis", "synthesis_s"), ("gpu", "gpu_s"),
           ("finalize", "finalize_s"))  # fmt: skip


def summary(rows: list[dict[str, Any]], wall: float, partitions: int) -> dict[str, Any]:
    """The run's figures from its job rows: steady state (completion spacing after the first), rate, waits."""
    count = len(rows)
    done_at = sorted(r["done_s"] for r in rows)
    waits = [r["queue_wait_s"] for r in rows]
    return {
        "jobs": rows,
        "wall_s": wall,
        "steady_s_per_job": (done_at[-1] - done_at[0]) / (count - 1) if count > 1 else wall,
        "wall_s_per_job": wall / count,
        "proofs_per_minute": 60.0 * count * partitions / wall,
        "queue_wait_median_s": statistics.median(waits),
        "queue_wait_max_s": max(waits),
        "failed": sum(r["status"] != "completed" for r in rows),
    }


def _peak_rss_mib(pid: int) -> float | None:
    """A live process's peak resident set (Linux VmHWM); None where /proc does not say.

    (getrusage(RUSAGE_CHILDREN) counts only children already waited for: the live synthesis
    workers are not among them.)"""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def run_batch(
    circuit: str,
    count: int,
    *,
    config: Any,
    concurrency: int | None = None,
    partitions: int = 1,
    seed: int = 0,
    baseline: bool = True,
    show: Any = None,
) -> dict[str, Any]:
    """Prove `count` jobs through the engine (and, with baseline, one after another); the figures."""
    from cuzk.cli.output import console
    from cuzk.engine import Engine, JobStatus, ProofRequest, work
    from cuzk.errors import EngineError

    con = show or console()
    window = concurrency or count
    seeds = [seed + j * partitions for j in range(count)]
    out: dict[str, Any] = {"mode": "engine", "circuit": circuit, "count": count, "partitions": partitions,
                           "concurrency": window, "config": {k: getattr(config, k) for k in config.SETTABLE}}  # fmt: skip
    with Engine(config) as engine:
        t = time.perf_counter()
        engine.preload(circuit)
        out["srs_load_s"] = time.perf_counter() - t
        t = time.perf_counter()  # one warm-up partition per synthesis worker, at once: each loads its kernels
        r = engine.submit(
            ProofRequest(circuit=circuit, seed=10**6, partitions=config.synthesis_workers)
        ).result()
        if r.status is not JobStatus.COMPLETED:
            raise EngineError(f"the warm-up job failed: {r.error}")
        out["warmup_s"] = time.perf_counter() - t
        rows: list[dict[str, Any]] = []
        timelines = []
        handles: list[tuple[int, Any, float]] = []
        t0 = time.perf_counter()
        with progress_bar(con, "engine", count) as (bar, task):
            nxt = 0
            while nxt < count or handles:
                while nxt < count and len(handles) < window:
                    req = ProofRequest(  # the job's name in timelines and waterfalls: its number here
                        circuit=circuit, seed=seeds[nxt], partitions=partitions, request_id=job_name(nxt)
                    )
                    handles.append((nxt, engine.submit(req), time.perf_counter()))
                    nxt += 1
                j, h, submitted = handles.pop(0)
                r = h.result()
                done = time.perf_counter()
                timelines.append(r.timeline)
                devices = sorted({s.attrs.get("device") for s in r.timeline.spans if s.name == "device_lock"})
                row = {
                    "job": j, "seed": seeds[j], "status": r.status.value, "error": r.error,
                    "latency_s": done - submitted, "done_s": done - t0,
                    "queue_wait_s": _seconds(r, "queue_wait"), "synthesis_s": _seconds(r, "synthesis"),
                    "gpu_s": _seconds(r, "device_lock"), "lock_wait_s": _seconds(r, "lock_wait"),
                    "finalize_s": _seconds(r, "finalize"), "devices": devices,
                }  # fmt: skip
                rows.append(row)
                bar.console.print(job_line(row), soft_wrap=True)
                bar.advance(task)
        t1 = time.perf_counter()
        out.update(busy_figures(timelines))
        out["memory_peak"] = engine.budget.peak()
        out["memory_budget"] = engine.budget.total
        workers_hwm = [_peak_rss_mib(pid) for pid in engine.status().synthesis_workers.pids]
    out.update(
        timelines=timelines,
        **summary(rows, t1 - t0, partitions),
        peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        peak_rss_children_mib=max((m for m in workers_hwm if m is not None), default=None),
    )
    if baseline:
        from cuzk.engine.loader import engine_backend, g2_placement

        be = engine_backend(config, config.devices[0])
        resident = work.load_resident(circuit, be, config.devices[0], g2_on=g2_placement(config, circuit, be),
                                      params_dir=None)  # fmt: skip
        work.prove_one_by_one(circuit, [10**6], resident)  # warm-up, as for the engine
        all_seeds = [s + p for s in seeds for p in range(partitions)]
        t = time.perf_counter()
        times = work.prove_one_by_one(circuit, all_seeds, resident)
        out["baseline_wall_s"] = time.perf_counter() - t
        out["baseline_s_per_job"] = sum(times) / count
        out["pipeline_gain"] = out["baseline_wall_s"] / out["wall_s"]
    return out


def cmd_batch(args: argparse.Namespace) -> int:
    from cuzk.cli.output import console, progress_printer

    check_output_paths(args.json, args.timeline)
    say = progress_printer()
    if args.addr:
        from cuzk.cli.bench_remote import check_remote_args, run_remote

        check_remote_args(args)
        say(f"daemon at {args.addr}: {args.count} job(s) of {args.circuit} x{args.partitions} partition(s)")
        res = run_remote(args)
    else:
        for name in ("token", "vk"):
            if getattr(args, name):
                raise UsageError(
                    f"--{name} goes with --addr (a daemon); the in-process engine verifies its proofs"
                )
        config = engine_config(args.backend, args.set)
        say(
            f"engine on {config.backend}: {args.count} job(s) of {args.circuit} x{args.partitions} partition(s)"
        )
        res = run_batch(
            args.circuit,
            args.count,
            config=config,
            concurrency=args.concurrency,
            partitions=args.partitions,
            seed=args.seed,
            baseline=not args.no_baseline,
        )
        timelines = res.pop("timelines")
        write_timeline(args.timeline, timelines)
        from cuzk.instrument.idle import summary

        res["idle"] = summary([rec for tl in timelines for rec in tl.records()])
    print_summary(res)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2, default=str) + "\n")
    if res["failed"]:
        console().print(f"{res['failed']} job(s) failed")
        return 1
    return 0


def print_summary(res: dict[str, Any]) -> None:
    """The run's summary lines; the figures a daemon run does not have (GPU busy, memory) are left out."""
    from cuzk.cli.output import console

    con = console()
    busy = f"{res['gpu_busy_line']}; " if "gpu_busy_line" in res else ""
    con.print(
        f"{res['mode']}: {res['count']} job(s) in {res['wall_s']:.3f} s ({res['wall_s_per_job']:.3f} s per job); "
        f"steady state {res['steady_s_per_job']:.3f} s per job (between first and last completion); "
        f"{res['proofs_per_minute']:.1f} proofs/min; {busy}"
        f"queue wait median {res['queue_wait_median_s']:.3f} s, max {res['queue_wait_max_s']:.3f} s",
        soft_wrap=True,
    )
    if "memory_peak" in res:
        con.print(
            f"memory: peak {res['memory_peak'] / 2**20:.1f} MiB reserved of a {res['memory_budget'] / 2**20:.1f} MiB "
            f"budget; peak RSS {res['peak_rss_mib']:.1f} MiB (this process), "
            + (
                f"{res['peak_rss_children_mib']:.1f} MiB (largest synthesis worker)"
                if res.get("peak_rss_children_mib") is not None
                else "synthesis workers not measured"
            ),
            soft_wrap=True,
        )
    for line in res.get("idle", []):  # where the held device idled (cuzk timeline idle), if it did
        con.print(line, highlight=False, soft_wrap=True)
    con.print(
        f"set-up: parameters {res['srs_load_s']:.2f} s, warm-up job {res['warmup_s']:.2f} s (not counted)"
    )
    if "verified" in res:
        con.print(f"verified here: {res['verified']} proof(s) valid against {res['vk']}", soft_wrap=True)
    if "baseline_wall_s" in res:
        con.print(
            f"one after another: {res['baseline_wall_s']:.3f} s ({res['baseline_s_per_job']:.3f} s per job); "
            f"pipeline gain {res['pipeline_gain']:.2f}x",
            soft_wrap=True,
        )
