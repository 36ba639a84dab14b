"""G1 and G2 group law, coordinates and membership against py_ecc."""

from __future__ import annotations

import numpy as np
import py_ecc.optimized_bls12_381 as O
import pytest
from pyecc_oracle import (
    H1,
    H2,
    R,
    curve_rhs,
    in_subgroup_slow,
    ints_to_pyecc,
    jac_to_ints,
    pyecc_to_ints,
    random_curve_points,
    to_pyecc,
)

from cuzk.algebra import FR, G1, G2, Curve
from cuzk.errors import NotOnCurveError

CURVES = [pytest.param(G1, id="G1"), pytest.param(G2, id="G2")]


def rand_jacobian(curve: Curve, aff: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The same points in Jacobian form with random Z (X Z^2, Y Z^3, Z), infinity kept (Z = 0)."""
    F = curve.field
    n = aff.shape[0]
    z = F.random(n, rng)
    z2 = F.square(z)
    jac = np.empty((n, *curve.jac_shape), dtype=np.uint64)
    jac[:, 0] = F.mul(aff[:, 0], z2)
    jac[:, 1] = F.mul(aff[:, 1], F.mul(z2, z))
    jac[:, 2] = z
    inf = curve.is_identity(aff)
    jac[inf] = curve.to_jacobian(curve.identity(int(inf.sum())))
    return jac


def edge_pairs(curve: Curve, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Rows: random pairs, P + P, P + (-P), O + P, P + O, O + O."""
    p = curve.random(6, rng)
    q = curve.random(6, rng)
    o = curve.identity(1)
    left = np.concatenate([p, p[:1], p[1:2], o, p[2:3], o])
    right = np.concatenate([q, p[:1], curve.neg(p[1:2]), p[3:4], o, o])
    return left, right


def expected_sum(curve: Curve, left: np.ndarray, right: np.ndarray) -> list:
    a, b = to_pyecc(curve, left), to_pyecc(curve, right)
    return pyecc_to_ints(curve, [O.add(x, y) for x, y in zip(a, b, strict=True)])


@pytest.mark.parametrize("curve", CURVES)
def test_generator_and_ints(curve: Curve, rng: np.random.Generator) -> None:
    ref = O.G1 if curve is G1 else O.G2
    assert curve.to_ints(curve.generator()) == pyecc_to_ints(curve, [ref])
    pts = curve.random(5, rng)
    ints = curve.to_ints(pts)
    assert np.array_equal(curve.from_ints(ints), pts)
    assert curve.to_ints(curve.identity(2)) == [None, None]
    assert all(O.is_on_curve(p, O.b if curve is G1 else O.b2) for p in ints_to_pyecc(curve, ints))


@pytest.mark.parametrize("curve", CURVES)
def test_add_jacobian(curve: Curve, rng: np.random.Generator) -> None:
    left, right = edge_pairs(curve, rng)
    got = curve.add(rand_jacobian(curve, left, rng), rand_jacobian(curve, right, rng))
    assert jac_to_ints(curve, got) == expected_sum(curve, left, right)


@pytest.mark.parametrize("curve", CURVES)
def test_add_mixed(curve: Curve, rng: np.random.Generator) -> None:
    left, right = edge_pairs(curve, rng)
    got = curve.add_mixed(rand_jacobian(curve, left, rng), right)
    assert jac_to_ints(curve, got) == expected_sum(curve, left, right)


@pytest.mark.parametrize("curve", CURVES)
def test_batch_affine_addition(curve: Curve, rng: np.random.Generator) -> None:
    left, right = edge_pairs(curve, rng)
    assert curve.to_ints(curve.add_affine(left, right)) == expected_sum(curve, left, right)
    # Across several Montgomery-trick chunks, with exceptional rows scattered through them.
    n = 9000
    base = curve.random(64, rng)
    p = base[rng.integers(0, 64, n)]
    q = base[rng.integers(0, 64, n)]  # many P == Q rows by chance (1/64)
    q[100] = curve.neg(p[100:101])[0]
    q[5000] = curve.neg(p[5000:5001])[0]
    p[4096] = 0
    q[8999] = 0
    got = curve.add_affine(p, q)
    want = curve.to_affine(curve.add_mixed(curve.to_jacobian(p), q))
    assert np.array_equal(got, want)
    assert curve.is_identity(got[[100, 5000]]).all()


@pytest.mark.parametrize("curve", CURVES)
def test_double_neg(curve: Curve, rng: np.random.Generator) -> None:
    p = np.concatenate([curve.random(6, rng), curve.identity(1)])
    ref = to_pyecc(curve, p)
    assert jac_to_ints(curve, curve.double(rand_jacobian(curve, p, rng))) == pyecc_to_ints(
        curve, [O.double(x) for x in ref]
    )
    assert curve.to_ints(curve.neg(p)) == pyecc_to_ints(curve, [O.neg(x) for x in ref])
    assert curve.is_identity(curve.neg(curve.identity(3))).all()


@pytest.mark.parametrize("curve", CURVES)
def test_scalar_mul(curve: Curve, rng: np.random.Generator) -> None:
    ks = [0, 1, 2, 3, R - 1, R - 2, (1 << 64) + 1, *[int(v) for v in FR.to_ints(FR.random(5, rng))]]
    p = np.concatenate([curve.random(len(ks), rng), curve.identity(1)])
    ks.append(int(FR.to_ints(FR.random(1, rng))[0]))  # times infinity
    got = curve.scalar_mul(p, FR.from_ints(ks))
    ref = [O.multiply(x, k) for x, k in zip(to_pyecc(curve, p), ks, strict=True)]
    assert jac_to_ints(curve, got) == pyecc_to_ints(curve, ref)
    # [r - 1] P = -P
    assert np.array_equal(curve.to_affine(got[4:5]), curve.neg(p[4:5]))
    with pytest.raises(ValueError, match="length mismatch"):
        curve.scalar_mul(p, FR.from_ints([1]))


@pytest.mark.parametrize("curve", CURVES)
def test_affine_jacobian_round_trip(curve: Curve, rng: np.random.Generator) -> None:
    aff = np.concatenate([curve.random(8, rng), curve.identity(2)])
    aff = aff[rng.permutation(aff.shape[0])]
    jac = rand_jacobian(curve, aff, rng)
    assert np.array_equal(curve.to_affine(jac), aff)
    assert np.array_equal(curve.to_affine(curve.to_jacobian(aff)), aff)
    assert jac_to_ints(curve, jac) == curve.to_ints(aff)
    assert curve.eq(jac, curve.to_jacobian(aff)).all()
    assert not curve.eq(jac[:1], curve.to_jacobian(curve.neg(aff[:1]))).any() or curve.is_identity(aff[:1])[0]
    big = curve.random(300, rng)
    big[::7] = 0
    assert np.array_equal(curve.to_affine(rand_jacobian(curve, big, rng)), big)


@pytest.mark.parametrize("curve", CURVES)
def test_sums(curve: Curve, rng: np.random.Generator) -> None:
    p = curve.random(40, rng)
    p[3] = 0
    p[10] = p[11]  # a repeated point: doubling inside the sum
    mask = rng.random(40) < 0.6
    mask[[3, 10, 11]] = True
    ref = O.Z1 if curve is G1 else O.Z2
    for pt, m in zip(to_pyecc(curve, p), mask, strict=True):
        if m:
            ref = O.add(ref, pt)
    assert jac_to_ints(curve, curve.sum(p, mask)[None]) == pyecc_to_ints(curve, [ref])
    assert jac_to_ints(curve, curve.sum(p[:0])[None]) == [None]
    jac = rand_jacobian(curve, p[:9], rng)
    ref = O.Z1 if curve is G1 else O.Z2
    for pt in to_pyecc(curve, p[:9]):
        ref = O.add(ref, pt)
    assert jac_to_ints(curve, curve.sum_jacobian(jac)[None]) == pyecc_to_ints(curve, [ref])


@pytest.mark.parametrize("curve", CURVES)
def test_on_curve(curve: Curve, rng: np.random.Generator) -> None:
    good = curve.random(4, rng)
    bad = good.copy()
    bad[:, 1] = curve.field.add(bad[:, 1], curve.field.ones(4))  # y + 1
    assert curve.is_on_curve(good).all()
    assert not curve.is_on_curve(bad).any()
    assert curve.is_on_curve(curve.identity(1)).all()  # the encoded infinity counts as on it
    off = curve.to_ints(bad[:1])
    with pytest.raises(NotOnCurveError):
        curve.from_ints(off)
    assert curve.from_ints(off, check=False).shape == (1, *curve.affine_shape)


# --- subgroup membership: against the definition [r] P == O --------------------------------------


@pytest.mark.parametrize("curve", CURVES)
def test_subgroup_rejects_points_outside(curve: Curve, rng: np.random.Generator) -> None:
    pts = random_curve_points(curve, 5, rng)
    arr = curve.from_ints(pts)  # on the curve (checked)
    assert curve.is_on_curve(arr).all()
    expected = [in_subgroup_slow(curve, p) for p in pts]
    assert expected == [False] * 5  # a random curve point is in G with probability 1/h
    assert curve.in_subgroup(arr).tolist() == expected


@pytest.mark.parametrize("curve", CURVES)
def test_subgroup_rejects_cofactor_torsion(curve: Curve, rng: np.random.Generator) -> None:
    """[r] Q for random curve points Q: order dividing the cofactor, never in the subgroup."""
    qs = ints_to_pyecc(curve, random_curve_points(curve, 3, rng))
    torsion = pyecc_to_ints(curve, [O.multiply(q, R) for q in qs])
    assert None not in torsion
    h = H1 if curve is G1 else H2
    for t in ints_to_pyecc(curve, torsion):
        assert O.is_inf(O.multiply(t, h))  # it is torsion: [h] T = O
    arr = curve.from_ints(torsion)
    assert not curve.in_subgroup(arr).any()
    assert not any(in_subgroup_slow(curve, t) for t in torsion)


@pytest.mark.parametrize("curve", CURVES)
def test_subgroup_accepts_members(curve: Curve, rng: np.random.Generator) -> None:
    """Multiples of the generator and cofactor-cleared random points ([h] Q) are in the subgroup."""
    h = H1 if curve is G1 else H2
    cleared = pyecc_to_ints(
        curve, [O.multiply(q, h) for q in ints_to_pyecc(curve, random_curve_points(curve, 3, rng))]
    )
    assert all(in_subgroup_slow(curve, p) for p in cleared)
    arr = np.concatenate([curve.from_ints(cleared), curve.random(5, rng), curve.identity(1)])
    assert curve.in_subgroup(arr).all()


def test_curve_rhs_oracle_matches_equation(rng: np.random.Generator) -> None:
    """The oracle's own sqrt gives points py_ecc agrees are on the curve (guards the guard)."""
    for curve, b in ((G1, O.b), (G2, O.b2)):
        for p in ints_to_pyecc(curve, random_curve_points(curve, 3, rng)):
            assert O.is_on_curve(p, b)
    assert curve_rhs(G1, 0) == 4


@pytest.mark.parametrize("curve", CURVES)
def test_empty_batches(curve: Curve) -> None:
    """n = 0 is a valid batch everywhere (this once failed in the row reshape)."""
    e = curve.identity(0)
    ej = curve.to_jacobian(e)
    assert ej.shape == (0, *curve.jac_shape)
    assert curve.to_affine(ej).shape == (0, *curve.affine_shape)
    assert curve.add(ej, ej).shape == ej.shape and curve.add_mixed(ej, e).shape == ej.shape
    assert curve.add_affine(e, e).shape == e.shape and curve.neg(e).shape == e.shape
    assert curve.scalar_mul(e, FR.zeros(0)).shape == ej.shape
    assert curve.is_on_curve(e).shape == (0,) and curve.in_subgroup(e).shape == (0,)
    assert curve.to_ints(e) == [] and jac_to_ints(curve, curve.sum(e)[None]) == [None]
