"""BLS12-381 fields and groups as batch operations on 64-bit-limb arrays."""

from cuzk.algebra._kernel_cache import check_package

check_package()  # before any kernel is loaded from numba's cache (its docstring says why)

from cuzk.algebra.curves import G1, G2, Curve  # noqa: E402 - after the cache check
from cuzk.algebra.fields import FQ, FQ2, FR, Field  # noqa: E402

__all__ = ["FQ", "FQ2", "FR", "G1", "G2", "Curve", "Field"]
