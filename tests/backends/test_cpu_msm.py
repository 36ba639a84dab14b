"""CPU MSM (Pippenger with the 0/1 fast path) against py_arkworks multiexp and sum of scalar_mul."""

from __future__ import annotations

import numpy as np
import py_arkworks_bls12381 as ark
import pytest

from cuzk.algebra import FR, G1, G2, Curve
from cuzk.algebra import constants as C
from cuzk.algebra import encoding as E
from cuzk.backends.cpu import CpuBackend

CURVES = [pytest.param(G1, id="g1"), pytest.param(G2, id="g2")]


@pytest.fixture(scope="module")
def cpu() -> CpuBackend:
    return CpuBackend()


def group(curve: Curve) -> str:
    return "g1" if curve is G1 else "g2"


def arkworks_msm(curve: Curve, bases: np.ndarray, scalars: np.ndarray):
    cls = ark.G1Point if curve is G1 else ark.G2Point
    to_ark = E.to_arkworks_g1 if curve is G1 else E.to_arkworks_g2
    return cls.multiexp_unchecked(to_ark(bases), E.to_arkworks_scalars(scalars))


def as_arkworks(curve: Curve, jac: np.ndarray):
    to_ark = E.to_arkworks_g1 if curve is G1 else E.to_arkworks_g2
    return to_ark(curve.to_affine(jac.reshape(1, *curve.jac_shape)))[0]


def naive(curve: Curve, bases: np.ndarray, scalars: np.ndarray) -> np.ndarray:
    """sum of [s_i] P_i by per-point double-and-add: independent of Pippenger's buckets."""
    return curve.sum_jacobian(curve.scalar_mul(bases, scalars))


def nasty_inputs(curve: Curve, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random bases and scalars with every edge case mixed in."""
    bases = curve.random(n, rng)
    scalars = FR.random(n, rng)
    bases[5:9] = bases[4]  # duplicate bases
    bases[10] = 0  # infinity bases, with nonzero scalars
    bases[11] = 0
    bases[12] = curve.neg(bases[13:14])[0]  # P and -P
    scalars[12] = scalars[13]
    special = FR.from_ints([0, 0, 1, 1, 1, C.R - 1, C.R - 1, 2, C.R - 2])
    scalars[20 : 20 + special.shape[0]] = special
    scalars[40:50] = FR.from_ints([1] * 10)  # a run of ones (the masked-sum fast path)
    scalars[60:64] = scalars[61]  # equal scalars on different bases
    return bases, scalars


@pytest.mark.parametrize("curve", CURVES)
def test_msm_against_arkworks_and_naive(curve: Curve, cpu: CpuBackend, rng: np.random.Generator) -> None:
    bases, scalars = nasty_inputs(curve, 300, rng)
    h = cpu.load_bases(bases, group(curve))
    got = cpu.msm(h, scalars)
    assert got.shape == curve.jac_shape
    assert as_arkworks(curve, got) == arkworks_msm(curve, bases, scalars)
    assert curve.eq(got[None], naive(curve, bases, scalars)[None]).all()


@pytest.mark.parametrize("curve", CURVES)
def test_msm_trivial_scalars(curve: Curve, cpu: CpuBackend, rng: np.random.Generator) -> None:
    bases = curve.random(50, rng)
    h = cpu.load_bases(bases, group(curve))
    zero = cpu.msm(h, FR.zeros(50))
    assert curve.is_identity(curve.to_affine(zero[None])).all()
    ones = cpu.msm(h, FR.ones(50))
    assert curve.eq(ones[None], curve.sum(bases)[None]).all()
    minus_one = cpu.msm(h, FR.from_ints([C.R - 1] * 50))
    assert curve.eq(minus_one[None], curve.to_jacobian(curve.neg(curve.to_affine(ones[None])))).all()
    empty = cpu.msm(h, FR.zeros(0))
    assert curve.is_identity(curve.to_affine(empty[None])).all()
    all_inf = cpu.load_bases(curve.identity(20), group(curve))
    assert curve.is_identity(curve.to_affine(cpu.msm(all_inf, FR.random(20, rng))[None])).all()


@pytest.mark.parametrize("curve", CURVES)
def test_window_override(curve: Curve, cpu: CpuBackend, rng: np.random.Generator) -> None:
    bases, scalars = nasty_inputs(curve, 120, rng)
    h = cpu.load_bases(bases, group(curve))
    want = arkworks_msm(curve, bases, scalars)
    for c in (1, 2, 3, 5, 8, 11, 13) if curve is G1 else (1, 4, 7, 12):
        assert as_arkworks(curve, cpu.msm(h, scalars, window=c)) == want, c


@pytest.mark.parametrize("curve", CURVES)
def test_batched_msm_and_start(curve: Curve, cpu: CpuBackend, rng: np.random.Generator) -> None:
    bases, _ = nasty_inputs(curve, 200, rng)
    h = cpu.load_bases(bases, group(curve))
    k, n, start = 3, 150, 30
    scalars = np.stack([FR.random(n, rng) for _ in range(k)])
    scalars[1, :40] = FR.ones(40)
    got = cpu.msm(h, scalars, start=start)
    assert got.shape == (k, *curve.jac_shape)
    for i in range(k):
        assert as_arkworks(curve, got[i]) == arkworks_msm(curve, bases[start : start + n], scalars[i])
    with pytest.raises(ValueError, match="out of range"):
        cpu.msm(h, FR.random(180, rng), start=30)


@pytest.mark.parametrize("curve", CURVES)
def test_sum_bases(curve: Curve, cpu: CpuBackend, rng: np.random.Generator) -> None:
    bases, _ = nasty_inputs(curve, 100, rng)
    h = cpu.load_bases(bases, group(curve))
    mask = rng.random(60) < 0.5
    got = cpu.sum_bases(h, mask, start=10)
    full = np.zeros(100, dtype=bool)
    full[10:70] = mask
    assert curve.eq(got[None], curve.sum(bases, full)[None]).all()
    assert as_arkworks(curve, got) == arkworks_msm(
        curve, bases[10:70], FR.from_ints(mask.astype(int).tolist())
    )


def test_load_bases_rejects_wrong_layout(cpu: CpuBackend, rng: np.random.Generator) -> None:
    with pytest.raises(ValueError):
        cpu.load_bases(G2.random(2, rng), "g1")
    with pytest.raises(ValueError, match="unknown group"):
        cpu.load_bases(G1.random(2, rng), "g3")


@pytest.mark.large
@pytest.mark.parametrize("curve", CURVES)
def test_msm_large_against_arkworks(curve: Curve, cpu: CpuBackend, rng: np.random.Generator) -> None:
    n = 1 << 16 if curve is G1 else 1 << 14
    bases = cpu.fixed_base_mul(curve.random(1, rng), FR.random(n, rng), group(curve))  # quick to make
    scalars = FR.random(n, rng)
    scalars[: n // 4] = FR.ones(n // 4)
    h = cpu.load_bases(bases, group(curve))
    assert as_arkworks(curve, cpu.msm(h, scalars)) == arkworks_msm(curve, bases, scalars)


def test_bad_window_is_a_clear_error(cpu: CpuBackend, rng: np.random.Generator) -> None:
    """Once window=0 silently meant the default and window=64 died inside numba."""
    h = cpu.load_bases(G1.random(40, rng), "g1")
    for w in (0, -1, 21, 64):
        with pytest.raises(ValueError, match="window must be between 1 and 20"):
            cpu.msm(h, FR.random(40, rng), window=w)
