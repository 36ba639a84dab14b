"""The CPU backend: numba kernels, the reference every GPU kernel is tested against."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cuzk.algebra.curves import G1, G2, Curve
from cuzk.algebra.fields import FR
from cuzk.backends.base import Backend, Bases, CsrMatrix, Group
from cuzk.backends.cpu import msm as _msm
from cuzk.backends.cpu.ntt import CpuNtt, fr_mont
from cuzk.backends.cpu.spmv import spmv as _spmv

CURVES: dict[str, Curve] = {"g1": G1, "g2": G2}


@dataclass
class CpuBases(Bases):
    """Affine bases kept as contiguous (n, 2*width) rows in host memory."""

    group: Group
    n: int
    rows: np.ndarray

    @property
    def curve(self) -> Curve:
        return CURVES[self.group]


def _curve(group: str) -> Curve:
    try:
        return CURVES[group]
    except KeyError:
        raise ValueError(f"unknown group {group!r}; expected 'g1' or 'g2'") from None


class CpuBackend(Backend):
    name = "cpu"

    def __init__(self) -> None:
        self._ntt = CpuNtt()

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

    def fr_mul_sub_scale(self, a: np.ndarray, b: np.ndarray, c: np.ndarray, s: int) -> np.ndarray:
        return FR.scale(FR.sub(FR.mul(a, b), c), fr_mont(s))

    # --- NTT ----------------------------------------------------------------------
    def ntt(self, a: np.ndarray, omega: int, *, coset: int | None = None) -> np.ndarray:
        return self._ntt.ntt(a, omega, coset)

    def intt(self, a: np.ndarray, omega: int, *, coset: int | None = None) -> np.ndarray:
        return self._ntt.intt(a, omega, coset)

    # --- sparse -------------------------------------------------------------------
    def spmv(self, m: CsrMatrix, w: np.ndarray) -> np.ndarray:
        return _spmv(m, w)

    # --- MSM ----------------------------------------------------------------------
    def load_bases(self, points: np.ndarray, group: Group) -> CpuBases:
        curve = _curve(group)
        rows = curve._aff(np.asarray(points, dtype=np.uint64))
        return CpuBases(group=group, n=rows.shape[0], rows=rows)

    def _rows(self, bases: Bases, start: int, count: int) -> np.ndarray:
        if not isinstance(bases, CpuBases):
            raise TypeError("these bases were not loaded by the cpu backend")
        if start < 0 or start + count > bases.n:
            raise ValueError(f"bases[{start}:{start + count}] is out of range for {bases.n} bases")
        return bases.rows[start : start + count]

    def msm(
        self, bases: Bases, scalars: np.ndarray, *, start: int = 0, window: int | None = None
    ) -> np.ndarray:
        if scalars.ndim == 3:
            return np.stack([self.msm(bases, s, start=start, window=window) for s in scalars])
        rows = self._rows(bases, start, scalars.shape[0])
        return _msm.msm(bases.curve, rows, scalars, window)

    def sum_bases(self, bases: Bases, mask: np.ndarray, *, start: int = 0) -> np.ndarray:
        rows = self._rows(bases, start, mask.shape[0])
        return _msm.masked_sum(bases.curve, rows, np.asarray(mask, dtype=np.bool_))

    def fixed_base_mul(self, base: np.ndarray, scalars: np.ndarray, group: Group) -> np.ndarray:
        return _msm.fixed_base_mul(_curve(group), base, scalars)

    def describe(self) -> dict[str, object]:
        from numba import config, get_num_threads

        return {"backend": self.name, "threads": get_num_threads(), "threading": config.THREADING_LAYER}
