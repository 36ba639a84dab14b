"""Domain math shared by the backends and the setups: sizes, roots, powers, Montgomery constants."""

from __future__ import annotations

import pytest

from cuzk.algebra import FQ, FQ2, FR, domain
from cuzk.algebra import constants as C
from cuzk.algebra.fields import fr_mont


def test_log2_exact_accepts_powers_of_two_up_to_the_limit() -> None:
    assert [domain.log2_exact(1 << k) for k in (0, 1, 17, domain.MAX_LOG_N)] == [0, 1, 17, domain.MAX_LOG_N]
    for bad in (0, -4, 3, 12, (1 << 20) + 1):
        with pytest.raises(ValueError, match="power of two"):
            domain.log2_exact(bad)
    with pytest.raises(ValueError, match="exceeds the supported"):
        domain.log2_exact(1 << (domain.MAX_LOG_N + 1))


def test_check_root_wants_a_primitive_root() -> None:
    for log_n in (0, 1, 5, 28):
        domain.check_root(C.root_of_unity(log_n), log_n)
    with pytest.raises(ValueError, match="primitive 2\\^5-th root"):
        domain.check_root(C.root_of_unity(4), 5)  # order 16, not 32
    with pytest.raises(ValueError, match="primitive"):
        domain.check_root(C.root_of_unity(6), 5)  # order 64: w^32 != 1


@pytest.mark.parametrize("value", [0, 1, 2, C.R - 1, C.R, C.R + 5, -1, 3**100])
def test_fr_mont_is_from_ints_mod_r(value: int) -> None:
    assert fr_mont(value).tolist() == FR.from_ints([value % C.R])[0].tolist()


@pytest.mark.parametrize("n", [0, 1, 7, 1024, 1025, 70_001])  # 70_001: 64 chunks plus a ragged one
def test_powers_against_python_ints(n: int) -> None:
    base, start = 0x1234_5678_9ABC_DEF0_1111, 987_654_321
    got = FR.to_ints(domain.powers(base, n, start=start))
    want, acc = [], start
    for _ in range(n):
        want.append(acc)
        acc = acc * base % C.R
    assert got == want


def test_field_powers_in_every_field() -> None:
    """Field.powers (the chunked kernel) in Fq and Fq2 too, across a chunk boundary."""
    n = 2500
    for F, base, start in ((FQ, 3, 5), (FQ2, (3, 7), (1, 2))):
        p = F.modulus
        got = F.to_ints(F.powers(F.from_ints([base])[0], n, F.from_ints([start])[0]))
        if F is FQ:
            assert got == [start * pow(base, i, p) % p for i in range(n)]
        else:
            acc, want = start, []
            for _ in range(n):
                want.append(acc)
                a0, a1 = acc
                acc = ((a0 * 3 - a1 * 7) % p, (a0 * 7 + a1 * 3) % p)  # times 3 + 7i, i^2 = -1
            assert got == want


def test_first_noncanonical() -> None:
    rows = FR.zeros(5)
    assert FR.first_noncanonical(rows) == -1
    rows[3] = FR.from_canonical(FR.zeros(1))[0]
    rows[2, :] = [(C.R >> (64 * k)) & ((1 << 64) - 1) for k in range(4)]  # exactly r
    rows[4, 3] = (1 << 64) - 1
    assert FR.first_noncanonical(rows) == 2
