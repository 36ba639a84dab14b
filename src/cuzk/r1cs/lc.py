"""Variables and linear combinations, as bellman has them.

A variable is a plain int, tagged by sign so that inputs and aux variables can
be allocated in any order: aux variable j is ``j`` (j >= 0) and input i is
``-1 - i``, so ``ONE`` (input 0) is -1. The matrices renumber them once, at the
end, to columns ``[inputs | aux]``. A linear combination is a dict from
variable to coefficient (a Python int taken mod r); `LC` adds the arithmetic a
circuit author wants, while gadgets on hot paths build plain dicts.
"""

from __future__ import annotations

from collections.abc import Mapping

from cuzk.algebra.constants import R

#: The constant-one variable: input 0.
ONE = -1


def input_var(i: int) -> int:
    """The variable of input i (input 0 is ONE)."""
    return -1 - i


def is_input(var: int) -> bool:
    return var < 0


class LC(dict):
    """sum of coeff * var over its items; coefficients are ints mod r (negative ones allowed)."""

    @classmethod
    def var(cls, v: int, coeff: int = 1) -> LC:
        return cls({v: coeff})

    @classmethod
    def const(cls, k: int) -> LC:
        return cls({ONE: k})

    def copy(self) -> LC:
        return LC(self)

    def add_term(self, v: int, coeff: int = 1) -> LC:
        """In place: self += coeff * v (returns self, for chaining)."""
        self[v] = (self.get(v, 0) + coeff) % R
        return self

    def __add__(self, other: Mapping[int, int] | int) -> LC:
        out = LC(self)
        for v, k in as_lc(other).items():
            out[v] = (out.get(v, 0) + k) % R
        return out

    def __sub__(self, other: Mapping[int, int] | int) -> LC:
        out = LC(self)
        for v, k in as_lc(other).items():
            out[v] = (out.get(v, 0) - k) % R
        return out

    def __mul__(self, k: int) -> LC:
        return LC({v: c * k % R for v, c in self.items()})

    __rmul__ = __mul__

    def __neg__(self) -> LC:
        return self * -1


def as_lc(x: Mapping[int, int] | int) -> Mapping[int, int]:
    """A bare variable is the LC 1 * var; a mapping is taken as it is."""
    if isinstance(x, int):
        return {x: 1}
    return x
