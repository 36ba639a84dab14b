"""The CPU backend: numba kernels, the reference every GPU kernel is tested against.

Each instance is a logical device over the same host (`device` k): its own twiddle cache and
resident accounting, and bases that only it accepts, so multi-device code paths (one worker per
device, SRS loaded per device) run and are checked on any machine.
"""

from __future__ import annotations

import platform
import threading
from dataclasses import dataclass

import numpy as np

from cuzk.algebra.curves import G1, G2, Curve
from cuzk.algebra.fields import FR
from cuzk.backends.base import Backend, Bases, CsrMatrix, Group, host_memory
from cuzk.backends.cpu import msm as _msm
from cuzk.backends.cpu.ntt import CpuNtt, fr_mont
from cuzk.backends.cpu.spmv import spmv as _spmv

CURVES: dict[str, Curve] = {"g1": G1, "g2": G2}


@dataclass
class CpuBases(Bases):
    """Affine bases kept as contiguous (n, 2*width) rows in host memory (None once released)."""

    group: Group
    n: int
    rows: np.ndarray | None
    nbytes: int
    owner: int  # id of the backend that made the handle


def _curve(group: str) -> Curve:
    try:
        return CURVES[group]
    except KeyError:
        raise ValueError(f"unknown group {group!r}; expected 'g1' or 'g2'") from None


def _cpu_name() -> str:
    """The host CPU's model name (Linux /proc/cpuinfo), else the machine type."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine() or "cpu"


class CpuBackend(Backend):
    name = "cpu"

    def __init__(self, device: int = 0) -> None:
        if device < 0:
            raise ValueError(f"a device ordinal is >= 0, got {device}")
        self.device = device
        self._ntt = CpuNtt()
        self._lock = threading.Lock()
        self._resident = 0

    def to_device(self, a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a)

    def to_host(self, a: np.ndarray) -> np.ndarray:
        return np.asarray(a)

    # --- Fr vectors ---------------------------------------------------------------
    def fr_add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return FR.add(a, b)

    def fr_sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return FR.sub(a, b)

    def fr_mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return FR.mul(a, b)

    def fr_scale(self, a: np.ndarray, s: int) -> np.ndarray:
        return FR.scale(a, fr_mont(s))

    def fr_mul_sub_scale(
        self, a: np.ndarray, b: np.ndarray, c: np.ndarray, s: int, *, overwrite: bool = False
    ) -> np.ndarray:
        return FR.scale(FR.sub(FR.mul(a, b), c), fr_mont(s))  # host memory: overwrite buys nothing

    # --- NTT ----------------------------------------------------------------------
    def ntt(
        self, a: np.ndarray, omega: int, *, coset: int | None = None, overwrite: bool = False
    ) -> np.ndarray:
        return self._ntt.ntt(a, omega, coset)

    def intt(
        self, a: np.ndarray, omega: int, *, coset: int | None = None, overwrite: bool = False
    ) -> np.ndarray:
        return self._ntt.intt(a, omega, coset)

    # --- sparse -------------------------------------------------------------------
    def spmv(self, m: CsrMatrix, w: np.ndarray) -> np.ndarray:
        return _spmv(m, w)

    # --- MSM ----------------------------------------------------------------------
    def load_bases(self, points: np.ndarray, group: Group) -> CpuBases:
        curve = _curve(group)
        return self._handle(curve._aff(np.asarray(points, dtype=np.uint64)), group)

    def bases_from_device(self, rows: np.ndarray, group: Group) -> CpuBases:
        width = _curve(group).field.width
        if rows.ndim != 2 or rows.shape[1] != 2 * width or rows.dtype != np.uint64:
            raise ValueError(
                f"{group} rows have shape (n, {2 * width}) uint64; got {rows.shape} {rows.dtype}"
            )
        return self._handle(np.ascontiguousarray(rows), group)

    def _handle(self, rows: np.ndarray, group: Group) -> CpuBases:
        with self._lock:
            self._resident += rows.nbytes
        return CpuBases(group=group, n=rows.shape[0], rows=rows, nbytes=rows.nbytes, owner=id(self))

    def _own(self, bases: Bases) -> CpuBases:
        if not isinstance(bases, CpuBases) or bases.owner != id(self):
            raise TypeError(f"these bases were not loaded by this backend ({self.label})")
        return bases

    def release(self, bases: Bases) -> None:
        b = self._own(bases)
        with self._lock:
            if b.rows is not None:
                self._resident -= b.nbytes
                b.rows = None

    def _rows(self, bases: Bases, start: int, count: int) -> np.ndarray:
        rows = self._own(bases).rows
        if rows is None:
            raise ValueError("these bases were released")
        if start < 0 or start + count > bases.n:
            raise ValueError(f"bases[{start}:{start + count}] is out of range for {bases.n} bases")
        return rows[start : start + count]

    def msm(
        self, bases: Bases, scalars: np.ndarray, *, start: int = 0, window: int | None = None
    ) -> np.ndarray:
        if scalars.ndim == 3:
            return np.stack([self.msm(bases, s, start=start, window=window) for s in scalars])
        rows = self._rows(bases, start, scalars.shape[0])
        return _msm.msm(_curve(bases.group), rows, scalars, window)

    def sum_bases(self, bases: Bases, mask: np.ndarray, *, start: int = 0) -> np.ndarray:
        rows = self._rows(bases, start, mask.shape[0])
        return _msm.masked_sum(_curve(bases.group), rows, np.asarray(mask, dtype=np.bool_))

    def fixed_base_mul(self, base: np.ndarray, scalars: np.ndarray, group: Group) -> np.ndarray:
        return _msm.fixed_base_mul(_curve(group), base, scalars)

    # --- device -------------------------------------------------------------------
    def memory_info(self) -> dict[str, int | None]:
        total, free = host_memory()
        return {"resident": self._resident, "used": None, "total": total, "free": free, "budget": None}

    def describe(self) -> dict[str, object]:
        from numba import config, get_num_threads

        return {
            **super().describe(),
            "device": _cpu_name(),
            "threads": get_num_threads(),
            "threading": config.THREADING_LAYER,  # type: ignore[attr-defined]  # numba sets it at run time
        }
