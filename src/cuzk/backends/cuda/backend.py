"""CudaBackend: the Backend interface on a CUDA device (CuPy), with the CPU backend's semantics.

Arrays are CuPy arrays in the host layout (Montgomery uint64 limbs). Host numpy arrays given
to any method are uploaded first; results stay on the device except where the interface
returns host values (msm, sum_bases, fixed_base_mul). SRS bases are resident `CudaBases`
handles. Configuration (constructor arguments, else environment):

- memory_budget / CUZK_DEVICE_MEMORY_BUDGET ('80GiB', bytes): allocations beyond it raise
  DeviceMemoryError before any work starts, naming what asked;
- pinned_staging / CUZK_PINNED_STAGING (on by default; 0 turns it off): uploads go through two
  reused page-locked buffers (their one-off pinning time is reported by describe() as
  pin_seconds). A pageable upload holds up the GPU work beside it (BENCHMARKS, 2026-12-07);
- msm_chunks / CUZK_MSM_CHUNKS: scalar chunks overlapped with compute (default by size);
- msm_chunk_cap (toggle msm.chunk_cap, default 25): log2 of the most points an MSM scatters per
  chunk; a 2^27 MSM's scratch is ~31 GB in one chunk and 9.9 GB in four (msm.MAX_CHUNK);
- msm_split (on by default; measured in GPU_NOTES v30): an MSM over device scalars first classes them as 0, 1 or full; the ones are
  summed directly (no digits), the zeros skipped, and only the full scalars go through a tail
  Pippenger over an index map into the resident bases. Host scalars keep the chunked upload
  pipeline (classing them would need the whole vector on the device before any work).

Importing this module does not import CuPy; constructing a CudaBackend does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np

from cuzk import config
from cuzk import defaults as D
from cuzk.algebra.curves import G1, G2, Curve
from cuzk.algebra.fields import fr_mont
from cuzk.backends.base import Backend, Bases, CsrMatrix, Group
from cuzk.backends.cuda import msm as _msm
from cuzk.backends.cuda import points as _points
from cuzk.backends.cuda._runtime import CupyRuntime, Runtime, budget_from_env, device_budget
from cuzk.backends.cuda.ntt import CudaNtt
from cuzk.backends.cuda.spmv import SpmvCache, transpose_on_device
from cuzk.backends.cuda.spmv import spmv as _spmv
from cuzk.backends.cuda.spmv import spmv_copies as _spmv_copies

CURVES: dict[str, Curve] = {"g1": G1, "g2": G2}


def _curve(group: str) -> Curve:
    try:
        return CURVES[group]
    except KeyError:
        raise ValueError(f"unknown group {group!r}; expected 'g1' or 'g2'") from None


@dataclass
class CudaBases(Bases):
    """Affine bases resident on the device as (n, 2 width) uint64 rows.

    After `CudaBackend.precompute`, `table` holds `copies` copies (copy j = 2^(j window) rows,
    copy 0 the rows, which then view it) and `extra_bytes` counts the copies beyond the first.
    """

    group: Group
    n: int
    rows: Any
    nbytes: int
    owner: int  # id of the backend that loaded them
    table: Any = None
    window: int = 0
    copies: int = 1
    extra_bytes: int = 0
    glv: Any = None  # G1 with msm_glv: [table; phi(table)], rows and table then view it


def rows_of(rows: Any, n: int, start: int, count: int) -> Any:
    """rows[start:start + count] of a handle over n bases (None once released), checked."""
    if rows is None:
        raise ValueError("these bases were released")
    if start < 0 or start + count > n:
        raise ValueError(f"bases[{start}:{start + count}] is out of range for {n} bases")
    return rows[start : start + count]


def check_scalars(scalars: Any) -> None:
    if scalars.ndim != 2 or scalars.shape[1] != 4 or scalars.dtype != np.uint64:
        raise ValueError(f"MSM scalars have shape (n, 4) uint64; got {scalars.shape} {scalars.dtype}")


class CudaBackend(Backend):
    name = "cuda"
    bases_on_host = False

    def __init__(
        self,
        *,
        device: int = 0,
        memory_budget: int | str | None = None,
        pinned_staging: bool | None = None,
        msm_chunks: int | None = None,
        msm_glv: bool = False,
        msm_split: bool = True,
        msm_chunk_cap: int | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        self.device = device
        budget = device_budget(memory_budget) if memory_budget is not None else budget_from_env()
        pinned = config.get().cuda.pinned_staging if pinned_staging is None else pinned_staging
        if runtime is None:
            runtime = CupyRuntime(device=device, memory_budget=budget, pinned_staging=pinned)
        self.rt = runtime
        self.xp = runtime.xp
        chunks = msm_chunks if msm_chunks is not None else config.get().cuda.msm_chunks
        self.msm_chunks = int(chunks) if chunks else None
        cap = D.MSM_CHUNK_CAP if msm_chunk_cap is None else int(msm_chunk_cap)
        lo, hi = D.MSM_CHUNK_CAP_RANGE
        if not lo <= cap <= hi:
            raise ValueError(f"msm.chunk_cap is log2 of the points per MSM chunk, {lo}..{hi}; got {cap}")
        #: the most points an MSM scatters per chunk (scratch grows with it; msm.scratch_bytes)
        self.msm_max_chunk = 1 << cap
        #: G1 MSMs split each scalar by the GLV endomorphism (msm.glv_table: the bases' table
        #: gains its phi image, built at the first such MSM and counted in extra_bytes)
        self.msm_glv = msm_glv
        #: MSMs over device scalars split off their zeros and ones first (module docstring)
        self.msm_split = msm_split
        self._ntt = CudaNtt(runtime)
        self._spmv = SpmvCache(runtime)
        self._fixed: dict[tuple, _msm.FixedBaseTable] = {}
        self._lock = threading.Lock()
        self._streamed: Backend | None = None

    # --- transfers ------------------------------------------------------------------------
    def to_device(self, a: np.ndarray) -> Any:
        if isinstance(a, self.xp.ndarray) and self.xp is not np:
            if a.flags.c_contiguous and a.device.id == self.device:
                return a
            with self.rt.guard("copy to this device"):  # .copy() lands on the current device: ours
                return a.copy() if a.flags.c_contiguous else self.xp.ascontiguousarray(a)
        with self.rt.guard("upload"):
            return self.rt.upload(np.ascontiguousarray(a))

    def stage(self, *pieces: np.ndarray, times: dict[str, float] | None = None) -> Any:
        if not all(isinstance(a, np.ndarray) for a in pieces):
            with self.rt.guard("staging on the device"):
                return super().stage(*pieces)
        return self.rt.stage(*pieces, times=times)

    def to_host(self, a: Any) -> np.ndarray:
        return self.rt.to_host(a)

    def _fr(self, a: Any, what: str = "Fr vector") -> Any:
        """A contiguous (n, 4) uint64 device array, uploading host arrays."""
        if a.ndim != 2 or a.shape[1] != 4 or a.dtype != np.uint64:
            raise ValueError(f"{what} arrays have shape (n, 4) and dtype uint64; got {a.shape} {a.dtype}")
        return self.to_device(a)

    def _pair(self, a: Any, b: Any) -> tuple[Any, Any]:
        a, b = self._fr(a), self._fr(b)
        if a.shape != b.shape:
            raise ValueError(f"length mismatch: {a.shape[0]} vs {b.shape[0]}")
        return a, b

    def _scalar(self, s: int) -> Any:
        return self.rt.upload(fr_mont(s)[None])

    # --- Fr vectors -------------------------------------------------------------------------
    def _binary(self, kernel: str, a: Any, b: Any) -> Any:
        with self.rt.guard(kernel):
            a, b = self._pair(a, b)
            out = self.xp.empty_like(a)
            n = a.shape[0]
            if n:
                self.rt.launch("fr", kernel, n, (np.uint64(n), a, b, out))
            return out

    def fr_add(self, a: Any, b: Any) -> Any:
        return self._binary("fr_add", a, b)

    def fr_sub(self, a: Any, b: Any) -> Any:
        return self._binary("fr_sub", a, b)

    def fr_mul(self, a: Any, b: Any) -> Any:
        return self._binary("fr_mul", a, b)

    def fr_scale(self, a: Any, s: int) -> Any:
        with self.rt.guard("fr_scale"):
            a = self._fr(a)
            out = self.xp.empty_like(a)
            n = a.shape[0]
            if n:
                self.rt.launch("fr", "fr_scale", n, (np.uint64(n), a, self._scalar(s), out))
            return out

    def fr_mul_sub_scale(self, a: Any, b: Any, c: Any, s: int, *, overwrite: bool = False) -> Any:
        with self.rt.guard("fr_mul_sub_scale"):
            a, b = self._pair(a, b)
            c = self._fr(c)
            if c.shape != a.shape:
                raise ValueError(f"length mismatch: {a.shape[0]} vs {c.shape[0]}")
            out = a if overwrite else self.xp.empty_like(a)  # the kernel reads entry i before writing it
            n = a.shape[0]
            if n:
                self.rt.launch("fr", "fr_mul_sub_scale", n, (np.uint64(n), a, b, c, self._scalar(s), out))
            return out

    # --- NTT ----------------------------------------------------------------------------------
    def ntt(self, a: Any, omega: int, *, coset: int | None = None, overwrite: bool = False) -> Any:
        with self.rt.guard("ntt"):
            return self._ntt.transform(self._fr(a), omega, coset=coset, inverse=False, overwrite=overwrite)

    def intt(self, a: Any, omega: int, *, coset: int | None = None, overwrite: bool = False) -> Any:
        with self.rt.guard("intt"):
            return self._ntt.transform(self._fr(a), omega, coset=coset, inverse=True, overwrite=overwrite)

    # --- sparse -------------------------------------------------------------------------------
    def spmv(self, m: CsrMatrix, w: Any) -> Any:
        with self.rt.guard("spmv"):
            dev = self._spmv.get(m)
            return _spmv(self.rt, dev, self._fr(w, "witness"))

    def spmv_copies(self, m: CsrMatrix, w: Any, cols: Any, strides: Any, copies: int, out: Any) -> None:
        with self.rt.guard("spmv_copies"):
            dev = self._spmv.get(m)
            idx = [self.to_device(np.ascontiguousarray(v, dtype=np.int64)) if isinstance(v, np.ndarray) else v
                   for v in (cols, strides)]  # fmt: skip
            if any(v.dtype != np.int64 for v in idx):
                raise ValueError(
                    f"column offsets and strides are int64, got {idx[0].dtype} and {idx[1].dtype}"
                )
            _spmv_copies(self.rt, dev, self._fr(w, "witness"), idx[0], idx[1], copies, out)

    def spmv_transposed(self, m: CsrMatrix, w: Any) -> Any:
        """As the interface: the transpose is a sort of the column indices on the device (a
        130M-row matrix's 300M entries take a second there, minutes on the host)."""
        with self.rt.guard("spmv_transposed"):
            dev = transpose_on_device(self.rt, m)
            return _spmv(self.rt, dev, self._fr(w, "vector"))

    # --- MSM ----------------------------------------------------------------------------------
    def load_bases(self, points: np.ndarray, group: Group) -> CudaBases:
        curve = _curve(group)
        if not isinstance(points, np.ndarray):
            points = self.to_host(points)
        rows = curve._aff(np.asarray(points, dtype=np.uint64))
        with self.rt.guard(f"load_bases({group})"):
            self.rt.reserve(rows.nbytes, f"{rows.shape[0]} {group} bases")
            dev = self.rt.upload(rows)
            self.rt.resident_bytes += rows.nbytes
        bases = CudaBases(group=group, n=rows.shape[0], rows=dev, nbytes=rows.nbytes, owner=id(self))
        return bases

    def release(self, bases: Bases) -> None:
        if not isinstance(bases, CudaBases) or bases.owner != id(self):
            raise TypeError(f"these bases were not loaded by this backend ({self.label})")
        with self._lock:
            if bases.rows is not None:
                self.rt.resident_bytes -= bases.nbytes + bases.extra_bytes
                bases.rows = bases.table = bases.glv = None
                bases.copies, bases.extra_bytes = 1, 0

    def msm_scratch_bytes(self, n: int, group: Group = "g1") -> int:
        """The plan `msm` makes for n device scalars (the configured chunks; at most
        msm_max_chunk points a chunk): its scratch, msm.scratch_bytes."""
        return _msm.scratch_bytes(
            _msm.make_plan(max(1, n), None, self.msm_chunks, max_chunk=self.msm_max_chunk),
            _msm.xyzz_words(_curve(group)),
        )

    def precompute_cost(self, n: int, group: Group, copies: int) -> int:
        if copies <= 1 or n == 0:
            return 0
        _, m = _msm.precompute_shape(n, copies)
        return (m - 1) * n * 2 * _curve(group).field.width * 8

    def precompute(
        self,
        bases: Bases,
        copies: int,
        *,
        progress: Callable[[str], None] | None = None,
        window: int | None = None,
    ) -> int:
        """As the interface. The window is the one the MSM cost model picks for the handle's n
        with that many copies (msm.precompute_shape) unless given (then copies = min(copies,
        its windows)); a handle already precomputed to the same shape is left alone, another
        shape is rebuilt from copy 0."""
        super().precompute(bases, copies)
        if not isinstance(bases, CudaBases) or bases.owner != id(self):
            raise TypeError("these bases were not loaded by this cuda backend")
        if bases.rows is None:
            raise ValueError("these bases were released")
        if window is not None and not 2 <= window <= 23:
            raise ValueError(f"a precomputed table's window must be 2..23 bits, got {window}")
        if not bases.n:
            c, m = 0, 1
        elif window is None:
            c, m = _msm.precompute_shape(bases.n, copies)
        else:
            c, m = window, max(1, min(copies, _msm.windows_for(window)))
        if (m, c if m > 1 else 0) == (bases.copies, bases.window):
            return bases.extra_bytes
        curve = _curve(bases.group)
        with self.rt.guard(f"precompute({bases.group}, n={bases.n}, copies={m})"):
            table = None
            if m > 1:
                table = _msm.shifted_table(self.rt, curve, bases.rows, c, m, progress=progress)
            with self._lock:
                self.rt.resident_bytes -= bases.extra_bytes
                bases.glv = None  # rebuilt from the new table at the next GLV MSM
                if table is None:  # off again (the early return took the plain handle): out of the table
                    bases.rows = bases.rows.copy()
                    bases.table, bases.window, bases.copies, bases.extra_bytes = None, 0, 1, 0
                else:
                    bases.rows = table[: bases.n]
                    bases.table, bases.window, bases.copies = table, c, m
                    bases.extra_bytes = (m - 1) * bases.nbytes
                self.rt.resident_bytes += bases.extra_bytes
        return bases.extra_bytes

    def _rows(self, bases: Bases, start: int, count: int) -> Any:
        if not isinstance(bases, CudaBases) or bases.owner != id(self):
            raise TypeError("these bases were not loaded by this cuda backend")
        return rows_of(bases.rows, bases.n, start, count)

    def msm(self, bases: Bases, scalars: Any, *, start: int = 0, window: int | None = None) -> np.ndarray:
        if scalars.ndim == 3:
            return np.stack([self.msm(bases, s, start=start, window=window) for s in scalars])
        check_scalars(scalars)
        n = scalars.shape[0]
        rows = self._rows(bases, start, n)
        curve = _curve(bases.group)
        if n == 0:
            return curve.to_jacobian(curve.identity(1))[0]
        host = isinstance(scalars, np.ndarray)
        assert isinstance(bases, CudaBases)
        with self.rt.guard(f"msm({bases.group}, n={n})"):
            scalars = np.ascontiguousarray(scalars) if host else self.xp.ascontiguousarray(scalars)
            if self.msm_split and (not host or self.xp is np):  # the emulator's arrays are numpy
                return self._msm_split(bases, rows, scalars, start, window)
            rows, plan = self._plan(bases, rows, n, start, window, host)
            return _msm.pippenger(self.rt, curve, rows, scalars, plan)

    def _plan(
        self, bases: CudaBases, rows: Any, n: int, start: int, window: int | None, host: bool
    ) -> tuple[Any, _msm.MsmPlan]:
        """The rows (plain, precomputed table or GLV table, from `start` on) and the plan of an
        n-scalar MSM over these bases."""
        cap = self.msm_max_chunk
        plan = _msm.make_plan(n, window, self.msm_chunks, host_scalars=host, max_chunk=cap)
        if self.msm_glv and bases.group == "g1":
            table = self._glv_table(bases)
            c = bases.window if bases.copies > 1 else window
            plan = _msm.make_plan(
                n, c, self.msm_chunks, host, copies=bases.copies, stride=bases.n, halves=2, max_chunk=cap
            )
            rows = table[start:]
        elif bases.table is not None and window in (None, bases.window):
            shared = _msm.make_plan(
                n, bases.window, self.msm_chunks, host, copies=bases.copies, stride=bases.n, max_chunk=cap
            )
            # the table's window suits its full n; a much smaller MSM over it may do better plain
            if window is not None or _msm.plan_cost(shared, host) <= _msm.plan_cost(plan, host):
                plan, rows = shared, bases.table[start:]
        return rows, plan

    def _msm_split(self, bases: CudaBases, rows: Any, scalars: Any, start: int, window: int | None) -> Any:
        """The 0/1 split of an MSM over device scalars: zeros skipped, ones summed (masked_sum),
        the full scalars in a tail Pippenger over an index map; all full: the plain MSM (the
        classing pass is then its only extra, ~1 ms at 2^27)."""
        curve = _curve(bases.group)
        n = int(scalars.shape[0])
        ones, fulls = _msm.scalar_classes(self.rt, scalars)
        m = int(fulls.shape[0])
        if m == n:
            del ones, fulls
            rows, plan = self._plan(bases, rows, n, start, window, False)
            return _msm.pippenger(self.rt, curve, rows, scalars, plan)
        acc = curve.to_jacobian(curve.identity(1))[0]
        if ones.shape[0]:
            acc = _msm.masked_sum(self.rt, curve, rows, ones)
        del ones
        if m:
            tail, plan = self._plan(bases, rows, m, start, window, False)
            self.rt.reserve(m * (32 + 4), f"the {m} full scalars of a split MSM and their index map")
            index = fulls.astype(np.uint32)
            part = _msm.pippenger(self.rt, curve, tail, scalars[fulls], plan, index=index)
            acc = curve.add(acc[None], part[None])[0]
        return acc

    def _glv_table(self, bases: CudaBases) -> Any:
        """The bases' (or their precomputed table's) rows followed by their phi images, built
        once; rows and table then view it, and the old copy is freed."""
        if bases.glv is None:
            src = bases.table if bases.table is not None else bases.rows
            with self.rt.guard(f"glv table(n={bases.n}, copies={bases.copies})"):
                glv = _msm.glv_table(self.rt, _curve(bases.group), src)
            with self._lock:
                k = src.shape[0]
                bases.glv = glv
                bases.rows = glv[: bases.n]
                if bases.table is not None:
                    bases.table = glv[:k]
                bases.extra_bytes += src.nbytes
                self.rt.resident_bytes += src.nbytes
        return bases.glv

    def sum_bases(self, bases: Bases, mask: Any, *, start: int = 0) -> np.ndarray:
        rows = self._rows(bases, start, mask.shape[0])
        with self.rt.guard(f"sum_bases({bases.group})"):
            m = self.to_device(np.asarray(mask, dtype=np.bool_)) if isinstance(mask, np.ndarray) else mask
            self.rt.settle()  # flatnonzero reads its count to the host (Runtime.settle)
            idx = self.xp.flatnonzero(m.astype(bool)).astype(np.int64)
            return _msm.masked_sum(self.rt, _curve(bases.group), rows, idx)

    def fixed_base_mul(self, base: np.ndarray, scalars: Any, group: Group, *, on_device: bool = False) -> Any:
        """As the interface; on_device=True returns (n, 2 width) device rows instead (for
        parameter generation and benchmarks at scale, or to feed `bases_from_device`)."""
        curve = _curve(group)
        base = np.ascontiguousarray(self.to_host(base), dtype=np.uint64).reshape(1, *curve.affine_shape)
        if scalars.ndim != 2 or scalars.shape[1] != 4 or scalars.dtype != np.uint64:
            raise ValueError(f"scalars have shape (n, 4) uint64; got {scalars.shape} {scalars.dtype}")
        n = scalars.shape[0]
        if n == 0 or not base.any():
            ident = curve.identity(n)
            return self.to_device(ident.reshape(n, -1)) if on_device else ident
        c = _msm.fixed_base_window(n)
        key = (group, base.tobytes(), c)
        with self.rt.guard(f"fixed_base_mul({group}, n={n})"):
            with self._lock:
                table = self._fixed.get(key)
            if table is None:
                table = _msm.FixedBaseTable(self.rt, curve, base, c)
                with self._lock:
                    self._fixed.clear()  # one table at a time: they are up to 0.4 GB
                    self._fixed[key] = table
            return _msm.fixed_base_mul(self.rt, curve, table, scalars, on_device=on_device)

    # --- set-up: encodings in and out (kernels/points.cuh) --------------------------------------
    def empty_rows(self, n: int, group: Group) -> Any:
        width = _curve(group).field.width
        with self.rt.guard(f"empty_rows({group}, n={n})"):
            self.rt.reserve(n * 2 * width * 8, f"{n} {group} points")
            return self.xp.empty((n, 2 * width), dtype=np.uint64)

    def import_points(
        self, raw: Any, group: Group, *, check_subgroup: bool, out: Any = None, what: str = ""
    ) -> Any:
        curve = _curve(group)
        k = _points.encoded_size(curve)
        if raw.ndim != 2 or raw.shape[1] != k or raw.dtype != np.uint8:
            raise ValueError(f"{group} encodings are (n, {k}) uint8 rows; got {raw.shape} {raw.dtype}")
        n = raw.shape[0]
        if out is None:
            out = self.empty_rows(n, group)
        with self.rt.guard(f"import_points({group}, n={n})"):
            dev = self.to_device(raw)
            status = _points.import_points(self.rt, curve, dev, out, check_subgroup=check_subgroup)
            bad = int(status.max()) if n else 0
        if bad:
            _points.raise_for(curve, self.to_host(status), what or f"{group} points")
        return out

    def export_points(self, rows: Any, group: Group) -> np.ndarray:
        with self.rt.guard(f"export_points({group}, n={rows.shape[0]})"):
            return self.to_host(_points.export_points(self.rt, _curve(group), self.to_device(rows)))

    def streamed(self) -> Backend:
        """A HostRowsBackend on this backend's runtime, made once (cuda.host_rows)."""
        with self._lock:
            if self._streamed is None:
                from cuzk.backends.cuda.host_rows import HostRowsBackend

                self._streamed = HostRowsBackend(self)
            return self._streamed

    def bases_from_device(self, rows: Any, group: Group) -> CudaBases:
        """A resident handle over affine rows already on the device (n, 2 width), no copy."""
        curve = _curve(group)
        if rows.ndim != 2 or rows.shape[1] != 2 * curve.field.width or rows.dtype != np.uint64:
            raise ValueError(
                f"{group} device rows have shape (n, {2 * curve.field.width}) uint64; got {rows.shape}"
            )
        self.rt.resident_bytes += rows.nbytes
        return CudaBases(group=group, n=rows.shape[0], rows=rows, nbytes=rows.nbytes, owner=id(self))

    # --- misc ---------------------------------------------------------------------------------
    def synchronize(self) -> None:
        self.rt.synchronize()

    def device_clock(self) -> AbstractContextManager[list[tuple[float, float]] | None]:
        return self.rt.device_clock()

    def activate(self) -> Any:
        return self.rt.activate()

    def memory_info(self) -> dict[str, int | None]:
        total, free = self.rt.mem_info()
        used = self.rt.used_bytes()
        return {
            "resident": self.rt.resident_bytes,
            "used": used,
            "total": total,
            "free": free,
            "budget": self.rt.budget,
            **{f"{pool}_held": n for pool, n in self.rt.held_bytes().items()},
            **self.rt.malloc_counts(),
        }

    def describe(self) -> dict[str, Any]:
        info = {**super().describe(), "device": self.rt.name, **self.rt.describe()}
        info["resident_gib"] = round(self.rt.resident_bytes / (1 << 30), 3)
        return info
