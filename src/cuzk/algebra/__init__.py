"""BLS12-381 fields and groups as batch operations on 64-bit-limb arrays."""

from cuzk.algebra.curves import G1, G2, Curve
from cuzk.algebra.fields import FQ, FQ2, FR, Field

__all__ = ["FQ", "FQ2", "FR", "G1", "G2", "Curve", "Field"]
