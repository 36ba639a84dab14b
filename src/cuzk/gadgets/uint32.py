"""UInt32 gadgets: 32-bit words as `Bits` of length 32, element i = bit of weight 2^i.

Rotations and shifts only move bits (no constraints); xor is bitwise
(`cuzk.gadgets.bits.xor`); `add_many` is bellman's modular addition: one
constraint ``sum of operands * 1 = sum_i 2^i r_i`` over enough result bits for
the largest possible sum, each result bit boolean-constrained, and the low 32
kept. SHA-256's message words are big-endian, hence `from_be_bits`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk.algebra.constants import R
from cuzk.errors import CircuitError
from cuzk.gadgets.bits import Bits
from cuzk.r1cs.lc import ONE

MASK32 = 0xFFFFFFFF


def constant(x: int) -> Bits:
    return Bits.constant(32, x & MASK32)


_ROT = [(np.arange(32) + k) % 32 for k in range(32)]


def _rot_mask(m: int, k: int) -> int:
    return ((m >> k) | (m << (32 - k))) & MASK32


def rotr(a: Bits, k: int) -> Bits:
    """Rotate right by k: new bit i = old bit (i + k) mod 32."""
    k %= 32
    if k == 0:
        return a
    return Bits(
        32,
        _rot_mask(a.vmask, k),
        _rot_mask(a.nmask, k),
        _rot_mask(a.cbits, k),
        None if a.vars is None else a.vars[k:] + a.vars[:k],
        None if a.value is None else a.value[:, _ROT[k]],
    )


def shr(a: Bits, k: int) -> Bits:
    """Logical shift right by k: the top k bits become constant 0."""
    if k == 0:
        return a
    value = None
    if a.value is not None:
        value = np.zeros_like(a.value)
        value[:, : 32 - k] = a.value[:, k:]
    return Bits(
        32,
        a.vmask >> k,
        a.nmask >> k,
        a.cbits >> k,
        None if a.vars is None else a.vars[k:] + (None,) * k,
        value,
    )


def from_be_bits(bits: Bits) -> Bits:
    """A word from 32 bits in big-endian order (most significant first)."""
    if bits.n != 32:
        raise CircuitError(f"a UInt32 needs 32 bits, got {bits.n}")
    return bits.reversed()


def to_be_bits(word: Bits) -> Bits:
    return word.reversed()


def words(a: Bits) -> np.ndarray:
    """Values of a 32-bit vector as (lanes,) uint64."""
    packed = np.packbits(np.ascontiguousarray(a.value, dtype=np.uint8), axis=1, bitorder="little")
    return packed.view("<u4")[:, 0].astype(np.uint64)


def add_many(cs: Any, operands: list[Bits]) -> Bits:
    """sum(operands) mod 2^32 with bellman's single-constraint modular addition."""
    if not operands:
        raise CircuitError("add_many needs at least one operand")
    for op in operands:
        if op.n != 32:
            raise CircuitError(f"add_many takes 32-bit words, got {op.n} bits")
    if all(op.vmask == 0 for op in operands):
        return constant(sum(op.cbits for op in operands))
    max_value = len(operands) * MASK32
    nbits = max_value.bit_length()
    value = total_bits = None
    if cs.values:
        total = sum(words(op) for op in operands)
        total = np.asarray(total, dtype=np.uint64).reshape(-1)
        raw = np.ascontiguousarray(total).view(np.uint8).reshape(-1, 8)
        total_bits = np.unpackbits(raw, axis=1, bitorder="little", count=nbits)
        value = total_bits[:, :32]
    res = cs.alloc_bits(nbits, total_bits)
    vars = None
    if cs.constraints:
        lc: dict[int, int] = {}
        for op in operands:
            for i in range(32):
                for v, k in op.lc(i, 1 << i).items():
                    lc[v] = (lc.get(v, 0) + k) % R
        lc = {v: k for v, k in lc.items() if k}
        for v in res:
            cs.enforce({ONE: 1, v: R - 1}, {v: 1}, {}, "boolean")
        cs.enforce(lc, {ONE: 1}, {v: 1 << i for i, v in enumerate(res)}, "modular addition")
        vars = tuple(res[:32])
    return Bits(32, MASK32, 0, 0, vars, value)
