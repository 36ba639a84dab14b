"""`cuzk circuits`: the registered workload circuits with their shapes.

A listing records nothing: a circuit whose topology is already in the cache
shows its recorded shape (loaded from there), any other its cheap constraint
estimate, marked "not recorded yet". Naming circuits (`cuzk circuits NAME`)
records those that are missing, saying so first (porep-13m and the -32g
circuits take a minute or more and gigabytes). The last line says where the cache is and how large it is.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from cuzk.cli.output import console, progress_printer, wide_console


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("circuits", help="list the workload circuits: constraints, densities, nnz per row")
    p.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="only these circuits (their topologies are recorded if needed)",
    )
    p.add_argument(
        "--estimate", action="store_true", help="do not load or record; show estimated constraint counts"
    )
    p.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    p.set_defaults(func=run)


def _row(c: Any, load: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"name": c.name, "description": c.description}
    if not load:
        row.update(source="not recorded yet", constraints=c.estimate_constraints(), estimate=True)
        return row
    topo = c.topology()
    row.update(
        source=c.cache_status, seconds=round(c.record_seconds or 0.0, 2), estimate=False, **topo.stats()
    )
    return row


def run(args: argparse.Namespace) -> int:
    from cuzk.circuits import get_circuit, list_circuits
    from cuzk.cli.cache import summary_line

    named = bool(args.names)
    circuits = [get_circuit(n) for n in args.names] if named else list_circuits()
    say = progress_printer()
    rows = []
    for c in circuits:
        cached = c.cache_path().exists()
        load = not args.estimate and (cached or named)
        if load and not cached:
            say(f"recording the topology of {c.name} (once; about {c.estimate_constraints():,} constraints)")
        rows.append(_row(c, load))
        if args.estimate:
            rows[-1]["source"] = "estimate"
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return 0
    _table(rows)
    console().print(summary_line(), soft_wrap=True)
    return 0


def _table(rows: list[dict[str, Any]]) -> None:
    from rich.table import Table

    t = Table(
        title="cuzk workload circuits (shape-alike, not Filecoin-consensus-compatible)", title_justify="left"
    )
    for col, just in (
        ("circuit", "left"),
        ("constraints", "right"),
        ("inputs", "right"),
        ("aux", "right"),
        ("nnz/row A", "right"),
        ("B", "right"),
        ("C", "right"),
        ("a-aux", "right"),
        ("b-aux", "right"),
        ("source", "left"),
    ):
        t.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
    t.add_column("description", no_wrap=True)
    for r in rows:
        if r["estimate"]:
            t.add_row(r["name"], f"~{r['constraints']:,}", *[""] * 7, r["source"], r["description"])
            continue
        t.add_row(
            r["name"],
            f"{r['constraints']:,}",
            str(r["inputs"]),
            f"{r['aux']:,}",
            f"{r['nnz_a']:.2f}",
            f"{r['nnz_b']:.2f}",
            f"{r['nnz_c']:.2f}",
            f"{100 * r['a_aux_density']:.1f}%",
            f"{100 * r['b_aux_density']:.1f}%",
            f"{r['source']} ({r['seconds']} s)",
            r["description"],
        )
    wide_console(200).print(t)
