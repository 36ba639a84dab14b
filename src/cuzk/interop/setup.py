"""A development setup for circom circuits: a snarkjs-format .zkey from fresh random toxic waste.

NOT A CEREMONY. tau, alpha, beta, gamma and delta come from the OS CSPRNG and
are dropped when `setup_zkey` returns, but whoever ran it could have kept them
and could then forge proofs. Use it to develop and benchmark; use a real
powers-of-tau and phase-2 ceremony (snarkjs) for anything that must be trusted.

The key has exactly the shape `snarkjs groth16 setup` gives (FORMATS.md section
2), with the generator-5 domain of n = domainSize points:

    rows 0..nC-1 are the circuit's constraints; rows nC + s (s = 0..nPublic)
    get A[nC + s][s] = 1, which makes every IC point independent;
    A_i = A_i(tau) g1, B1_i = B_i(tau) g1, B2_i = B_i(tau) g2 for every signal;
    IC_i = (beta A_i + alpha B_i + C_i)(tau) / gamma g1 for i <= nPublic,
    C_i = the same over delta for the private signals;
    H_j = L^(2n)_(2j+1)(tau) / delta g1, the odd Lagrange points of the doubled domain.

L^(2n)_(2j+1) vanishes on the n-th roots, so it is t(X) q_j(X) with t = X^n - 1
and q_j of degree < n; at the odd roots t = -2, hence q_j = -1/2 times the
Lagrange basis of the coset w_2n <w_n>, i.e. L_j(X / w_2n). One size-n inverse
NTT of the powers of tau / w_2n gives all of them.

Unlike snarkjs (gamma = 1, delta = 1 before contributions) gamma and delta are
random; the generators are the standard ones, as in a powers-of-tau file.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1, G2
from cuzk.algebra.domain import MAX_LOG_N, powers
from cuzk.algebra.fields import FR, fr_mont
from cuzk.backends.base import Backend, CsrMatrix
from cuzk.errors import SetupError
from cuzk.groth16.qap import transpose
from cuzk.instrument import Timeline
from cuzk.interop.r1cs import R1cs
from cuzk.interop.zkey import COEF_DTYPE, Zkey, coefficient_matrices, snarkjs_domain_size

Progress = Callable[[str], None]


def _nonzero() -> int:
    return secrets.randbelow(C.R - 1) + 1


def coefficient_records(r1cs: R1cs, domain_size: int) -> np.ndarray:
    """Section 4 as snarkjs orders it: per constraint A terms then B terms; then the public rows."""
    n_c, n_pub = r1cs.n_constraints, r1cs.n_public
    parts = []
    for k, m in enumerate((r1cs.A, r1cs.B)):
        rec = np.empty(m.nnz, dtype=COEF_DTYPE)
        rec["matrix"] = k
        rec["constraint"] = np.repeat(np.arange(n_c, dtype=np.uint32), np.diff(m.indptr))
        rec["signal"] = m.indices
        rec["value"] = FR.from_canonical(m.data)  # Montgomery c R read as an integer, times R: c R^2
        parts.append(rec)
    merged = np.concatenate(parts)
    merged = merged[np.argsort(merged["constraint"], kind="stable")]
    extra = np.empty(n_pub + 1, dtype=COEF_DTYPE)
    extra["matrix"] = 0
    extra["constraint"] = n_c + np.arange(n_pub + 1, dtype=np.uint32)
    extra["signal"] = np.arange(n_pub + 1, dtype=np.uint32)
    extra["value"] = FR.from_canonical(FR.ones(n_pub + 1))
    if n_c + n_pub + 1 > domain_size:
        raise SetupError(f"{n_c} constraints and {n_pub} public signals do not fit a domain of {domain_size}")
    return np.concatenate([merged, extra])


def _columns(backend: Backend, m: CsrMatrix, lagrange: np.ndarray) -> np.ndarray:
    """sum_rows m[row, i] L_row(tau) for every column i: the QAP polynomial of signal i at tau."""
    t = transpose(m)
    return backend.to_host(backend.spmv(t, backend.to_device(lagrange[: m.shape[0]])))


def odd_lagrange(backend: Backend, tau: int, log_n: int) -> np.ndarray:
    """L^(2n)_(2j+1)(tau) for j < n = 2^log_n, generator-5 roots: the H points' scalars times delta.

    L^(2n)_(2j+1) = t(X) q_j(X) with t = X^n - 1 = -2 on the odd roots, so q_j is -1/2 times the
    Lagrange basis of the coset w_2n <w_n>: L^n_j(X / w_2n). One size-n iNTT of powers of tau / w_2n.
    """
    n = 1 << log_n
    omega = C.root_of_unity(log_n, C.SNARKJS_GENERATOR)
    shift_inv = pow(C.root_of_unity(log_n + 1, C.SNARKJS_GENERATOR), -1, C.R)
    coset = backend.to_host(backend.intt(backend.to_device(powers(tau * shift_inv % C.R, n)), omega))
    t_tau = (pow(tau, n, C.R) - 1) % C.R
    return FR.scale(coset, fr_mont(t_tau * pow(-2, -1, C.R)))


def setup_zkey(
    r1cs: R1cs,
    backend: Backend,
    *,
    timeline: Timeline | None = None,
    progress: Progress | None = None,
) -> Zkey:
    """A complete Groth16 key for the circuit, in memory, ready for `write_zkey`."""
    tl = timeline or Timeline("setup")
    say = progress or (lambda _msg: None)
    n_vars, n_pub, n_c = r1cs.n_wires, r1cs.n_public, r1cs.n_constraints
    domain = snarkjs_domain_size(n_c, n_pub)
    log_n = domain.bit_length() - 1
    if log_n > MAX_LOG_N:
        raise SetupError(f"{n_c} constraints need a domain of 2^{log_n}; cuzk supports up to 2^{MAX_LOG_N}")
    omega = C.root_of_unity(log_n, C.SNARKJS_GENERATOR)
    tau, alpha, beta, gamma, delta = (_nonzero() for _ in range(5))
    if pow(tau, 2 * domain, C.R) == 1:  # tau on the doubled domain: probability ~2^-230
        raise SetupError("the random tau fell on the evaluation domain; run setup again")

    with tl.span("coefficients"):
        say(f"coefficients: {r1cs.A.nnz + r1cs.B.nnz} A/B terms, domain 2^{log_n}")
        coeffs = coefficient_records(r1cs, domain)
        a_ext, b_ext = coefficient_matrices(coeffs, domain, n_vars, SetupError)  # exactly as stored

    with tl.span("lagrange"):
        say("evaluating the QAP at tau")
        lagrange = backend.to_host(backend.intt(backend.to_device(powers(tau, domain)), omega))
        at = _columns(backend, a_ext, lagrange)
        bt = _columns(backend, b_ext, lagrange)
        ct = _columns(backend, r1cs.C, lagrange)
        h_scalars = FR.scale(odd_lagrange(backend, tau, log_n), fr_mont(pow(delta, -1, C.R)))
        combo = FR.add(FR.add(FR.scale(at, fr_mont(beta)), FR.scale(bt, fr_mont(alpha))), ct)
        ic_scalars = FR.scale(combo[: n_pub + 1], fr_mont(pow(gamma, -1, C.R)))
        c_scalars = FR.scale(combo[n_pub + 1 :], fr_mont(pow(delta, -1, C.R)))

    g1, g2 = G1.generator(), G2.generator()

    def mul(name: str, scalars: np.ndarray, group: str) -> np.ndarray:
        with tl.span(f"fixed_base_{name}", points=scalars.shape[0]):
            say(f"{name}: {scalars.shape[0]} {group.upper()} points")
            base = g1 if group == "g1" else g2
            return backend.fixed_base_mul(base, scalars, group)  # type: ignore[arg-type]

    ic = mul("IC", ic_scalars, "g1")
    a = mul("A", at, "g1")
    b1 = mul("B1", bt, "g1")
    b2 = mul("B2", bt, "g2")
    c = mul("C", c_scalars, "g1")
    h = mul("H", h_scalars, "g1")
    g1s = backend.fixed_base_mul(g1, FR.from_ints([alpha, beta, delta]), "g1")
    g2s = backend.fixed_base_mul(g2, FR.from_ints([beta, gamma, delta]), "g2")
    return Zkey(
        n_vars=n_vars,
        n_public=n_pub,
        domain_size=domain,
        alpha_g1=g1s[0:1],
        beta_g1=g1s[1:2],
        beta_g2=g2s[0:1],
        gamma_g2=g2s[1:2],
        delta_g1=g1s[2:3],
        delta_g2=g2s[2:3],
        ic=ic,
        coeffs=coeffs,
        a=a,
        b1=b1,
        b2=b2,
        c=c,
        h=h,
    )
