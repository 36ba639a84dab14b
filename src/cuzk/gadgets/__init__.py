"""Gadgets built on cuzk.r1cs: Boolean bit vectors, UInt32, SHA-256, Poseidon, Merkle paths.

Every gadget runs in all three modes of a constraint system (direct,
recording, witness) from one body, and has a native twin (hashlib-checked
SHA-256, a numba Poseidon) that generates instances and is its test oracle's
counterpart.
"""
