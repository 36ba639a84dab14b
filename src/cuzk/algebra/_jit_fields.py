"""Field arithmetic for numba kernels, generic over a field tag.

Kernels take a *tag* argument (FR_TAG, FQ_TAG, FQ2_TAG) whose numba type names
the field, and call `f_mul(F, a, b)` and friends; numba resolves each call at
compile time to the field's code, so one kernel source serves every field and
compiles to straight-line code per field. Elements inside kernels are tuples:
an Fr or Fq element is UniTuple(uint64, n) in Montgomery form, an Fq2 element
is a pair (c0, c1) of Fq elements. In arrays every element occupies a run of
`width` consecutive uint64 limbs of a row (Fq2: c0's 6 limbs then c1's).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.imputils import lower_constant
from numba.extending import (
    NativeValue,
    models,
    overload,
    register_jitable,
    register_model,
    typeof_impl,
    unbox,
)

from cuzk.algebra import constants as C
from cuzk.algebra._intrinsics import make_add_mod, make_lt, make_mont_mul, make_sub_mod


class FieldTag:
    """A compile-time field selector passed to generic kernels."""

    def __init__(self, kind: str, width: int) -> None:
        self.kind = kind
        self.width = width  # uint64 limbs per element

    def __repr__(self) -> str:
        return f"FieldTag({self.kind})"

    def __reduce__(self):
        return (_tag_by_kind, (self.kind,))


class FieldTagType(types.Type):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        super().__init__(name=f"FieldTag({kind})")


register_model(FieldTagType)(models.OpaqueModel)


@unbox(FieldTagType)
def _unbox_tag(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())


@lower_constant(FieldTagType)
def _lower_tag(context, builder, ty, pyval):
    return context.get_dummy_value()


@typeof_impl.register(FieldTag)
def _typeof_tag(val, c):
    return FieldTagType(val.kind)


FR_TAG = FieldTag("fr", C.FR_LIMBS)
FQ_TAG = FieldTag("fq", C.FQ_LIMBS)
FQ2_TAG = FieldTag("fq2", 2 * C.FQ_LIMBS)
_TAGS = {t.kind: t for t in (FR_TAG, FQ_TAG, FQ2_TAG)}


def _tag_by_kind(kind: str) -> FieldTag:
    return _TAGS[kind]


def _tuple(value: int, n: int) -> tuple:
    return tuple(np.uint64((value >> (64 * i)) & ((1 << 64) - 1)) for i in range(n))


def _mont(value: int, modulus: int, n: int) -> tuple:
    return _tuple(value * (1 << (64 * n)) % modulus, n)


# --- prime-field primitives ---------------------------------------------------

_fr_mul = make_mont_mul(C.R, C.FR_LIMBS)
_fr_add = make_add_mod(C.R, C.FR_LIMBS)
_fr_sub = make_sub_mod(C.R, C.FR_LIMBS)
_fq_mul = make_mont_mul(C.Q, C.FQ_LIMBS)
_fq_add = make_add_mod(C.Q, C.FQ_LIMBS)
_fq_sub = make_sub_mod(C.Q, C.FQ_LIMBS)
_lt4 = make_lt(C.FR_LIMBS)
_lt6 = make_lt(C.FQ_LIMBS)

FR_ZERO = _tuple(0, C.FR_LIMBS)
FR_ONE = _mont(1, C.R, C.FR_LIMBS)
FR_R2 = _tuple((1 << (2 * C.FR_BITS)) % C.R, C.FR_LIMBS)
FR_CANON_ONE = _tuple(1, C.FR_LIMBS)
FR_P = _tuple(C.R, C.FR_LIMBS)
FR_INV_EXP = np.array(_tuple(C.R - 2, C.FR_LIMBS), dtype=np.uint64)

FQ_ZERO = _tuple(0, C.FQ_LIMBS)
FQ_ONE = _mont(1, C.Q, C.FQ_LIMBS)
FQ_R2 = _tuple((1 << (2 * C.FQ_BITS)) % C.Q, C.FQ_LIMBS)
FQ_CANON_ONE = _tuple(1, C.FQ_LIMBS)
FQ_P = _tuple(C.Q, C.FQ_LIMBS)
FQ_INV_EXP = np.array(_tuple(C.Q - 2, C.FQ_LIMBS), dtype=np.uint64)
FQ_SQRT_EXP = np.array(_tuple((C.Q + 1) // 4, C.FQ_LIMBS), dtype=np.uint64)
FQ_SQRT2_EXP1 = np.array(_tuple((C.Q - 3) // 4, C.FQ_LIMBS), dtype=np.uint64)
FQ_SQRT2_EXP2 = np.array(_tuple((C.Q - 1) // 2, C.FQ_LIMBS), dtype=np.uint64)
FQ_HALF = _tuple((C.Q - 1) // 2, C.FQ_LIMBS)  # canonical (p-1)/2: "largest" threshold
FQ_MINUS_ONE = _mont(C.Q - 1, C.Q, C.FQ_LIMBS)


# --- generic entry points (stubs; numba picks the overload by tag type) --------


def f_load(F, arr, i, off):
    raise NotImplementedError  # only callable inside numba kernels


def f_store(F, arr, i, off, x):
    raise NotImplementedError


def f_zero(F):
    raise NotImplementedError


def f_one(F):
    raise NotImplementedError


def f_add(F, a, b):
    raise NotImplementedError


def f_sub(F, a, b):
    raise NotImplementedError


def f_mul(F, a, b):
    raise NotImplementedError


def f_sqr(F, a):
    raise NotImplementedError


def f_neg(F, a):
    raise NotImplementedError


def f_dbl(F, a):
    raise NotImplementedError


def f_eq(F, a, b):
    raise NotImplementedError


def f_is_zero(F, a):
    raise NotImplementedError


def f_inv(F, a):
    raise NotImplementedError


def f_to_canon(F, a):
    raise NotImplementedError


def f_from_canon(F, a):
    raise NotImplementedError


def f_is_canon(F, a):
    raise NotImplementedError


def f_conj(F, a):
    raise NotImplementedError


def f_mul_base(F, a, b):
    raise NotImplementedError


def _kind(F: object) -> str | None:
    return F.kind if isinstance(F, FieldTagType) else None


@overload(f_load)
def _ol_load(F, arr, i, off):
    k = _kind(F)
    if k == "fr":
        return lambda F, arr, i, off: (arr[i, off], arr[i, off + 1], arr[i, off + 2], arr[i, off + 3])
    if k == "fq":
        return lambda F, arr, i, off: (
            arr[i, off],
            arr[i, off + 1],
            arr[i, off + 2],
            arr[i, off + 3],
            arr[i, off + 4],
            arr[i, off + 5],
        )
    if k == "fq2":
        return lambda F, arr, i, off: (f_load(FQ_TAG, arr, i, off), f_load(FQ_TAG, arr, i, off + 6))
    return None


@overload(f_store)
def _ol_store(F, arr, i, off, x):
    k = _kind(F)
    if k in ("fr", "fq"):
        n = C.FR_LIMBS if k == "fr" else C.FQ_LIMBS

        def impl(F, arr, i, off, x):
            for j in range(n):
                arr[i, off + j] = x[j]

        return impl
    if k == "fq2":

        def impl2(F, arr, i, off, x):
            f_store(FQ_TAG, arr, i, off, x[0])
            f_store(FQ_TAG, arr, i, off + 6, x[1])

        return impl2
    return None


def _by_kind(fr, fq, fq2):
    """Build an overload body that returns the implementation for the tag's field."""

    def chooser(F, *args):
        k = _kind(F)
        return None if k is None else {"fr": fr, "fq": fq, "fq2": fq2}.get(k)

    return chooser


@overload(f_zero)
def _ol_zero(F):
    return _by_kind(lambda F: FR_ZERO, lambda F: FQ_ZERO, lambda F: (FQ_ZERO, FQ_ZERO))(F)


@overload(f_one)
def _ol_one(F):
    return _by_kind(lambda F: FR_ONE, lambda F: FQ_ONE, lambda F: (FQ_ONE, FQ_ZERO))(F)


@overload(f_add)
def _ol_add(F, a, b):
    return _by_kind(
        lambda F, a, b: _fr_add(a, b),
        lambda F, a, b: _fq_add(a, b),
        lambda F, a, b: (_fq_add(a[0], b[0]), _fq_add(a[1], b[1])),
    )(F)


@overload(f_sub)
def _ol_sub(F, a, b):
    return _by_kind(
        lambda F, a, b: _fr_sub(a, b),
        lambda F, a, b: _fq_sub(a, b),
        lambda F, a, b: (_fq_sub(a[0], b[0]), _fq_sub(a[1], b[1])),
    )(F)


@register_jitable
def _fq2_mul(a, b):
    # Karatsuba over i^2 = -1: three base multiplications.
    t0 = _fq_mul(a[0], b[0])
    t1 = _fq_mul(a[1], b[1])
    t2 = _fq_mul(_fq_add(a[0], a[1]), _fq_add(b[0], b[1]))
    return (_fq_sub(t0, t1), _fq_sub(_fq_sub(t2, t0), t1))


@register_jitable
def _fq2_sqr(a):
    # (a0 + a1 i)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 i
    t = _fq_mul(a[0], a[1])
    return (_fq_mul(_fq_add(a[0], a[1]), _fq_sub(a[0], a[1])), _fq_add(t, t))


@overload(f_mul)
def _ol_mul(F, a, b):
    return _by_kind(
        lambda F, a, b: _fr_mul(a, b), lambda F, a, b: _fq_mul(a, b), lambda F, a, b: _fq2_mul(a, b)
    )(F)


@overload(f_sqr)
def _ol_sqr(F, a):
    return _by_kind(lambda F, a: _fr_mul(a, a), lambda F, a: _fq_mul(a, a), lambda F, a: _fq2_sqr(a))(F)


@overload(f_neg)
def _ol_neg(F, a):
    return _by_kind(
        lambda F, a: _fr_sub(FR_ZERO, a),
        lambda F, a: _fq_sub(FQ_ZERO, a),
        lambda F, a: (_fq_sub(FQ_ZERO, a[0]), _fq_sub(FQ_ZERO, a[1])),
    )(F)


@overload(f_dbl)
def _ol_dbl(F, a):
    return _by_kind(
        lambda F, a: _fr_add(a, a),
        lambda F, a: _fq_add(a, a),
        lambda F, a: (_fq_add(a[0], a[0]), _fq_add(a[1], a[1])),
    )(F)


@overload(f_eq)
def _ol_eq(F, a, b):
    return _by_kind(lambda F, a, b: a == b, lambda F, a, b: a == b, lambda F, a, b: a == b)(F)


@overload(f_is_zero)
def _ol_is_zero(F, a):
    return _by_kind(
        lambda F, a: a == FR_ZERO,
        lambda F, a: a == FQ_ZERO,
        lambda F, a: a[0] == FQ_ZERO and a[1] == FQ_ZERO,
    )(F)


@register_jitable
def _pow_fr(a, e):
    """a^e with e given as little-endian uint64 limbs (square-and-multiply)."""
    acc = FR_ONE
    for k in range(e.shape[0] - 1, -1, -1):
        w = e[k]
        for b in range(63, -1, -1):
            acc = _fr_mul(acc, acc)
            if (w >> np.uint64(b)) & np.uint64(1):
                acc = _fr_mul(acc, a)
    return acc


@register_jitable
def _pow_fq(a, e):
    acc = FQ_ONE
    for k in range(e.shape[0] - 1, -1, -1):
        w = e[k]
        for b in range(63, -1, -1):
            acc = _fq_mul(acc, acc)
            if (w >> np.uint64(b)) & np.uint64(1):
                acc = _fq_mul(acc, a)
    return acc


@register_jitable
def _pow_fq2(a, e):
    acc = (FQ_ONE, FQ_ZERO)
    for k in range(e.shape[0] - 1, -1, -1):
        w = e[k]
        for b in range(63, -1, -1):
            acc = _fq2_sqr(acc)
            if (w >> np.uint64(b)) & np.uint64(1):
                acc = _fq2_mul(acc, a)
    return acc


@register_jitable
def _fq2_inv(a):
    # 1/(a0 + a1 i) = (a0 - a1 i) / (a0^2 + a1^2); zero maps to zero.
    norm = _fq_add(_fq_mul(a[0], a[0]), _fq_mul(a[1], a[1]))
    t = _pow_fq(norm, FQ_INV_EXP)
    return (_fq_mul(a[0], t), _fq_sub(FQ_ZERO, _fq_mul(a[1], t)))


@overload(f_inv)
def _ol_inv(F, a):
    return _by_kind(
        lambda F, a: _pow_fr(a, FR_INV_EXP),
        lambda F, a: _pow_fq(a, FQ_INV_EXP),
        lambda F, a: _fq2_inv(a),
    )(F)


def f_pow(F, a, e):
    raise NotImplementedError


@overload(f_pow)
def _ol_pow(F, a, e):
    return _by_kind(
        lambda F, a, e: _pow_fr(a, e), lambda F, a, e: _pow_fq(a, e), lambda F, a, e: _pow_fq2(a, e)
    )(F)


@overload(f_to_canon)
def _ol_to_canon(F, a):
    return _by_kind(
        lambda F, a: _fr_mul(a, FR_CANON_ONE),
        lambda F, a: _fq_mul(a, FQ_CANON_ONE),
        lambda F, a: (_fq_mul(a[0], FQ_CANON_ONE), _fq_mul(a[1], FQ_CANON_ONE)),
    )(F)


@overload(f_from_canon)
def _ol_from_canon(F, a):
    return _by_kind(
        lambda F, a: _fr_mul(a, FR_R2),
        lambda F, a: _fq_mul(a, FQ_R2),
        lambda F, a: (_fq_mul(a[0], FQ_R2), _fq_mul(a[1], FQ_R2)),
    )(F)


@overload(f_is_canon)
def _ol_is_canon(F, a):
    """True when a (canonical limbs, not Montgomery) is below the modulus."""
    return _by_kind(
        lambda F, a: _lt4(a, FR_P),
        lambda F, a: _lt6(a, FQ_P),
        lambda F, a: _lt6(a[0], FQ_P) and _lt6(a[1], FQ_P),
    )(F)


@overload(f_conj)
def _ol_conj(F, a):
    if _kind(F) == "fq2":
        return lambda F, a: (a[0], _fq_sub(FQ_ZERO, a[1]))
    return None


@overload(f_mul_base)
def _ol_mul_base(F, a, b):
    """Multiply by an element of the base prime field (Fq2 x Fq)."""
    return _by_kind(
        lambda F, a, b: _fr_mul(a, b),
        lambda F, a, b: _fq_mul(a, b),
        lambda F, a, b: (_fq_mul(a[0], b), _fq_mul(a[1], b)),
    )(F)


# --- square roots (point decompression) -----------------------------------------


@register_jitable
def fq_sqrt(a):
    """(ok, root) with root^2 == a when a is a square (p = 3 mod 4)."""
    x = _pow_fq(a, FQ_SQRT_EXP)
    return _fq_mul(x, x) == a, x


@register_jitable
def fq2_sqrt(a):
    """(ok, root) for Fq2 with p = 3 mod 4 (Adj and Rodriguez-Henriquez, Algorithm 9)."""
    if a[0] == FQ_ZERO and a[1] == FQ_ZERO:
        return True, a
    a1 = _pow_fq2(a, FQ_SQRT2_EXP1)
    alpha = _fq2_mul(_fq2_sqr(a1), a)
    a0 = _fq2_mul((alpha[0], _fq_sub(FQ_ZERO, alpha[1])), alpha)  # alpha^p * alpha
    if a0[0] == FQ_MINUS_ONE and a0[1] == FQ_ZERO:
        return False, a
    x0 = _fq2_mul(a1, a)
    if alpha[0] == FQ_MINUS_ONE and alpha[1] == FQ_ZERO:
        x = (_fq_sub(FQ_ZERO, x0[1]), x0[0])  # i * x0
    else:
        b = _pow_fq2((_fq_add(alpha[0], FQ_ONE), alpha[1]), FQ_SQRT2_EXP2)
        x = _fq2_mul(b, x0)
    sq = _fq2_sqr(x)
    return sq[0] == a[0] and sq[1] == a[1], x


@register_jitable
def fq_is_lex_largest(a):
    """Canonical a > (p-1)/2: the zcash "largest y" flag for Fq."""
    return _lt6(FQ_HALF, _fq_mul(a, FQ_CANON_ONE))


@register_jitable
def fq2_is_lex_largest(a):
    """zcash rule for Fq2: c1 decides; when c1 = 0, c0 decides."""
    if a[1] == FQ_ZERO:
        return fq_is_lex_largest(a[0])
    return fq_is_lex_largest(a[1])
