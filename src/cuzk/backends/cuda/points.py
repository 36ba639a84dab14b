"""Points between zcash's uncompressed encoding and device rows, checked on the device.

The set-up half of a real-size SRS: a 44 GiB bellperson .params set is ~400M encoded points. On
the host, decoding (byte shuffles, Montgomery conversion, curve equation) and the subgroup test
cost minutes; here one thread per point does them (kernels/points.cuh), so loading runs at the
speed of the disk and the upload. The status codes match the host decoder's errors
(cuzk.algebra.encoding), and the error names the lowest bad index, as that decoder does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk.algebra.curves import Curve
from cuzk.backends.cuda._runtime import Runtime
from cuzk.errors import (
    EncodingError,
    InfinityError,
    InvalidFlagsError,
    NonCanonicalError,
    NotInSubgroupError,
    NotOnCurveError,
)

#: Status code -> (error class, what is wrong), as kernels/points.cuh numbers them.
_ERRORS: dict[int, tuple[type[EncodingError], str]] = {
    1: (InvalidFlagsError, ": invalid flags for an uncompressed encoding"),
    2: (InfinityError, " is the point at infinity, which is not allowed here"),
    3: (NonCanonicalError, ": a coordinate is not below the field modulus p"),
    4: (NotOnCurveError, ": (x, y) does not satisfy the curve equation y^2 = x^3 + b"),
    5: (NotInSubgroupError, " is on the curve but not in the prime-order subgroup"),
}


def encoded_size(curve: Curve) -> int:
    """Bytes of one uncompressed encoding: 96 (G1), 192 (G2)."""
    return 96 * curve.field.degree


def _sfx(curve: Curve) -> str:
    return "g1" if curve.field.degree == 1 else "g2"


def import_points(rt: Runtime, curve: Curve, raw: Any, out: Any, *, check_subgroup: bool) -> Any:
    """Decode (n, 96 degree) uint8 device rows into `out` ((n, 2 width) uint64 device rows);
    returns the (n,) uint8 status on the device (0: valid). Queued, not waited for."""
    n = int(raw.shape[0])
    status = rt.xp.empty((n,), dtype=np.uint8)
    if n:
        sfx = _sfx(curve)
        rt.launch(f"points_{sfx}", f"import_points_{sfx}", n, (np.uint64(n), raw, out, status), block=128)
        if check_subgroup:
            rt.launch(f"points_{sfx}", f"subgroup_check_{sfx}", n, (np.uint64(n), out, status), block=128)
    return status


def export_points(rt: Runtime, curve: Curve, rows: Any) -> Any:
    """(n, 2 width) Montgomery device rows -> (n, 96 degree) uint8 device encodings."""
    n = int(rows.shape[0])
    raw = rt.xp.empty((n, encoded_size(curve)), dtype=np.uint8)
    if n:
        sfx = _sfx(curve)
        rt.launch(f"points_{sfx}", f"export_points_{sfx}", n, (np.uint64(n), rows, raw), block=128)
    return raw


def raise_for(curve: Curve, status: np.ndarray, what: str, offset: int = 0) -> None:
    """Raise the error of the lowest bad point of a host status array (nothing when all are 0);
    `offset` is the index of status[0] within the whole query."""
    bad = np.flatnonzero(status)
    if not bad.size:
        return
    i = int(bad[0])
    cls, why = _ERRORS.get(int(status[i]), (EncodingError, f": status {int(status[i])}"))
    raise cls(f"{what}: {curve.name} uncompressed point {offset + i}{why}")
