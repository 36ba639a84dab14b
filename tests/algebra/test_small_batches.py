"""Small batches (a key's or a proof's few elements) run on Python ints and py_arkworks instead of
numba kernels (issue 29's first run); both paths must give the same arrays."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk.algebra import FQ, FQ2, FR, G1, G2, Curve
from cuzk.algebra import curves as curves_mod
from cuzk.algebra import fields as fields_mod
from cuzk.errors import NonCanonicalError

CURVES = [pytest.param(G1, id="G1"), pytest.param(G2, id="G2")]


def both(monkeypatch: pytest.MonkeyPatch, fn):
    """(small path, kernel path) results of fn()."""
    small = fn()
    with monkeypatch.context() as m:
        m.setattr(fields_mod, "SMALL_ROWS", 0)
        m.setattr(curves_mod, "SMALL_ROWS", 0)
        kernels = fn()
    return small, kernels


@pytest.mark.parametrize("curve", CURVES)
def test_point_operations_match_the_kernels(
    curve: Curve, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    pts = np.concatenate([curve.random(4, rng), curve.identity(1), curve.generator()])
    scalars = FR.random(6, rng)
    scalars[1] = 0
    for fn in (
        lambda: curve.is_on_curve(pts),
        lambda: curve.neg(pts),
        lambda: curve.to_jacobian(pts),
        lambda: curve.to_affine(curve.scalar_mul(pts, scalars)),
    ):
        small, kernels = both(monkeypatch, fn)
        assert np.array_equal(small, kernels)
    off = pts.copy()
    off[0].reshape(-1)[-1] ^= np.uint64(1)  # y changed: off the curve
    small, kernels = both(monkeypatch, lambda: curve.is_on_curve(off))
    assert np.array_equal(small, kernels) and not small[0] and small[1:].all()


@pytest.mark.parametrize("field", [FR, FQ, FQ2], ids=lambda f: f.name)
def test_field_conversions_match_the_kernels(
    field, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = field.random(5, rng)
    canon, canon_k = both(monkeypatch, lambda: field.to_canonical(a))
    assert np.array_equal(canon, canon_k)
    back, back_k = both(monkeypatch, lambda: field.from_canonical(canon))
    assert np.array_equal(back, back_k) and np.array_equal(back, a)
    if field.degree == 1:
        p, p_k = both(monkeypatch, lambda: field.pow(a, 12345))
        assert np.array_equal(p, p_k)
    bad = canon.copy().reshape(-1, field.base_limbs)
    bad[3] = np.frombuffer(field.modulus.to_bytes(8 * field.base_limbs, "little"), dtype="<u8")
    for small in (True, False):
        with monkeypatch.context() as m:
            if not small:
                m.setattr(fields_mod, "SMALL_ROWS", 0)
            with pytest.raises(NonCanonicalError, match=f"element {3 // field.degree} is not below"):
                field.from_canonical(bad.reshape(canon.shape))
