"""Radix-2 NTT over Fr on the CPU (numba; each stage's butterflies in chunks on the kernel threads).

Forward transforms are decimation-in-time on a bit-reversed copy, so input and
output are both in natural order. Twiddles are omega^t for t < n/2, cached per
(n, omega); above 2^22 points the table would cost more memory than it saves
time, so a two-level table (omega^t = HI[t >> 12] * LO[t & 4095]) replaces it
at one extra multiplication per butterfly.
"""

from __future__ import annotations

from collections import OrderedDict
from threading import Lock

import numpy as np
from numba import njit

from cuzk.algebra import constants as C
from cuzk.algebra._jit_fields import FR_TAG, f_add, f_load, f_mul, f_store, f_sub
from cuzk.algebra._parallel import run_ranges
from cuzk.algebra.domain import check_root, log2_exact, powers
from cuzk.algebra.fields import FR, fr_mont

_SPLIT_BITS = 12
_FULL_TABLE_MAX_LOG = 22
#: Stages whose butterflies stay within 2^12 points (128 KiB, in L2) run block by block.
_BLOCK_LOG = 12


@njit(cache=True)
def _reverse_bits(x, bits):
    r = 0
    for _ in range(bits):
        r = (r << 1) | (x & 1)
        x >>= 1
    return r


@njit(nogil=True, cache=True)
def _bit_reverse_copy(src, dst, log_n, lo, hi):
    for i in range(lo, hi):
        r = _reverse_bits(i, log_n)
        for k in range(src.shape[1]):
            dst[r, k] = src[i, k]


@njit(cache=True)
def _twiddle(F, hi, lo, t, split_bits):
    """omega^t from the full table (split_bits == 0) or the two-level one."""
    if split_bits == 0:
        return f_load(F, hi, t, 0)
    return f_mul(F, f_load(F, hi, t >> split_bits, 0), f_load(F, lo, t & ((1 << split_bits) - 1), 0))


@njit(cache=True)
def _butterfly(F, a, i0, i1, w):
    u = f_load(F, a, i0, 0)
    v = f_mul(F, f_load(F, a, i1, 0), w)
    f_store(F, a, i0, 0, f_add(F, u, v))
    f_store(F, a, i1, 0, f_sub(F, u, v))


@njit(nogil=True, cache=True)
def _stages_in_blocks(F, a, hi, lo, split_bits, log_block, first, last):
    """The first log_block stages of the blocks [first, last): their butterflies stay inside
    aligned blocks of 2^log_block points, so each block runs all of them while it sits in
    cache, and one launch covers them all."""
    n = a.shape[0]
    size = 1 << log_block
    for blk in range(first, last):
        base = blk * size
        half = 1
        while half < size:
            stride = n // (2 * half)
            for j in range(half):
                w = _twiddle(F, hi, lo, j * stride, split_bits)
                for start in range(base, base + size, 2 * half):
                    _butterfly(F, a, start + j, start + j + half, w)
            half *= 2


@njit(nogil=True, cache=True)
def _stage(F, a, hi, lo, split_bits, half, stride, first, last):
    """One later stage, the butterflies [first, last) of its n/2."""
    for b in range(first, last):
        j = b % half
        i0 = (b // half) * 2 * half + j
        _butterfly(F, a, i0, i0 + half, _twiddle(F, hi, lo, j * stride, split_bits))


@njit(nogil=True, cache=True)
def _scale_by(F, a, factors, lo, hi):
    for i in range(lo, hi):
        f_store(F, a, i, 0, f_mul(F, f_load(F, a, i, 0), f_load(F, factors, i, 0)))


@njit(nogil=True, cache=True)
def _scale_const(F, a, s, lo, hi):
    c = f_load(F, s, 0, 0)
    for i in range(lo, hi):
        f_store(F, a, i, 0, f_mul(F, f_load(F, a, i, 0), c))


class _Twiddles:
    """omega^t for t < n/2: one table (split_bits = 0), or two small ones above 2^22."""

    def __init__(self, omega: int, log_n: int) -> None:
        half = 1 << max(log_n - 1, 0)
        if log_n <= _FULL_TABLE_MAX_LOG:
            self.hi = powers(omega, half)
            self.lo = self.hi[:1]
            self.split_bits = 0
        else:
            self.lo = powers(omega, 1 << _SPLIT_BITS)
            self.hi = powers(pow(omega, 1 << _SPLIT_BITS, C.R), -(-half >> _SPLIT_BITS))
            self.split_bits = _SPLIT_BITS


class CpuNtt:
    """NTTs with a small LRU cache of twiddle tables keyed by (n, omega)."""

    def __init__(self, cache_entries: int = 6) -> None:
        self._cache: OrderedDict[tuple[int, int], _Twiddles] = OrderedDict()
        self._entries = cache_entries
        self._lock = Lock()

    def _twiddles(self, omega: int, log_n: int) -> _Twiddles:
        key = (log_n, omega)
        with self._lock:
            tw = self._cache.get(key)
            if tw is not None:
                self._cache.move_to_end(key)
                return tw
        check_root(omega, log_n)
        tw = _Twiddles(omega, log_n)
        with self._lock:
            self._cache[key] = tw
            while len(self._cache) > self._entries:
                self._cache.popitem(last=False)
        return tw

    def _transform(self, a: np.ndarray, omega: int) -> np.ndarray:
        rows = FR._rows(a)
        log_n = log2_exact(rows.shape[0])
        tw = self._twiddles(omega, log_n)
        out = np.empty_like(rows)
        n = rows.shape[0]
        log_block = min(log_n, _BLOCK_LOG)
        work = n // 2  # per stage: n/2 butterflies
        run_ranges(_bit_reverse_copy, (rows, out, log_n), n, work)
        run_ranges(
            _stages_in_blocks, (FR_TAG, out, tw.hi, tw.lo, tw.split_bits, log_block), n >> log_block, work
        )
        half = 1 << log_block
        while half < n:
            run_ranges(
                _stage, (FR_TAG, out, tw.hi, tw.lo, tw.split_bits, half, n // (2 * half)), n // 2, work
            )
            half *= 2
        return out

    def ntt(self, a: np.ndarray, omega: int, coset: int | None = None) -> np.ndarray:
        if coset is not None:
            a = a.copy()
            factors = powers(coset, a.shape[0])
            run_ranges(_scale_by, (FR_TAG, FR._rows(a), factors), a.shape[0], a.shape[0])
        return self._transform(a, omega)

    def intt(self, a: np.ndarray, omega: int, coset: int | None = None) -> np.ndarray:
        n = a.shape[0]
        out = self._transform(a, pow(omega, -1, C.R))
        n_inv = pow(n, -1, C.R)
        factors = None if coset is None else powers(pow(coset, -1, C.R), n, start=n_inv)
        if factors is None:
            run_ranges(_scale_const, (FR_TAG, out, fr_mont(n_inv)[None]), n, n)
        else:
            run_ranges(_scale_by, (FR_TAG, out, factors), n, n)
        return out
