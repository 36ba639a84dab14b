"""Poseidon over Fr with the x^5 S-box (arities 2, 8, 11): gadget and numba twin.

Rounds follow the paper: R_F / 2 full rounds (add constants, S-box on every
element, MDS), R_P partial rounds (add constants, S-box on element 0, MDS),
R_F / 2 full rounds. In the circuit an S-box on a linear combination x costs
three constraints, ``x * x = x2``, ``x2 * x2 = x4``, ``x * x4 = x5``; the
additions and the MDS mixing stay linear combinations, and one last
constraint allocates the output element, so a gadget output is a variable.

The twin `permute_trace` computes, for many inputs at once, every value the
gadget allocates (x2, x4, x5 per S-box, then the output), in that order: the
witness program runs it over all lanes of a call group in one kernel call.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, overload

import numpy as np
from numba import njit

from cuzk.algebra._jit_fields import FR_TAG, f_add, f_load, f_mul, f_store, f_zero
from cuzk.algebra._parallel import run_ranges
from cuzk.algebra.constants import R
from cuzk.algebra.fields import FR
from cuzk.errors import CircuitError
from cuzk.gadgets.num import Num
from cuzk.gadgets.poseidon_params import PoseidonParams, params
from cuzk.r1cs.gadget import gadget
from cuzk.r1cs.lc import ONE


@njit(cache=True)
def _sbox(F, x, trace, i, k, want_trace):
    """x^5, keeping x^2, x^4 and x^5 at trace columns k, k + 1, k + 2 of row i."""
    x2 = f_mul(F, x, x)
    x4 = f_mul(F, x2, x2)
    x5 = f_mul(F, x4, x)
    if want_trace:
        f_store(F, trace, i, 4 * k, x2)
        f_store(F, trace, i, 4 * k + 4, x4)
        f_store(F, trace, i, 4 * k + 8, x5)
    return x5


@njit(cache=True)
def _full_round(F, st, nx, rc, r, mds, t, trace, i, k, want_trace):
    """Constants of round r, the S-box on every element, the dense MDS; returns the next trace column."""
    for j in range(t):
        x = f_add(F, f_load(F, st, j, 0), f_load(F, rc, r * t + j, 0))
        f_store(F, st, j, 0, _sbox(F, x, trace, i, k, want_trace))
        k += 3
    for a in range(t):
        acc = f_zero(F)
        for b in range(t):
            acc = f_add(F, acc, f_mul(F, f_load(F, mds, a * t + b, 0), f_load(F, st, b, 0)))
        f_store(F, nx, a, 0, acc)
    for j in range(t):
        f_store(F, st, j, 0, f_load(F, nx, j, 0))
    return k


@njit(cache=True)
def _permute_one(F, inputs, rc, mds, pc, rows, cols, last, t, rf, rp, trace, out, want_trace, i):
    """Row i: inputs (n, t*4) -> out (n, 4) = element 1 of the permutation; trace (n, k*4) if want_trace.
    The partial rounds in their sparse form (_Optimized): the same S-box values, 2t - 1 products
    of mixing a round instead of t^2."""
    half = rf // 2
    st = np.empty((t, 4), dtype=np.uint64)
    nx = np.empty((t, 4), dtype=np.uint64)
    for j in range(t):
        f_store(F, st, j, 0, f_load(F, inputs, i, 4 * j))
    k = 0
    for r in range(half):
        k = _full_round(F, st, nx, rc, r, mds, t, trace, i, k, want_trace)
    for r in range(rp):
        x0 = _sbox(F, f_add(F, f_load(F, st, 0, 0), f_load(F, pc, r, 0)), trace, i, k, want_trace)
        k += 3
        acc = f_mul(F, f_load(F, rows, r * t, 0), x0)
        for j in range(1, t):
            sj = f_load(F, st, j, 0)
            acc = f_add(F, acc, f_mul(F, f_load(F, rows, r * t + j, 0), sj))
            f_store(F, st, j, 0, f_add(F, sj, f_mul(F, f_load(F, cols, r * (t - 1) + j - 1, 0), x0)))
        f_store(F, st, 0, 0, acc)
    for a in range(1, t):  # the last partial round's dense part, diag(1, E^)
        acc = f_zero(F)
        for b in range(1, t):
            acc = f_add(F, acc, f_mul(F, f_load(F, last, (a - 1) * (t - 1) + b - 1, 0), f_load(F, st, b, 0)))
        f_store(F, nx, a, 0, acc)
    for j in range(1, t):
        f_store(F, st, j, 0, f_load(F, nx, j, 0))
    for r in range(half, rf):
        k = _full_round(F, st, nx, rc, r, mds, t, trace, i, k, want_trace)
    y = f_load(F, st, 1, 0)
    f_store(F, out, i, 0, y)
    if want_trace:
        f_store(F, trace, i, 4 * k, y)


@njit(nogil=True, cache=True)
def _k_permute(F, inputs, rc, mds, pc, rows, cols, last, t, rf, rp, trace, out, want_trace, lo, hi):
    for i in range(lo, hi):
        _permute_one(F, inputs, rc, mds, pc, rows, cols, last, t, rf, rp, trace, out, want_trace, i)


def _matmul(a: list[list[int]], b: list[list[int]]) -> list[list[int]]:
    return [
        [sum(x * y for x, y in zip(row, col, strict=True)) % R for col in zip(*b, strict=True)] for row in a
    ]


def _inverse(m: list[list[int]]) -> list[list[int]]:
    """m^-1 mod r by Gauss-Jordan (every square block of a Cauchy MDS product is invertible)."""
    n = len(m)
    a = [list(row) + [int(i == j) for j in range(n)] for i, row in enumerate(m)]
    for c in range(n):
        p = next(r for r in range(c, n) if a[r][c])
        a[c], a[p] = a[p], a[c]
        inv = pow(a[c][c], -1, R)
        a[c] = [x * inv % R for x in a[c]]
        for r in range(n):
            if r != c and a[r][c]:
                f = a[r][c]
                a[r] = [(x - f * y) % R for x, y in zip(a[r], a[c], strict=True)]
    return [row[n:] for row in a]


@dataclass(frozen=True)
class _Optimized:
    """The permutation rewritten so that a partial round mixes with a sparse matrix (the Poseidon
    paper's appendix B, as neptune does): (1) each partial round's constants off element 0 are
    pushed through the MDS into the next round, so a partial round adds one constant; (2) each
    partial round's matrix E = P S with P = diag(1, E^) and S = [[e00, e0], [E^-1 e1, I]]: P
    commutes with the S-box on element 0 and with a constant there, so it moves into the next
    round (E_next = M P), and the last round's P is applied once after the partial rounds.
    Every S-box input is unchanged, so the trace (the witness) is the paper's."""

    params: PoseidonParams
    tag: np.ndarray  # the domain tag, the capacity element of every input state
    mds: np.ndarray  # the full rounds' dense matrix, row-major (t^2)
    rc: np.ndarray  # full rounds' constants, round-major (R_F t); the first after the partial rounds adjusted
    pc: np.ndarray  # one constant per partial round (R_P)
    rows: np.ndarray  # per partial round, S's first row (R_P t)
    cols: np.ndarray  # per partial round, S's first column below the corner (R_P (t - 1))
    last: np.ndarray  # the last partial round's E^, row-major ((t - 1)^2)


@cache
def _optimized(arity: int) -> _Optimized:
    p = params(arity)
    t, half, rp = p.t, p.full_rounds // 2, p.partial_rounds
    m = [list(row) for row in p.mds]
    c = [list(p.round_constants[r * t : (r + 1) * t]) for r in range(p.full_rounds + rp)]
    for r in range(half, half + rp):  # (1): forward, into round r + 1 (the last into a full round)
        rest = [0, *c[r][1:]]
        c[r] = [c[r][0]] + [0] * (t - 1)
        pushed = [sum(m[a][b] * rest[b] for b in range(t)) % R for a in range(t)]
        c[r + 1] = [(x + y) % R for x, y in zip(c[r + 1], pushed, strict=True)]
    rows: list[int] = []
    cols: list[int] = []
    prev = [[int(i == j) for j in range(t - 1)] for i in range(t - 1)]  # E^ carried in: none at first
    for _ in range(rp):  # (2)
        e = _matmul(m, [[1] + [0] * (t - 1)] + [[0, *row] for row in prev])
        hat = [row[1:] for row in e[1:]]
        col = _matmul(_inverse(hat), [[row[0]] for row in e[1:]])
        rows += e[0]
        cols += [x[0] for x in col]
        prev = hat
    full = [x for r in (*range(half), *range(half + rp, p.full_rounds + rp)) for x in c[r]]
    return _Optimized(
        params=p,
        tag=FR.from_ints([p.domain_tag])[0],
        mds=FR.from_ints([x for row in p.mds for x in row]),
        rc=FR.from_ints(full),
        pc=FR.from_ints([c[r][0] for r in range(half, half + rp)]),
        rows=FR.from_ints(rows),
        cols=FR.from_ints(cols),
        last=FR.from_ints([x for row in prev for x in row]),
    )


def permutation_products(arity: int) -> int:
    """Field products of one permutation in its sparse form (three per S-box, t^2 per full round's
    MDS, 2t - 1 per partial round's, (t - 1)^2 once), for the chunking."""
    p = params(arity)
    return 3 * p.sboxes + p.full_rounds * p.t * p.t + p.partial_rounds * (2 * p.t - 1) + (p.t - 1) ** 2


def trace_length(arity: int) -> int:
    """Values the gadget allocates: three per S-box and the output."""
    return 3 * params(arity).sboxes + 1


@overload
def permute_trace(
    arity: int, inputs: np.ndarray, *, trace: Literal[True] = True
) -> tuple[np.ndarray, np.ndarray]: ...
@overload
def permute_trace(arity: int, inputs: np.ndarray, *, trace: Literal[False]) -> tuple[np.ndarray, None]: ...
def permute_trace(
    arity: int, inputs: np.ndarray, *, trace: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """inputs (n, arity, 4) Montgomery -> (hashes (n, 4), trace (n, trace_length, 4) or None)."""
    o = _optimized(arity)
    p = o.params
    x = np.asarray(inputs, dtype=np.uint64)
    if x.ndim != 3 or x.shape[1:] != (arity, 4):
        raise CircuitError(f"Poseidon-{arity} takes inputs of shape (n, {arity}, 4); got {x.shape}")
    n = x.shape[0]
    state = np.empty((n, p.t, 4), dtype=np.uint64)
    state[:, 0] = o.tag
    state[:, 1:] = x
    out = np.empty((n, 4), dtype=np.uint64)
    tr = np.empty((n, trace_length(arity) * 4) if trace else (1, 4), dtype=np.uint64)
    args = (FR_TAG, state.reshape(n, -1), o.rc, o.mds, o.pc, o.rows, o.cols, o.last, p.t, p.full_rounds,
            p.partial_rounds, tr, out, trace)  # fmt: skip
    run_ranges(_k_permute, args, n, n * permutation_products(arity))
    return out, (tr.reshape(n, -1, 4) if trace else None)


def poseidon_native(arity: int, inputs: np.ndarray) -> np.ndarray:
    """Hashes of many inputs at once: (n, arity, 4) -> (n, 4), Montgomery form."""
    return permute_trace(arity, inputs, trace=False)[0]


def _hash_lcs(cs: Any, arity: int, lcs: list[dict[int, int]], values: np.ndarray | None) -> Num:
    """The circuit: S-boxes allocate, the rest stays linear; values (lanes, arity, 4) when cs has them."""
    p = params(arity)
    t = p.t
    trace = None
    if values is not None:
        _, trace = permute_trace(arity, values)
        if not cs.constraints:
            cs.alloc_many(trace.shape[1], trace)
            return Num(None, trace[:, -1])
    state: list[dict[int, int]] = [{ONE: p.domain_tag}] + [dict(x) for x in lcs]
    k = 0
    half = p.full_rounds // 2
    rc = p.round_constants
    c = 0
    for r in range(p.full_rounds + p.partial_rounds):
        full = r < half or r >= half + p.partial_rounds
        for j in range(t):
            x = state[j]
            x[ONE] = (x.get(ONE, 0) + rc[c]) % R
            c += 1
            if full or j == 0:
                with cs.namespace(f"round {r} sbox {j}"):
                    x2 = cs.alloc(None if trace is None else trace[:, k])
                    cs.enforce(x, x, {x2: 1}, "x2")
                    x4 = cs.alloc(None if trace is None else trace[:, k + 1])
                    cs.enforce({x2: 1}, {x2: 1}, {x4: 1}, "x4")
                    x5 = cs.alloc(None if trace is None else trace[:, k + 2])
                    cs.enforce(x, {x4: 1}, {x5: 1}, "x5")
                k += 3
                state[j] = {x5: 1}
        new = []
        for a in range(t):
            acc: dict[int, int] = {}
            row = p.mds[a]
            for b in range(t):
                m = row[b]
                for v, w in state[b].items():
                    acc[v] = (acc.get(v, 0) + m * w) % R
            new.append(acc)
        state = new
    y = cs.alloc(None if trace is None else trace[:, k])
    cs.enforce(state[1], {ONE: 1}, {y: 1}, "output")
    return Num(y, None if trace is None else trace[:, k])


@gadget
def poseidon_hash(cs: Any, inputs: list[Num], *, arity: int) -> Num:
    """Poseidon of `arity` field elements (Merkle domain tag 2^arity - 1), as an allocated Num."""
    if len(inputs) != arity:
        raise CircuitError(f"Poseidon-{arity} takes {arity} inputs, got {len(inputs)}")
    values = np.stack([x.require_value() for x in inputs], axis=1) if cs.values else None
    lcs = [x.lc() for x in inputs] if cs.constraints else []
    return _hash_lcs(cs, arity, lcs, values)
