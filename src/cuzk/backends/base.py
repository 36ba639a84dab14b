"""The backend seam: every batch operation the prover needs, on one interface.

Data crosses this seam as arrays of 64-bit limbs in Montgomery form (numpy on
the host, CuPy on the device; the same layout, so a buffer moves with one copy):

- Fr vectors: (n, 4) uint64.
- G1 affine points: (n, 2, 6) uint64, [x, y]; the point at infinity is all zeros
  (never on the curve, since 0 != 0^3 + 4).
- G2 affine points: (n, 2, 2, 6) uint64, [x, y] with each coordinate [c0, c1].
- A single projective result (an MSM) comes back as a Jacobian point on the host:
  (3, 6) for G1, (3, 2, 6) for G2, [X, Y, Z] with Z = 0 at infinity.

The caller never loops over elements; a backend never returns a partial
result: it raises a cuzk.errors.BackendError subclass instead.

A backend instance is one device: `device` is its ordinal (the GPU for cuda; for
cpu a logical device over the same host, so multi-device code runs anywhere), and
the handles it makes (`Bases`) belong to it. `cuzk.backends.get_backend(name,
device=k)` keeps one instance per (name, device).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Group = Literal["g1", "g2"]
Array = Any  # numpy.ndarray on the host, cupy.ndarray on the device


@dataclass(frozen=True)
class CsrMatrix:
    """A sparse matrix over Fr in CSR form: row i holds columns indices[indptr[i]:indptr[i+1]]."""

    indptr: np.ndarray  # (rows + 1,) int64
    indices: np.ndarray  # (nnz,) int32 or int64 column indices
    data: np.ndarray  # (nnz, 4) uint64 Fr values, Montgomery form
    shape: tuple[int, int]

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[0])

    def columns_used(self) -> np.ndarray:
        """Per column: whether any stored entry uses it (bellperson's density bit)."""
        used = np.zeros(self.shape[1], dtype=np.bool_)
        used[self.indices] = True
        return used

    def transposed(self) -> CsrMatrix:
        """CSR of the transpose, by a stable counting sort on the column indices."""
        rows, cols = self.shape
        order = np.argsort(self.indices, kind="stable")
        counts = np.bincount(self.indices, minlength=cols)
        indptr = np.zeros(cols + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        row_of = np.repeat(np.arange(rows, dtype=np.int64), np.diff(self.indptr))
        return CsrMatrix(
            indptr=indptr,
            indices=row_of[order],
            data=np.ascontiguousarray(self.data[order]),
            shape=(cols, rows),
        )

    @classmethod
    def from_rows(
        cls, rows: Sequence[Mapping[int, int]], ncols: int, *, index_dtype: type = np.int64
    ) -> CsrMatrix:
        """A matrix from rows of {column: integer coefficient} (hand-built circuits, tests).

        Coefficients are taken mod r; zeros are dropped and columns sorted, as in a
        recorded topology. One Python step per entry: for small matrices only.
        """
        from cuzk.algebra import constants as C
        from cuzk.algebra.fields import FR

        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        cols: list[int] = []
        vals: list[int] = []
        for i, row in enumerate(rows):
            for col in sorted(row):
                if row[col] % C.R:
                    cols.append(col)
                    vals.append(row[col] % C.R)
            indptr[i + 1] = len(cols)
        data = FR.from_ints(vals) if vals else np.zeros((0, 4), dtype=np.uint64)
        return cls(indptr, np.array(cols, dtype=index_dtype), data, (len(rows), ncols))


class Bases(ABC):
    """A resident SRS query (fixed bases for MSMs) held by a backend until `release`."""

    group: Group
    n: int
    nbytes: int


def host_memory() -> tuple[int | None, int | None]:
    """(total, available) bytes of host memory where the OS reports them, else None."""
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        return os.sysconf("SC_PHYS_PAGES") * page, os.sysconf("SC_AVPHYS_PAGES") * page
    except (ValueError, OSError, AttributeError):  # not POSIX, or the name is unknown
        return None, None


class Backend(ABC):
    """Batch kernels over Fr, G1 and G2. Implementations: cpu (numba), cuda (CuPy)."""

    name: str
    #: This instance's device ordinal (see the module docstring).
    device: int = 0
    #: The array module of this backend's arrays (numpy, or cupy on the device), so that
    #: callers can pad, slice, mask and concatenate backend arrays without importing CuPy.
    xp: Any = np
    #: Whether the bases this backend loads stay in host memory (the CPU's; a device backend's
    #: `streamed` twin): the setup then writes a G2 query for it out as host rows.
    bases_on_host: bool = True

    # --- transfers --------------------------------------------------------------
    @abstractmethod
    def to_device(self, a: np.ndarray) -> Array:
        """Copy a host array to the backend's memory (no copy on the CPU)."""

    def stage(self, *pieces: np.ndarray, times: dict[str, float] | None = None) -> Array:
        """Copy host arrays to the backend ahead of the device lock as one array, their rows
        one after another, finished when this returns. `times`, if given, gets the seconds of
        the copy's parts added under backend-specific names (the CUDA runtime's: alloc,
        host_copy, slot_wait, enqueue, drain), for the engine's `gpu_prepare` span.

        Unlike `to_device` inside the lock, the copy must not wait behind (or hold back) the
        lock holder's kernels. Several pieces are joined on the backend, never first on the
        host (a witness's inputs and aux straight from the synthesis hand-over). The result
        is always the backend's own copy, never a view of a piece, and must stay referenced
        while a queued kernel may read it (`prover.start` drops a/b/c only after the NTTs
        that read them are done).
        """
        if len(pieces) != 1:
            return self.xp.concatenate([self.to_device(a) for a in pieces])
        dev = self.to_device(pieces[0])
        return dev.copy() if isinstance(dev, np.ndarray) and np.shares_memory(dev, pieces[0]) else dev

    @abstractmethod
    def to_host(self, a: Array) -> np.ndarray:
        """Copy a backend array to a host numpy array."""

    # --- Fr vectors ---------------------------------------------------------------
    @abstractmethod
    def fr_add(self, a: Array, b: Array) -> Array: ...

    @abstractmethod
    def fr_sub(self, a: Array, b: Array) -> Array: ...

    @abstractmethod
    def fr_mul(self, a: Array, b: Array) -> Array: ...

    @abstractmethod
    def fr_scale(self, a: Array, s: int) -> Array:
        """a[i] * s for a canonical integer s."""

    @abstractmethod
    def fr_mul_sub_scale(self, a: Array, b: Array, c: Array, s: int, *, overwrite: bool = False) -> Array:
        """(a[i] * b[i] - c[i]) * s: the pointwise step of the QAP quotient, fused.

        `overwrite`: a's contents may be destroyed and its memory hold the result (a GPU then
        allocates nothing); use the returned array either way."""

    # --- NTT over Fr ------------------------------------------------------------------
    @abstractmethod
    def ntt(self, a: Array, omega: int, *, coset: int | None = None, overwrite: bool = False) -> Array:
        """Evaluations of the coefficient vector a at coset * omega^i, i < n = len(a).

        omega must be a primitive n-th root of unity (n a power of two, up to 2^28);
        coset None means the subgroup itself. Natural order in and out. `overwrite`: a's
        contents may be destroyed and its memory hold the result (a GPU transform then needs
        one more n-sized buffer, not two: at 2^27, 4.3 GB less); use the returned array.
        """

    @abstractmethod
    def intt(self, a: Array, omega: int, *, coset: int | None = None, overwrite: bool = False) -> Array:
        """The inverse of `ntt` with the same omega and coset (includes the 1/n); `overwrite` as there."""

    # --- sparse products -------------------------------------------------------------
    @abstractmethod
    def spmv(self, m: CsrMatrix, w: Array) -> Array:
        """m @ w over Fr: one Fr value per row."""

    def spmv_copies(
        self, m: CsrMatrix, w: Array, cols: Array, strides: Array, copies: int, out: Array
    ) -> None:
        """out[k rows + r] = (m @ w[cols + k strides])[r] for each copy k < copies: one block of
        a replicated circuit applied to each copy's columns of the whole witness `w`. `out` is
        a contiguous (copies rows, 4) array (a view into the caller's result). A backend may do
        it without gathering each copy's columns (the CUDA backend: one launch for all copies)."""
        xp = self.xp
        for k in range(copies):
            out[k * m.shape[0] : (k + 1) * m.shape[0]] = self.spmv(m, xp.take(w, cols + k * strides, axis=0))

    def spmv_transposed(self, m: CsrMatrix, w: Array) -> Array:
        """m^T @ w over Fr: one value per column (the setup's QAP at tau, per variable). The
        transpose is made where the product runs and not kept (each setup needs it once)."""
        return self.spmv(m.transposed(), w)

    # --- MSM --------------------------------------------------------------------------
    @abstractmethod
    def load_bases(self, points: np.ndarray, group: Group) -> Bases:
        """Make a resident handle for affine bases (host array in the layout above)."""

    @abstractmethod
    def bases_from_device(self, rows: Array, group: Group) -> Bases:
        """A resident handle over affine rows already in this backend's memory, (n, 2 width)
        uint64 (width 6 for G1, 12 for G2), without a copy: e.g. `fixed_base_mul` output."""

    @abstractmethod
    def release(self, bases: Bases) -> None:
        """Free a resident handle's memory now (the SRS manager's evict). Releasing twice is a
        no-op; an MSM over released bases raises ValueError; bases of another backend or
        device raise TypeError."""

    @abstractmethod
    def msm(self, bases: Bases, scalars: Array, *, start: int = 0, window: int | None = None) -> np.ndarray:
        """sum_i scalars[i] * bases[start + i] as a Jacobian point on the host.

        `scalars` is (n, 4) Fr in Montgomery form, or (k, n, 4) for k MSMs over the
        same bases, which returns (k,) + point shape. `window` overrides the
        Pippenger window size (bits) chosen from n.
        """

    def precompute(self, bases: Bases, copies: int, *, progress: Callable[[str], None] | None = None) -> int:
        """Keep up to `copies` shifted copies of a handle's bases (1: none, the default state) so
        that its MSMs share bucket sets across windows; returns the bytes the copies add.

        The SRS is fixed for the life of an engine, so the one-off doubling cost pays on every
        later MSM. Backends without precomputed MSMs keep the bases as they are and return 0.
        """
        if copies < 1:
            raise ValueError(f"precomputed copies must be at least 1, got {copies}")
        return 0

    def precompute_cost(self, n: int, group: Group, copies: int) -> int:
        """The bytes `precompute(bases of n points, copies)` would add (0 where unsupported)."""
        return 0

    def msm_scratch_bytes(self, n: int, group: Group = "g1") -> int:
        """The device bytes an n-point MSM over device scalars holds beside its inputs while
        it runs (0 where the MSM's memory is the host's): the engine's device model counts it."""
        return 0

    @abstractmethod
    def sum_bases(self, bases: Bases, mask: Array, *, start: int = 0) -> np.ndarray:
        """sum of bases[start + i] where mask[i] is true: the MSM for 0/1 scalars."""

    # --- parameter set-up: encoded points in and out --------------------------------------
    def empty_rows(self, n: int, group: Group) -> Array:
        """Uninitialised (n, 2 width) affine rows in this backend's memory (counted against its
        budget where it has one): a query that `import_points` fills chunk by chunk."""
        from cuzk.algebra.curves import G1, G2

        return np.empty((n, 2 * (G1 if group == "g1" else G2).field.width), dtype=np.uint64)

    def import_points(
        self, raw: np.ndarray, group: Group, *, check_subgroup: bool, out: Array | None = None, what: str = ""
    ) -> Array:
        """zcash uncompressed encodings, (n, 96) or (n, 192) uint8 host bytes, as affine rows in
        this backend's memory (into `out` when given). Every point is checked (flags, canonical
        coordinates, the curve equation; the subgroup with `check_subgroup`; infinity is
        refused, as bellperson's parameter readers do): an EncodingError subclass names the
        lowest bad point, prefixed by `what`."""
        from cuzk.algebra import encoding
        from cuzk.algebra.curves import G1, G2
        from cuzk.errors import EncodingError

        curve = G1 if group == "g1" else G2
        try:
            pts = encoding.decode_points(
                curve, raw, compressed=False, check_subgroup=check_subgroup, allow_infinity=False
            )
        except EncodingError as exc:
            raise type(exc)(f"{what}: {exc}" if what else str(exc)) from None
        rows = pts.reshape(pts.shape[0], -1)
        if out is None:
            return rows
        np.copyto(out, rows)
        return out

    def export_points(self, rows: Array, group: Group) -> np.ndarray:
        """Affine rows (n, 2 width) -> (n, 96 or 192) uint8 zcash uncompressed encodings on the host."""
        from cuzk.algebra import encoding
        from cuzk.algebra.curves import G1, G2

        curve = G1 if group == "g1" else G2
        host = np.asarray(self.to_host(rows))
        return encoding.encode_points(
            curve, host.reshape(host.shape[0], *curve.affine_shape), compressed=False
        )

    @abstractmethod
    def fixed_base_mul(self, base: np.ndarray, scalars: Array, group: Group) -> np.ndarray:
        """[scalars[i]] * base for one affine base, as affine points on the host.

        This is parameter generation's workhorse (millions of multiples of g1, g2).
        """

    def streamed(self) -> Backend:
        """The backend for a query that stays in host memory yet is summed here, its rows
        streamed through the device per MSM (msm.g2_on=stream): itself where bases already live
        on the host."""
        return self

    def activate(self) -> AbstractContextManager[Any]:
        """The backend's device region for a block: callers that run `xp` operations on its
        arrays enter it, so those run on its device and allocate where its memory accounting
        sees them (a CUDA backend's pool). A no-op on the CPU; the backend's own methods never
        need it."""
        return nullcontext()

    def synchronize(self) -> None:  # noqa: B027 - a no-op is right for synchronous backends
        """Wait for queued work (a no-op where work is synchronous)."""

    def device_clock(self) -> AbstractContextManager[list[tuple[float, float]] | None]:
        """Over a block, the device's busy intervals on the perf_counter clock, filled in at its end.

        None where the backend has no clock of its own (the CPU: its work is the calling
        thread's, so the engine counts the device lock's hold instead).
        """
        return nullcontext(None)

    @property
    def label(self) -> str:
        """'cuda:1', 'cpu:0': the device in logs, spans and the engine's tables."""
        return f"{self.name}:{self.device}"

    @abstractmethod
    def memory_info(self) -> dict[str, int | None]:
        """Memory in bytes, None where unknown: `resident` (held by this backend's live bases
        handles), `used` (all it has allocated now), `total` and `free` (of its device; the
        host's for cpu), `budget` (the limit it enforces, if any), and on devices with memory pools one
        `<pool>_held` per pool (bytes it holds, live or cached: what `used` does not show), with
        counts, not bytes: `mallocs` (the pools' device allocations so far) and `mallocs_full`
        (those that found the device full, so the pool freed its cached blocks and retried)."""

    def describe(self) -> dict[str, Any]:
        """Facts for logs and benchmark tables: backend, device (its name), ordinal, label, ..."""
        return {"backend": self.name, "ordinal": self.device, "label": self.label}
