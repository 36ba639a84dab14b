"""Pippenger MSM, 0/1 sums and fixed-base multiplication on the device (launch sequences).

The per-thread steps are in kernels/msm.cuh; this module chooses the window and the chunking,
allocates the scratch buffers, and runs the steps. The few window sums come back to the host,
where the Horner combination shared with the CPU backend (cuzk.algebra.pippenger; c doublings
per window) finishes the job: that is W points and ~255 doublings, microseconds on the host,
and it keeps one reference for the digit convention. Scalars go up in chunks on the upload stream; chunk k+1 travels while chunk k is
bucketed and accumulated (the bucket sums persist across chunks).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from cuzk import defaults as D
from cuzk.algebra import glv
from cuzk.algebra._jit_curves import xyzz_to_jac
from cuzk.algebra._jit_fields import f_load, f_store
from cuzk.algebra.curves import Curve
from cuzk.algebra.pippenger import SCALAR_BITS, combine_windows
from cuzk.backends.cuda._runtime import Runtime

#: Entries each accumulate thread sums (fixed, so every thread does the same work).
ACCUMULATE_L = 32
#: Cost model in Fq-product equivalents, fitted to the H200 per-kernel profile of 2026-12-02
#: (docs/GPU_NOTES.md): an accumulated entry (XYZZ madd + its share of digits and scatter),
#: a bucket merged per chunk, a bucket in the window reduction, and a scalar uploaded from
#: pageable host memory (6.7 GB/s measured against 13.5 G products/s).
ENTRY_COST, MERGE_COST, REDUCE_COST, UPLOAD_COST = 11.5, 34.0, 42.0, 64.0
#: Points per to-affine thread (one inversion shared by this many points).
AFFINE_K = 32
#: Buckets of more entries than this are merged by batched tree sums.
BIG_ENTRIES = ACCUMULATE_L * 64
SUM_L = 32
#: points per thread and level of the tree sums (short serial chains: latency, not work, rules)
SUM_G = 8
#: target thread count of the window-reduction segments
SEGMENT_THREADS = 1 << 16
CHUNK_CHOICES = (1, 2, 4, 8)
MIN_CHUNK = 1 << 20
#: Points per chunk at most: a chunk's digits (8 bytes x windows), canonical scalars (32 bytes)
#: and accumulation partials (one XYZZ point per 32 entries) are held at once. In one chunk,
#: porep-32g's 2^27 H MSM needed ~31 GB of scratch and failed beside the 47.5 GB resident set
#: of an 80 GB card (H100, 2026-12-07); in 4 it needs 9.9 GB and ran 0.997 s there (median of
#: 20 in the engine). The model puts 4 chunks at +3.4% of one at 2^27 (msm_cost).
MAX_CHUNK = 1 << D.MSM_CHUNK_CAP


def windows_for(c: int, halves: int = 1) -> int:
    """floor(255 / c) + 1 signed windows cover 255 bits plus the final carry; with the GLV
    split (halves = 2), floor(128 / c) + 1 per half."""
    return (SCALAR_BITS if halves == 1 else glv.HALF_BITS) // c + 1


def entries_per_scalar(c: int, halves: int = 1) -> float:
    """Modelled bucket entries of one scalar: a plain scalar's W windows (as the model was
    fitted), a split one's 2 (128 / c + 1/2) (each half's top window holds little or only the
    carry)."""
    return windows_for(c) if halves == 1 else 2 * (glv.HALF_BITS / c + 0.5)


def chunk_count(n: int) -> int:
    """Default chunks of host scalars when the window is given: 1 up to 2^21 points, then 2, then 4
    (they overlap the upload with the MSM; device scalars take one chunk)."""
    return max(1, min(4, n >> 21))


def bucket_sets(c: int, copies: int, halves: int = 1) -> int:
    """Bucket sets of a window-c MSM over `copies` precomputed copies of the bases (with the
    GLV split both halves share the sets of one half's windows)."""
    return -(-windows_for(c, halves) // copies)


def msm_cost(
    n: int, c: int, chunks: int = 1, host_scalars: bool = False, copies: int = 1, halves: int = 1
) -> float:
    """Modelled cost of an n-point MSM with window c in `chunks` chunks (Fq products).

    With precomputed copies the entries are the same (n per window) but the windows share
    bucket sets, so the merge and the reduction shrink by the copies: that is what lets the
    window grow. The GLV split (halves = 2) does the same with half the windows' sets."""
    E = entries_per_scalar(c, halves)
    S = bucket_sets(c, copies, halves)
    B = 1 << (c - 1)
    per_chunk = n / chunks
    filled = B * (1 - math.exp(-per_chunk * (E / S) / B))  # expected non-empty buckets per set and chunk
    accumulate = n * E * ENTRY_COST
    merge = chunks * S * filled * MERGE_COST
    reduce = S * B * REDUCE_COST
    upload = n * UPLOAD_COST / chunks if host_scalars else 0.0  # the first chunk is not hidden
    return accumulate + merge + reduce + upload


def _chunk_options(n: int, host_scalars: bool) -> tuple[int, ...]:
    return tuple(k for k in (CHUNK_CHOICES if host_scalars else (1,)) if k == 1 or n // k >= MIN_CHUNK)


#: Device-scalar windows measured against the model's pick, by log2 of the size's power-of-two
#: ceiling. At 2^27 (the real partition's H MSM) the model's (22, 1) ran 990.7 ms and (20, 1)
#: 928.2 (H200, 2026-12-06, one run, the same scalars; docs/BENCHMARKS.md): the model misses
#: what c = 22 costs there (4.8 GB of buckets, 14.5 GB of partials walked by the merge).
MEASURED_DEVICE_WINDOWS: dict[int, int] = {27: 20}


def choose(n: int, host_scalars: bool = False, halves: int = 1) -> tuple[int, int]:
    """(window, chunks) minimizing msm_cost; windows 4..22, chunks of at least 2^20 points
    (smaller chunks lost on the H200: a 2^20 MSM took 36 ms in 4 chunks, 33 ms in one).
    Where a device-scalar size has a measured window, that window in one chunk (make_plan
    then cuts chunks to MAX_CHUNK points)."""
    measured = MEASURED_DEVICE_WINDOWS.get(max(1, n - 1).bit_length())
    if measured is not None and not host_scalars and halves == 1:
        return measured, 1
    options = [(c, k) for c in range(4, 23) for k in _chunk_options(n, host_scalars)]
    return min(options, key=lambda ck: msm_cost(n, ck[0], ck[1], host_scalars, halves=halves))


#: The scatter packs (row << 1 | sign) into 32 bits: copies x rows must stay below 2^31.
MAX_TABLE_ROWS = 1 << 31


def precompute_shape(n: int, max_copies: int) -> tuple[int, int]:
    """(window, copies) for n bases with at most `max_copies` copies each (1: no table).

    The window minimizes the modelled cost of an n-point MSM from host scalars over the table
    (copies = min(max_copies, windows), bounded by the 32-bit rows of the scatter)."""
    if max_copies < 1:
        raise ValueError(f"precomputed copies must be at least 1, got {max_copies}")

    def copies_for(c: int) -> int:
        return max(1, min(max_copies, windows_for(c), (MAX_TABLE_ROWS - 1) // max(1, n)))

    def cost(c: int) -> float:
        return min(msm_cost(n, c, k, True, copies_for(c)) for k in _chunk_options(n, True))

    c = min(range(4, 23), key=cost)
    return c, copies_for(c)


def default_window(n: int, chunks: int | None = None) -> int:
    """The window minimizing msm_cost for a given chunk count (default chunk_count(n))."""
    k = chunk_count(n) if chunks is None else chunks
    return min(range(4, 23), key=lambda c: msm_cost(n, c, k))


@dataclass(frozen=True)
class MsmPlan:
    n: int
    c: int
    windows: int
    buckets: int  # per set
    chunk: int  # points per chunk
    seg: int  # buckets per reduction segment
    copies: int = 1  # precomputed copies of the bases: window w adds copy w % copies into set w // copies
    stride: int = 0  # rows per copy of the precomputed table
    halves: int = 1  # 2: GLV split (G1), half 1's windows add phi of the copies, rows from copies * stride on

    @property
    def sets(self) -> int:
        return bucket_sets(self.c, self.copies, self.halves)

    @property
    def total_buckets(self) -> int:
        return self.sets * self.buckets

    @property
    def chunks(self) -> list[tuple[int, int]]:
        return [(lo, min(self.n, lo + self.chunk)) for lo in range(0, self.n, self.chunk)]


def make_plan(
    n: int,
    window: int | None = None,
    chunks: int | None = None,
    host_scalars: bool = False,
    *,
    copies: int = 1,
    stride: int = 0,
    halves: int = 1,
    max_chunk: int = MAX_CHUNK,
) -> MsmPlan:
    """The plan of an n-point MSM; with copies > 1, over a precomputed table of window `window`
    and `stride` rows per copy (the chunk count then minimizes the model for that table); with
    halves = 2, GLV-split scalars over a table whose copies [copies, 2 copies) are phi of the
    first (`stride` rows each; the window then given or chosen by the model for split scalars).
    Chunks hold at most `max_chunk` points (the backend's msm.chunk_cap)."""
    if halves not in (1, 2):
        raise ValueError(f"an MSM's scalars come whole (1) or GLV-split (2), got {halves} halves")
    if halves == 2 and (halves * copies * stride >= MAX_TABLE_ROWS or stride < n):
        raise ValueError(f"a GLV table of 2 x {copies} x {stride} rows does not fit this {n}-point MSM")
    if halves == 2 and copies == 1:
        opts = _chunk_options(n, host_scalars) if chunks is None else (max(1, chunks),)
        cands = range(4, 23) if window is None else (window,)
        c, k = min(
            ((w, kk) for w in cands for kk in opts),
            key=lambda ck: msm_cost(n, ck[0], ck[1], host_scalars, halves=2),
        )
    elif copies > 1:
        if window is None:
            raise ValueError("an MSM over precomputed bases needs the table's window")
        if copies * stride >= MAX_TABLE_ROWS or stride < n:
            raise ValueError(f"a table of {copies} x {stride} rows does not fit this {n}-point MSM")
        k = chunks or min(
            _chunk_options(n, host_scalars),
            key=lambda k: msm_cost(n, window, k, host_scalars, copies, halves),
        )
        c = window
    elif window is None and chunks is None:
        c, k = choose(n, host_scalars)
    else:  # device scalars need no upload overlap: one chunk, as `choose` plans them
        k = (chunk_count(n) if host_scalars else 1) if chunks is None else max(1, chunks)
        c = window if window is not None else default_window(n, k)
    if not 2 <= c <= 24:
        raise ValueError(f"MSM window must be between 2 and 24 bits, got {c}")
    W = windows_for(c, halves)
    B = 1 << (c - 1)
    chunk = min(max_chunk, max(1, -(-n // k)))
    if chunk * W * halves >= 1 << 32:
        raise ValueError(f"an MSM chunk of {chunk} points x {W * halves} windows overflows 32-bit offsets")
    # segments: about SEGMENT_THREADS threads (short serial chains), at least 1 bucket each
    seg = 1 << max(0, min(c - 1, ((bucket_sets(c, copies, halves) * B) // SEGMENT_THREADS).bit_length() - 1))
    return MsmPlan(
        n=n, c=c, windows=W, buckets=B, chunk=chunk, seg=seg, copies=copies, stride=stride, halves=halves
    )


def scratch_bytes(plan: MsmPlan, words: int) -> int:
    """Device bytes `pippenger` holds for a plan with XYZZ points of `words` uint64s: a chunk's
    canonical scalars and digits, the bucket counts, offsets and cursors, the accumulation
    partials and the buckets."""
    total_b = plan.total_buckets
    entries = plan.chunk * plan.windows * plan.halves
    acc_threads = -(-entries // ACCUMULATE_L)
    return (
        plan.chunk * 32
        + entries * 8
        + 3 * (total_b + 1) * 4
        + (total_b + acc_threads) * words * 8
        + total_b * words * 8
    )


def plan_cost(plan: MsmPlan, host_scalars: bool) -> float:
    """msm_cost of a plan (for choosing between a precomputed table and the plain MSM)."""
    return msm_cost(plan.n, plan.c, len(plan.chunks), host_scalars, plan.copies, plan.halves)


def xyzz_words(curve: Curve) -> int:
    return 4 * curve.field.width  # uint64 words per XYZZ point


@njit(cache=True)
def _xyzz_rows_to_jac(F, rows, out):
    width = rows.shape[1] // 4
    for i in range(rows.shape[0]):
        p = (
            f_load(F, rows, i, 0),
            f_load(F, rows, i, width),
            f_load(F, rows, i, 2 * width),
            f_load(F, rows, i, 3 * width),
        )
        X, Y, Z = xyzz_to_jac(F, p)
        f_store(F, out, i, 0, X)
        f_store(F, out, i, width, Y)
        f_store(F, out, i, 2 * width, Z)


def xyzz_to_jacobian(curve: Curve, rows: np.ndarray) -> np.ndarray:
    """(k, 4 width) XYZZ rows (host) -> (k, 3 width) Jacobian rows."""
    rows = np.ascontiguousarray(rows, dtype=np.uint64).reshape(rows.shape[0], -1)
    out = np.empty((rows.shape[0], 3 * curve.field.width), dtype=np.uint64)
    _xyzz_rows_to_jac(curve.tag, rows, out)
    return out


def _group_module(curve: Curve) -> tuple[str, str]:
    return ("curve_g1", "g1") if curve.field.degree == 1 else ("curve_g2", "g2")


def tree_sum(rt: Runtime, curve: Curve, points: Any, groups: int, count: int) -> Any:
    """Sum each of `groups` runs of `count` XYZZ points; returns (groups, 4 width) device rows."""
    xp = rt.xp
    module, sfx = _group_module(curve)
    words = xyzz_words(curve)
    while count > 1:
        per_out = -(-count // SUM_G)
        out = xp.empty((groups * per_out, words), dtype=np.uint64)
        rt.launch(
            module,
            f"sum_groups_{sfx}",
            groups * per_out,
            (np.uint64(groups * per_out), np.uint32(count), np.uint32(SUM_G), points, out),
            block=64,
        )
        points, count = out, per_out
    return points


@dataclass(frozen=True)
class BigBuckets:
    """The chunk's buckets of more than BIG_ENTRIES entries, on the host: index and entry range."""

    index: np.ndarray  # int64 bucket indices
    lo: np.ndarray  # int64: their entries are [lo, hi) of the chunk's bucket-sorted entries
    hi: np.ndarray


def _big_buckets(rt: Runtime, counts: Any, offsets: Any) -> BigBuckets:
    """Skewed scalars (many equal, mostly ones) and the narrow top window pile points into a few
    buckets; their partials are tree-summed in batches instead of chained in one thread each.

    Their entry ranges come down in the chunk's one host sync, before the scatter, so merging
    them needs no second one: waiting there for the chunk's accumulate held the next chunk's
    upload back (2^26 points from host memory, window 19, whose 8-bit top window has ~232 big
    buckets: 856 ms against 633 for window 20, which has none; H200, 2026-12-02).
    """
    xp = rt.xp
    rt.settle()  # flatnonzero reads its count to the host: only after the queued work (Runtime.settle)
    idx = xp.flatnonzero(counts > BIG_ENTRIES).astype(np.int64)
    rows = rt.to_host(xp.stack([idx, offsets[idx].astype(np.int64), offsets[idx + 1].astype(np.int64)]))
    return BigBuckets(index=rows[0], lo=rows[1], hi=rows[2])


def span_pieces(
    starts: np.ndarray, lens: np.ndarray, group: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split runs [starts, starts + lens) into pieces of at most `group`: (lo, hi, pieces per run)."""
    pieces = -(-lens // group)
    run = np.repeat(np.arange(lens.shape[0]), pieces)
    first = np.cumsum(pieces) - pieces
    k = np.arange(run.shape[0]) - first[run]
    lo = starts[run] + k * group
    hi = np.minimum(lo + group, starts[run] + lens[run])
    return lo.astype(np.uint64), hi.astype(np.uint64), pieces


def _merge_big(rt: Runtime, curve: Curve, big: BigBuckets, partials: Any, buckets: Any) -> None:
    xp = rt.xp
    module, sfx = _group_module(curve)
    starts = big.index + big.lo // ACCUMULATE_L  # partial slot of (first thread, bucket)
    lens = (big.hi - 1) // ACCUMULATE_L - big.lo // ACCUMULATE_L + 1
    src = partials
    while True:
        plo, phi, pieces = span_pieces(starts, lens, SUM_G)
        out = xp.empty((plo.shape[0], xyzz_words(curve)), dtype=np.uint64)
        rt.launch(
            module,
            f"sum_spans_{sfx}",
            plo.shape[0],
            (np.uint64(plo.shape[0]), rt.upload(plo), rt.upload(phi), src, out),
            block=64,
        )
        src = out
        starts, lens = np.cumsum(pieces) - pieces, pieces
        if lens.max() == 1:
            break
    idx = rt.upload(big.index.astype(np.uint32))
    rt.launch(
        module, f"add_into_{sfx}", big.index.size, (np.uint64(big.index.size), idx, src, buckets), block=64
    )


def scalar_classes(rt: Runtime, scalars: Any) -> tuple[Any, Any]:
    """(ones, fulls): device int64 indices of the (n, 4) Montgomery device scalars equal to 1 and
    of those neither 0 nor 1, in order (the CPU twin: cuzk.backends.cpu.msm.scalar_classes).

    One classing pass (`msm_classes`), then a prefix count per class (flatnonzero): a PoRep
    witness is mostly bits, and a 0 or a 1 needs no Pippenger digits at all."""
    xp = rt.xp
    n = int(scalars.shape[0])
    rt.reserve(n * 9, f"the classes of {n} scalars")
    cls = xp.empty(n, dtype=np.uint8)
    if n:
        rt.launch("fr", "msm_classes", n, (np.uint64(n), scalars, cls))
    rt.settle()  # each flatnonzero reads its count to the host (Runtime.settle)
    return xp.flatnonzero(cls == 1), xp.flatnonzero(cls == 2)


def pippenger(
    rt: Runtime, curve: Curve, bases: Any, scalars: Any, plan: MsmPlan, index: Any = None
) -> np.ndarray:
    """sum scalars[i] bases[i] as a host Jacobian point (jac_shape); scalars host or device.

    With `index` (device uint32, one per scalar): sum scalars[i] bases[index[i]], the tail of a
    split MSM; the scatter reads the map, so the resident bases are not gathered (a gather of
    the 40M full scalars' bases at 2^27 would copy ~4 GB and hold it)."""
    xp = rt.xp
    module, sfx = _group_module(curve)
    words = xyzz_words(curve)
    W, S, B, total_b = plan.windows, plan.sets, plan.buckets, plan.total_buckets
    chunk = plan.chunk
    max_entries = chunk * W * plan.halves
    acc_threads = -(-max_entries // ACCUMULATE_L)
    rt.reserve(scratch_bytes(plan, words), f"the {plan.n}-point MSM scratch")
    buckets = xp.zeros((total_b, words), dtype=np.uint64)
    canon = xp.empty((chunk, 4), dtype=np.uint64)
    counts = xp.empty(total_b, dtype=np.uint32)
    offsets = xp.zeros(total_b + 1, dtype=np.uint32)
    cursor = xp.empty(total_b, dtype=np.uint32)
    entries = xp.empty(max_entries, dtype=np.uint64)  # (point << 1 | sign) << 32 | bucket, bucket-sorted
    partials = xp.empty((total_b + acc_threads, words), dtype=np.uint64)
    if isinstance(scalars, np.ndarray) and xp is not np:
        stream = rt.upload_chunks(scalars, plan.chunks)
    else:
        stream = ((scalars, lo, hi) for lo, hi in plan.chunks)
    for dev, lo, hi in stream:
        m = hi - lo
        counts.fill(0)
        rt.launch(
            "fr",
            "msm_digits",
            m,
            (
                np.uint64(m),
                dev[lo:hi],
                canon,
                counts,
                np.int32(plan.c),
                np.int32(W),
                np.int32(plan.copies),
                np.int32(plan.halves),
            ),
        )
        offsets[1:] = xp.cumsum(counts, dtype=np.uint32)
        # the one host sync per chunk, before the long kernels are queued: the host then goes
        # on to upload the next chunk while this one is scattered and accumulated
        big = _big_buckets(rt, counts, offsets)
        cursor[...] = offsets[:-1]
        scatter = (
            np.uint64(m),
            canon,
            cursor,
            entries,
            np.int32(plan.c),
            np.int32(W),
            np.int32(plan.copies),
            np.int32(plan.halves),
            np.uint32(plan.stride),
        )
        if index is None:
            rt.launch("fr", "msm_scatter", m, scatter)
        else:
            rt.launch("fr", "msm_scatter_mapped", m, (*scatter, index[lo:hi]))
        threads = -(-m * W * plan.halves // ACCUMULATE_L)
        rt.launch(
            module,
            f"msm_accumulate_{sfx}",
            threads,
            (
                np.uint64(threads),
                np.uint32(ACCUMULATE_L),
                offsets[total_b:],
                entries,
                bases if index is not None else bases[lo:],
                partials,
            ),
            block=128,
        )
        rt.launch(
            module,
            f"msm_merge_{sfx}",
            total_b,
            (np.uint64(total_b), np.uint32(ACCUMULATE_L), np.uint32(BIG_ENTRIES), offsets, partials, buckets),
            block=128,
        )
        if big.index.size:
            _merge_big(rt, curve, big, partials, buckets)
    M = plan.seg
    P = B // M
    R = xp.empty((S * P, words), dtype=np.uint64)
    T = xp.empty((S * P, words), dtype=np.uint64)
    rt.launch(
        module,
        f"msm_segment_{sfx}",
        S * P,
        (np.uint64(S * P), np.uint32(B), np.uint32(M), buckets, R, T),
        block=64,
    )
    rt.launch(
        module, f"msm_weight_{sfx}", S * P, (np.uint64(S * P), np.uint32(P), np.uint32(M), R, T), block=64
    )
    sums = tree_sum(rt, curve, R, S, P)
    host = rt.to_host(sums)
    # set s holds windows s copies .. s copies + copies - 1, each already shifted by its copy
    return combine_windows(curve, xyzz_to_jacobian(curve, host), plan.c * plan.copies)


def shifted_table(
    rt: Runtime,
    curve: Curve,
    rows: Any,
    c: int,
    copies: int,
    *,
    chunk: int = 1 << 22,
    progress: Callable[[str], None] | None = None,
) -> Any:
    """(copies n, 2 width) affine device rows: rows [j n, (j + 1) n) hold 2^(j c) rows (copy 0
    the rows themselves), for MSMs of window c over `copies` bucket-set-sharing windows.

    Each copy is c doublings of the one before, in chunks (XYZZ scratch of `chunk` points),
    then one batched inversion per AFFINE_K points: ~(8 c + 10) Fq products per point and copy."""
    xp = rt.xp
    module, sfx = _group_module(curve)
    n = rows.shape[0]
    width = curve.field.width
    if copies < 1 or copies * n >= MAX_TABLE_ROWS:
        raise ValueError(f"{copies} copies of {n} bases do not fit the MSM's 31-bit rows")
    step = max(1, min(chunk, n))
    rt.reserve(copies * n * 2 * width * 8 + step * 4 * width * 8, f"{copies} precomputed copies of {n} bases")
    table = xp.empty((copies * n, 2 * width), dtype=np.uint64)
    table[:n] = rows
    xyzz = xp.empty((step, 4 * width), dtype=np.uint64)
    for j in range(1, copies):
        for lo in range(0, n, step):
            m = min(n, lo + step) - lo
            src = table[(j - 1) * n + lo : (j - 1) * n + lo + m]
            rt.launch(module, f"shift_points_{sfx}", m, (np.uint64(m), np.int32(c), src, xyzz), block=64)
            to_affine(rt, curve, xyzz, m, out=table[j * n + lo : j * n + lo + m])
        if progress is not None:
            progress(f"precomputed copy {j + 1}/{copies} of {n} {sfx} bases (window {c})")
    return table


def glv_table(rt: Runtime, curve: Curve, table: Any) -> Any:
    """(2 k, 2 width) device rows [table; phi(table)] for GLV-split MSMs (G1 only): phi(x, y) =
    (BETA x, y) = LAMBDA (x, y), one Fq product per row."""
    if curve.field.degree != 1:
        raise ValueError("the GLV endomorphism here is G1's (x, y) -> (beta x, y)")
    xp = rt.xp
    module, sfx = _group_module(curve)
    k = table.shape[0]
    rt.reserve(2 * table.nbytes, f"the GLV table of {k} bases")
    out = xp.empty((2 * k, table.shape[1]), dtype=np.uint64)
    out[:k] = table
    beta = rt.upload(np.ascontiguousarray(curve.field.from_ints([glv.BETA])))
    rt.launch(module, f"endo_points_{sfx}", k, (np.uint64(k), beta, table, out[k:]), block=128)
    return out


def masked_sum(rt: Runtime, curve: Curve, bases: Any, idx: Any) -> np.ndarray:
    """sum of bases[idx[k]] (idx int64 on the device) as a host Jacobian point."""
    xp = rt.xp
    module, sfx = _group_module(curve)
    count = int(idx.shape[0])
    if count == 0:
        return curve.to_jacobian(curve.identity(1))[0]
    threads = -(-count // SUM_L)
    partial = xp.empty((threads, xyzz_words(curve)), dtype=np.uint64)
    rt.launch(
        module,
        f"sum_indexed_{sfx}",
        threads,
        (np.uint64(threads), np.uint32(SUM_L), np.uint64(count), idx, bases, partial),
        block=128,
    )
    total = tree_sum(rt, curve, partial, 1, threads)
    host = rt.to_host(total)
    return xyzz_to_jacobian(curve, host)[0].reshape(curve.jac_shape)


def to_affine(rt: Runtime, curve: Curve, xyzz: Any, n: int, out: Any = None) -> Any:
    """(n, 4 width) XYZZ device rows -> (n, 2 width) affine device rows (infinity = zeros),
    into `out` when given (a contiguous slice of a larger table)."""
    xp = rt.xp
    module, sfx = _group_module(curve)
    if out is None:
        out = xp.empty((n, 2 * curve.field.width), dtype=np.uint64)
    threads = -(-n // AFFINE_K)
    rt.launch(
        module,
        f"to_affine_{sfx}",
        threads,
        (np.uint64(threads), np.uint32(AFFINE_K), np.uint64(n), xyzz, out),
        block=64,
    )
    return out


def fixed_base_window(n: int) -> int:
    """Table bits for n multiples of one base: the table costs W 2^c entries, each scalar W adds."""
    return 6 if n < 1 << 12 else (10 if n < 1 << 18 else (13 if n < 1 << 22 else 16))


class FixedBaseTable:
    """Affine multiples d 2^(w c) base, d in 1..2^c-1, on the device."""

    def __init__(self, rt: Runtime, curve: Curve, base: np.ndarray, c: int) -> None:
        self.c = c
        self.windows = -(-SCALAR_BITS // c)
        per = (1 << c) - 1
        entries = self.windows * per
        width = curve.field.width
        # window bases 2^(w c) base on the host: ~255 doublings
        jac = curve.to_jacobian(base.reshape(1, *curve.affine_shape))
        wb = []
        for _ in range(self.windows):
            wb.append(jac)
            for _ in range(c):
                jac = curve.double(jac)
        wbases = curve.to_affine(np.concatenate(wb)).reshape(self.windows, 2 * width)
        module, sfx = _group_module(curve)
        rt.reserve(entries * (4 + 2) * width * 8, f"the fixed-base table (c = {c})")
        xyzz = rt.xp.empty((entries, 4 * width), dtype=np.uint64)
        rt.launch(
            module,
            f"fb_table_{sfx}",
            entries,
            (np.uint64(entries), np.int32(c), rt.upload(wbases), xyzz),
            block=64,
        )
        self.table = to_affine(rt, curve, xyzz, entries)


def fixed_base_mul(
    rt: Runtime,
    curve: Curve,
    table: FixedBaseTable,
    scalars: Any,
    *,
    on_device: bool = False,
    chunk: int = 1 << 22,
) -> Any:
    """[s] base for every scalar (Montgomery Fr rows, host or device) -> affine points.

    Host (n,) + affine_shape by default; with on_device, device (n, 2 width) rows (what
    benchmarks and setup at scale want: no round trip of gigabytes through the host).
    """
    xp = rt.xp
    module, sfx = _group_module(curve)
    n = scalars.shape[0]
    width = curve.field.width
    if on_device:
        rt.reserve(n * 2 * width * 8, f"{n} fixed-base results")
        out = xp.empty((n, 2 * width), dtype=np.uint64)
    else:
        out = np.empty((n, 2 * width), dtype=np.uint64)
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        m = hi - lo
        part = scalars[lo:hi]
        dev = (
            rt.upload(np.ascontiguousarray(part))
            if isinstance(part, np.ndarray)
            else xp.ascontiguousarray(part)
        )
        xyzz = xp.empty((m, 4 * width), dtype=np.uint64)
        rt.launch(
            module,
            f"fb_mul_{sfx}",
            m,
            (np.uint64(m), dev, np.int32(table.c), np.int32(table.windows), table.table, xyzz),
            block=64,
        )
        aff = to_affine(rt, curve, xyzz, m)
        del xyzz
        if on_device:
            out[lo:hi] = aff
        else:
            out[lo:hi] = rt.to_host(aff)
    return out if on_device else out.reshape(n, *curve.affine_shape)
