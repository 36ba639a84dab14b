"""The sequential host emulator: the kernel sources built as host C++, for tests without a GPU.

Each kernel's host build runs its body for every thread index in turn (see launch.cuh), with
the PTX carry primitives emulated in C (ptx.cuh). It is slow (one core, no unrolling), exact,
and runs the backend's full launch sequences, so CI checks plans, index arithmetic and the
Python orchestration against the CPU backend. It cannot see what only hardware shows: PTX
carry semantics, races between threads, coalescing, speed. Those are the device run's job.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cuzk.backends.cuda._runtime import NULL, Runtime
from cuzk.backends.cuda._source import MODULES, module_source
from cuzk.errors import BackendUnavailableError


def host_compiler() -> str | None:
    """The C++ compiler the emulator builds with (CXX, else c++ / g++ / clang++ on PATH)."""
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return name
    return None


def _build(name: str, cache: Path) -> Path:
    source = module_source(name)
    cxx = host_compiler()
    if cxx is None:
        raise BackendUnavailableError("the CUDA emulator needs a C++ compiler (set CXX)")
    digest = hashlib.sha256((cxx + source).encode()).hexdigest()[:16]
    lib = cache / f"{name}-{digest}.so"
    if lib.exists():
        return lib
    cache.mkdir(parents=True, exist_ok=True)
    # built beside its final name and renamed over it: a process that finds `lib` never loads a
    # half-copied file (a move from /tmp to another file system is a copy)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        src = Path(tmp) / f"{name}.cpp"
        src.write_text(source)
        out = Path(tmp) / lib.name
        cmd = [cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-o", str(out), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise BackendUnavailableError(
                f"building the emulator module {name} failed:\n{proc.stderr[-4000:]}"
            )
        os.replace(out, lib)
    return lib


_CTYPES = {
    np.dtype(np.uint64): ctypes.c_uint64,
    np.dtype(np.int64): ctypes.c_int64,
    np.dtype(np.uint32): ctypes.c_uint32,
    np.dtype(np.int32): ctypes.c_int32,
}


_STRUCTS: dict[np.dtype, type[ctypes.Structure]] = {}


def _struct(value: np.ndarray) -> ctypes.Structure:
    """A one-element structured array as the ctypes struct of the same layout, passed by value."""
    dtype = value.dtype
    cls = _STRUCTS.get(dtype)
    if cls is None:
        fields = []
        for name in dtype.names or ():
            sub = dtype.fields[name][0]  # type: ignore[index]
            base = _CTYPES[sub.base]
            fields.append((name, base * sub.shape[0] if sub.shape else base))
        cls = type("KernelStruct", (ctypes.Structure,), {"_fields_": fields})
        if ctypes.sizeof(cls) != dtype.itemsize:
            raise TypeError(f"struct dtype {dtype} does not have C layout (use align=True)")
        _STRUCTS[dtype] = cls
    return cls.from_buffer_copy(value.tobytes())


def _arg(value: Any) -> Any:
    if isinstance(value, ctypes.Structure):  # from struct_arg
        return value
    if isinstance(value, np.ndarray):
        if not value.flags.c_contiguous:
            raise ValueError("emulated kernels take contiguous arrays")
        return ctypes.c_void_p(value.ctypes.data)
    if isinstance(value, np.generic):
        return _CTYPES[value.dtype](value.item())
    raise TypeError(f"kernel arguments must be numpy arrays or numpy scalars, got {type(value).__name__}")


class EmulatorRuntime(Runtime):
    """Runtime whose arrays are numpy arrays and whose kernels are host builds of the .cu files."""

    name = "emulator"

    def __init__(self, memory_budget: int | None = None, cache_dir: Path | None = None) -> None:
        from cuzk.paths import cache_dir as default_cache

        self.xp = np
        self.budget = memory_budget
        self._cache = cache_dir or default_cache("cuda-emulator")
        self._libs: dict[str, ctypes.CDLL] = {}
        self.pinned_staging = False

    def _lib(self, module: str) -> ctypes.CDLL:
        lib = self._libs.get(module)
        if lib is None:
            if module not in MODULES:
                raise KeyError(f"unknown kernel module {module!r}")
            lib = ctypes.CDLL(str(_build(module, self._cache)))
            self._libs[module] = lib
        return lib

    def launch(
        self,
        module: str,
        kernel: str,
        threads: int,
        args: Sequence[Any],
        *,
        block: int = 256,
        grid: int | None = None,
        shared: int = 0,
    ) -> None:
        fn = getattr(self._lib(module), kernel)
        fn.restype = None
        fn(*[_arg(a) for a in args])

    def address(self, a: Any) -> int:
        return 0 if a is NULL else int(a.ctypes.data)

    def struct_arg(self, value: np.ndarray) -> Any:
        if value.dtype.names is None or value.size != 1:
            raise ValueError("a struct kernel argument is a one-element structured array")
        return _struct(value)

    def empty_like(self, a: Any) -> Any:
        return np.empty_like(a)

    def upload(self, host: np.ndarray, out: Any | None = None) -> Any:
        host = np.ascontiguousarray(host)
        if out is None:
            return host.copy()
        np.copyto(out, host)
        return out

    def upload_chunks(
        self, host: np.ndarray, bounds: Sequence[tuple[int, int]], out: Any | None = None
    ) -> Iterator[tuple[Any, int, int]]:
        dev = self.upload(host) if out is None else self.upload(host, out)
        for lo, hi in bounds:
            yield dev, lo, hi

    def used_bytes(self) -> int:
        return self.resident_bytes
