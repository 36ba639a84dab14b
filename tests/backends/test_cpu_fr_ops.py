"""CPU backend Fr vector operations against Python ints."""

from __future__ import annotations

import numpy as np

from cuzk.algebra import FR
from cuzk.algebra import constants as C
from cuzk.backends.cpu import CpuBackend

R = C.R


def test_fr_vector_ops(rng: np.random.Generator) -> None:
    cpu = CpuBackend()
    a, b, c = (FR.to_ints(FR.random(300, rng)) for _ in range(3))
    a[:3], b[:3] = [0, 1, R - 1], [R - 1, R - 1, R - 1]
    x, y, z = FR.from_ints(a), FR.from_ints(b), FR.from_ints(c)
    assert FR.to_ints(cpu.fr_add(x, y)) == [(u + v) % R for u, v in zip(a, b, strict=True)]
    assert FR.to_ints(cpu.fr_sub(x, y)) == [(u - v) % R for u, v in zip(a, b, strict=True)]
    assert FR.to_ints(cpu.fr_mul(x, y)) == [u * v % R for u, v in zip(a, b, strict=True)]
    for s in (0, 1, R - 1, 12345, R + 5):  # s is taken mod r
        assert FR.to_ints(cpu.fr_scale(x, s)) == [u * s % R for u in a]
    s = 987654321
    want = [(u * v - w) * s % R for u, v, w in zip(a, b, c, strict=True)]
    assert FR.to_ints(cpu.fr_mul_sub_scale(x, y, z, s)) == want
    assert cpu.to_host(cpu.to_device(x)) is not None and np.array_equal(cpu.to_host(cpu.to_device(x)), x)
