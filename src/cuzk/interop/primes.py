"""Which curve a circom/snarkjs file is for, from the primes it carries.

circom compiles for several primes (`--prime`); snarkjs keys name their curve
by the base field q. cuzk serves BLS12-381 only, so any other prime is refused
with its name, which tells the user what to change (`--prime bls12381`).
"""

from __future__ import annotations

from collections.abc import Callable

from cuzk.algebra import constants as C

BN254_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617
BN254_Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583

#: Scalar-field primes circom knows (the prime of an .r1cs / .wtns file).
SCALAR_PRIMES: dict[int, str] = {
    C.R: "bls12381",
    BN254_R: "bn128",
    BN254_Q: "grumpkin",
    0xFFFFFFFF00000001: "goldilocks",
    0x40000000000000000000000000000000224698FC094CF91B992D30ED00000001: "pallas",
    0x40000000000000000000000000000000224698FC0994A8DD8C46EB2100000001: "vesta",
    0x12AB655E9A2CA55660B44D1E5C37B00159AA76FED00000010A11800000000001: "bls12377",
}

#: Base-field primes of the curves snarkjs knows (the q of a .zkey).
BASE_PRIMES: dict[int, str] = {C.Q: "bls12381", BN254_Q: "bn128"}

ErrorFactory = Callable[[str], Exception]

FR_BYTES = 32
FQ_BYTES = 48


def name_of(prime: int, table: dict[int, str]) -> str:
    return table.get(prime, f"an unknown prime 0x{prime:x}")


def require_scalar_prime(f_error: ErrorFactory, prime: int, n8: int) -> None:
    """Refuse a file whose field is not BLS12-381's Fr (f_error makes the exception)."""
    if prime != C.R:
        raise f_error(
            f"the field is {name_of(prime, SCALAR_PRIMES)}, not bls12381: cuzk proves on BLS12-381 only "
            "(compile the circuit with `circom --prime bls12381`)"
        )
    if n8 != FR_BYTES:
        raise f_error(f"field elements are {n8} bytes; BLS12-381 scalars take {FR_BYTES}")


def require_base_prime(f_error: ErrorFactory, prime: int, n8: int) -> None:
    if prime != C.Q:
        raise f_error(f"the key is for the curve {name_of(prime, BASE_PRIMES)}; cuzk serves bls12381 only")
    if n8 != FQ_BYTES:
        raise f_error(f"base field elements are {n8} bytes; BLS12-381 coordinates take {FQ_BYTES}")
