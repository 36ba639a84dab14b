"""`cuzk circuits`: the registered workload circuits with their shapes.

Each row is a recorded topology (from the cache, or recorded now) unless the
circuit is one of the full-size ones, which show an estimate until named
explicitly (recording porep-full takes minutes and gigabytes).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

BIG = ("porep-full",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("circuits", help="list the workload circuits: constraints, densities, nnz per row")
    p.add_argument("names", nargs="*", metavar="NAME", help="only these circuits (records them if needed)")
    p.add_argument("--estimate", action="store_true", help="do not record; show estimated constraint counts")
    p.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    p.set_defaults(func=run)


def _row(c: Any, record: bool) -> dict[str, Any]:
    row: dict[str, Any] = {"name": c.name, "description": c.description}
    if not record:
        row.update(source="estimate", constraints=c.estimate_constraints())
        return row
    topo = c.topology()
    row.update(source=c.cache_status, seconds=round(c.record_seconds or 0.0, 2), **topo.stats())
    return row


def run(args: argparse.Namespace) -> int:
    from cuzk.circuits import get_circuit, list_circuits

    circuits = [get_circuit(n) for n in args.names] if args.names else list_circuits()
    rows = []
    for c in circuits:
        record = not args.estimate and (bool(args.names) or c.name not in BIG or c.cache_path().exists())
        rows.append(_row(c, record))
    if args.json:
        for r in rows:
            print(json.dumps(r))
        return 0
    _table(rows)
    return 0


def _table(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="cuzk workload circuits (shape-alike, not Filecoin-consensus-compatible)")
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
        ("description", "left"),
    ):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in rows:
        if r["source"] == "estimate":
            t.add_row(r["name"], f"~{r['constraints']:,}", *[""] * 7, "estimate", r["description"])
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
    Console(file=sys.stdout, width=200).print(t)
