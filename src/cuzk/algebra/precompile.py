"""Compile a command's numba kernels up front, on two processes, instead of one by one on first use.

A first `cuzk prove` compiled ~50 kernels one after another on one core (issue 29: 69 s of
99% of one core on a 2-core machine, then 23 s more for the first `cuzk verify`). numba
compiles under a process-wide lock, so threads cannot share the work; processes can, through
numba's on-disk cache (`__pycache__` beside the sources): a kernel compiled and cached by one
process is loaded, not compiled, by the next.

`KERNELS` (cuzk/algebra/_kernel_manifest.py) lists, per command, the outermost kernels and
signatures a cold run of that command compiled, and `COMPILE_S` the seconds each took (written
by `python tools/record_kernels.py write`). Before such a command runs, `precompile(command)`
splits the list not yet cached in two (the Fq2 kernels and the rest, so the two sides share few
callees), starts one helper process on one half, compiles the other half here, and waits for
the helper; its notice estimates the time from the recorded seconds of what is left. A warm
cache costs one index read per kernel; a kernel missing from the list still compiles on first
use, as before, and an entry that no longer matches its kernel is skipped. Measured on a fresh
clone (2026-12-05, 2-core machine): 44 kernels for a first porep-tiny `cuzk prove` in 16.4 s
wall on the two processes, 32 s of CPU.
"""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: compile seconds assumed for an entry the manifest has no figure for
DEFAULT_COMPILE_S = 1.0


def estimate_s(here: Sequence[Entry], there: Sequence[Entry]) -> float:
    """Wall seconds to compile `here` in this process while a helper compiles `there`: each
    entry's recorded compile seconds (_kernel_manifest.COMPILE_S), the longer side's sum."""
    from cuzk.algebra._kernel_manifest import COMPILE_S

    def total(entries: Sequence[Entry]) -> float:
        return sum(COMPILE_S.get(e, DEFAULT_COMPILE_S) for e in entries)

    return max(total(here), total(there))


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


def resolve(entry: Entry) -> tuple[Any, tuple[Any, ...]] | None:
    """(dispatcher, argument types) of an entry that still matches its kernel, else None (the
    kernel was renamed or removed, or its parameters changed since the list was recorded: a
    stale entry, skipped; the kernel compiles on first use as without the list)."""
    disp, sig = dispatcher(entry[0], entry[1]), signature(entry[2])
    if disp is None or sig is None:
        return None
    try:
        params = inspect.signature(disp.py_func).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) or len(params) != len(
        sig
    ):
        return None
    return disp, sig


def is_cached(entry: Entry) -> bool:
    """Whether numba's on-disk index already holds this kernel with this signature (a stale
    entry counts as cached: there is nothing to compile ahead for it)."""
    found = resolve(entry)
    if found is None:
        return True
    disp = found[0]
    try:
        index = disp._cache._cache_file._load_index()
    except Exception:  # no index yet, or a numba whose cache internals differ: compile it
        return False
    return any(str(key[0]) == entry[2] for key in index)


def compile_entries(entries: Sequence[Entry]) -> int:
    """Compile (or load from the cache) each entry; the number compiled. A stale entry, or one
    numba refuses (a signature the kernel no longer types with), is skipped: compiling ahead is
    an optimization, and the command compiles what it really calls on first use."""
    done = 0
    for entry in entries:
        found = resolve(entry)
        if found is None:
            continue
        try:
            found[0].compile(found[1])
        except Exception:
            continue
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


_last: Precompiled | None = None


def last() -> Precompiled | None:
    """What the latest `precompile` of this process did (None: none ran), for a command's report."""
    return _last


def precompile(lists: Sequence[str], say: Callable[[str], None] | None = None) -> Precompiled:
    """Compile the kernels of the named lists not cached yet, on this process and one helper."""
    global _last
    _last = done = _precompile(lists, say)
    return done


def _precompile(lists: Sequence[str], say: Callable[[str], None] | None) -> Precompiled:
    from cuzk.algebra._kernel_manifest import KERNELS

    wanted = list(dict.fromkeys(e for name in lists for e in KERNELS.get(name, ())))
    cold = [e for e in wanted if not is_cached(e)]
    if not cold:
        return Precompiled(0, 0.0, 0)
    t0 = time.perf_counter()
    here, there = split(cold)
    if say is not None:
        say(
            f"compiling {len(cold)} CPU kernels ({' + '.join(lists)}), once, on {2 if there else 1} "
            f"process{'es' if there else ''}: about {estimate_s(here, there):.0f} s (numba caches them "
            "on disk beside the sources)"
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
