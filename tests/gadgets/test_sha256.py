"""SHA-256: the gadget and the native twin against hashlib, and a plain-Python reference
for the reduced-round variant the -tiny circuits use."""

from __future__ import annotations

import hashlib
import struct

import numpy as np
import pytest
from gadget_harness import both

from cuzk.backends import get_backend
from cuzk.errors import CircuitError
from cuzk.gadgets.bits import Bits
from cuzk.gadgets.sha256 import IV, K, bytes_to_bits, sha256, sha256_native
from cuzk.r1cs import ConstraintSystem

CPU = get_backend("cpu")


def reference_sha256(msg: bytes, rounds: int = 64) -> bytes:
    """Textbook FIPS 180-4, one int at a time (rounds < 64 truncates the round loop)."""
    m = msg + b"\x80" + b"\x00" * ((55 - len(msg)) % 64) + struct.pack(">Q", 8 * len(msg))
    h = list(IV)
    ror = lambda x, n: ((x >> n) | (x << (32 - n))) & 0xFFFFFFFF  # noqa: E731
    for off in range(0, len(m), 64):
        w = list(struct.unpack(">16I", m[off : off + 64]))
        for i in range(16, 64):
            s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3)
            s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w.append((w[i - 16] + s0 + w[i - 7] + s1) & 0xFFFFFFFF)
        a, b, c, d, e, f, g, hh = h
        for i in range(rounds):
            t1 = (
                hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]
            ) & 0xFFFFFFFF
            t2 = ((ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) & 0xFFFFFFFF
            hh, g, f, e, d, c, b, a = g, f, e, (d + t1) & 0xFFFFFFFF, c, b, a, (t1 + t2) & 0xFFFFFFFF
        h = [(x + y) & 0xFFFFFFFF for x, y in zip(h, (a, b, c, d, e, f, g, hh), strict=True)]
    return struct.pack(">8I", *h)


def test_reference_is_sha256(rng):
    for n in (0, 3, 55, 56, 64, 119):
        msg = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        assert reference_sha256(msg) == hashlib.sha256(msg).digest()


@pytest.mark.parametrize("nbytes", [0, 1, 31, 55, 56, 64, 100, 128])
def test_native_matches_hashlib(nbytes, rng):
    msgs = rng.integers(0, 256, (5, nbytes), dtype=np.uint8)
    got = sha256_native(msgs)
    for m, d in zip(msgs, got, strict=True):
        assert d.tobytes() == hashlib.sha256(m.tobytes()).digest()


@pytest.mark.parametrize("rounds", [1, 2, 7, 16, 17, 40])
def test_native_reduced_rounds_match_reference(rounds, rng):
    msgs = rng.integers(0, 256, (3, 64), dtype=np.uint8)
    got = sha256_native(msgs, rounds)
    for m, d in zip(msgs, got, strict=True):
        assert d.tobytes() == reference_sha256(m.tobytes(), rounds)


def _hash_circuit(nbytes: int, rounds: int):
    def body(cs, view):
        msg = Bits.alloc(cs, 8 * nbytes, view.bits("msg"))
        return sha256(cs, msg, rounds=rounds)

    return body, {"msg": ("bits", (8 * nbytes,))}


@pytest.mark.parametrize(("nbytes", "rounds"), [(64, 64), (20, 64), (64, 2), (100, 3)])
def test_gadget_matches_hashlib_and_reference(nbytes, rounds, rng):
    msg = rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    body, schema = _hash_circuit(nbytes, rounds)
    digest, rec = both(body, {"msg": bytes_to_bits(msg)}, schema)
    got = np.packbits(digest.value[0]).tobytes()
    want = hashlib.sha256(msg).digest() if rounds == 64 else reference_sha256(msg, rounds)
    assert got == want
    # a second, different message through the same recording: the program is not tied to the first
    msg2 = rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    rec.topology.check(rec.program.run({"msg": bytes_to_bits(msg2)}), CPU)


def test_gadget_rejects_bad_shapes():
    cs = ConstraintSystem()
    with pytest.raises(CircuitError, match="whole bytes"):
        sha256(cs, Bits.constant(7, 0))
    with pytest.raises(CircuitError, match="rounds"):
        sha256(cs, Bits.constant(8, 0), rounds=65)
