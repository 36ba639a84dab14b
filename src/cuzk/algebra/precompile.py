"""Compile a command's numba kernels up front, on two processes, instead of one by one on first use.

A first `cuzk prove` compiled ~50 kernels one after another on one core (issue 29: 69 s of
99% of one core on a 2-core machine, then 23 s more for the first `cuzk verify`). numba
compiles under a process-wide lock, so threads cannot share the work; processes can, through
numba's on-disk cache (`__pycache__` beside the sources): a kernel compiled and cached by one
process is loaded, not compiled, by the next.

`KERNELS` (cuzk/algebra/_kernel_manifest.py) lists, per command, the outermost kernels and
signatures a cold run of that command compiled (recorded with `python tools/record_kernels.py
record`). Before such a command runs, `precompile(command)` splits the list not yet cached in two
(the Fq2 kernels and the rest, so the two sides share few callees), starts one helper process on
one half, compiles the other half here, and waits for the helper. A warm cache costs one index
read per kernel; a kernel missing from the list still compiles on first use, as before.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: CPU seconds to compile each whole list on a cold cache, measured 2026-12-04 on the 2-core machine
#: while shared (`/usr/bin/time -v` of the `record` runs: setup 69 s, prove 104 s, verify 48 s)
LIST_CPU_S = {"setup": 69.0, "prove": 104.0, "verify": 48.0}
#: modules of point kernels (curve formulas inlined: several times a field kernel's compile time)
_CURVE_MODULES = ("cuzk.algebra._curve_kernels", "cuzk.backends.cpu.msm", "cuzk.algebra.pippenger",
                  "cuzk.algebra.encoding")  # fmt: skip


def weight(entry: Entry) -> float:
    """A kernel's relative compile cost, from the recorded compile times of 2026-12-04: a point
    kernel about 4x a field kernel, an Fq2 one about 2.5x its Fq twin."""
    base = 3.0 if entry[0] in _CURVE_MODULES else 0.7
    return base * (2.5 if "FieldTag(fq2)" in entry[2] else 1.0)


def estimate_s(lists: Sequence[str], cold: Sequence[Entry]) -> float:
    """Wall seconds to compile `cold` on two processes: each list's measured CPU time, shared out
    over its entries by `weight`, summed over the cold ones, halved."""
    from cuzk.algebra._kernel_manifest import KERNELS

    cpu: dict[Entry, float] = {}
    for name in lists:
        entries = KERNELS.get(name, ())
        total = sum(weight(e) for e in entries)
        for e in entries:
            if e in cold and e not in cpu:
                cpu[e] = LIST_CPU_S.get(name, 0.0) * weight(e) / total
    return sum(cpu.values()) / 2


#: one manifest entry: (module, function qualname, signature as numba prints it)
Entry = tuple[str, str, str]


def _namespace() -> dict[str, Any]:
    """Names a recorded signature's text uses, bound to numba types (for `eval` of that text only)."""
    from numba.core import types

    from cuzk.algebra._jit_fields import FieldTagType

    def array(dtype: Any, ndim: int, layout: str, readonly: bool = False, aligned: bool = True) -> Any:
        return types.Array(dtype, ndim, layout, readonly=readonly, aligned=aligned)  # type: ignore[call-overload]

    names: dict[str, Any] = {
        "FieldTag": FieldTagType,
        "fr": "fr",
        "fq": "fq",
        "fq2": "fq2",
        "Array": array,
        "UniTuple": types.UniTuple,
        "bool": types.boolean,
        "none": types.none,
    }
    for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"):
        names[t] = getattr(types, t)
    return names


def signature(text: str) -> tuple[Any, ...] | None:
    """The numba argument types of a recorded signature, or None when it uses a type not named here."""
    try:
        value = eval(text, {"__builtins__": {}}, _namespace())  # our own manifest's text only
    except Exception:
        return None
    return value if isinstance(value, tuple) else (value,)


def dispatcher(module: str, qualname: str) -> Any | None:
    """The numba dispatcher named by an entry, or None (renamed or removed since it was recorded)."""
    try:
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return obj if hasattr(obj, "compile") and hasattr(obj, "_cache") else None


def is_cached(entry: Entry) -> bool:
    """Whether numba's on-disk index already holds this kernel with this signature."""
    disp = dispatcher(entry[0], entry[1])
    if disp is None:
        return True  # nothing to compile ahead
    try:
        index = disp._cache._cache_file._load_index()
    except Exception:  # no index yet, or a numba whose cache internals differ: compile it
        return False
    return any(str(key[0]) == entry[2] for key in index)


def compile_entries(entries: Sequence[Entry]) -> int:
    """Compile (or load from the cache) each entry; the number whose signature could be built."""
    done = 0
    for module, qualname, text in entries:
        disp, sig = dispatcher(module, qualname), signature(text)
        if disp is None or sig is None:
            continue
        disp.compile(sig)
        done += 1
    return done


def split(entries: Sequence[Entry]) -> tuple[list[Entry], list[Entry]]:
    """(here, helper): the Fq2 kernels go to the helper, the rest stay; their callees barely overlap."""
    helper = [e for e in entries if "FieldTag(fq2)" in e[2]]
    return [e for e in entries if e not in helper], helper


@dataclass(frozen=True)
class Precompiled:
    kernels: int  # compiled ahead (not found in the cache)
    seconds: float  # wall time of the step
    processes: int


def precompile(lists: Sequence[str], say: Callable[[str], None] | None = None) -> Precompiled:
    """Compile the kernels of the named lists not cached yet, on this process and one helper."""
    from cuzk.algebra._kernel_manifest import KERNELS

    wanted = list(dict.fromkeys(e for name in lists for e in KERNELS.get(name, ())))
    cold = [e for e in wanted if not is_cached(e)]
    if not cold:
        return Precompiled(0, 0.0, 0)
    t0 = time.perf_counter()
    here, there = split(cold)
    if say is not None:
        say(
            f"compiling {len(cold)} CPU kernels ({' + '.join(lists)}), once, on 2 processes: about "
            f"{estimate_s(lists, cold):.0f} s (numba caches them on disk beside the sources)"
        )
    helper = None
    if there:
        helper = subprocess.Popen(
            [sys.executable, "-m", "cuzk.algebra.precompile", "compile"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
        )
        assert helper.stdin is not None
        helper.stdin.write(json.dumps(there))
        helper.stdin.close()
    try:
        compile_entries(here)
    finally:
        if helper is not None:
            helper.wait()
    return Precompiled(len(cold), time.perf_counter() - t0, 2 if there else 1)


def _main(argv: Sequence[str]) -> int:
    if argv[:1] == ["compile"]:  # the helper: entries as JSON on stdin
        compile_entries([(str(m), str(q), str(t)) for m, q, t in json.loads(sys.stdin.read())])
        return 0
    print("usage: python -m cuzk.algebra.precompile compile < entries.json")
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
