"""CPU NTT / iNTT / coset NTT against a naive O(n^2) evaluation over Python ints."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk.algebra import FR, domain
from cuzk.algebra import constants as C
from cuzk.backends.cpu import CpuBackend
from cuzk.backends.cpu import ntt as ntt_mod

R = C.R
GENERATORS = [pytest.param(C.BELLPERSON_GENERATOR, id="gen7"), pytest.param(C.SNARKJS_GENERATOR, id="gen5")]


@pytest.fixture(scope="module")
def cpu() -> CpuBackend:
    return CpuBackend()


def naive_eval(coeffs: list[int], omega: int, coset: int = 1) -> list[int]:
    """Evaluations at coset * omega^i by Horner, O(n^2)."""
    n = len(coeffs)
    out = []
    for i in range(n):
        x = coset * pow(omega, i, R) % R
        acc = 0
        for c in reversed(coeffs):
            acc = (acc * x + c) % R
        out.append(acc)
    return out


def rand_ints(n: int, rng: np.random.Generator) -> list[int]:
    return FR.to_ints(FR.random(n, rng))


def test_roots_of_unity_constants() -> None:
    # FORMATS.md section 0: the two ecosystems' 2^32-th roots.
    assert C.root_of_unity(32, 7) == 0x16A2A19EDFE81F20D09B681922C813B4B63683508C2280B93829971F439F0D2B
    assert C.root_of_unity(32, 5) == 0x0212D79E5B416B6F0FD56DC8D168D6C0C4024FF270B3E0941B788F500B912F1F
    for g in (5, 7):
        w = C.root_of_unity(32, g)
        assert pow(w, 1 << 32, R) == 1 and pow(w, 1 << 31, R) != 1
        assert C.root_of_unity(10, g) == pow(w, 1 << 22, R)


@pytest.mark.parametrize("generator", GENERATORS)
@pytest.mark.parametrize("log_n", [0, 1, 2, 3, 4, 5, 6])
def test_ntt_matches_naive(cpu: CpuBackend, generator: int, log_n: int, rng: np.random.Generator) -> None:
    n = 1 << log_n
    omega = C.root_of_unity(log_n, generator)
    coeffs = rand_ints(n, rng)
    if n >= 4:
        coeffs[1], coeffs[-1] = 0, R - 1
    evals = naive_eval(coeffs, omega)
    a = FR.from_ints(coeffs)
    assert FR.to_ints(cpu.ntt(a, omega)) == evals
    assert FR.to_ints(cpu.intt(FR.from_ints(evals), omega)) == coeffs
    assert FR.to_ints(a) == coeffs  # the input is not modified
    for shift in (generator, generator * generator, rand_ints(1, rng)[0] or 3):
        cevals = naive_eval(coeffs, omega, shift)
        assert FR.to_ints(cpu.ntt(a, omega, coset=shift)) == cevals
        assert FR.to_ints(cpu.intt(FR.from_ints(cevals), omega, coset=shift)) == coeffs


def test_split_twiddle_path_matches_naive(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator) -> None:
    """Above 2^22 the NTT switches to a two-level twiddle table; shrink the limits to test it small."""
    monkeypatch.setattr(ntt_mod, "_FULL_TABLE_MAX_LOG", 2)
    monkeypatch.setattr(ntt_mod, "_SPLIT_BITS", 2)
    engine = ntt_mod.CpuNtt()
    for log_n in (3, 6):
        omega = C.root_of_unity(log_n, 5)
        coeffs = rand_ints(1 << log_n, rng)
        a = FR.from_ints(coeffs)
        assert engine._twiddles(omega, log_n).split_bits > 0
        assert FR.to_ints(engine.ntt(a, omega, 7)) == naive_eval(coeffs, omega, 7)
        assert FR.to_ints(engine.intt(engine.ntt(a, omega), omega)) == coeffs


@pytest.mark.parametrize("log_n", [10, 13, 16])
def test_round_trips(cpu: CpuBackend, log_n: int, rng: np.random.Generator) -> None:
    n = 1 << log_n
    omega = C.root_of_unity(log_n, 7)
    a = FR.random(n, rng)
    assert np.array_equal(cpu.intt(cpu.ntt(a, omega), omega), a)
    assert np.array_equal(cpu.ntt(cpu.intt(a, omega), omega), a)
    assert np.array_equal(cpu.intt(cpu.ntt(a, omega, coset=7), omega, coset=7), a)
    # Spot-check a few evaluations against Horner (the full naive transform is too slow here).
    evals = cpu.ntt(a, omega)
    coeffs = FR.to_ints(a)
    for i in (0, 1, n // 2, n - 1):
        x = pow(omega, i, R)
        acc = 0
        for c in reversed(coeffs):
            acc = (acc * x + c) % R
        assert FR.to_ints(evals[i : i + 1]) == [acc]


def test_bad_sizes_and_roots(cpu: CpuBackend, rng: np.random.Generator) -> None:
    a = FR.random(12, rng)
    with pytest.raises(ValueError, match="power of two"):
        cpu.ntt(a, C.root_of_unity(3))
    b = FR.random(8, rng)
    with pytest.raises(ValueError, match="primitive 2\\^3-th root"):
        cpu.ntt(b, C.root_of_unity(4))  # a 16th root is not a primitive 8th root
    with pytest.raises(ValueError, match="primitive"):
        cpu.ntt(b, C.root_of_unity(2))  # a 4th root is not primitive of order 8
    with pytest.raises(ValueError, match="exceeds"):
        domain.log2_exact(1 << 29)
    with pytest.raises(ValueError, match="2-adicity"):
        C.root_of_unity(33)


@pytest.mark.large
def test_round_trip_split_table_full_size(cpu: CpuBackend, rng: np.random.Generator) -> None:
    log_n = 23  # the first size that uses the two-level twiddle table
    omega = C.root_of_unity(log_n, 5)
    a = FR.random(1 << log_n, rng)
    assert np.array_equal(cpu.intt(cpu.ntt(a, omega, coset=5), omega, coset=5), a)


@pytest.mark.large
def test_largest_supported_size_against_closed_form(cpu: CpuBackend) -> None:
    """2^28 (the documented maximum): the NTT of g^i is (g^n - 1) / (g w^k - 1) at point k.

    About 3 minutes and 16 GiB of memory on the 2-core machine.
    """
    log_n, g = domain.MAX_LOG_N, 3
    n = 1 << log_n
    w = C.root_of_unity(log_n)
    evals = cpu.ntt(domain.powers(g, n), w)
    gn = pow(g, n, C.R)
    for k in (0, 1, 12345, n // 3, n - 1):
        x = g * pow(w, k, C.R) % C.R
        assert FR.to_ints(evals[k : k + 1])[0] == (gn - 1) * pow(x - 1, -1, C.R) % C.R
