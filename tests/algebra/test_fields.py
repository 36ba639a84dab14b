"""Fr, Fq and Fq2 batch arithmetic against Python ints and py_ecc's FQ2."""

from __future__ import annotations

import numpy as np
import py_ecc.optimized_bls12_381 as O
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuzk.algebra import FQ, FQ2, FR, Field
from cuzk.algebra import constants as C
from cuzk.algebra.fields import ints_to_limbs
from cuzk.errors import NonCanonicalError

PRIME_FIELDS = [pytest.param(FR, id="Fr"), pytest.param(FQ, id="Fq")]


def edge_values(p: int) -> list[int]:
    """Values where carries and reductions go wrong first."""
    vals = [0, 1, 2, 3, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2, (1 << 64) - 1, 1 << 64, (1 << 128) + 7]
    vals += [(1 << (64 * k)) % p for k in (1, 2, 3, 4, 5, 6)]  # Montgomery-radix powers
    return sorted({v % p for v in vals})


def rand_ints(p: int, n: int, rng: np.random.Generator) -> list[int]:
    nbytes = (p.bit_length() + 7) // 8 + 8
    return [int.from_bytes(rng.bytes(nbytes), "little") % p for _ in range(n)]


def sample(p: int, rng: np.random.Generator, n: int = 200) -> tuple[list[int], list[int]]:
    """Pairs (a, b): every combination of edge values plus n random pairs."""
    e = edge_values(p)
    a = [x for x in e for _ in e] + rand_ints(p, n, rng)
    b = [y for _ in e for y in e] + rand_ints(p, n, rng)
    return a, b


# --- prime fields -------------------------------------------------------------------------


@pytest.mark.parametrize("F", PRIME_FIELDS)
def test_ints_round_trip_and_montgomery_form(F: Field, rng: np.random.Generator) -> None:
    p = F.modulus
    vals = edge_values(p) + rand_ints(p, 300, rng)
    arr = F.from_ints(vals)
    assert arr.shape == (len(vals), *F.elem_shape) and arr.dtype == np.uint64
    assert F.to_ints(arr) == vals
    # The limbs inside really are x * 2^(64 limbs) mod p (the layout GPU kernels share).
    mont = [v * (1 << (64 * F.base_limbs)) % p for v in vals]
    assert np.array_equal(arr, ints_to_limbs(mont, F.base_limbs))
    assert np.array_equal(F.to_canonical(arr), ints_to_limbs(vals, F.base_limbs))
    assert np.array_equal(F.from_canonical(ints_to_limbs(vals, F.base_limbs)), arr)


@pytest.mark.parametrize("F", PRIME_FIELDS)
def test_add_sub_mul_square_neg(F: Field, rng: np.random.Generator) -> None:
    p = F.modulus
    a, b = sample(p, rng)
    x, y = F.from_ints(a), F.from_ints(b)
    assert F.to_ints(F.add(x, y)) == [(u + v) % p for u, v in zip(a, b, strict=True)]
    assert F.to_ints(F.sub(x, y)) == [(u - v) % p for u, v in zip(a, b, strict=True)]
    assert F.to_ints(F.mul(x, y)) == [u * v % p for u, v in zip(a, b, strict=True)]
    assert F.to_ints(F.square(x)) == [u * u % p for u in a]
    assert F.to_ints(F.neg(x)) == [-u % p for u in a]
    s = b[-1]
    assert F.to_ints(F.scale(x, F.from_ints([s])[0])) == [u * s % p for u in a]


@pytest.mark.parametrize("F", PRIME_FIELDS)
def test_batch_inverse_with_zeros(F: Field, rng: np.random.Generator) -> None:
    p = F.modulus
    vals = rand_ints(p, 64, rng) + edge_values(p)
    vals[5] = vals[17] = 0
    assert F.to_ints(F.inv(F.from_ints(vals))) == [pow(v, -1, p) if v else 0 for v in vals]
    # Large enough for several independent Montgomery-trick chunks; zeros in several chunks.
    big = F.random(9000, rng)
    big[[0, 1, 4095, 4096, 8999]] = 0
    inv = F.inv(big)
    nz = ~F.is_zero(big)
    assert F.is_zero(inv[~nz]).all()
    assert F.eq(F.mul(big[nz], inv[nz]), F.ones(int(nz.sum()))).all()
    picks = rng.choice(np.flatnonzero(nz), 20, replace=False)
    assert F.to_ints(inv[picks]) == [pow(v, -1, p) for v in F.to_ints(big[picks])]


@pytest.mark.parametrize("F", PRIME_FIELDS)
def test_pow(F: Field, rng: np.random.Generator) -> None:
    p = F.modulus
    vals = edge_values(p) + rand_ints(p, 20, rng)
    x = F.from_ints(vals)
    for e in [0, 1, 2, 3, 65, p - 1, p - 2, (p + 1) // 4, (1 << 300) + 12345, *rand_ints(1 << 256, 3, rng)]:
        assert F.to_ints(F.pow(x, e)) == [pow(v, e, p) for v in vals], e
    nonzero = [v for v in vals if v]
    assert F.to_ints(F.pow(F.from_ints(nonzero), -3)) == [pow(v, -3, p) for v in nonzero]


@pytest.mark.parametrize("F", PRIME_FIELDS)
def test_powers_eq_is_zero_random(F: Field, rng: np.random.Generator) -> None:
    p = F.modulus
    base, start = rand_ints(p, 2, rng)
    got = F.to_ints(F.powers(F.from_ints([base])[0], 50, F.from_ints([start])[0]))
    assert got == [start * pow(base, i, p) % p for i in range(50)]
    assert F.to_ints(F.powers(F.from_ints([base])[0], 5)) == [pow(base, i, p) for i in range(5)]
    vals = [0, 1, p - 1, 0]
    assert F.is_zero(F.from_ints(vals)).tolist() == [True, False, False, True]
    assert F.eq(F.from_ints(vals), F.from_ints([0, 1, 1, 1])).tolist() == [True, True, False, False]
    r = F.to_ints(F.random(2000, rng))
    assert all(0 <= v < p for v in r)
    assert len(set(r)) == 2000  # uniform over ~2^255: no repeats
    assert max(r) > p // 2 > min(r)  # the top limb is sampled across the whole range


@pytest.mark.parametrize("F", PRIME_FIELDS)
def test_non_canonical_rejected(F: Field) -> None:
    p = F.modulus
    for bad in (p, p + 1, (1 << (64 * F.base_limbs)) - 1):
        with pytest.raises(NonCanonicalError, match="element 2"):
            F.from_canonical(ints_to_limbs([0, p - 1, bad, 5], F.base_limbs))
        with pytest.raises(NonCanonicalError, match="value 1"):
            F.from_ints([3, bad])
    with pytest.raises(NonCanonicalError):
        F.from_ints([-1])
    assert F.to_ints(F.from_ints([p, p + 5, -1], reduce=True)) == [0, 5, p - 1]


@pytest.mark.parametrize("F", PRIME_FIELDS)
def test_shape_and_length_errors(F: Field) -> None:
    a = F.zeros(3)
    with pytest.raises(ValueError, match="length mismatch"):
        F.add(a, F.zeros(4))
    with pytest.raises(ValueError, match="shape"):
        F.mul(a.astype(np.int64), a)
    with pytest.raises(ValueError, match="shape"):
        F.mul(np.zeros((3, F.width + 1), np.uint64), np.zeros((3, F.width + 1), np.uint64))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, C.R - 1), min_size=1, max_size=20), st.integers(0, C.R - 1))
def test_fr_mul_add_property(vals: list[int], s: int) -> None:
    x = FR.from_ints(vals)
    y = FR.from_ints([s] * len(vals))
    got = FR.to_ints(FR.add(FR.mul(x, y), x))
    assert got == [(v * s + v) % C.R for v in vals]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, C.Q - 1), min_size=1, max_size=20))
def test_fq_square_inverse_property(vals: list[int]) -> None:
    x = FQ.from_ints(vals)
    assert FQ.to_ints(FQ.mul(FQ.square(x), FQ.inv(x))) == vals  # x^2 / x = x, and 0 -> 0


# --- Fq2 against py_ecc ---------------------------------------------------------------------


def fq2_ints(n: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    p = C.Q
    e = [0, 1, p - 1, (p - 1) // 2]
    edges = [(a, b) for a in e for b in e]
    rand = list(zip(rand_ints(p, n, rng), rand_ints(p, n, rng), strict=True))
    return edges + rand


def pe(v: tuple[int, int]) -> O.FQ2:
    return O.FQ2([v[0], v[1]])


def ints(v: O.FQ2) -> tuple[int, int]:
    return (int(v.coeffs[0]), int(v.coeffs[1]))


def test_fq2_against_py_ecc(rng: np.random.Generator) -> None:
    a = fq2_ints(60, rng)
    b = list(reversed(fq2_ints(60, rng)))
    x, y = FQ2.from_ints(a), FQ2.from_ints(b)
    assert FQ2.to_ints(x) == a
    assert FQ2.to_ints(FQ2.add(x, y)) == [ints(pe(u) + pe(v)) for u, v in zip(a, b, strict=True)]
    assert FQ2.to_ints(FQ2.sub(x, y)) == [ints(pe(u) - pe(v)) for u, v in zip(a, b, strict=True)]
    assert FQ2.to_ints(FQ2.mul(x, y)) == [ints(pe(u) * pe(v)) for u, v in zip(a, b, strict=True)]
    assert FQ2.to_ints(FQ2.square(x)) == [ints(pe(u) * pe(u)) for u in a]
    assert FQ2.to_ints(FQ2.neg(x)) == [ints(-pe(u)) for u in a]
    zero = (0, 0)
    assert FQ2.to_ints(FQ2.inv(x)) == [zero if u == zero else ints(O.FQ2.one() / pe(u)) for u in a]
    e = rand_ints(C.Q * C.Q, 1, rng)[0]
    sub = a[:20]
    assert FQ2.to_ints(FQ2.pow(FQ2.from_ints(sub), e)) == [ints(pe(u) ** e) for u in sub]
    assert FQ2.to_ints(FQ2.pow(FQ2.from_ints(sub), 0)) == [(1, 0)] * len(sub)


def test_fq2_non_canonical_and_layout() -> None:
    p = C.Q
    with pytest.raises(NonCanonicalError, match="value 1"):
        FQ2.from_ints([(1, 2), (3, p)])
    arr = FQ2.from_ints([(5, 7)])
    assert arr.shape == (1, 2, 6)
    # [c0, c1], each an Fq element in Montgomery form.
    assert FQ.to_ints(arr[0]) == [5, 7]


@pytest.mark.parametrize("F", [*PRIME_FIELDS, pytest.param(FQ2, id="Fq2")])
def test_empty_batches(F: Field) -> None:
    e = F.zeros(0)
    assert F.to_ints(e) == [] and F.from_ints([]).shape == e.shape
    assert F.mul(e, e).shape == e.shape and F.inv(e).shape == e.shape
