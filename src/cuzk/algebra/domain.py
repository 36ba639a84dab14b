"""Radix-2 evaluation domains over Fr: sizes, roots of unity, powers.

The math both backends and the layers above them share: the largest supported
domain, the checks an NTT's size and root must pass, and the powers of a
scalar (twiddles, coset factors, powers of tau), so neither a prover nor a
setup has to reach into a backend for them.
"""

from __future__ import annotations

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.fields import FR, fr_mont

#: The largest domain any layer accepts: the Backend interface's NTT contract (base.py), which
#: both backends are tested to; Fr's two-adicity (32) is not the limit.
MAX_LOG_N = 28


def log2_exact(n: int) -> int:
    """log2 of an NTT size; ValueError unless n is a power of two up to 2^MAX_LOG_N."""
    if n <= 0 or n & (n - 1):
        raise ValueError(f"NTT size must be a power of two, got {n}")
    log_n = n.bit_length() - 1
    if log_n > MAX_LOG_N:
        raise ValueError(f"NTT size 2^{log_n} exceeds the supported 2^{MAX_LOG_N}")
    return log_n


def check_root(omega: int, log_n: int) -> None:
    """ValueError unless omega is a primitive 2^log_n-th root of unity in Fr."""
    n = 1 << log_n
    if pow(omega, n, C.R) != 1 or (n > 1 and pow(omega, n // 2, C.R) == 1):
        raise ValueError(f"omega is not a primitive 2^{log_n}-th root of unity in Fr")


def powers(base: int, n: int, start: int = 1) -> np.ndarray:
    """[start * base^i mod r for i < n] in Montgomery form, computed in parallel chunks."""
    return FR.powers(fr_mont(base), n, fr_mont(start))
