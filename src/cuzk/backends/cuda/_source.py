"""Kernel sources: the .cu modules with their local headers inlined into one string each.

Inlining (instead of passing an include path to NVRTC) makes the compiler cache key cover the
headers too: CuPy hashes the source text it is given, so an edited .cuh must change that text
or a stale cubin would be loaded.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path

KERNEL_DIR = Path(__file__).with_name("kernels")

#: The compiled modules, one per .cu file; each is compiled when first used (curve_g2 with G2,
#: points_* by parameter set-up: import / export of encodings and the subgroup test).
MODULES = ("fr", "ntt", "curve_g1", "curve_g2", "points_g1", "points_g2")

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')
_ONCE = re.compile(r"^\s*#\s*pragma\s+once\s*$")


def kernel_files() -> list[Path]:
    """Every .cu file (the compile units the CI test builds with nvcc)."""
    return sorted(KERNEL_DIR.glob("*.cu"))


def _inline(path: Path, seen: set[Path], out: list[str]) -> None:
    text = path.read_text()
    once = any(_ONCE.match(line) for line in text.splitlines())
    if once:
        if path in seen:
            return
        seen.add(path)
    out.append(f"// ---- {path.name}")
    for line in text.splitlines():
        if _ONCE.match(line):
            continue
        m = _INCLUDE.match(line)
        if m:
            target = (path.parent / m.group(1)).resolve()
            if not target.is_file():
                raise FileNotFoundError(f"{path.name} includes missing {m.group(1)}")
            _inline(target, seen, out)
        else:
            out.append(line)


@cache
def module_source(name: str) -> str:
    """The full source of module `name` with local includes expanded once each."""
    if name not in MODULES:
        raise KeyError(f"unknown kernel module {name!r}; known: {', '.join(MODULES)}")
    out: list[str] = []
    _inline((KERNEL_DIR / f"{name}.cu").resolve(), set(), out)
    return "\n".join(out) + "\n"


def source_digest(name: str) -> str:
    return hashlib.sha256(module_source(name).encode()).hexdigest()[:16]
