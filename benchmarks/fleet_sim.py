"""The fleet routing policy at scale: the table and the plot of docs/BENCHMARKS.md (issue 33).

    python benchmarks/fleet_sim.py --nodes 128 --hours 2 --seed 1 --loads 0.85,1.0 \
        --plot docs/img/fleet-sim.png --json docs/fleet-sim.json

Runs `cuzk.cluster.simulate` (the policy code the fleet front runs) for hot-first, round-robin
and least-loaded over the same seeded arrivals at each PoRep load (a fraction of the fleet's
GPU capacity), prints a Markdown table and the figures' sources, and draws one panel per
measure. Deterministic: the same arguments print the same table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from cuzk.cluster.simulate import DEADLINE_S, FIGURES, WINNING_TARGET_S, Scenario, compare


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| PoRep load | policy | PoRep sectors/h | GPU busy | WinningPoSt p50 / p99 s | "
        f"WinningPoSt > {WINNING_TARGET_S:.0f} s | WindowPoSt missed / due | SRS loads |"
    )
    lines = [head, "|" + "---|" * 8]
    for r in rows:
        lines.append(
            f"| {r['load']:.2f} | {r['policy']} | {r['porep_sectors_per_hour']:.0f} | "
            f"{100 * r['gpu_utilization']:.1f}% | {r['winning_p50_s']:.2f} / {r['winning_p99_s']:.2f} | "
            f"{r['winning_over_target']} of {r['winning_jobs']} | {r['wpost_missed']} / {r['wpost_due']} | "
            f"{r['srs_loads']} |"
        )
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    loads = sorted({r["load"] for r in rows})
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    panels = [
        ("porep_sectors_per_hour", "PoRep sectors per hour", 1.0, False),
        ("gpu_utilization", "GPU busy (%)", 100.0, False),
        ("winning_p99_s", "WinningPoSt p99 latency (s, log)", 1.0, True),
        ("wpost_missed", "WindowPoSt deadlines missed", 1.0, False),
        ("srs_loads", "SRS loads", 1.0, False),
    ]
    fig, axes = plt.subplots(1, 5, figsize=(19, 3.8))
    width = 0.8 / len(policies)
    for ax, (key, title, scale, log) in zip(axes, panels, strict=True):
        for i, pol in enumerate(policies):
            ys = [
                next(r[key] for r in rows if r["policy"] == pol and r["load"] == ld) * scale for ld in loads
            ]
            bars = ax.bar([x + i * width for x in range(len(loads))], ys, width, label=pol)
            ax.bar_label(bars, fmt=lambda v: f"{v:.0f}" if v >= 100 else f"{v:.3g}", fontsize=7)
        ax.set_xticks([x + width * (len(policies) - 1) / 2 for x in range(len(loads))])
        ax.set_xticklabels([f"load {ld:.2f}" for ld in loads])
        ax.set_title(title, fontsize=10)
        if not log:
            ax.set_ylim(bottom=0, top=max(1.0, ax.get_ylim()[1]))
        if log:
            ax.set_yscale("log")
            ax.axhline(WINNING_TARGET_S, color="grey", linestyle="--", linewidth=1)
    axes[0].legend(fontsize=8)
    nodes, hours = rows[0]["nodes"], rows[0]["hours"]
    fig.suptitle(f"Fleet routing, simulated: {nodes} GPU nodes, {hours:g} h (benchmarks/fleet_sim.py)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=128)
    ap.add_argument("--hours", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--providers", type=int, default=40)
    ap.add_argument("--loads", default="0.85,1.0", help="PoRep arrival rates as fractions of GPU capacity")
    ap.add_argument("--plot", type=Path, help="write the plot here (PNG)")
    ap.add_argument("--json", type=Path, help="write the rows here")
    ap.add_argument(
        "--replot", action="store_true", help="draw --plot from the rows in --json, simulate nothing"
    )
    args = ap.parse_args()
    if args.replot:
        plot(json.loads(args.json.read_text()), args.plot)
        return
    rows = []
    for load in (float(x) for x in args.loads.split(",")):
        sc = Scenario(
            nodes=args.nodes, hours=args.hours, seed=args.seed, providers=args.providers, porep_load=load
        )
        t0 = time.process_time()
        for r in compare(sc):
            rows.append({**r, "load": load})
        print(f"load {load:.2f}: simulated in {time.process_time() - t0:.1f} s CPU", flush=True)
    print()
    print(table(rows))
    print()
    print(f"WindowPoSt: each of {args.providers} providers, every {DEADLINE_S / 60:.0f} min, HIGH; "
          f"WinningPoSt: CRITICAL, Poisson, target {WINNING_TARGET_S:.0f} s; PoRep: NORMAL, 10 partitions.")  # fmt: skip
    for circuit, figs in FIGURES.items():
        for name, f in figs.items():
            print(f"- {circuit} {name} = {f.value:g}: {f.source}")
    if args.plot:
        plot(rows, args.plot)
        print(f"plot: {args.plot}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
        print(f"rows: {args.json}")


if __name__ == "__main__":
    main()
