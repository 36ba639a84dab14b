"""circom's .wtns (version 2): the full witness, one Fr element per wire.

Section 1: u32 n8 || prime || u32 nWitness; section 2: nWitness x n8 bytes, LE,
normal (not Montgomery) form. Element 0 is the constant ONE.
"""

from __future__ import annotations

import os

import numpy as np

from cuzk.algebra.fields import FR
from cuzk.errors import NonCanonicalError
from cuzk.interop import binfile
from cuzk.interop.binfile import BinFile, BinFileWriter
from cuzk.interop.primes import FR_BYTES, require_scalar_prime

MAGIC = b"wtns"
VERSION = 2
HEADER, VALUES = 1, 2


def read_wtns(path: str | os.PathLike[str]) -> np.ndarray:
    """The witness as (nWitness, 4) Fr in Montgomery form; refuses values >= r and w[0] != 1."""
    f = BinFile(path, MAGIC, (VERSION,))
    rd = f.reader(f.section(HEADER, "header"))
    n8 = rd.u32("field size")
    prime = rd.bigint(n8, "prime")
    require_scalar_prime(f.error, prime, n8)
    n = rd.u32("nWitness")
    if rd.remaining:
        raise f.error(f"section 1 (header) has {rd.remaining} unexpected trailing bytes")
    if n == 0:
        raise f.error("the witness is empty (it must at least hold the constant ONE)")
    sec = f.section(VALUES, "witness values", size=n * n8)
    raw = f.view(sec.offset, "<u8", n * 4).reshape(n, 4)
    try:
        values = FR.from_canonical(raw)
    except NonCanonicalError as exc:
        raise f.error(f"a witness value is not below the prime ({exc})") from None
    if not np.array_equal(values[0], FR.one()):
        raise f.error("witness value 0 must be 1 (the constant ONE signal)")
    return values


def write_wtns(path: str | os.PathLike[str], values: np.ndarray) -> None:
    """Write (n, 4) Montgomery Fr values as a .wtns file."""
    header = binfile.u32(FR_BYTES) + binfile.bigint(FR.modulus, FR_BYTES) + binfile.u32(values.shape[0])
    with BinFileWriter(path, MAGIC, VERSION, 2) as w:
        w.section(HEADER, header)
        w.section(VALUES, FR.to_canonical(values))
