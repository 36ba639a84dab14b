"""G1 and G2 as batch operations on limb arrays.

Shapes (n points): affine (n, 2) + field element shape, Jacobian (n, 3) + field
element shape; so G1 affine is (n, 2, 6) and G2 affine (n, 2, 2, 6). The affine
point at infinity is all zeros; a Jacobian point is infinity when Z = 0.
Coordinates are in Montgomery form (see cuzk.algebra.fields).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from cuzk.algebra import _curve_kernels as K
from cuzk.algebra import constants as C
from cuzk.algebra._parallel import SERIAL_WORK, run_all, run_ranges
from cuzk.algebra._parallel import chunks as chunk_ranges
from cuzk.algebra.fields import FQ, FQ2, FR, LIMB, SMALL_ROWS, Field, ints_to_limbs, limbs_to_ints

_CHUNK = 4096  # rows per Montgomery-trick run: one inversion amortized over many


def _chunks(n: int) -> int:
    return max(1, min(256, (n + _CHUNK - 1) // _CHUNK))


def _fq2_mul(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    q = C.Q
    return ((a[0] * b[0] - a[1] * b[1]) % q, (a[0] * b[1] + a[1] * b[0]) % q)


class Curve:
    """One of the two groups; `field` is its coordinate field (FQ for G1, FQ2 for G2)."""

    def __init__(self, name: str, field: Field, generator: tuple) -> None:
        self.name = name
        self.field = field
        self.tag = field.tag
        self.affine_shape = (2, *field.elem_shape)
        self.jac_shape = (3, *field.elem_shape)
        self._aff_w = 2 * field.width  # explicit row widths: reshape(n, -1) fails for n = 0
        self._jac_w = 3 * field.width
        self._gen = generator

    def __repr__(self) -> str:
        return f"Curve({self.name})"

    # --- shapes ----------------------------------------------------------------
    def _aff(self, a: np.ndarray) -> np.ndarray:
        if a.dtype != LIMB or a.shape[1:] != self.affine_shape:
            raise ValueError(f"{self.name} affine arrays have shape (n, {self.affine_shape}); got {a.shape}")
        return np.ascontiguousarray(a).reshape(a.shape[0], self._aff_w)

    def _jac(self, a: np.ndarray) -> np.ndarray:
        if a.dtype != LIMB or a.shape[1:] != self.jac_shape:
            raise ValueError(f"{self.name} Jacobian arrays have shape (n, {self.jac_shape}); got {a.shape}")
        return np.ascontiguousarray(a).reshape(a.shape[0], self._jac_w)

    def _new_aff(self, n: int) -> np.ndarray:
        return np.empty((n, *self.affine_shape), dtype=LIMB)

    def _new_jac(self, n: int) -> np.ndarray:
        return np.empty((n, *self.jac_shape), dtype=LIMB)

    # --- constructors ------------------------------------------------------------
    def generator(self) -> np.ndarray:
        """The standard generator, affine, shape (1,) + affine_shape."""
        return self.from_ints([self._gen])

    def identity(self, n: int = 1) -> np.ndarray:
        """n affine points at infinity."""
        return np.zeros((n, *self.affine_shape), dtype=LIMB)

    def from_ints(self, points: Sequence, *, check: bool = True) -> np.ndarray:
        """Affine points from canonical coordinates (None is infinity); checks the curve equation."""
        zero = (0, 0) if self.field.degree > 1 else 0
        coords: list[int | tuple[int, int]] = []
        for p in points:
            coords.extend((zero, zero) if p is None else p)
        out = self.field.from_ints(coords).reshape(-1, *self.affine_shape)
        if check and not self.is_on_curve(out).all():
            from cuzk.errors import NotOnCurveError

            raise NotOnCurveError(f"a {self.name} point is not on the curve")
        return out

    def to_ints(self, a: np.ndarray) -> list:
        """Affine points -> [(x, y)] canonical ints, None for infinity."""
        ints = self.field.to_ints(a.reshape(-1, *self.field.elem_shape))
        zero = (0, 0) if self.field.degree > 1 else 0
        pts = [(ints[i], ints[i + 1]) for i in range(0, len(ints), 2)]
        return [None if (x == zero and y == zero) else (x, y) for x, y in pts]

    def random(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n random points of the prime-order group (random multiples of the generator)."""
        return self.to_affine(self.scalar_mul(np.repeat(self.generator(), n, axis=0), FR.random(n, rng)))

    # --- membership -----------------------------------------------------------------
    def is_on_curve(self, a: np.ndarray) -> np.ndarray:
        """Per point: on the curve (the encoded infinity counts as on it)."""
        rows = self._aff(a)
        if 2 * rows.shape[0] <= SMALL_ROWS:  # Python ints: no kernel to compile for a proof's points
            return np.array([pt is None or self._on_curve_ints(pt) for pt in self.to_ints(a)], dtype=np.bool_)
        out = np.empty(rows.shape[0], dtype=np.bool_)
        run_ranges(
            K.k_on_curve, (self.tag, rows, out), rows.shape[0], rows.shape[0] * 4 * self.field.mul_cost
        )
        return out

    def _on_curve_ints(self, pt: tuple) -> bool:
        x, y = pt
        q = self.field.modulus
        if self.field.degree == 1:
            return bool(y * y % q == (x * x * x + C.G1_B) % q)
        x3 = _fq2_mul(_fq2_mul(x, x), x)
        return _fq2_mul(y, y) == ((x3[0] + C.G2_B[0]) % q, (x3[1] + C.G2_B[1]) % q)

    def in_subgroup(self, a: np.ndarray) -> np.ndarray:
        """Per point (assumed on the curve): in the order-r subgroup (Scott's endomorphism tests)."""
        rows = self._aff(a)
        out = np.empty(rows.shape[0], dtype=np.bool_)
        run_ranges(
            K.k_in_subgroup, (self.tag, rows, out), rows.shape[0], rows.shape[0] * 1500 * self.field.mul_cost
        )
        return out

    def is_identity(self, a: np.ndarray) -> np.ndarray:
        """Per affine point: the point at infinity."""
        return np.logical_not(self._aff(a).any(axis=1))

    # --- coordinates -------------------------------------------------------------------
    def to_jacobian(self, a: np.ndarray) -> np.ndarray:
        rows = self._aff(a)
        out = self._new_jac(rows.shape[0])
        if 2 * rows.shape[0] <= SMALL_ROWS:  # (x, y, 1), infinity (1, 1, 0): as k_affine_to_jac
            w, one = self.field.width, self.field.one().reshape(-1)
            flat = out.reshape(rows.shape[0], self._jac_w)
            flat[:, : 2 * w] = rows
            flat[:, 2 * w :] = one
            inf = ~rows.any(axis=1)
            flat[inf, : 2 * w] = np.concatenate([one, one])
            flat[inf, 2 * w :] = 0
            return out
        run_ranges(
            K.k_affine_to_jac,
            (self.tag, rows, out.reshape(rows.shape[0], self._jac_w)),
            rows.shape[0],
            rows.shape[0] * 1 * self.field.mul_cost,
        )
        return out

    def to_affine(self, a: np.ndarray) -> np.ndarray:
        """Batched: one field inversion per chunk of points."""
        rows = self._jac(a)
        out = self._new_aff(rows.shape[0])
        run_ranges(
            K.k_jac_to_affine,
            (self.tag, rows, out.reshape(rows.shape[0], self._aff_w)),
            rows.shape[0],
            rows.shape[0] * 6 * self.field.mul_cost,
            parts=_chunks(rows.shape[0]),
        )
        return out

    # --- group law ------------------------------------------------------------------------
    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Jacobian + Jacobian."""
        ra, rb = self._jac(a), self._jac(b)
        out = self._new_jac(ra.shape[0])
        run_ranges(
            K.k_jac_add,
            (self.tag, ra, rb, out.reshape(ra.shape)),
            ra.shape[0],
            ra.shape[0] * 16 * self.field.mul_cost,
        )
        return out

    def add_mixed(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Jacobian + affine."""
        ra, rb = self._jac(a), self._aff(b)
        out = self._new_jac(ra.shape[0])
        run_ranges(
            K.k_jac_madd,
            (self.tag, ra, rb, out.reshape(ra.shape)),
            ra.shape[0],
            ra.shape[0] * 11 * self.field.mul_cost,
        )
        return out

    def add_affine(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Affine + affine -> affine, the batch affine addition: one inversion per chunk."""
        ra, rb = self._aff(a), self._aff(b)
        if ra.shape != rb.shape:
            raise ValueError(f"length mismatch: {a.shape[0]} vs {b.shape[0]}")
        out = self._new_aff(ra.shape[0])
        run_ranges(
            K.k_affine_add,
            (self.tag, ra, rb, out.reshape(ra.shape)),
            ra.shape[0],
            ra.shape[0] * 8 * self.field.mul_cost,
            parts=_chunks(ra.shape[0]),
        )
        return out

    def double(self, a: np.ndarray) -> np.ndarray:
        ra = self._jac(a)
        out = self._new_jac(ra.shape[0])
        run_ranges(
            K.k_jac_dbl,
            (self.tag, ra, out.reshape(ra.shape)),
            ra.shape[0],
            ra.shape[0] * 7 * self.field.mul_cost,
        )
        return out

    def neg(self, a: np.ndarray) -> np.ndarray:
        """Affine negation."""
        ra = self._aff(a)
        if 2 * ra.shape[0] <= SMALL_ROWS:  # -y in Montgomery form is p - y (0 stays 0); infinity stays
            q, half = self.field.modulus, self._aff_w // 2
            out = ra.copy()
            ys = limbs_to_ints(ra[:, half:].reshape(-1, self.field.base_limbs))
            out[:, half:] = ints_to_limbs([(q - v) % q for v in ys], self.field.base_limbs).reshape(
                ra.shape[0], half
            )
            return out.reshape(ra.shape[0], *self.affine_shape)
        out = self._new_aff(ra.shape[0])
        run_ranges(
            K.k_affine_neg,
            (self.tag, ra, out.reshape(ra.shape)),
            ra.shape[0],
            ra.shape[0] * 1 * self.field.mul_cost,
        )
        return out

    def scalar_mul(self, a: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        """[s_i] P_i for affine P_i and Fr scalars (Montgomery); Jacobian results."""
        ra = self._aff(a)
        if 2 * ra.shape[0] <= SMALL_ROWS and ra.shape[0] == scalars.shape[0]:
            return self._small_scalar_mul(a, scalars)
        canon = FR.to_canonical(scalars)
        if canon.shape[0] != ra.shape[0]:
            raise ValueError(f"length mismatch: {ra.shape[0]} points, {canon.shape[0]} scalars")
        out = self._new_jac(ra.shape[0])
        run_ranges(
            K.k_scalar_mul,
            (self.tag, ra, canon, out.reshape(ra.shape[0], self._jac_w)),
            ra.shape[0],
            ra.shape[0] * 3500 * self.field.mul_cost,
        )
        return out

    def _small_scalar_mul(self, a: np.ndarray, scalars: np.ndarray) -> np.ndarray:
        """A few points' products by py_arkworks: setting up a key multiplies single points,
        and compiling the scalar-multiplication kernels for them cost a first run ~6 s."""
        import py_arkworks_bls12381 as ark

        cls: Any = ark.G2Point if self.field.degree == 2 else ark.G1Point
        size = self.field.nbytes
        results: list[tuple | None] = []
        for pt, s in zip(self.to_ints(a), FR.to_ints(scalars), strict=True):
            if pt is None or s == 0:
                results.append(None)
                continue
            coords = [pt[0], pt[1]] if self.field.degree == 1 else [*pt[0], *pt[1]]
            p = cls.from_xy_bytes_unchecked_be(b"".join(v.to_bytes(size, "big") for v in coords))
            raw = (p * ark.Scalar.from_be_bytes(s.to_bytes(32, "big"))).to_xy_bytes_be()
            vals = [int.from_bytes(raw[i : i + size], "big") for i in range(0, len(raw), size)]
            if not any(vals):
                results.append(None)
            elif self.field.degree == 1:
                results.append((vals[0], vals[1]))
            else:
                results.append(((vals[0], vals[1]), (vals[2], vals[3])))
        return self.to_jacobian(self.from_ints(results, check=False))

    def sum(self, a: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Sum of the affine points (those with mask set), as one Jacobian point (shape jac_shape)."""
        ra = self._aff(a)
        m = np.ones(ra.shape[0], dtype=np.bool_) if mask is None else np.asarray(mask, dtype=np.bool_)
        if m.shape != (ra.shape[0],):
            raise ValueError("mask must have one entry per point")
        partial = self.masked_partial_sums(ra, m, max(1, min(64, ra.shape[0] // 2048)))
        return self.sum_jacobian(partial)

    def masked_partial_sums(self, rows: np.ndarray, mask: np.ndarray, chunks: int) -> np.ndarray:
        """Jacobian sums of the masked affine `rows` over at most `chunks` contiguous chunks
        (one per row of the result), the chunks spread over the kernel threads."""
        ranges = chunk_ranges(rows.shape[0], chunks) or [(0, 0)]
        partial = self._new_jac(len(ranges))
        flat = partial.reshape(len(ranges), -1)
        run_all(
            [
                functools.partial(K.k_masked_sum, self.tag, rows, mask, flat, c, lo, hi)
                for c, (lo, hi) in enumerate(ranges)
            ],
            parallel=int(mask.sum()) * 10 * self.field.mul_cost >= SERIAL_WORK,
        )
        return partial

    def sum_jacobian(self, a: np.ndarray) -> np.ndarray:
        """Sum of a few Jacobian points (pairwise tree), shape jac_shape."""
        pts = np.ascontiguousarray(a)
        if pts.shape[0] == 0:
            return self.to_jacobian(self.identity(1))[0]
        while pts.shape[0] > 1:
            if pts.shape[0] % 2:
                pts = np.concatenate([pts, self.to_jacobian(self.identity(1))])
            pts = self.add(pts[0::2], pts[1::2])
        return pts[0]

    def eq(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Per point: equal as group elements (Jacobian inputs)."""
        return np.all(
            self.to_affine(a) == self.to_affine(b), axis=tuple(range(1, 1 + len(self.affine_shape)))
        )


G1 = Curve("G1", FQ, C.G1_GEN)
G2 = Curve("G2", FQ2, C.G2_GEN)
