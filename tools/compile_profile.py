"""Which numba kernels a command compiles, and how long each takes on a cold cache.

Compiles the recorded kernel lists (cuzk/algebra/_kernel_manifest.py) one entry at a time in
this process, against an empty numba cache of its own (NUMBA_CACHE_DIR, a temporary folder:
the project's `__pycache__` is neither read nor written), and prints each entry's wall time,
the part of it spent in LLVM (numba's `numba:llvm_lock` events) and the callees compiled with
it. An entry's time includes the callees that no earlier entry compiled, so the order matters:
it is the recorded order, the order a cold command meets them.

    python tools/compile_profile.py prove verify [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any


def profile(lists: Sequence[str]) -> list[dict[str, Any]]:
    """Compile every entry of `lists` (in order, once each) and time it; numba must not be imported yet."""
    if "numba" in sys.modules and not os.environ.get("NUMBA_CACHE_DIR"):
        raise RuntimeError("numba is already imported: its cache folder can no longer be redirected")
    os.environ.setdefault("NUMBA_CACHE_DIR", tempfile.mkdtemp(prefix="cuzk-compile-profile-"))
    from numba.core import event

    from cuzk.algebra._kernel_manifest import KERNELS
    from cuzk.algebra.precompile import compile_entries, dispatcher, signature

    import_t0 = time.perf_counter()
    wanted = list(dict.fromkeys(e for name in lists for e in KERNELS.get(name, ())))
    rows: list[dict[str, Any]] = []
    for entry in wanted:
        if dispatcher(entry[0], entry[1]) is None or signature(entry[2]) is None:
            rows.append({"entry": list(entry), "skipped": True})
            continue
        llvm = event.RecordingListener()
        compiles = event.RecordingListener()
        t0 = time.perf_counter()
        with (
            event.install_listener("numba:llvm_lock", llvm),
            event.install_listener("numba:compile", compiles),
        ):
            compile_entries([entry])
        wall = time.perf_counter() - t0
        rows.append(
            {
                "entry": list(entry),
                "wall_s": wall,
                "llvm_s": _held(llvm.buffer),
                "functions": sum(1 for _, ev in compiles.buffer if ev.is_start),
            }
        )
    rows.append(
        {"total_s": sum(r.get("wall_s", 0.0) for r in rows), "since_s": time.perf_counter() - import_t0}
    )
    return rows


def _held(buffer: list[tuple[float, Any]]) -> float:
    """Seconds between matching start and end events (outermost only: the lock is re-entrant)."""
    depth, start, total = 0, 0.0, 0.0
    for ts, ev in buffer:
        if ev.is_start:
            if depth == 0:
                start = ts
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                total += ts - start
    return total


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "lists", nargs="+", help="kernel lists of _kernel_manifest.KERNELS (setup, prove, verify)"
    )
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args(argv)
    rows = profile(args.lists)
    for r in rows[:-1]:
        module, name, sig = r["entry"]
        tag = next((t for t in ("fq2", "fq", "fr") if f"FieldTag({t})" in sig), "-")
        label = f"{module.rsplit('.', 1)[-1]}.{name} [{tag}]"
        if r.get("skipped"):
            print(f"{'skipped':>8}  {label} (renamed, removed, or a type not named)")
            continue
        print(f"{r['wall_s']:7.2f}s  {label}  (llvm {r['llvm_s']:.2f}s, {r['functions']} functions)")
    print(f"{rows[-1]['total_s']:7.2f}s  total compile, {len(rows) - 1} entries")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
