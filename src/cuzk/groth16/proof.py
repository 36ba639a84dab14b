"""The proof and its 192-byte codec: compressed A (48) || B (96) || C (48), zcash encoding.

A multi-partition proof is its partitions' proofs concatenated (1920 bytes for
a 10-partition PoRep sector), as Filecoin writes them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cuzk.algebra import encoding
from cuzk.errors import WrongLengthError

PROOF_BYTES = 192


@dataclass
class Proof:
    a: np.ndarray  # G1 affine (1,2,6)
    b: np.ndarray  # G2 affine (1,2,2,6)
    c: np.ndarray  # G1 affine (1,2,6)

    def to_bytes(self) -> bytes:
        return proofs_to_bytes([self])

    @classmethod
    def from_bytes(cls, data: bytes) -> Proof:
        proofs = proofs_from_bytes(data)
        if len(proofs) != 1:
            raise WrongLengthError(f"expected one {PROOF_BYTES}-byte proof, got {len(data)} bytes")
        return proofs[0]


def proofs_to_bytes(proofs: list[Proof]) -> bytes:
    a = encoding.encode_g1(np.concatenate([p.a for p in proofs]), compressed=True)
    b = encoding.encode_g2(np.concatenate([p.b for p in proofs]), compressed=True)
    c = encoding.encode_g1(np.concatenate([p.c for p in proofs]), compressed=True)
    return np.concatenate([a, b, c], axis=1).tobytes()


def proofs_from_bytes(data: bytes) -> list[Proof]:
    """Decode concatenated proofs; every point is checked on the curve and in its subgroup."""
    if len(data) == 0 or len(data) % PROOF_BYTES:
        raise WrongLengthError(
            f"proof data must be a positive multiple of {PROOF_BYTES} bytes, got {len(data)}"
        )
    rows = np.frombuffer(data, dtype=np.uint8).reshape(-1, PROOF_BYTES)
    a = encoding.decode_g1(rows[:, :48], compressed=True, allow_infinity=True)
    b = encoding.decode_g2(rows[:, 48:144], compressed=True, allow_infinity=True)
    c = encoding.decode_g1(rows[:, 144:], compressed=True, allow_infinity=True)
    return [Proof(a=a[i : i + 1], b=b[i : i + 1], c=c[i : i + 1]) for i in range(rows.shape[0])]
