"""The GLV endomorphism of BLS12-381 G1 and the scalar split the GPU MSM uses with it.

G1 has the cheap map phi(x, y) = (BETA x, y), BETA a primitive cube root of unity in Fq, and
phi(P) = LAMBDA P on the r-torsion, LAMBDA = z^2 - 1 (z the curve parameter; LAMBDA^2 + LAMBDA
+ 1 = z^4 - z^2 + 1 = r). Since r = LAMBDA^2 + LAMBDA + 1, the plain division

    k = k1 + LAMBDA k2,  k2 = k // LAMBDA,  k1 = k % LAMBDA

of any k < r gives two non-negative halves below 2^128 (k2 <= LAMBDA + 1, k1 < LAMBDA), so
k P = k1 P + k2 phi(P): an MSM over n 255-bit scalars becomes one over 2n 128-bit scalars
whose windows are half as many. The device divides by Barrett reduction with MU =
floor(2^256 / LAMBDA) (kernels/msm.cuh `glv_split`); `split` here is its reference.
"""

from __future__ import annotations

from cuzk.algebra import constants as C

#: phi(P) = LAMBDA P on G1 (LAMBDA^2 + LAMBDA + 1 = r).
LAMBDA = C.Z * C.Z - 1
#: The cube root of unity in Fq with (BETA x, y) = LAMBDA (x, y) (tests/algebra/test_glv.py).
BETA = 0x1A0111EA397FE699EC02408663D4DE85AA0D857D89759AD4897D29650FB85F9B409427EB4F49FFFD8BFD00000000AAAC
#: Barrett constant of the device's division by LAMBDA (129 bits).
MU = (1 << 256) // LAMBDA
#: Bits of each half (both are below 2^128).
HALF_BITS = 128


def split(k: int) -> tuple[int, int]:
    """(k1, k2) with k = k1 + LAMBDA k2, both in [0, 2^128), for 0 <= k < r."""
    if not 0 <= k < C.R:
        raise ValueError(f"a GLV split takes a reduced scalar in [0, r), got {k}")
    k2, k1 = divmod(k, LAMBDA)
    return k1, k2


def barrett_split(k: int) -> tuple[int, int]:
    """The device's arithmetic on Python ints: q = floor(k MU / 2^256), then at most two
    corrections (q is at most 2 below k // LAMBDA); tests hold it to `split`."""
    q = (k * MU) >> 256
    rem = k - q * LAMBDA
    while rem >= LAMBDA:
        rem -= LAMBDA
        q += 1
    return rem, q
