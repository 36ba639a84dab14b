"""Batch arithmetic over Fr, Fq and Fq2 on numpy arrays of 64-bit limbs.

An array of n elements has shape (n,) + `elem_shape`: (n, 4) for Fr, (n, 6) for
Fq, (n, 2, 6) for Fq2 ([c0, c1]). Limbs are little-endian uint64 and values are
in Montgomery form (x * 2^256 mod r for Fr, x * 2^384 mod p for Fq); the
canonical form appears only at boundaries (`from_ints`, `to_ints`,
`from_canonical`, `to_canonical`, bytes). Every operation is one compiled
kernel call over the whole batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from cuzk.algebra import _field_kernels as K
from cuzk.algebra import constants as C
from cuzk.algebra._jit_fields import FQ2_TAG, FQ_TAG, FR_TAG, FieldTag
from cuzk.algebra._parallel import run_ranges
from cuzk.errors import NonCanonicalError

LIMB = np.uint64


def int_to_limbs(value: int, n: int) -> np.ndarray:
    return np.frombuffer(value.to_bytes(8 * n, "little"), dtype="<u8").astype(LIMB)


def fr_mont(value: int) -> np.ndarray:
    """One Fr element from an integer (taken mod r), Montgomery form, as a (4,) limb array.

    Pure integer arithmetic, no kernel: for the few constants (roots, scale factors) that
    parameterize batch operations.
    """
    return int_to_limbs(value % C.R * (1 << C.FR_BITS) % C.R, C.FR_LIMBS)


def ints_to_limbs(values: Iterable[int], n: int) -> np.ndarray:
    """Canonical ints -> (count, n) limbs; values must be in [0, 2^(64n))."""
    nbytes = 8 * n
    try:
        buf = b"".join(int(v).to_bytes(nbytes, "little") for v in values)
    except OverflowError as exc:
        raise NonCanonicalError(f"a value is negative or wider than {64 * n} bits") from exc
    return np.frombuffer(buf, dtype="<u8").astype(LIMB).reshape(-1, n)


def limbs_to_ints(limbs: np.ndarray) -> list[int]:
    rows = np.ascontiguousarray(limbs, dtype="<u8").reshape(limbs.shape[0], int(np.prod(limbs.shape[1:])))
    raw = rows.tobytes()
    step = rows.shape[1] * 8
    return [int.from_bytes(raw[i : i + step], "little") for i in range(0, len(raw), step)]


#: Conversions of this many elements or fewer run on Python ints: a key's few points or a proof's
#: then compile no kernel on a first run (issue 29), and they take microseconds either way.
SMALL_ROWS = 16


class Field:
    """A field whose elements are fixed-width limb runs; all methods are batched."""

    def __init__(
        self, name: str, tag: FieldTag, modulus: int, elem_shape: tuple[int, ...], mul_cost: int
    ) -> None:
        self.name = name
        self.tag = tag
        self.modulus = modulus  # of the prime (base) field
        self.elem_shape = elem_shape
        self.width = int(np.prod(elem_shape))
        self.degree = 1 if len(elem_shape) == 1 else elem_shape[0]
        self.base_limbs = elem_shape[-1]
        self.nbytes = (modulus.bit_length() + 7) // 8  # of one prime-field coordinate
        self.mul_cost = mul_cost  # one multiplication, in Fr multiplications (work estimates)

    def __repr__(self) -> str:
        return f"Field({self.name})"

    # --- shapes -------------------------------------------------------------
    def _rows(self, a: np.ndarray) -> np.ndarray:
        if a.dtype != LIMB or a.shape[1:] != self.elem_shape:
            raise ValueError(
                f"{self.name} arrays have shape (n, {', '.join(map(str, self.elem_shape))}) "
                f"and dtype uint64; got {a.shape} {a.dtype}"
            )
        return np.ascontiguousarray(a).reshape(a.shape[0], self.width)

    def empty(self, n: int) -> np.ndarray:
        return np.empty((n, *self.elem_shape), dtype=LIMB)

    def zeros(self, n: int) -> np.ndarray:
        return np.zeros((n, *self.elem_shape), dtype=LIMB)

    def ones(self, n: int) -> np.ndarray:
        return np.repeat(self.one()[None], n, axis=0)

    def one(self) -> np.ndarray:
        """The element 1 (Montgomery form), shape `elem_shape`."""
        out = self.zeros(1).reshape(-1, self.base_limbs)
        out[0] = int_to_limbs((1 << (64 * self.base_limbs)) % self.modulus, self.base_limbs)
        return out.reshape(self.elem_shape)

    # --- conversions ----------------------------------------------------------
    def _small_map(self, rows: np.ndarray, fn: Callable[[int], int]) -> np.ndarray:
        """fn over every prime-field coordinate of `rows`, with Python ints (SMALL_ROWS or fewer)."""
        coords = limbs_to_ints(rows.reshape(-1, self.base_limbs))
        return ints_to_limbs([fn(v) for v in coords], self.base_limbs).reshape(
            rows.shape[0], *self.elem_shape
        )

    def from_canonical(self, limbs: np.ndarray) -> np.ndarray:
        """Canonical limbs -> Montgomery form; rejects any coordinate >= the modulus."""
        rows = self._rows(np.asarray(limbs, dtype=LIMB))
        if rows.shape[0] <= SMALL_ROWS:
            coords = limbs_to_ints(rows.reshape(-1, self.base_limbs))
            for i, v in enumerate(coords):
                if v >= self.modulus:
                    raise NonCanonicalError(
                        f"{self.name} element {i // self.degree} is not below the modulus"
                    )
            r = (1 << (64 * self.base_limbs)) % self.modulus
            return self._small_map(rows, lambda v: v * r % self.modulus)
        bad = K.k_first_noncanonical(self.tag, rows)  # serial: stops at the first bad row
        if bad >= 0:
            raise NonCanonicalError(f"{self.name} element {bad} is not below the modulus")
        out = self.empty(rows.shape[0])
        run_ranges(
            K.k_from_canon,
            (self.tag, rows, out.reshape(rows.shape)),
            rows.shape[0],
            rows.shape[0] * self.mul_cost,
        )
        return out

    def first_noncanonical(self, a: np.ndarray) -> int:
        """Index of the first element with a coordinate not below the modulus, or -1.

        For limbs read from files before `from_canonical`-style conversions; serial, it stops
        at the first bad element.
        """
        return int(K.k_first_noncanonical(self.tag, self._rows(np.asarray(a, dtype=LIMB))))

    def to_canonical(self, a: np.ndarray) -> np.ndarray:
        rows = self._rows(a)
        if rows.shape[0] <= SMALL_ROWS:
            r_inv = pow(1 << (64 * self.base_limbs), -1, self.modulus)
            return self._small_map(rows, lambda v: v * r_inv % self.modulus)
        out = self.empty(rows.shape[0])
        run_ranges(
            K.k_to_canon,
            (self.tag, rows, out.reshape(rows.shape)),
            rows.shape[0],
            rows.shape[0] * self.mul_cost,
        )
        return out

    def from_ints(self, values: Sequence, *, reduce: bool = False) -> np.ndarray:
        """Python ints (pairs (c0, c1) for Fq2) -> Montgomery array.

        Values must lie in [0, p) unless `reduce` is set, which takes them mod p.
        """
        flat = [c for v in values for c in (v if self.degree > 1 else (v,))]
        if reduce:
            flat = [int(v) % self.modulus for v in flat]
        else:
            for i, v in enumerate(flat):
                if not 0 <= int(v) < self.modulus:
                    raise NonCanonicalError(f"{self.name} value {i // self.degree} is outside [0, modulus)")
        limbs = ints_to_limbs(flat, self.base_limbs).reshape(-1, *self.elem_shape)
        return self.from_canonical(limbs)

    def to_ints(self, a: np.ndarray) -> list:
        ints = limbs_to_ints(self.to_canonical(a).reshape(-1, self.base_limbs))
        if self.degree == 1:
            return ints
        return [tuple(ints[i : i + self.degree]) for i in range(0, len(ints), self.degree)]

    # --- arithmetic -----------------------------------------------------------
    def _binary(self, kernel: Callable[..., None], a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ra, rb = self._rows(a), self._rows(b)
        if ra.shape != rb.shape:
            raise ValueError(f"length mismatch: {a.shape[0]} vs {b.shape[0]}")
        out = self.empty(ra.shape[0])
        run_ranges(
            kernel, (self.tag, ra, rb, out.reshape(ra.shape)), ra.shape[0], ra.shape[0] * self.mul_cost
        )
        return out

    def _unary(self, kernel: Callable[..., None], a: np.ndarray, *extra: np.ndarray) -> np.ndarray:
        ra = self._rows(a)
        out = self.empty(ra.shape[0])
        run_ranges(
            kernel, (self.tag, ra, *extra, out.reshape(ra.shape)), ra.shape[0], ra.shape[0] * self.mul_cost
        )
        return out

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self._binary(K.k_add, a, b)

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self._binary(K.k_sub, a, b)

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self._binary(K.k_mul, a, b)

    def scale(self, a: np.ndarray, s: np.ndarray) -> np.ndarray:
        """a[i] * s for one element s (shape `elem_shape`)."""
        return self._unary(K.k_scale, a, self._rows(np.asarray(s, dtype=LIMB)[None]))

    def square(self, a: np.ndarray) -> np.ndarray:
        return self._unary(K.k_sqr, a)

    def neg(self, a: np.ndarray) -> np.ndarray:
        return self._unary(K.k_neg, a)

    def pow(self, a: np.ndarray, exponent: int) -> np.ndarray:
        if exponent < 0:
            return self.pow(self.inv(a), -exponent)
        if self.degree == 1 and self._rows(a).shape[0] <= SMALL_ROWS:
            return self.from_canonical(
                ints_to_limbs([pow(v, exponent, self.modulus) for v in self.to_ints(a)], self.base_limbs)
            )
        nlimbs = max(1, (exponent.bit_length() + 63) // 64)
        return self._unary(K.k_pow, a, int_to_limbs(exponent, nlimbs))

    def inv(self, a: np.ndarray) -> np.ndarray:
        """Batch inversion (Montgomery's trick); zero maps to zero, as in arkworks' batch_inverse."""
        ra = self._rows(a)
        out = self.empty(ra.shape[0])
        chunks = max(1, min(64, ra.shape[0] // 1024))  # one inversion each
        run_ranges(
            K.k_batch_inv,
            (self.tag, ra, out.reshape(ra.shape)),
            ra.shape[0],
            ra.shape[0] * 3 * self.mul_cost,
            parts=chunks,
        )
        return out

    def powers(self, base: np.ndarray, n: int, start: np.ndarray | None = None) -> np.ndarray:
        """[start * base^i for i in range(n)] (start defaults to one), in parallel chunks.

        Chunk k starts at start * (base^step)^k (a short serial run) and is filled serially,
        so a 2^27-point domain's powers spread over every thread.
        """
        s = self.one() if start is None else np.asarray(start, dtype=LIMB)
        b = self._rows(np.asarray(base, dtype=LIMB)[None])
        step = max(1024, -(-n // 64))
        chunks = -(-n // step)
        starts = self.empty(chunks).reshape(chunks, self.width)
        K.k_powers(
            self.tag, self._rows(self.pow(b.reshape(1, *self.elem_shape), step)), self._rows(s[None]), starts
        )
        out = self.empty(n)
        run_ranges(
            K.k_powers_chunked,
            (self.tag, starts, b, out.reshape(n, self.width), step),
            chunks,
            n * self.mul_cost,
        )
        return out

    def eq(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ra, rb = self._rows(a), self._rows(b)
        out = np.empty(ra.shape[0], dtype=np.bool_)
        run_ranges(K.k_eq_rows, (self.tag, ra, rb, out), ra.shape[0], ra.shape[0])
        return out

    def is_zero(self, a: np.ndarray) -> np.ndarray:
        return np.logical_not(self._rows(a).any(axis=1))

    def random(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n uniform elements (rejection sampling on the top limb), Montgomery form."""
        out = np.empty((n * self.degree, self.base_limbs), dtype=LIMB)
        top_bits = self.modulus.bit_length() - 64 * (self.base_limbs - 1)
        mask = LIMB((1 << top_bits) - 1)
        modulus_limbs = int_to_limbs(self.modulus, self.base_limbs)
        filled = 0
        while filled < out.shape[0]:
            want = out.shape[0] - filled
            cand = rng.integers(0, 1 << 64, size=(want + want // 4 + 8, self.base_limbs), dtype=LIMB)
            cand[:, -1] &= mask
            ok = _below(cand, modulus_limbs)
            take = cand[ok][:want]
            out[filled : filled + take.shape[0]] = take
            filled += take.shape[0]
        return self.from_canonical(out.reshape(n, *self.elem_shape))


def _below(rows: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Vectorized unsigned comparison rows < bound, limbs little-endian."""
    lt = np.zeros(rows.shape[0], dtype=bool)
    eq = np.ones(rows.shape[0], dtype=bool)
    for k in range(rows.shape[1] - 1, -1, -1):
        lt |= eq & (rows[:, k] < bound[k])
        eq &= rows[:, k] == bound[k]
    return lt


FR = Field("Fr", FR_TAG, C.R, (C.FR_LIMBS,), mul_cost=1)
FQ = Field("Fq", FQ_TAG, C.Q, (C.FQ_LIMBS,), mul_cost=2)
FQ2 = Field("Fq2", FQ2_TAG, C.Q, (2, C.FQ_LIMBS), mul_cost=6)
