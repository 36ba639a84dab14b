"""zcash point encodings and big-endian field bytes, batched (FORMATS.md section 1).

Points (bellperson, blstrs, zkcrypto/bls12_381):

- an Fq coordinate is 48 bytes big-endian; an Fq2 coordinate is c1 then c0;
- G1 compressed is x (48 bytes), uncompressed x || y (96); G2 compressed is
  x (96), uncompressed x || y (192);
- the top three bits of byte 0 are flags: 0x80 compressed, 0x40 infinity (all
  other bits zero), 0x20 "y is the lexicographically largest root" (compressed,
  non-infinity points only).

Every function works on a whole batch: n encodings are an (n, k) uint8 array
(or any buffer of n * k bytes), and the byte shuffling is numpy reshapes and
reversals; square roots, curve equations and subgroup checks run in numba
kernels. Decoding validates everything before it returns, so it either returns
all n points or raises the cuzk.errors class of the first bad encoding, naming
its index and what is wrong; it never returns partially valid data.

Field elements (`encode_fr` ... `decode_fq2`) are canonical big-endian bytes:
Fr 32, Fq 48, Fq2 96 (c1 then c0). Non-canonical values (>= the modulus) are
rejected unless `reduce=True`, which takes them modulo the field's prime.

The py_arkworks_bls12381 bridges at the end serve the tests and the verifier;
they build one Python object per point, so they are not for hot paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit
from numba.extending import overload

from cuzk.algebra import _curve_kernels as CK
from cuzk.algebra import _field_kernels as FK
from cuzk.algebra import constants as C
from cuzk.algebra._jit_curves import f_curve_b, store_affine
from cuzk.algebra._jit_fields import (
    FQ_TAG,
    _kind,
    f_add,
    f_load,
    f_mul,
    f_neg,
    f_sqr,
    f_zero,
    fq2_is_lex_largest,
    fq2_sqrt,
    fq_is_lex_largest,
    fq_sqrt,
)
from cuzk.algebra._parallel import run_ranges
from cuzk.algebra.curves import G1, G2, Curve
from cuzk.algebra.fields import FQ, FQ2, FR, LIMB, Field, _below, int_to_limbs, ints_to_limbs, limbs_to_ints
from cuzk.errors import (
    InfinityError,
    InvalidFlagsError,
    NonCanonicalError,
    NotInSubgroupError,
    NotOnCurveError,
    WrongLengthError,
)

if TYPE_CHECKING:
    import py_arkworks_bls12381 as ark

__all__ = [
    "COMPRESSION_FLAG",
    "INFINITY_FLAG",
    "SORT_FLAG",
    "decode_field",
    "decode_fq",
    "decode_fq2",
    "decode_fr",
    "decode_g1",
    "decode_g2",
    "decode_points",
    "encode_field",
    "encode_fq",
    "encode_fq2",
    "encode_fr",
    "encode_g1",
    "encode_g2",
    "encode_points",
    "from_arkworks_g1",
    "from_arkworks_g2",
    "from_arkworks_scalars",
    "point_size",
    "to_arkworks_g1",
    "to_arkworks_g2",
    "to_arkworks_scalars",
]

COMPRESSION_FLAG = 0x80
INFINITY_FLAG = 0x40
SORT_FLAG = 0x20
_FLAG_MASK = 0xE0

FQ_BYTES = 48
FR_BYTES = 32

BytesLike = bytes | bytearray | memoryview | np.ndarray

# Each prime-field coordinate's byte width fills its limbs exactly (Fr 32 = 4 x 8, Fq 48 = 6 x 8),
# so the big-endian <-> limb shuffle is a pure byte reversal.
assert FR.nbytes == 8 * C.FR_LIMBS and FQ.nbytes == 8 * C.FQ_LIMBS

_FQ_P = int_to_limbs(C.Q, C.FQ_LIMBS)
_FQ_HALF_PLUS_ONE = int_to_limbs((C.Q - 1) // 2 + 1, C.FQ_LIMBS)


# --- byte shuffles (numpy) ---------------------------------------------------------------


def _rows(data: BytesLike, k: int, what: str) -> np.ndarray:
    """Any buffer of n*k bytes, or an (n, k) uint8 array, as a contiguous (n, k) uint8 array."""
    if isinstance(data, np.ndarray):
        if data.dtype != np.uint8:
            raise TypeError(f"{what} encodings must be uint8 arrays, got dtype {data.dtype}")
        if data.ndim == 2 and data.shape[1] != k:
            raise WrongLengthError(f"{what} encodings are {k} bytes each, got rows of {data.shape[1]}")
        if data.ndim not in (1, 2):
            raise WrongLengthError(f"{what} encodings must be a flat buffer or (n, {k}) rows")
        flat = data.reshape(-1)
    else:
        flat = np.frombuffer(memoryview(data).cast("B"), dtype=np.uint8)
    if flat.size % k:
        raise WrongLengthError(f"{what} encodings are {k} bytes each; {flat.size} bytes is not a multiple")
    return np.ascontiguousarray(flat).reshape(-1, k)


def _be_to_limbs(rows: np.ndarray, nbytes: int) -> np.ndarray:
    """(n, c*nbytes) big-endian byte runs -> (n, c, nbytes/8) little-endian uint64 limbs."""
    n = rows.shape[0]
    le = np.ascontiguousarray(rows.reshape(n, rows.shape[1] // nbytes, nbytes)[:, :, ::-1])
    return le.view("<u8").astype(LIMB, copy=False)


def _limbs_to_be(limbs: np.ndarray, nbytes: int) -> np.ndarray:
    """(n, c, L) little-endian uint64 limbs -> (n, c*nbytes) big-endian bytes (top bytes dropped)."""
    n, c, _ = limbs.shape
    le = np.ascontiguousarray(limbs, dtype="<u8").view(np.uint8)[:, :, :nbytes]
    return np.ascontiguousarray(le[:, :, ::-1]).reshape(n, c * nbytes)


def _swap_pairs(coords: np.ndarray) -> np.ndarray:
    """Swap (c0, c1) <-> (c1, c0) in each consecutive pair of coordinates: (n, 2m, L)."""
    n, c, L = coords.shape
    return np.ascontiguousarray(coords.reshape(n, c // 2, 2, L)[:, :, ::-1]).reshape(n, c, L)


def _fq_from_canonical(canon: np.ndarray) -> np.ndarray:
    """(..., 6) canonical limbs (already checked or meant to be reduced) -> Montgomery, same shape."""
    rows = np.ascontiguousarray(canon).reshape(-1, C.FQ_LIMBS)
    out = np.empty_like(rows)
    run_ranges(FK.k_from_canon, (FQ_TAG, rows, out), rows.shape[0], rows.shape[0] * 2)
    return out.reshape(canon.shape)


def _fq_lex_largest(canon: np.ndarray) -> np.ndarray:
    """Per row of canonical Fq limbs (n, 6): value > (p-1)/2."""
    return ~_below(canon, _FQ_HALF_PLUS_ONE)


# --- field elements ---------------------------------------------------------------------


def _field_bytes(field: Field) -> int:
    return field.nbytes * field.degree


def encode_field(field: Field, a: np.ndarray) -> np.ndarray:
    """Field elements (Montgomery) -> (n, nbytes) canonical big-endian bytes (Fq2: c1 then c0)."""
    canon = field.to_canonical(a).reshape(a.shape[0], field.degree, field.base_limbs)
    if field.degree == 2:
        canon = _swap_pairs(canon)
    return _limbs_to_be(canon, field.nbytes)


def decode_field(field: Field, data: BytesLike, *, reduce: bool = False) -> np.ndarray:
    """Canonical big-endian bytes -> Montgomery field elements.

    A value >= the modulus raises NonCanonicalError naming the first such element,
    unless `reduce` is set, which takes every value modulo the prime instead.
    """
    rows = _rows(data, _field_bytes(field), field.name)
    n = rows.shape[0]
    limbs = _be_to_limbs(rows, field.nbytes)  # (n, degree, limbs); nbytes fills the limbs exactly
    if field.degree == 2:
        limbs = _swap_pairs(limbs)
    flat = limbs.reshape(-1, field.base_limbs)
    if not reduce:
        bad = ~_below(flat, int_to_limbs(field.modulus, field.base_limbs))
        if bad.any():
            i = int(np.flatnonzero(bad)[0]) // field.degree
            raise NonCanonicalError(f"{field.name} element {i} is not below the field modulus")
    # Montgomery multiplication by R^2 maps any value below 2^(64 limbs) to a reduced result,
    # so this one kernel both converts and (with reduce) reduces.
    out = field.empty(n)
    run_ranges(
        FK.k_from_canon,
        (field.tag, flat.reshape(n, field.width), out.reshape(n, field.width)),
        n,
        n * field.mul_cost,
    )
    return out


def encode_fr(a: np.ndarray) -> np.ndarray:
    """Fr elements -> (n, 32) big-endian bytes."""
    return encode_field(FR, a)


def decode_fr(data: BytesLike, *, reduce: bool = False) -> np.ndarray:
    """(n, 32) big-endian bytes -> Fr; values >= r are rejected (or reduced with `reduce`)."""
    return decode_field(FR, data, reduce=reduce)


def encode_fq(a: np.ndarray) -> np.ndarray:
    """Fq elements -> (n, 48) big-endian bytes."""
    return encode_field(FQ, a)


def decode_fq(data: BytesLike, *, reduce: bool = False) -> np.ndarray:
    """(n, 48) big-endian bytes -> Fq; values >= p are rejected (or reduced with `reduce`)."""
    return decode_field(FQ, data, reduce=reduce)


def encode_fq2(a: np.ndarray) -> np.ndarray:
    """Fq2 elements -> (n, 96) bytes, c1 then c0, each big-endian."""
    return encode_field(FQ2, a)


def decode_fq2(data: BytesLike, *, reduce: bool = False) -> np.ndarray:
    """(n, 96) bytes (c1 then c0) -> Fq2."""
    return decode_field(FQ2, data, reduce=reduce)


# --- numba kernels: decompression ---------------------------------------------------------


def f_sqrt(F, a):
    raise NotImplementedError  # only callable inside numba kernels


def f_lex_largest(F, a):
    raise NotImplementedError


@overload(f_sqrt)
def _ol_sqrt(F, a):
    k = _kind(F)
    if k == "fq":
        return lambda F, a: fq_sqrt(a)
    if k == "fq2":
        return lambda F, a: fq2_sqrt(a)
    return None


@overload(f_lex_largest)
def _ol_lex_largest(F, a):
    k = _kind(F)
    if k == "fq":
        return lambda F, a: fq_is_lex_largest(a)
    if k == "fq2":
        return lambda F, a: fq2_is_lex_largest(a)
    return None


@njit(nogil=True, cache=True)
def k_decompress(F, xs, largest, active, out, ok, lo, hi):
    """For active rows: y = the root of x^3 + b whose lex-largest flag matches `largest`.

    xs are Montgomery x coordinates (n, width); out gets affine rows (n, 2*width),
    zero for inactive rows and for x with no root; ok[i] says whether a root exists. Rows [lo, hi).
    """
    for i in range(lo, hi):
        ok[i] = False
        if not active[i]:
            store_affine(F, out, i, f_zero(F), f_zero(F))
            continue
        x = f_load(F, xs, i, 0)
        found, y = f_sqrt(F, f_add(F, f_mul(F, f_sqr(F, x), x), f_curve_b(F)))
        if not found:
            store_affine(F, out, i, f_zero(F), f_zero(F))
            continue
        if f_lex_largest(F, y) != largest[i]:
            y = f_neg(F, y)
        store_affine(F, out, i, x, y)
        ok[i] = True


# --- points ---------------------------------------------------------------------------------

_OK, _BAD_FLAGS, _BAD_INFINITY, _NONCANONICAL, _OFF_CURVE = range(5)


def point_size(curve: Curve, compressed: bool) -> int:
    """Bytes per zcash encoding: G1 48/96, G2 96/192."""
    return FQ_BYTES * curve.field.degree * (1 if compressed else 2)


def encode_points(curve: Curve, points: np.ndarray, *, compressed: bool = True) -> np.ndarray:
    """Affine points (Montgomery, infinity all zeros) -> (n, point_size) zcash encodings."""
    rows = curve._aff(points)
    n, m = rows.shape[0], curve.field.degree
    inf = ~rows.any(axis=1)
    canon = FQ.to_canonical(rows.reshape(-1, C.FQ_LIMBS)).reshape(n, 2 * m, C.FQ_LIMBS)
    if m == 2:
        canon = _swap_pairs(canon)  # [x.c1, x.c0, y.c1, y.c0]
    if compressed:
        out = _limbs_to_be(canon[:, :m], FQ_BYTES)
        if m == 1:
            largest = _fq_lex_largest(canon[:, 1])
        else:  # c1 decides unless it is zero, then c0
            c1_zero = ~canon[:, 2].any(axis=1)
            largest = np.where(c1_zero, _fq_lex_largest(canon[:, 3]), _fq_lex_largest(canon[:, 2]))
        out[:, 0] |= np.uint8(COMPRESSION_FLAG) | (largest.astype(np.uint8) * np.uint8(SORT_FLAG))
    else:
        out = _limbs_to_be(canon, FQ_BYTES)
    if inf.any():
        out[inf] = 0
        out[inf, 0] = INFINITY_FLAG | (COMPRESSION_FLAG if compressed else 0)
    return out


def decode_points(
    curve: Curve,
    data: BytesLike,
    *,
    compressed: bool = True,
    check_subgroup: bool = True,
    allow_infinity: bool = True,
) -> np.ndarray:
    """zcash encodings -> affine points (Montgomery), all checked before anything returns.

    Checks, in this order per point: flags (InvalidFlagsError), infinity where
    `allow_infinity` is False (InfinityError), coordinates below p
    (NonCanonicalError), the curve equation or, compressed, a square root for
    x^3 + b (NotOnCurveError), and with `check_subgroup` membership in the
    order-r subgroup (NotInSubgroupError). The error is that of the lowest-index
    bad point.
    """
    k = point_size(curve, compressed)
    kind = "compressed" if compressed else "uncompressed"
    rows = _rows(data, k, f"{curve.name} {kind}")
    n, m = rows.shape[0], curve.field.degree
    width = curve.field.width

    flags = rows[:, 0] & np.uint8(_FLAG_MASK)
    c_flag = (flags & COMPRESSION_FLAG) != 0
    inf_flag = (flags & INFINITY_FLAG) != 0
    s_flag = (flags & SORT_FLAG) != 0
    body = rows.copy()
    body[:, 0] &= np.uint8(~_FLAG_MASK & 0xFF)
    body_zero = ~body.any(axis=1)
    bad_flags = (c_flag != compressed) | (inf_flag & (s_flag | ~body_zero))
    if not compressed:
        bad_flags |= s_flag

    coords = _be_to_limbs(body, FQ_BYTES)  # (n, ncoords, 6), zcash order
    if m == 2:
        coords = _swap_pairs(coords)  # -> [c0, c1] per coordinate
    ncoords = coords.shape[1]
    noncanon = ~_below(coords.reshape(-1, C.FQ_LIMBS), _FQ_P).reshape(n, ncoords).all(axis=1)

    active = ~(bad_flags | inf_flag | noncanon)
    coords[~active] = 0
    if n <= SMALL_POINTS:  # a key's or a proof's few points: no kernel to compile for them
        aff, on = _small_points(curve, coords, s_flag, active, compressed)
        off_curve = active & ~on  # (0, 0) without the infinity flag fails the equation here
    elif compressed:
        mont = _fq_from_canonical(coords).reshape(n, ncoords * C.FQ_LIMBS)
        aff = np.empty((n, 2 * width), dtype=LIMB)
        found = np.empty(n, dtype=np.bool_)
        run_ranges(
            k_decompress, (curve.tag, mont, s_flag, active, aff, found), n, n * 400 * curve.field.mul_cost
        )
        off_curve = active & ~found
    else:
        aff = _fq_from_canonical(coords).reshape(n, ncoords * C.FQ_LIMBS)
        on = np.empty(n, dtype=np.bool_)
        run_ranges(CK.k_on_curve, (curve.tag, aff, on), n, n * 4 * curve.field.mul_cost)
        off_curve = active & (~on | body_zero)  # (0, 0) without the infinity flag is not a point

    code = np.zeros(n, dtype=np.int8)
    code[off_curve] = _OFF_CURVE
    code[noncanon] = _NONCANONICAL
    code[inf_flag & ~bad_flags & (not allow_infinity)] = _BAD_INFINITY
    code[bad_flags] = _BAD_FLAGS
    bad = np.flatnonzero(code)
    first = int(bad[0]) if bad.size else n

    if check_subgroup and first > 0:
        # rows before `first` are valid or infinity
        if first <= SMALL_POINTS:
            inside = _small_in_subgroup(curve, aff[:first])
        else:
            inside = np.empty(first, dtype=np.bool_)
            run_ranges(
                CK.k_in_subgroup, (curve.tag, aff[:first], inside), first, first * 1500 * curve.field.mul_cost
            )
        if not inside.all():
            i = int(np.flatnonzero(~inside)[0])
            raise NotInSubgroupError(
                f"{curve.name} {kind} point {i} is on the curve but not in the prime-order subgroup"
            )
    if first < n:
        _raise_for(curve, kind, int(code[first]), first, rows[first], compressed)
    return aff.reshape(n, *curve.affine_shape)


#: Up to this many points, decode_points finds y, checks the curve equation with Python ints and
#: the subgroup with py_arkworks (~35 us a point) instead of numba kernels: reading a verifying
#: key or a proof then compiles nothing (these kernels were ~17 s of a first `cuzk verify`'s
#: 22 s of compiling on the 2-core machine, 2026-12-05).
SMALL_POINTS = 64
_HALF_Q = (C.Q - 1) // 2
_R_MONT = (1 << (64 * C.FQ_LIMBS)) % C.Q


def _fq2_mul(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    q = C.Q
    return ((a[0] * b[0] - a[1] * b[1]) % q, (a[0] * b[1] + a[1] * b[0]) % q)


def _fq2_pow(a: tuple[int, int], e: int) -> tuple[int, int]:
    acc = (1, 0)
    for bit in bin(e)[2:]:
        acc = _fq2_mul(acc, acc)
        if bit == "1":
            acc = _fq2_mul(acc, a)
    return acc


def _sqrt_fq(a: int) -> int | None:
    x = pow(a, (C.Q + 1) // 4, C.Q)
    return x if x * x % C.Q == a else None


def _sqrt_fq2(a: tuple[int, int]) -> tuple[int, int] | None:
    """A root of a in Fq2 (p = 3 mod 4), or None: the algorithm of _jit_fields.fq2_sqrt."""
    q = C.Q
    if a == (0, 0):
        return a
    a1 = _fq2_pow(a, (q - 3) // 4)
    alpha = _fq2_mul(_fq2_mul(a1, a1), a)
    if _fq2_mul((alpha[0], -alpha[1] % q), alpha) == (q - 1, 0):
        return None
    x0 = _fq2_mul(a1, a)
    if alpha == (q - 1, 0):
        x = (-x0[1] % q, x0[0])
    else:
        x = _fq2_mul(_fq2_pow(((alpha[0] + 1) % q, alpha[1]), (q - 1) // 2), x0)
    return x if _fq2_mul(x, x) == a else None


def _small_points(
    curve: Curve, coords: np.ndarray, largest: np.ndarray, active: np.ndarray, compressed: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(affine rows in Montgomery form, on the curve) for the canonical `coords` (n, ncoords, 6)
    of active rows, with Python ints. As the kernels give them: compressed, inactive rows and an
    x without a root give zero rows; uncompressed, the rows are the coordinates as encoded."""
    q, g2 = C.Q, curve.field.degree == 2
    n, ncoords = coords.shape[0], coords.shape[1]
    ints = limbs_to_ints(np.ascontiguousarray(coords).reshape(-1, C.FQ_LIMBS))
    rows = [ints[i * ncoords : (i + 1) * ncoords] for i in range(n)]
    out: list[list[int]] = []
    ok = np.zeros(n, dtype=np.bool_)
    for i, row in enumerate(rows):
        if g2:
            x2 = (row[0], row[1])
            rhs2 = _fq2_mul(_fq2_mul(x2, x2), x2)
            rhs2 = ((rhs2[0] + C.G2_B[0]) % q, (rhs2[1] + C.G2_B[1]) % q)
            if compressed:
                y2 = _sqrt_fq2(rhs2) if active[i] else None
                if y2 is not None and (y2[1] > _HALF_Q if y2[1] else y2[0] > _HALF_Q) != bool(largest[i]):
                    y2 = (-y2[0] % q, -y2[1] % q)
                ok[i] = y2 is not None
                out.append([x2[0], x2[1], y2[0], y2[1]] if y2 is not None else [0, 0, 0, 0])
            else:
                ok[i] = bool(active[i]) and _fq2_mul((row[2], row[3]), (row[2], row[3])) == rhs2
                out.append(row)
        else:
            rhs = (row[0] ** 3 + C.G1_B) % q
            if compressed:
                y = _sqrt_fq(rhs) if active[i] else None
                if y is not None and (y > _HALF_Q) != bool(largest[i]):
                    y = -y % q
                ok[i] = y is not None
                out.append([row[0], y] if y is not None else [0, 0])
            else:
                ok[i] = bool(active[i]) and row[1] * row[1] % q == rhs
                out.append(row)
    mont = [v * _R_MONT % q for r in out for v in r]
    width = (2 if compressed else 1) * ncoords * C.FQ_LIMBS
    return ints_to_limbs(mont, C.FQ_LIMBS).reshape(n, width), ok


def _small_in_subgroup(curve: Curve, aff: np.ndarray) -> np.ndarray:
    """Per affine row (Montgomery; valid points or zero rows for infinity): in the prime-order
    subgroup, by py_arkworks."""
    import py_arkworks_bls12381 as ark

    cls: Any = ark.G2Point if curve.field.degree == 2 else ark.G1Point
    r_inv = pow(_R_MONT, -1, C.Q)
    inside = np.ones(aff.shape[0], dtype=np.bool_)
    for i in range(aff.shape[0]):
        if not aff[i].any():
            continue  # infinity
        coords = [v * r_inv % C.Q for v in limbs_to_ints(aff[i].reshape(-1, C.FQ_LIMBS))]
        xy = b"".join(v.to_bytes(FQ_BYTES, "big") for v in coords)
        inside[i] = cls.from_xy_bytes_unchecked_be(xy).is_in_subgroup()
    return inside


def _raise_for(curve: Curve, kind: str, code: int, i: int, row: np.ndarray, compressed: bool) -> None:
    """Raise the error for point i with a message saying exactly what is wrong."""
    where = f"{curve.name} {kind} point {i}"
    flags = int(row[0]) & _FLAG_MASK
    if code == _BAD_FLAGS:
        if bool(flags & COMPRESSION_FLAG) != compressed:
            why = "the compression flag (0x80) is not set" if compressed else "the compression flag is set"
        elif flags & INFINITY_FLAG and flags & SORT_FLAG:
            why = "the infinity flag (0x40) is set together with the sort flag (0x20)"
        elif flags & INFINITY_FLAG:
            why = "the infinity flag (0x40) is set but the other bits are not all zero"
        else:
            why = "the sort flag (0x20) is set on an uncompressed encoding"
        raise InvalidFlagsError(f"{where}: invalid flags 0x{flags:02x}: {why}")
    if code == _BAD_INFINITY:
        raise InfinityError(f"{where} is the point at infinity, which is not allowed here")
    if code == _NONCANONICAL:
        raise NonCanonicalError(f"{where}: a coordinate is not below the field modulus p")
    if compressed:
        raise NotOnCurveError(f"{where}: x^3 + b has no square root for this x, so x is not on the curve")
    raise NotOnCurveError(f"{where}: (x, y) does not satisfy the curve equation y^2 = x^3 + b")


def encode_g1(points: np.ndarray, *, compressed: bool = True) -> np.ndarray:
    """G1 affine points -> (n, 48) compressed or (n, 96) uncompressed zcash bytes."""
    return encode_points(G1, points, compressed=compressed)


def decode_g1(
    data: BytesLike, *, compressed: bool = True, check_subgroup: bool = True, allow_infinity: bool = True
) -> np.ndarray:
    """zcash G1 bytes -> (n, 2, 6) affine points; see decode_points for the checks."""
    return decode_points(
        G1, data, compressed=compressed, check_subgroup=check_subgroup, allow_infinity=allow_infinity
    )


def encode_g2(points: np.ndarray, *, compressed: bool = True) -> np.ndarray:
    """G2 affine points -> (n, 96) compressed or (n, 192) uncompressed zcash bytes."""
    return encode_points(G2, points, compressed=compressed)


def decode_g2(
    data: BytesLike, *, compressed: bool = True, check_subgroup: bool = True, allow_infinity: bool = True
) -> np.ndarray:
    """zcash G2 bytes -> (n, 2, 2, 6) affine points; see decode_points for the checks."""
    return decode_points(
        G2, data, compressed=compressed, check_subgroup=check_subgroup, allow_infinity=allow_infinity
    )


# --- py_arkworks_bls12381 bridges (tests, verifier; one Python object per point) ----------


def _xy_be(curve: Curve, points: np.ndarray) -> np.ndarray:
    """Affine points -> (n, 2*48*m) flagless big-endian x || y, Fq2 as c0 then c1 (arkworks' xy)."""
    rows = curve._aff(points)
    ncoords = 2 * curve.field.degree
    canon = FQ.to_canonical(rows.reshape(-1, C.FQ_LIMBS)).reshape(rows.shape[0], ncoords, C.FQ_LIMBS)
    return _limbs_to_be(canon, FQ_BYTES)


def _from_xy_be(curve: Curve, raw: bytes) -> np.ndarray:
    rows = _rows(raw, 2 * point_size(curve, compressed=True), f"{curve.name} xy")
    coords = _be_to_limbs(rows, FQ_BYTES)
    if not _below(coords.reshape(-1, C.FQ_LIMBS), _FQ_P).all():
        raise NonCanonicalError(f"a {curve.name} coordinate from py_arkworks is not below p")
    return _fq_from_canonical(coords).reshape(rows.shape[0], *curve.affine_shape)


def _to_arkworks(curve: Curve, cls: Any, points: np.ndarray, check: bool) -> list:
    xy = _xy_be(curve, points).tobytes()
    k = 2 * point_size(curve, compressed=True)
    make = cls.from_xy_bytes_be if check else cls.from_xy_bytes_unchecked_be
    return [make(xy[i : i + k]) for i in range(0, len(xy), k)]


def to_arkworks_g1(points: np.ndarray, *, check: bool = False) -> list[ark.G1Point]:
    """G1 affine points -> py_arkworks G1Point objects (a Python loop: not for hot paths).

    Goes through arkworks' flagless xy bytes; `check` has arkworks verify the curve
    and subgroup (about 35 us a point), off by default since our arrays hold valid points.
    """
    import py_arkworks_bls12381 as ark

    return _to_arkworks(G1, ark.G1Point, points, check)


def to_arkworks_g2(points: np.ndarray, *, check: bool = False) -> list[ark.G2Point]:
    """G2 affine points -> py_arkworks G2Point objects (a Python loop: not for hot paths)."""
    import py_arkworks_bls12381 as ark

    return _to_arkworks(G2, ark.G2Point, points, check)


def from_arkworks_g1(points: list[ark.G1Point]) -> np.ndarray:
    """py_arkworks G1Point objects -> (n, 2, 6) affine points (a Python loop over the objects)."""
    return _from_xy_be(G1, b"".join(p.to_xy_bytes_be() for p in points))


def from_arkworks_g2(points: list[ark.G2Point]) -> np.ndarray:
    """py_arkworks G2Point objects -> (n, 2, 2, 6) affine points (a Python loop over the objects)."""
    return _from_xy_be(G2, b"".join(p.to_xy_bytes_be() for p in points))


def to_arkworks_scalars(a: np.ndarray) -> list[ark.Scalar]:
    """Fr elements (Montgomery) -> py_arkworks Scalar objects (a Python loop: not for hot paths)."""
    import py_arkworks_bls12381 as ark

    le = np.ascontiguousarray(FR.to_canonical(a), dtype="<u8").tobytes()
    return [ark.Scalar.from_le_bytes(le[i : i + FR_BYTES]) for i in range(0, len(le), FR_BYTES)]


def from_arkworks_scalars(scalars: list[ark.Scalar]) -> np.ndarray:
    """py_arkworks Scalar objects -> (n, 4) Fr elements (Montgomery)."""
    raw = b"".join(s.to_le_bytes() for s in scalars)
    limbs = np.frombuffer(raw, dtype="<u8").astype(LIMB).reshape(-1, C.FR_LIMBS)
    return FR.from_canonical(limbs)
