"""Sparse matrix-vector products over Fr on the device, with the matrices kept resident.

A CsrMatrix (host arrays) is uploaded once, with a per-entry code marking +1 and -1
coefficients (their products are skipped) and its rows' order longest first, and cached until
the host object is collected: the same constraint system is applied to every witness of a
circuit topology.

The kernels give each thread one row. A circuit's rows are mostly 1-3 entries with packings
of hundreds among them, and a warp runs as long as its longest row, so the thread for slot i
takes row `order[i]`: warps of rows of about one length, the longest started first
(GPU_NOTES v36).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from threading import Lock
from typing import Any

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.backends.base import CsrMatrix
from cuzk.backends.cuda._runtime import Runtime
from cuzk.errors import BackendError

_ONE = FR.ones(1)[0]
_MINUS_ONE = FR.neg(FR.ones(1))[0]


def rows_longest_first(xp: Any, indptr: Any) -> Any:
    """The rows' order for the kernels: by length, longest first, ties kept in row order."""
    lengths = indptr[1:] - indptr[:-1]
    if xp is np:
        key = -lengths
        if lengths.size and int(lengths.max()) < 1 << 15:
            key = key.astype(np.int16)  # numpy's stable sort of 16-bit keys is a radix sort: 5x faster
        return np.argsort(key, kind="stable").astype(np.int32)
    return xp.argsort(-lengths).astype(np.int32)  # CuPy's sort is a stable radix sort


def coefficient_codes(data: np.ndarray) -> np.ndarray:
    """1 where the coefficient is +1, 2 where it is -1, else 0 (Montgomery rows)."""
    codes = np.zeros(data.shape[0], dtype=np.uint8)
    codes[(data == _ONE).all(axis=1)] = 1
    codes[(data == _MINUS_ONE).all(axis=1)] = 2
    return codes


@dataclass
class DeviceCsr:
    rows: int
    cols: int
    indptr: Any
    indices: Any
    data: Any
    codes: Any
    order: Any  # int32 row indices, longest row first (ties in row order)
    nbytes: int


class SpmvCache:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._mats: dict[int, DeviceCsr] = {}
        self._lock = Lock()

    def get(self, m: CsrMatrix) -> DeviceCsr:
        key = id(m)
        with self._lock:
            hit = self._mats.get(key)
        if hit is not None:
            return hit
        rows, cols = m.shape
        indptr = np.ascontiguousarray(m.indptr, dtype=np.int64)
        if indptr.shape != (rows + 1,) or indptr[-1] != m.nnz:
            raise BackendError(f"CSR indptr has {indptr.shape[0]} entries for {rows} rows / {m.nnz} nonzeros")
        if m.nnz and (int(m.indices.max()) >= cols or int(m.indices.min()) < 0):
            raise BackendError(f"CSR column indices fall outside 0..{cols - 1}")
        indices = np.ascontiguousarray(m.indices, dtype=np.int32)
        data = np.ascontiguousarray(m.data, dtype=np.uint64)
        codes = coefficient_codes(data)
        order = rows_longest_first(np, indptr)
        nbytes = indptr.nbytes + indices.nbytes + data.nbytes + codes.nbytes + order.nbytes
        self.rt.reserve(nbytes, f"a {rows}x{cols} sparse matrix")
        dev = DeviceCsr(
            rows,
            cols,
            self.rt.upload(indptr),
            self.rt.upload(indices),
            self.rt.upload(data),
            self.rt.upload(codes),
            self.rt.upload(order),
            nbytes,
        )
        with self._lock:
            self._mats[key] = dev
        weakref.finalize(m, self._evict, key)
        return dev

    def _evict(self, key: int) -> None:
        with self._lock:
            self._mats.pop(key, None)


def transpose_on_device(rt: Runtime, m: CsrMatrix) -> DeviceCsr:
    """m^T on the device, not cached: entries ordered by column with a device sort."""
    xp = rt.xp
    rows, cols = m.shape
    nnz = m.nnz
    nbytes = (cols + 1) * 8 + nnz * (4 + 32 + 1) + cols * 4
    rt.reserve(nbytes + nnz * 16, f"the transpose of a {rows}x{cols} sparse matrix")
    col = rt.upload(np.ascontiguousarray(m.indices, dtype=np.int32))
    order = xp.argsort(col)
    counts = xp.bincount(col, minlength=cols)
    del col
    indptr = xp.zeros(cols + 1, dtype=np.int64)
    xp.cumsum(counts, out=indptr[1:])
    del counts
    row_ptr = rt.upload(np.ascontiguousarray(m.indptr, dtype=np.int64))
    row_of = (xp.searchsorted(row_ptr, xp.arange(nnz, dtype=np.int64), side="right") - 1).astype(np.int32)
    indices = row_of[order]
    del row_of, row_ptr
    data = rt.upload(np.ascontiguousarray(m.data, dtype=np.uint64))[order]
    del order
    one, minus_one = rt.upload(_ONE), rt.upload(_MINUS_ONE)
    codes = (data == one).all(axis=1).astype(np.uint8) + 2 * (data == minus_one).all(axis=1).astype(np.uint8)
    return DeviceCsr(cols, rows, indptr, indices, data, codes, rows_longest_first(xp, indptr), nbytes)


def spmv(rt: Runtime, mat: DeviceCsr, w: Any) -> Any:
    if w.shape[0] != mat.cols:
        raise BackendError(f"matrix has {mat.cols} columns but the vector has {w.shape[0]} entries")
    out = rt.xp.empty((mat.rows, 4), dtype=np.uint64)
    if mat.rows:
        rt.launch(
            "fr",
            "spmv_csr",
            mat.rows,
            (np.uint64(mat.rows), mat.order, mat.indptr, mat.indices, mat.data, mat.codes, w, out),
            block=128,
        )
    return out


def spmv_copies(rt: Runtime, mat: DeviceCsr, w: Any, cols: Any, strides: Any, copies: int, out: Any) -> None:
    """out[k rows + r] = (mat @ w[cols + k strides])[r] for k < copies, in one launch (Backend.spmv_copies)."""
    if cols.shape != (mat.cols,) or strides.shape != (mat.cols,):
        raise BackendError(
            f"a {mat.rows}x{mat.cols} block needs {mat.cols} column offsets and strides, "
            f"got {cols.shape} and {strides.shape}"
        )
    if tuple(out.shape) != (copies * mat.rows, 4) or not out.flags.c_contiguous:
        raise BackendError(
            f"{copies} copies of {mat.rows} rows go into a contiguous ({copies * mat.rows}, 4) array, not {out.shape}"
        )
    if mat.cols and copies:  # the kernel reads w unchecked: every copy's columns must lie in it
        last = cols + (copies - 1) * strides
        lo, hi = int(rt.xp.minimum(cols, last).min()), int(rt.xp.maximum(cols, last).max())
        if lo < 0 or hi >= w.shape[0]:
            raise BackendError(f"copies read columns {lo}..{hi}, outside the vector's 0..{w.shape[0] - 1}")
    if mat.rows and copies:
        rt.launch(
            "fr",
            "spmv_copies",
            mat.rows * copies,
            (np.uint64(mat.rows), np.uint64(copies), mat.order, mat.indptr, mat.indices, mat.data,
             mat.codes, cols, strides, w, out),
            block=128,
        )  # fmt: skip
