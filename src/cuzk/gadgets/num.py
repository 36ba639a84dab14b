"""Field-element gadgets: `Num` (an allocated Fr variable), bit decomposition, packing.

A Num's value is (lanes, 4) Fr in Montgomery form (None when recording); its
variable is None in witness mode.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk.algebra.constants import R
from cuzk.algebra.fields import FR
from cuzk.errors import CircuitError
from cuzk.gadgets import _fr
from cuzk.gadgets.bits import Bits
from cuzk.r1cs.gadget import gadget, register_leaf
from cuzk.r1cs.lc import ONE


class Num:
    """An Fr variable with its value (bellman's AllocatedNum)."""

    __slots__ = ("value", "var")

    def __init__(self, var: int | None, value: np.ndarray | None) -> None:
        self.var = var
        self.value = value

    def __repr__(self) -> str:
        return f"Num(var={self.var})"

    @classmethod
    def alloc(cls, cs: Any, value: Any = None) -> Num:
        """A new aux variable; value is one Fr row, an int, or (recording) a SourceRef."""
        value = _as_fr(value) if cs.values else value
        return cls(cs.alloc(value), value if cs.values else None)

    @classmethod
    def alloc_input(cls, cs: Any, value: Any = None) -> Num:
        value = _as_fr(value) if cs.values else value
        return cls(cs.alloc_input(value), value if cs.values else None)

    def require_value(self) -> np.ndarray:
        """The (lanes, 4) value, which exists whenever the system computes values."""
        if self.value is None:
            raise CircuitError("this Num has no value (the system only records constraints)")
        return self.value

    def lc(self) -> dict[int, int]:
        if self.var is None:
            raise CircuitError("this Num has no variable (witness mode)")
        return {self.var: 1}

    def cuzk_flatten(self) -> tuple[str, Any, list[int]]:
        if self.var is None:
            raise CircuitError("a Num without a variable cannot be passed to a gadget here")
        return "n", None, [self.var]

    def cuzk_map_vars(self, f: Any) -> Num:
        return Num(None if self.var is None else f(self.var), self.value)


def _as_fr(value: Any) -> np.ndarray:
    if isinstance(value, (int, np.integer)):
        return FR.from_ints([int(value) % R])
    return np.asarray(value, dtype=np.uint64).reshape(-1, 4)


register_leaf(
    "n", lambda meta, vs: Num(vs[0], None), lambda meta, vals: Num(None, np.ascontiguousarray(vals[:, 0]))
)


def fr_bits_le(values: np.ndarray, n: int) -> np.ndarray:
    """Canonical little-endian bits of Fr values (lanes, 4) Montgomery -> (lanes, n) uint8."""
    canon = _fr.to_canonical(values)
    raw = canon.astype("<u8").view(np.uint8).reshape(canon.shape[0], 32)
    return np.unpackbits(raw, axis=1, bitorder="little", count=n)


@gadget
def num_to_bits(cs: Any, x: Num, *, n: int) -> Bits:
    """The n low bits of x, little-endian, with sum 2^i b_i = x enforced (so x < 2^n)."""
    if not 1 <= n <= 253:
        raise CircuitError(f"num_to_bits supports 1..253 bits (no wrap-around mod r), got {n}")
    vals = fr_bits_le(x.require_value(), n) if cs.values else None
    bits = Bits.alloc(cs, n, vals)
    if cs.constraints:
        cs.enforce(bits.packed_lc([1 << i for i in range(n)]), {ONE: 1}, x.lc(), "packing")
    return bits


def enforce_equal(cs: Any, a: dict[int, int], b: dict[int, int], name: str = "equal") -> None:
    """One constraint a * 1 = b between two linear combinations."""
    if cs.constraints:
        cs.enforce(a, {ONE: 1}, b, name)


def fr32_weights() -> list[int]:
    """Weights of 256 message-order bits read as a little-endian 32-byte integer (Filecoin's fr32)."""
    return [1 << (8 * (j // 8) + 7 - (j % 8)) for j in range(256)]


def fr32_lc(bits: Bits) -> dict[int, int]:
    """A 256-bit digest (message order) as the Fr element its bytes encode little-endian."""
    if bits.n != 256:
        raise CircuitError(f"fr32 packing takes 256 bits, got {bits.n}")
    w = fr32_weights()
    return bits.packed_lc([x % R for x in w])
