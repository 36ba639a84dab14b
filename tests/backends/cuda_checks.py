"""Checks of a CudaBackend against the CPU backend, shared by the emulator tests (CI) and the
@gpu tests (device). Each draws fresh random inputs and includes the edge cases: zero scalars,
scalar r - 1, scalar 1, identity points, repeated points."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1, G2, Curve
from cuzk.algebra.fields import FQ, FQ2, FR
from cuzk.backends.base import CsrMatrix
from cuzk.backends.cpu import CpuBackend
from cuzk.errors import BackendError

CPU = CpuBackend()
CURVES = {"g1": G1, "g2": G2}


def host(be, a) -> np.ndarray:
    return be.to_host(a)


def edge_scalars(n: int, rng: np.random.Generator) -> np.ndarray:
    """Random Fr scalars with 0, 1, r - 1 and a repeated value planted at the front."""
    s = FR.random(n, rng)
    edges = FR.from_ints([0, 1, C.R - 1, C.R - 2, 2])
    k = min(n, edges.shape[0])
    s[:k] = edges[:k]
    if n > 8:
        s[7] = s[6]
    return s


def edge_points(curve: Curve, n: int, rng: np.random.Generator) -> np.ndarray:
    """Random points with identities and a repeated point (at 6 and 7, matching edge_scalars)."""
    p = curve.random(n, rng)
    if n > 8:
        p[3] = 0
        p[5] = 0
        p[7] = p[6]
    return p


def check_fr_ops(be, rng: np.random.Generator, n: int = 1000) -> None:
    a, b, c = FR.random(n, rng), FR.random(n, rng), FR.random(n, rng)
    a[:3] = FR.from_ints([0, 1, C.R - 1])
    b[:3] = FR.from_ints([C.R - 1, C.R - 1, C.R - 1])
    # raw Montgomery words with zero low limbs, so that rows of the reduction see t0 = 0 (m = 0)
    # and t0 = 2^32 - 1: the cases of Fr's multiplier-free low limbs (field.cuh mont_redc)
    a[3:6] = np.array([[1 << 32, 0, 0, 0], [0, 1, 0, 0], [0xFFFFFFFF, 0, 0, 0]], dtype=np.uint64)
    b[3:6] = np.array(
        [[1 << 32, 0, 0, 0], [1 << 32, 5, 0, 0], [2**64 - 1, 0xFFFFFFFF, 0, 0]], dtype=np.uint64
    )
    da, db, dc = be.to_device(a), be.to_device(b), be.to_device(c)
    for op in ("fr_add", "fr_sub", "fr_mul"):
        assert np.array_equal(host(be, getattr(be, op)(da, db)), getattr(CPU, op)(a, b)), op
    s = int(rng.integers(1, 1 << 62)) * (1 << 190) % C.R
    assert np.array_equal(host(be, be.fr_scale(da, s)), CPU.fr_scale(a, s))
    assert np.array_equal(host(be, be.fr_mul_sub_scale(da, db, dc, s)), CPU.fr_mul_sub_scale(a, b, c, s))
    into = be.to_device(a)  # overwrite: the result in a's memory (on a GPU), b and c untouched
    got = be.fr_mul_sub_scale(into, db, dc, s, overwrite=True)
    assert np.array_equal(host(be, got), CPU.fr_mul_sub_scale(a, b, c, s))
    assert got is into or be.to_device(into) is not into  # the emulator's to_device copies
    assert np.array_equal(host(be, db), b) and np.array_equal(host(be, dc), c)


def check_base_fields(be, rng: np.random.Generator, n: int = 500) -> None:
    """Fq and Fq2 products (and Fq2 squares) through the check kernels."""
    xp, rt = be.xp, be.rt
    for field, kernel in ((FQ, "fq_mul"), (FQ2, "fq2_mul")):
        a, b = field.random(n, rng), field.random(n, rng)
        a[0] = 0
        b[1] = field.from_ints([(C.Q - 1, C.Q - 1)] if field is FQ2 else [C.Q - 1])[0]
        b[2:10] = a[2:10]  # squares
        out = xp.empty((n, *field.elem_shape), dtype=np.uint64)
        rt.launch("fr", kernel, n, (np.uint64(n), be.to_device(a), be.to_device(b), out))
        assert np.array_equal(host(be, out), field.mul(a, b)), kernel


def check_ntt(be, rng: np.random.Generator, log_sizes: list[int], coset: int = 7) -> None:
    reused: list[bool] = []
    for log_n in log_sizes:
        n = 1 << log_n
        x = FR.random(n, rng)
        x[0] = FR.from_ints([C.R - 1])[0]
        w = C.root_of_unity(log_n)
        dx = be.to_device(x)
        for inverse in (False, True):
            for g in (None, coset):
                fn = be.intt if inverse else be.ntt
                ref = (CPU.intt if inverse else CPU.ntt)(x, w, coset=g)
                got = host(be, fn(dx, w, coset=g))
                assert np.array_equal(got, ref), (log_n, inverse, g)
                out = fn(be.to_device(x), w, coset=g, overwrite=True)
                assert np.array_equal(host(be, out), ref), (log_n, inverse, g, "overwrite")
                mine = be.to_device(x)  # the transform itself (the emulator's to_device copies)
                out = be._ntt.transform(mine, w, coset=g, inverse=inverse, overwrite=True)
                assert np.array_equal(host(be, out), ref), (log_n, inverse, g, "overwrite, in place")
                reused.append(out is mine)
            assert np.array_equal(host(be, dx), x)  # without overwrite the input stays
        if log_n >= 12:
            assert all(reused[-4:]), f"2^{log_n}: overwrite allocated a new array"


def check_msm(be, rng: np.random.Generator, group: str, n: int, windows=(None,), chunks=(None,)) -> None:
    curve = CURVES[group]
    pts = edge_points(curve, n, rng)
    sc = edge_scalars(n, rng)
    bg, bc = be.load_bases(pts, group), CPU.load_bases(pts, group)
    ref = CPU.msm(bc, sc)
    for window in windows:
        for k in chunks:
            be.msm_chunks = k
            got = be.msm(bg, be.to_device(sc), window=window)
            assert curve.eq(got[None], ref[None])[0], (group, n, window, k)
            got_host = be.msm(bg, sc, window=window)  # host scalars: the chunked upload path
            assert curve.eq(got_host[None], ref[None])[0], (group, n, window, k, "host")
    be.msm_chunks = None
    lo = n // 3
    part = be.msm(bg, sc[lo : lo + n // 2], start=lo)
    assert curve.eq(part[None], CPU.msm(bc, sc[lo : lo + n // 2], start=lo)[None])[0]
    k3 = np.stack([FR.random(n, rng), sc, FR.zeros(n)])
    assert curve.eq(be.msm(bg, be.to_device(k3)), CPU.msm(bc, k3)).all()


def check_msm_skewed(be, rng: np.random.Generator, n: int) -> None:
    """Mostly ones and one repeated scalar: a few huge buckets (the tree-sum merge path)."""
    pts = G1.random(n, rng)
    sc = FR.random(n, rng)
    sc[: n // 2] = FR.ones(1)[0]
    sc[n // 2 : n - n // 8] = sc[-1]
    bg, bc = be.load_bases(pts, "g1"), CPU.load_bases(pts, "g1")
    assert G1.eq(be.msm(bg, sc)[None], CPU.msm(bc, sc)[None])[0]


def check_msm_precomputed(be, rng: np.random.Generator, group: str, n: int, copies=(2, 64)) -> None:
    """MSMs over precomputed copies of the bases equal the CPU backend's: every copy of the table
    against [2^(j c)] P, host and device scalars, chunks, an offset start, a stack of three,
    skewed scalars (big buckets shared by all windows); then switching the table off."""
    from cuzk.backends.cuda import msm as M

    curve = CURVES[group]
    pts = edge_points(curve, n, rng)
    sc = edge_scalars(n, rng)
    bc = CPU.load_bases(pts, group)
    ref = CPU.msm(bc, sc)
    plans: list = []
    real = M.pippenger

    def spy(rt, cv, rows, scalars, plan, index=None):
        plans.append(plan)
        return real(rt, cv, rows, scalars, plan, index)

    M.pippenger = spy
    try:
        for cap in copies:
            bg = be.load_bases(pts, group)
            resident = be.memory_info()["resident"]
            extra = be.precompute(bg, cap)
            c, m = M.precompute_shape(n, cap)
            assert (bg.window, bg.copies) == (c, m) and m > 1
            assert extra == (m - 1) * bg.nbytes == be.precompute_cost(n, group, cap)
            assert be.memory_info()["resident"] == resident + extra
            table = host(be, bg.table).reshape(m, n, *curve.affine_shape)
            for j in range(m):
                k = FR.from_ints([pow(2, j * c, C.R)] * n)
                want = curve.to_affine(curve.scalar_mul(pts, k))
                assert np.array_equal(table[j], want), (group, cap, j)
            plans.clear()
            for k in (None, 3):
                be.msm_chunks = k
                assert curve.eq(be.msm(bg, be.to_device(sc))[None], ref[None])[0], (cap, k)
                assert curve.eq(be.msm(bg, sc, window=c)[None], ref[None])[0], (cap, k, "host")
            be.msm_chunks = None
            assert plans and all(p.copies == m for p in plans[-2:])
            # another window than the table's: the plain MSM over copy 0
            assert curve.eq(be.msm(bg, sc, window=5)[None], ref[None])[0]
            assert plans[-1].copies == 1
            lo = n // 3
            part = be.msm(bg, sc[lo : lo + n // 2], start=lo, window=c)
            assert plans[-1].copies == m
            assert curve.eq(part[None], CPU.msm(bc, sc[lo : lo + n // 2], start=lo)[None])[0]
            k3 = np.stack([FR.random(n, rng), sc, FR.zeros(n)])
            assert curve.eq(be.msm(bg, be.to_device(k3), window=c), CPU.msm(bc, k3)).all()
            skew = FR.random(n, rng)
            skew[: n // 2] = FR.ones(1)[0]
            skew[n // 2 : n - n // 8] = skew[-1]
            assert curve.eq(be.msm(bg, skew, window=c)[None], CPU.msm(bc, skew)[None])[0]
            assert be.precompute(bg, cap) == extra  # same shape: nothing rebuilt
            assert be.precompute(bg, 1) == 0  # off again: the rows alone, the copies freed
            assert bg.table is None and be.memory_info()["resident"] == resident
            assert curve.eq(be.msm(bg, sc)[None], ref[None])[0]
            be.release(bg)
    finally:
        M.pippenger = real


def check_glv_split(be, rng: np.random.Generator, n: int) -> None:
    """The digits kernel's GLV split (canon words 0..3 | 4..7) equals cuzk.algebra.glv.split on
    edge scalars (0, 1, r - 1, LAMBDA, its neighbours and multiples) and random ones."""
    from cuzk.algebra import glv

    lam = glv.LAMBDA
    edges = [0, 1, C.R - 1, C.R - 2, lam - 1, lam, lam + 1, 2 * lam, lam * lam, lam * (lam + 1), 1 << 128]
    ints = edges + [int(v) for v in FR.to_ints(FR.random(n, rng))]
    sc = FR.from_ints(ints)
    m = sc.shape[0]
    canon = be.xp.empty((m, 4), dtype=np.uint64)
    W = glv.HALF_BITS // 5 + 1
    counts = be.xp.zeros(W << 4, dtype=np.uint32)  # window 5: 16 buckets per set, one set per window
    be.rt.launch(
        "fr",
        "msm_digits",
        m,
        (np.uint64(m), be.to_device(sc), canon, counts, np.int32(5), np.int32(W), np.int32(1), np.int32(2)),
    )
    words = be.to_host(canon).view(np.uint32).reshape(m, 8).astype(object)
    for k, row in zip(ints, words, strict=True):
        k1 = sum(int(row[i]) << (32 * i) for i in range(4))
        k2 = sum(int(row[4 + i]) << (32 * i) for i in range(4))
        assert (k1, k2) == glv.split(k), hex(k)
    assert int(be.to_host(counts).sum()) > 0


def check_msm_glv(be, rng: np.random.Generator, n: int, windows=(None, 5), copies=(1, 3)) -> None:
    """G1 MSMs with GLV-split scalars (msm_glv) equal the CPU backend's: edge and skewed scalars,
    host and device scalars, chunks, an offset start, a stack of three; over the plain bases and
    a precomputed table; the phi half of the table is LAMBDA times the first; memory counted."""
    from cuzk.algebra import glv
    from cuzk.backends.cuda import msm as M

    pts = edge_points(G1, n, rng)
    sc = edge_scalars(n, rng)
    bc = CPU.load_bases(pts, "g1")
    ref = CPU.msm(bc, sc)
    plans: list = []
    real = M.pippenger

    def spy(rt, cv, rows, scalars, plan, index=None):
        plans.append(plan)
        return real(rt, cv, rows, scalars, plan, index)

    M.pippenger, be.msm_glv = spy, True
    try:
        for cap in copies:
            bg = be.load_bases(pts, "g1")
            resident = be.memory_info()["resident"]
            extra = be.precompute(bg, cap) if cap > 1 else 0
            m = bg.copies
            for window in windows if cap == 1 else (None,):
                for k in (None, 3):
                    be.msm_chunks = k
                    assert G1.eq(be.msm(bg, be.to_device(sc), window=window)[None], ref[None])[0], (cap, k)
                    assert G1.eq(be.msm(bg, sc, window=window)[None], ref[None])[0], (cap, k, "host")
                    assert plans[-1].halves == 2 and plans[-1].copies == m
            be.msm_chunks = None
            table = host(be, bg.glv).reshape(2, m * n, *G1.affine_shape)
            lam = FR.from_ints([glv.LAMBDA] * (m * n))
            assert np.array_equal(table[1], G1.to_affine(G1.scalar_mul(table[0], lam)))
            assert be.memory_info()["resident"] == resident + extra + m * bg.nbytes
            lo = n // 3
            part = be.msm(bg, sc[lo : lo + n // 2], start=lo)
            assert G1.eq(part[None], CPU.msm(bc, sc[lo : lo + n // 2], start=lo)[None])[0]
            k3 = np.stack([FR.random(n, rng), sc, FR.zeros(n)])
            assert G1.eq(be.msm(bg, be.to_device(k3)), CPU.msm(bc, k3)).all()
            skew = FR.random(n, rng)
            skew[: n // 2] = FR.ones(1)[0]
            skew[n // 2 : n - n // 8] = skew[-1]
            assert G1.eq(be.msm(bg, skew)[None], CPU.msm(bc, skew)[None])[0]
            be.msm_glv = False  # the same handle, plain again
            assert G1.eq(be.msm(bg, sc)[None], ref[None])[0] and plans[-1].halves == 1
            be.msm_glv = True
            be.release(bg)
            assert be.memory_info()["resident"] == resident - bg.nbytes
    finally:
        M.pippenger, be.msm_glv = real, False


def mixed_scalars(n: int, rng: np.random.Generator, zeros: float, ones: float) -> np.ndarray:
    """Random Fr scalars of which about `zeros` are 0 and `ones` are 1, shuffled (a witness-like
    mix: a PoRep witness is mostly bits), with r - 1 and 2 among the full ones."""
    s = FR.random(n, rng)
    u = rng.random(n)
    s[u < zeros] = 0
    s[(u >= zeros) & (u < zeros + ones)] = FR.ones(1)[0]
    full = np.flatnonzero(u >= zeros + ones)
    if full.size >= 2:
        s[full[:2]] = FR.from_ints([C.R - 1, 2])
    return s


def check_scalar_classes(be, rng: np.random.Generator, n: int) -> None:
    """The msm_classes pass equals the CPU twin and the classes by definition: 0, 1 (Montgomery
    R mod r) and the rest, r - 1 and raw words that are neither among them."""
    from cuzk.backends.cpu import msm as cpu_msm
    from cuzk.backends.cuda import msm as M

    for zeros, ones in ((0.3, 0.4), (0.0, 0.0), (1.0, 0.0), (0.0, 1.0)):
        sc = mixed_scalars(n, rng, zeros, ones)
        if zeros + ones < 1:
            sc[:4] = np.array([[1, 0, 0, 0], [0, 0, 0, 1], FR.one(), [0, 0, 0, 0]], dtype=np.uint64)
        want_ones, want_fulls = cpu_msm.scalar_classes(sc)
        vals = FR.to_ints(sc)
        assert want_ones.tolist() == [i for i, v in enumerate(vals) if v == 1]
        assert want_fulls.tolist() == [i for i, v in enumerate(vals) if v > 1]
        got_ones, got_fulls = M.scalar_classes(be.rt, be.to_device(sc))
        assert np.array_equal(host(be, got_ones), want_ones), (zeros, ones)
        assert np.array_equal(host(be, got_fulls), want_fulls), (zeros, ones)


#: (zeros, ones) of the split MSM checks: witness-like, 30% full, none full, all full, all 0, all 1
SPLIT_MIXES = ((0.6, 0.35), (0.35, 0.35), (0.5, 0.5), (0.0, 0.0), (1.0, 0.0), (0.0, 1.0))


def check_msm_split(
    be, rng: np.random.Generator, group: str, n: int, copies=(1,), glv=(False,), windows=(None,)
) -> None:
    """MSMs over device scalars split into zeros, ones and a tail over an index map (msm_split) equal the CPU backend's on every mix of SPLIT_MIXES, with chunks, an offset
    start, a window override, a precomputed table and GLV; the tail's plan covers the full
    scalars only; all full takes the plain MSM (no map); host scalars and msm_split off too.
    The backend is left with the split off (its default until it is timed on a device)."""
    from cuzk.backends.cuda import msm as M

    curve = CURVES[group]
    pts = edge_points(curve, n, rng)
    bc = CPU.load_bases(pts, group)
    calls: list[tuple[int, bool]] = []
    real = M.pippenger

    def spy(rt, cv, rows, scalars, plan, index=None):
        calls.append((plan.n, index is not None))
        return real(rt, cv, rows, scalars, plan, index)

    be.msm_split = True
    M.pippenger = spy
    try:
        for cap in copies:
            for g in glv:
                bg = be.load_bases(pts, group)
                if cap > 1:
                    be.precompute(bg, cap)
                be.msm_glv = g
                for zeros, ones in SPLIT_MIXES:
                    sc = mixed_scalars(n, rng, zeros, ones)
                    ref = CPU.msm(bc, sc)
                    fulls = int(cpu_msm_fulls(sc))
                    for window in windows:
                        for k in (None, 3):
                            be.msm_chunks = k
                            calls.clear()
                            got = be.msm(bg, be.to_device(sc), window=window)
                            assert curve.eq(got[None], ref[None])[0], (group, cap, g, zeros, ones, window, k)
                            if fulls == n:
                                assert calls == [(n, False)]
                            else:
                                assert calls == ([(fulls, True)] if fulls else [])
                    be.msm_chunks = None
                    lo = n // 3
                    part = be.msm(bg, be.to_device(sc[lo : lo + n // 2]), start=lo)
                    assert curve.eq(part[None], CPU.msm(bc, sc[lo : lo + n // 2], start=lo)[None])[0]
                sc = mixed_scalars(n, rng, 0.4, 0.4)
                ref = CPU.msm(bc, sc)
                if be.xp is not np:  # on a device, host scalars keep the chunked upload (plain)
                    calls.clear()
                    assert curve.eq(be.msm(bg, sc)[None], ref[None])[0]
                    assert calls == [(n, False)]
                be.msm_split = False
                calls.clear()
                assert curve.eq(be.msm(bg, be.to_device(sc))[None], ref[None])[0]
                assert calls == [(n, False)]
                be.msm_split, be.msm_glv = True, False
                be.release(bg)
    finally:
        M.pippenger, be.msm_split, be.msm_glv, be.msm_chunks = real, False, False, None


def cpu_msm_fulls(sc: np.ndarray) -> int:
    from cuzk.backends.cpu import msm as cpu_msm

    return cpu_msm.scalar_classes(sc)[1].size


def check_sum_bases(be, rng: np.random.Generator, group: str, n: int) -> None:
    curve = CURVES[group]
    pts = edge_points(curve, n, rng)
    bg, bc = be.load_bases(pts, group), CPU.load_bases(pts, group)
    for density in (0.0, 0.3, 1.0):
        mask = rng.random(n) < density
        got = be.sum_bases(bg, be.to_device(mask))
        assert curve.eq(got[None], CPU.sum_bases(bc, mask)[None])[0], density
    mask = rng.random(n // 2) < 0.5
    got = be.sum_bases(bg, mask, start=n // 4)
    assert curve.eq(got[None], CPU.sum_bases(bc, mask, start=n // 4)[None])[0]


def check_fixed_base(be, rng: np.random.Generator, group: str, n: int) -> None:
    curve = CURVES[group]
    sc = edge_scalars(n, rng)
    base = curve.random(1, rng)
    assert np.array_equal(be.fixed_base_mul(base, sc, group), CPU.fixed_base_mul(base, sc, group))
    assert not be.fixed_base_mul(curve.identity(1), sc[:4], group).any()


def random_csr(rng: np.random.Generator, rows: int, cols: int, per_row: float = 2.4) -> CsrMatrix:
    counts = rng.poisson(per_row, rows)
    counts[: min(rows, 3)] = [0, 1, 40][: min(rows, 3)]  # an empty row, a single, a long one
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    nnz = int(indptr[-1])
    indices = rng.integers(0, cols, nnz).astype(np.int32)
    data = FR.random(nnz, rng)
    pick = rng.random(nnz)
    data[pick < 0.5] = FR.ones(1)[0]
    data[(pick >= 0.5) & (pick < 0.7)] = FR.neg(FR.ones(1))[0]
    return CsrMatrix(indptr, indices, data, (rows, cols))


def check_spmv(be, rng: np.random.Generator, rows: int, cols: int) -> None:
    m = random_csr(rng, rows, cols)
    w = FR.random(cols, rng)
    dw = be.to_device(w)
    assert np.array_equal(host(be, be.spmv(m, dw)), CPU.spmv(m, w))
    assert np.array_equal(host(be, be.spmv(m, dw)), CPU.spmv(m, w))  # the cached device copy
    v = FR.random(rows, rng)  # the transpose: rows of the lengths of m's columns, in their order
    assert np.array_equal(host(be, be.spmv_transposed(m, be.to_device(v))), CPU.spmv_transposed(m, v))


def check_spmv_copies(be, rng: np.random.Generator, rows: int, cols: int, copies: int) -> None:
    """One block over `copies` shifted column sets of a longer vector, into a view of a larger
    result, against the CPU's gather-then-multiply; the rows around the view stay untouched."""
    m = random_csr(rng, rows, cols)
    stride_of = rng.integers(0, 3, size=cols) * cols  # some columns shared by every copy (stride 0)
    base = rng.permutation(cols).astype(np.int64)
    n = cols * (1 + 2 * (copies - 1)) + 1
    w = FR.random(n, rng)
    want = np.zeros((copies * rows + 2, 4), dtype=np.uint64)
    CPU.spmv_copies(m, w, base, stride_of, copies, want[1:-1])
    for k in range(copies):  # the CPU default itself, against the definition
        assert np.array_equal(want[1 + k * rows : 1 + (k + 1) * rows], CPU.spmv(m, w[base + k * stride_of]))
    out = be.to_device(np.full((copies * rows + 2, 4), 7, dtype=np.uint64))
    be.spmv_copies(m, be.to_device(w), be.to_device(base), be.to_device(stride_of), copies, out[1:-1])
    got = host(be, out)
    assert np.array_equal(got[1:-1], want[1:-1])
    assert (got[0] == 7).all() and (got[-1] == 7).all()
    with pytest.raises((ValueError, BackendError)):
        be.spmv_copies(
            m, be.to_device(w), be.to_device(base[:-1]), be.to_device(stride_of), copies, out[1:-1]
        )
    with pytest.raises((ValueError, BackendError)):
        be.spmv_copies(m, be.to_device(w), be.to_device(base), be.to_device(stride_of), copies, out)
    top = int((base + (copies - 1) * stride_of).max())  # the last column any copy reads
    with pytest.raises(BackendError, match="outside the vector"):  # a vector one column short
        be.spmv_copies(
            m, be.to_device(w[:top]), be.to_device(base), be.to_device(stride_of), copies, out[1:-1]
        )
