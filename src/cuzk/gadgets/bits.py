"""Boolean gadgets on bit vectors: not, xor, and, or, select, maj.

A `Bits` is n Booleans in bellman's three kinds: a constant, a variable
(``Is``) or a variable's negation (``Not``, free: 1 - x). The kinds live in
three int masks, so the same code serves every mode at the cost of a few int
operations per *vector*, not per bit:

- ``vmask``: bit i is a variable (Is or Not); ``nmask`` (within vmask): it is
  a Not; ``cbits``: the values of the constant bits;
- ``vars``: the underlying variable of each bit (None for constants), only
  when the system records constraints;
- ``value``: (lanes, n) uint8, the actual bit values, when it has values.

Each operation allocates exactly where bellman's would (both operands
variables; a constant operand folds away), with one constraint per allocated
bit: xor ``(2a) * b = a + b - c``, and ``a * b = c``, select
``c * (a - b) = r - b``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from cuzk.algebra.constants import R
from cuzk.errors import CircuitError
from cuzk.r1cs.gadget import register_leaf
from cuzk.r1cs.lc import ONE


@lru_cache(maxsize=8192)
def positions(mask: int) -> np.ndarray:
    """Indices of the set bits of mask, ascending."""
    out = []
    i = 0
    while mask:
        low = mask & -mask
        i = low.bit_length() - 1
        out.append(i)
        mask ^= low
    return np.array(out, dtype=np.int64)


@lru_cache(maxsize=8192)
def mask_row(n: int, mask: int) -> np.ndarray:
    """mask as an (n,) uint8 row of bits."""
    row = np.zeros(n, dtype=np.uint8)
    row[positions(mask)] = 1
    return row


def _rev(mask: int, n: int) -> int:
    return int(format(mask, f"0{n}b")[::-1], 2) if n else 0


class Bits:
    """n Booleans (see the module docstring for the representation)."""

    __slots__ = ("cbits", "n", "nmask", "value", "vars", "vmask")

    def __init__(
        self,
        n: int,
        vmask: int,
        nmask: int,
        cbits: int,
        vars: tuple[int | None, ...] | None,
        value: np.ndarray | None,
    ) -> None:
        self.n = n
        self.vmask = vmask
        self.nmask = nmask
        self.cbits = cbits
        self.vars = vars
        self.value = value

    def __repr__(self) -> str:
        return f"Bits(n={self.n}, vars={bin(self.vmask).count('1')})"

    def __len__(self) -> int:
        return self.n

    @property
    def full(self) -> int:
        return (1 << self.n) - 1

    def require_value(self) -> np.ndarray:
        """The (lanes, n) bit values, which exist whenever the system computes values."""
        if self.value is None:
            raise CircuitError("these bits have no values (the system only records constraints)")
        return self.value

    def var(self, i: int) -> int:
        """The variable under element i, an Is or Not bit of a system that records constraints."""
        v = None if self.vars is None else self.vars[i]
        if v is None:
            raise CircuitError(f"element {i} of these bits has no variable")
        return v

    # --- construction --------------------------------------------------------------
    @classmethod
    def constant(cls, n: int, bits: int) -> Bits:
        """Constant bits: element i is bit i of the int `bits` (the value row broadcasts over lanes)."""
        bits &= (1 << n) - 1
        return cls(n, 0, 0, bits, (None,) * n, mask_row(n, bits)[None, :])

    @classmethod
    def alloc(cls, cs: Any, n: int, value: Any = None) -> Bits:
        """n new variables, each with bellman's booleanity constraint (1 - b) * b = 0."""
        vs = cs.alloc_bits(n, value)
        if cs.constraints:
            for v in vs:
                cs.enforce({ONE: 1, v: R - 1}, {v: 1}, {}, "boolean")
        val = np.asarray(value, dtype=np.uint8) if cs.values else None
        return cls(n, (1 << n) - 1, 0, 0, tuple(vs) if vs is not None else None, val)

    @staticmethod
    def concat(parts: list[Bits]) -> Bits:
        n = vm = nm = cb = 0
        for p in parts:
            vm |= p.vmask << n
            nm |= p.nmask << n
            cb |= p.cbits << n
            n += p.n
        var_parts = [p.vars for p in parts if p.vars is not None]
        vars = tuple(v for vs in var_parts for v in vs) if len(var_parts) == len(parts) else None
        vals = [p.value for p in parts if p.value is not None]
        value = None
        if len(vals) == len(parts):
            lanes = max(v.shape[0] for v in vals)
            value = np.concatenate([np.broadcast_to(v, (lanes, v.shape[1])) for v in vals], axis=1)
        return Bits(n, vm, nm, cb, vars, value)

    # --- structure (no constraints) ------------------------------------------------
    def __getitem__(self, s: slice) -> Bits:
        if not isinstance(s, slice) or s.step not in (None, 1):
            raise CircuitError("Bits support contiguous slices only")
        lo, hi, _ = s.indices(self.n)
        hi = max(lo, hi)
        m = (1 << (hi - lo)) - 1
        return Bits(
            hi - lo,
            (self.vmask >> lo) & m,
            (self.nmask >> lo) & m,
            (self.cbits >> lo) & m,
            None if self.vars is None else self.vars[lo:hi],
            None if self.value is None else self.value[:, lo:hi],
        )

    def reversed(self) -> Bits:
        n = self.n
        return Bits(
            n,
            _rev(self.vmask, n),
            _rev(self.nmask, n),
            _rev(self.cbits, n),
            None if self.vars is None else self.vars[::-1],
            None if self.value is None else self.value[:, ::-1],
        )

    def with_zeros(self, idx: list[int]) -> Bits:
        """The same bits with elements idx replaced by constant 0 (e.g. Filecoin's fr32 truncation)."""
        m = 0
        for i in idx:
            m |= 1 << i
        keep = self.full ^ m
        vars = None
        if self.vars is not None:
            vs = list(self.vars)
            for i in idx:
                vs[i] = None
            vars = tuple(vs)
        value = None
        if self.value is not None:
            value = self.value * (1 - mask_row(self.n, m))[None, :]
        return Bits(self.n, self.vmask & keep, self.nmask & keep, self.cbits & keep, vars, value)

    def take(self, src: list[int | None]) -> Bits:
        """New bits where element j is element src[j] of self, or constant 0 where src[j] is None."""
        vm = nm = cb = 0
        for j, s in enumerate(src):
            if s is not None:
                b = 1 << s
                vm |= ((self.vmask & b) >> s) << j
                nm |= ((self.nmask & b) >> s) << j
                cb |= ((self.cbits & b) >> s) << j
        vars = None if self.vars is None else tuple(None if s is None else self.vars[s] for s in src)
        value = None
        if self.value is not None:
            idx = np.array([0 if s is None else s for s in src], dtype=np.int64)
            keep = np.array([s is not None for s in src], dtype=np.uint8)
            value = self.value[:, idx] * keep[None, :]
        return Bits(len(src), vm, nm, cb, vars, value)

    def lc(self, i: int, weight: int = 1) -> dict[int, int]:
        """Element i as a linear combination times weight."""
        b = 1 << i
        if self.vmask & b:
            v = self.var(i)
            if self.nmask & b:
                return {ONE: weight % R, v: (-weight) % R}
            return {v: weight % R}
        return {ONE: weight % R} if self.cbits & b else {}

    def packed_lc(self, weights: list[int]) -> dict[int, int]:
        """sum_i weights[i] * element i as one linear combination."""
        out: dict[int, int] = {}
        for i, w in enumerate(weights):
            for v, k in self.lc(i, w).items():
                out[v] = (out.get(v, 0) + k) % R
        return {v: k for v, k in out.items() if k}

    # --- the r1cs gadget-argument protocol ----------------------------------------
    def cuzk_flatten(self) -> tuple[str, Any, list[int]]:
        if self.vars is None:
            raise CircuitError("Bits without variables cannot be passed to a gadget here")
        return (
            "b",
            [self.n, self.vmask, self.nmask, self.cbits],
            [self.vars[i] for i in positions(self.vmask)],
        )

    def cuzk_map_vars(self, f: Any) -> Bits:
        vars = None if self.vars is None else tuple(None if v is None else f(v) for v in self.vars)
        return Bits(self.n, self.vmask, self.nmask, self.cbits, vars, self.value)


def _from_vars(meta: Any, vs: list[int]) -> Bits:
    n, vm, nm, cb = meta
    vars: list[int | None] = [None] * n
    for p, v in zip(positions(vm).tolist(), vs, strict=True):
        vars[p] = v
    return Bits(n, vm, nm, cb, tuple(vars), None)


def _from_values(meta: Any, vals: np.ndarray) -> Bits:
    n, vm, nm, cb = meta
    lanes = vals.shape[0]
    value = np.empty((lanes, n), dtype=np.uint8)
    value[:] = mask_row(n, cb)
    pos = positions(vm)
    if pos.size:
        und = (vals != 0).any(axis=-1).astype(np.uint8)
        value[:, pos] = und ^ mask_row(n, nm)[pos]
    return Bits(n, vm, nm, cb, None, value)


register_leaf("b", _from_vars, _from_values)


# --- operations ------------------------------------------------------------------------


def _check(a: Bits, b: Bits) -> None:
    if a.n != b.n:
        raise CircuitError(f"bit vectors of different lengths: {a.n} and {b.n}")


def _result_vars(
    n: int, new_mask: int, new: list[int], sources: list[tuple[int, Bits]]
) -> tuple[int | None, ...]:
    """Variables of a result: new ones at new_mask positions, else copied from the source whose mask holds i."""
    out: list[int | None] = [None] * n
    for p, v in zip(positions(new_mask).tolist(), new, strict=True):
        out[p] = v
    for m, src in sources:
        if m:
            for p in positions(m).tolist():
                out[p] = src.var(p)
    return tuple(out)


def not_(a: Bits) -> Bits:
    """Negation is free: Is <-> Not, constants flip."""
    value = None if a.value is None else 1 - a.value
    return Bits(a.n, a.vmask, a.nmask ^ a.vmask, a.cbits ^ (a.full & ~a.vmask), a.vars, value)


def xor(cs: Any, a: Bits, b: Bits) -> Bits:
    _check(a, b)
    full = a.full
    av, an, ac, bv, bn, bc = a.vmask, a.nmask, a.cbits, b.vmask, b.nmask, b.cbits
    alloc = av & bv
    ra = av & ~bv
    rb = bv & ~av
    vm = av | bv
    nm = ((an ^ bn) & alloc) | ((an ^ bc) & ra) | ((bn ^ ac) & rb)
    cb = (ac ^ bc) & ~vm & full
    pos = positions(alloc)
    value = und = None
    if cs.values:
        value = a.require_value() ^ b.require_value()
        und = value[:, pos] ^ mask_row(a.n, nm)[pos]
    new = cs.alloc_bits(pos.size, und)
    vars = None
    if cs.constraints:
        for k, i in enumerate(pos.tolist()):
            x, y, c = a.var(i), b.var(i), new[k]
            cc = {x: 2, c: R - 1} if x == y else {x: 1, y: 1, c: R - 1}
            cs.enforce({x: 2}, {y: 1}, cc, "xor")
        vars = _result_vars(a.n, alloc, new, [(ra, a), (rb, b)])
    return Bits(a.n, vm, nm & vm, cb, vars, value)


def and_(cs: Any, a: Bits, b: Bits) -> Bits:
    _check(a, b)
    full = a.full
    av, an, ac, bv, bn, bc = a.vmask, a.nmask, a.cbits, b.vmask, b.nmask, b.cbits
    zero = ((~av & ~ac) | (~bv & ~bc)) & full
    a1 = ~av & ac & full
    b1 = ~bv & bc & full
    alloc = av & bv
    copy_a = b1 & av
    copy_b = a1 & bv
    vm = alloc | copy_a | copy_b
    nm = (an & copy_a) | (bn & copy_b)
    cb = a1 & b1 & ~zero
    pos = positions(alloc)
    value = und = None
    if cs.values:
        value = a.require_value() & b.require_value()
        und = value[:, pos]
    new = cs.alloc_bits(pos.size, und)
    vars = None
    if cs.constraints:
        for k, i in enumerate(pos.tolist()):
            cs.enforce(a.lc(i), b.lc(i), {new[k]: 1}, "and")
        vars = _result_vars(a.n, alloc, new, [(copy_a, a), (copy_b, b)])
    return Bits(a.n, vm, nm, cb, vars, value)


def or_(cs: Any, a: Bits, b: Bits) -> Bits:
    """a or b = not(not a and not b), as bellman does it."""
    return not_(and_(cs, not_(a), not_(b)))


def select(cs: Any, cond: Bits, a: Bits, b: Bits) -> Bits:
    """Elementwise cond ? a : b (SHA-256's Ch); cond may be one bit broadcast over all elements."""
    if cond.n == 1 and a.n > 1:
        cond = broadcast(cond, a.n)
    _check(a, b)
    _check(cond, a)
    full = a.full
    cv, cn, cc = cond.vmask, cond.nmask, cond.cbits
    av, an, ac, bv, bn, bc = a.vmask, a.nmask, a.cbits, b.vmask, b.nmask, b.cbits
    c1 = ~cv & cc & full
    c0 = ~cv & ~cc & full
    both_const = ~av & ~bv & full
    alloc = cv & ~both_const
    same = cv & both_const & ~(ac ^ bc)
    pas = cv & both_const & ac & ~bc
    flip = cv & both_const & ~ac & bc
    vm = (c1 & av) | (c0 & bv) | alloc | pas | flip
    nm = (c1 & an) | (c0 & bn) | (pas & cn) | (flip & ~cn)
    cb = ((c1 & ac) | (c0 & bc) | (same & ac)) & ~vm & full
    pos = positions(alloc)
    value = und = None
    if cs.values:
        value = np.where(cond.require_value() != 0, a.require_value(), b.require_value())
        und = value[:, pos]
    new = cs.alloc_bits(pos.size, und)
    vars = None
    if cs.constraints:
        for k, i in enumerate(pos.tolist()):
            la, lb = a.lc(i), b.lc(i)
            diff = dict(la)
            for v, w in lb.items():
                diff[v] = (diff.get(v, 0) - w) % R
            rhs = {new[k]: 1}
            for v, w in lb.items():
                rhs[v] = (rhs.get(v, 0) - w) % R
            cs.enforce(cond.lc(i), diff, rhs, "select")
        vars = _result_vars(a.n, alloc, new, [(c1 & av, a), (c0 & bv, b), (pas | flip, cond)])
    return Bits(a.n, vm, nm, cb, vars, value)


def maj(cs: Any, a: Bits, b: Bits, c: Bits) -> Bits:
    """Majority (SHA-256's Maj) = (a xor b) ? c : a: two constraints per bit, as bellman's."""
    return select(cs, xor(cs, a, b), c, a)


def broadcast(bit: Bits, n: int) -> Bits:
    """One bit repeated n times (the same variable in every element)."""
    if bit.n != 1:
        raise CircuitError("only a single bit can be broadcast")
    full = (1 << n) - 1
    return Bits(
        n,
        full if bit.vmask else 0,
        full if bit.nmask else 0,
        full if bit.cbits else 0,
        None if bit.vars is None else bit.vars * n,
        None if bit.value is None else np.repeat(bit.value, n, axis=1),
    )


def enforce_equal(cs: Any, a: Bits, b: Bits, name: str = "equal") -> None:
    """Bitwise a == b with one constraint per element that is not constant on both sides."""
    _check(a, b)
    if not cs.constraints:
        return
    for i in range(a.n):
        la, lb = a.lc(i), b.lc(i)
        d = dict(la)
        for v, w in lb.items():
            d[v] = (d.get(v, 0) - w) % R
        d = {v: w for v, w in d.items() if w}
        if d:
            cs.enforce(d, {ONE: 1}, {}, name)
