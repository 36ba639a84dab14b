"""SHA-256 (FIPS 180-4) as a gadget, and its vectorized native twin.

Bit order follows bellman: a message is a `Bits` of 8k elements, bytes in
order, each byte most significant bit first; the state and digest are 256
bits in the same order (big-endian words). `rounds` < 64 gives the reduced
variant the -tiny circuits use so that they fit 2^12 constraints (the message
schedule is then only expanded as far as the rounds read it); at 64 rounds
the twin is checked against hashlib.

Constraint cost per 64-round compression (bellman's construction): the
schedule's sigma xors and 4-operand additions, per round Sigma xors, Ch (one
select per bit), Maj (xor + select), and two 6/7-operand additions; about
27k constraints with a variable message, 19k with a constant (padding) block.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cuzk.errors import CircuitError
from cuzk.gadgets.bits import Bits, maj, select, xor
from cuzk.gadgets.uint32 import add_many, constant, from_be_bits, rotr, shr, to_be_bits
from cuzk.r1cs.gadget import gadget

K = (
    0x428A2F98, 0x71374491, 0xB5C0FBCF, 0xE9B5DBA5, 0x3956C25B, 0x59F111F1, 0x923F82A4, 0xAB1C5ED5,
    0xD807AA98, 0x12835B01, 0x243185BE, 0x550C7DC3, 0x72BE5D74, 0x80DEB1FE, 0x9BDC06A7, 0xC19BF174,
    0xE49B69C1, 0xEFBE4786, 0x0FC19DC6, 0x240CA1CC, 0x2DE92C6F, 0x4A7484AA, 0x5CB0A9DC, 0x76F988DA,
    0x983E5152, 0xA831C66D, 0xB00327C8, 0xBF597FC7, 0xC6E00BF3, 0xD5A79147, 0x06CA6351, 0x14292967,
    0x27B70A85, 0x2E1B2138, 0x4D2C6DFC, 0x53380D13, 0x650A7354, 0x766A0ABB, 0x81C2C92E, 0x92722C85,
    0xA2BFE8A1, 0xA81A664B, 0xC24B8B70, 0xC76C51A3, 0xD192E819, 0xD6990624, 0xF40E3585, 0x106AA070,
    0x19A4C116, 0x1E376C08, 0x2748774C, 0x34B0BCB5, 0x391C0CB3, 0x4ED8AA4A, 0x5B9CCA4F, 0x682E6FF3,
    0x748F82EE, 0x78A5636F, 0x84C87814, 0x8CC70208, 0x90BEFFFA, 0xA4506CEB, 0xBEF9A3F7, 0xC67178F2,
)  # fmt: skip
IV = (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19)


def bytes_to_bits(data: bytes | np.ndarray) -> np.ndarray:
    """Bytes -> bits in message order (each byte MSB first), uint8; works on (..., nbytes) arrays."""
    arr = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes) else np.asarray(data, dtype=np.uint8)
    return np.unpackbits(arr, axis=-1)


def bits_to_bytes(bits: np.ndarray) -> np.ndarray:
    return np.packbits(np.asarray(bits, dtype=np.uint8), axis=-1)


def constant_bits(data: bytes) -> Bits:
    """Constant message bits for `data`."""
    row = bytes_to_bits(data)
    as_int = int.from_bytes(np.packbits(row, bitorder="little").tobytes(), "little")
    return Bits.constant(8 * len(data), as_int)


def iv_bits() -> Bits:
    return constant_bits(b"".join(w.to_bytes(4, "big") for w in IV))


def padding(nbits: int) -> bytes:
    """The bytes SHA-256 appends to a message of nbits bits (a multiple of 8)."""
    nbytes = nbits // 8
    zeros = (55 - nbytes) % 64
    return b"\x80" + b"\x00" * zeros + nbits.to_bytes(8, "big")


# --- the gadget -------------------------------------------------------------------------


@gadget
def sha256_compress(cs: Any, state: Bits, block: Bits, *, rounds: int = 64) -> Bits:
    """One compression of a 512-bit block into a 256-bit state (both in message bit order)."""
    if state.n != 256 or block.n != 512:
        raise CircuitError(
            f"sha256_compress takes 256 state bits and 512 block bits, got {state.n} and {block.n}"
        )
    if not 1 <= rounds <= 64:
        raise CircuitError(f"rounds must be in 1..64, got {rounds}")
    w = [from_be_bits(block[32 * i : 32 * i + 32]) for i in range(16)]
    with cs.namespace("schedule"):
        for i in range(16, rounds):
            with cs.namespace(f"w{i}"):
                x, y = w[i - 15], w[i - 2]
                s0 = xor(cs, xor(cs, rotr(x, 7), rotr(x, 18)), shr(x, 3))
                s1 = xor(cs, xor(cs, rotr(y, 17), rotr(y, 19)), shr(y, 10))
                w.append(add_many(cs, [w[i - 16], s0, w[i - 7], s1]))
    h0 = [from_be_bits(state[32 * i : 32 * i + 32]) for i in range(8)]
    a, b, c, d, e, f, g, h = h0
    for i in range(rounds):
        with cs.namespace(f"round {i}"):
            s1 = xor(cs, xor(cs, rotr(e, 6), rotr(e, 11)), rotr(e, 25))
            ch = select(cs, e, f, g)
            s0 = xor(cs, xor(cs, rotr(a, 2), rotr(a, 13)), rotr(a, 22))
            mj = maj(cs, a, b, c)
            k = constant(K[i])
            new_e = add_many(cs, [d, h, s1, ch, k, w[i]])
            new_a = add_many(cs, [h, s1, ch, k, w[i], s0, mj])
            h, g, f, e, d, c, b, a = g, f, e, new_e, c, b, a, new_a
    with cs.namespace("final"):
        out = [add_many(cs, [h0[j], x]) for j, x in enumerate((a, b, c, d, e, f, g, h))]
    return Bits.concat([to_be_bits(x) for x in out])


@gadget
def sha256(cs: Any, message: Bits, *, rounds: int = 64) -> Bits:
    """SHA-256 of a message of whole bytes: padding (constant bits) and one compression per block."""
    if message.n % 8:
        raise CircuitError(f"sha256 takes whole bytes; got {message.n} bits")
    padded = Bits.concat([message, constant_bits(padding(message.n))])
    state = iv_bits()
    for j in range(padded.n // 512):
        with cs.namespace(f"block {j}"):
            state = sha256_compress(cs, state, padded[512 * j : 512 * (j + 1)], rounds=rounds)
    return state


def compressions(nbytes: int) -> int:
    """Compression calls SHA-256 makes for a message of nbytes."""
    return (nbytes + 9 + 63) // 64


# --- the native twin (numpy over many messages) -------------------------------------


def _rotr(x: np.ndarray, k: int) -> np.ndarray:
    return (x >> np.uint32(k)) | (x << np.uint32(32 - k))


def compress_native(state: np.ndarray, block: np.ndarray, rounds: int = 64) -> np.ndarray:
    """(n, 8) uint32 states and (n, 16) uint32 big-endian block words -> (n, 8) new states."""
    w = [block[:, i].astype(np.uint32) for i in range(16)]
    for i in range(16, rounds):
        x, y = w[i - 15], w[i - 2]
        s0 = _rotr(x, 7) ^ _rotr(x, 18) ^ (x >> np.uint32(3))
        s1 = _rotr(y, 17) ^ _rotr(y, 19) ^ (y >> np.uint32(10))
        w.append(w[i - 16] + s0 + w[i - 7] + s1)
    a, b, c, d, e, f, g, h = (state[:, i].astype(np.uint32) for i in range(8))
    for i in range(rounds):
        s1 = _rotr(e, 6) ^ _rotr(e, 11) ^ _rotr(e, 25)
        ch = (e & f) ^ (~e & g)
        t1 = h + s1 + ch + np.uint32(K[i]) + w[i]
        s0 = _rotr(a, 2) ^ _rotr(a, 13) ^ _rotr(a, 22)
        mj = (a & b) ^ (a & c) ^ (b & c)
        h, g, f, e, d, c, b, a = g, f, e, d + t1, c, b, a, t1 + s0 + mj
    return state.astype(np.uint32) + np.stack([a, b, c, d, e, f, g, h], axis=1)


def sha256_native(messages: np.ndarray, rounds: int = 64) -> np.ndarray:
    """SHA-256 of n equal-length messages (n, nbytes) uint8 -> (n, 32) uint8 digests."""
    msgs = np.asarray(messages, dtype=np.uint8)
    n, nbytes = msgs.shape
    pad = np.frombuffer(padding(8 * nbytes), dtype=np.uint8)
    full = np.concatenate([msgs, np.broadcast_to(pad, (n, pad.size))], axis=1)
    quads = full.reshape(n, -1, 4).astype(np.uint32)
    words = (quads[..., 0] << 24) | (quads[..., 1] << 16) | (quads[..., 2] << 8) | quads[..., 3]
    state = np.broadcast_to(np.array(IV, dtype=np.uint32), (n, 8))
    for j in range(words.shape[1] // 16):
        state = compress_native(state, words[:, 16 * j : 16 * (j + 1)], rounds)
    return state.astype(">u4").view(np.uint8).reshape(n, 32)
