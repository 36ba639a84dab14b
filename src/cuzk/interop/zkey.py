"""snarkjs Groth16 proving keys (.zkey version 1), read as zero-copy views and written back.

Sections (FORMATS.md section 2): 1 protocol (1 = Groth16); 2 the Groth16 header
(q, r, nVars, nPublic, domainSize, alpha1, beta1, beta2, gamma2, delta1,
delta2); 3 IC (nPublic + 1 G1); 4 the A and B matrices as records {u32 matrix,
u32 constraint, u32 signal, 32-byte c * 2^512 mod r}; 5 A, 6 B1 (nVars G1); 7 B2
(nVars G2); 8 C (nVars - nPublic - 1 G1); 9 H (domainSize G1); 10 the MPC
contribution record (kept as bytes; proving does not need it).

Points are x || y with each coordinate 48 bytes LE in Montgomery form
(coord * 2^384 mod q) and G2 coordinates as c0 || c1: byte for byte the limb
layout of cuzk.algebra ((n, 2, 6) and (n, 2, 2, 6) uint64, infinity = zeros), so
a section is used in place with no conversion at all. A stored coefficient is
c * R^2 (R = 2^256); one Montgomery reduction (FR.to_canonical) turns it into
c * R, our form.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1, G2, Curve
from cuzk.algebra.domain import MAX_LOG_N
from cuzk.algebra.fields import FQ, FR
from cuzk.backends.base import CsrMatrix
from cuzk.errors import InteropError
from cuzk.groth16.keys import VerifyingKey
from cuzk.interop import binfile
from cuzk.interop.binfile import BinFile, BinFileWriter
from cuzk.interop.primes import FQ_BYTES, FR_BYTES, ErrorFactory, require_base_prime, require_scalar_prime

MAGIC = b"zkey"
VERSION = 1
PROTOCOLS = {1: "groth16", 2: "plonk", 10: "fflonk"}
GROTH16 = 1
(HEADER, GROTH_HEADER, IC, COEFFS, POINTS_A, POINTS_B1, POINTS_B2, POINTS_C, POINTS_H, CONTRIBUTIONS) = range(
    1, 11
)

G1_BYTES = 2 * FQ_BYTES
G2_BYTES = 4 * FQ_BYTES
#: One section-4 record: matrix (0 = A, 1 = B), constraint (row), signal (column), value.
COEF_DTYPE = np.dtype([("matrix", "<u4"), ("constraint", "<u4"), ("signal", "<u4"), ("value", "<u8", (4,))])


def snarkjs_domain_size(n_constraints: int, n_public: int) -> int:
    """2^(floor(log2(nConstraints + nPublic)) + 1), as snarkjs's `groth16 setup` chooses it.

    It always leaves room for the nPublic + 1 extra rows that bind the public signals.
    """
    return 1 << (max(n_constraints + n_public, 1).bit_length())


@dataclass
class Zkey:
    """A Groth16 proving key in snarkjs's layout. Arrays may be views of a mapped file."""

    n_vars: int
    n_public: int
    domain_size: int
    alpha_g1: np.ndarray  # (1, 2, 6)
    beta_g1: np.ndarray
    beta_g2: np.ndarray  # (1, 2, 2, 6)
    gamma_g2: np.ndarray
    delta_g1: np.ndarray
    delta_g2: np.ndarray
    ic: np.ndarray  # (n_public + 1, 2, 6): (beta A_i + alpha B_i + C_i)(tau) / gamma
    coeffs: np.ndarray  # (count,) COEF_DTYPE records, values as stored (c * R^2)
    a: np.ndarray  # (n_vars, 2, 6): A_i(tau)
    b1: np.ndarray  # (n_vars, 2, 6): B_i(tau)
    b2: np.ndarray  # (n_vars, 2, 2, 6): B_i(tau) in G2
    c: np.ndarray  # (n_vars - n_public - 1, 2, 6): (beta A_i + alpha B_i + C_i)(tau) / delta, private i
    h: np.ndarray  # (domain_size, 2, 6): L^(2n)_(2j+1)(tau) / delta, the odd Lagrange points
    contributions: bytes | None = None  # section 10 as stored; None: write a fresh one
    path: Path | None = None

    @property
    def log_n(self) -> int:
        return self.domain_size.bit_length() - 1

    @property
    def n_private(self) -> int:
        return self.n_vars - self.n_public - 1

    def verifying_key(self) -> VerifyingKey:
        return VerifyingKey(
            alpha_g1=self.alpha_g1,
            beta_g1=self.beta_g1,
            beta_g2=self.beta_g2,
            gamma_g2=self.gamma_g2,
            delta_g1=self.delta_g1,
            delta_g2=self.delta_g2,
            ic=self.ic,
        )

    def unbound_inputs(self) -> list[int]:
        """Indices i >= 1 of public signals whose IC point is infinity (public.json entry i - 1)."""
        return unbound_inputs(self.ic)

    def matrices(self) -> tuple[CsrMatrix, CsrMatrix]:
        """Section 4 as CSR matrices A and B, (domain_size, n_vars), Fr in Montgomery form."""
        return coefficient_matrices(self.coeffs, self.domain_size, self.n_vars, self._where())

    def validate_points(self, *, subgroup: bool = False) -> None:
        """Check every point of the large sections (canonical, on the curve; optionally the subgroup)."""
        for name, pts, curve in (
            ("A", self.a, G1),
            ("B1", self.b1, G1),
            ("B2", self.b2, G2),
            ("C", self.c, G1),
            ("H", self.h, G1),
        ):
            _check_points(self._where(), name, pts, curve, allow_infinity=True, subgroup=subgroup)

    def _where(self) -> ErrorFactory:
        prefix = f"{self.path}: " if self.path else "zkey: "
        return lambda msg: InteropError(prefix + msg)


def coefficient_matrices(
    rec: np.ndarray, domain_size: int, n_vars: int, where: ErrorFactory
) -> tuple[CsrMatrix, CsrMatrix]:
    """Section-4 records -> CSR A and B of shape (domain_size, n_vars); checks every field."""
    m, row, col = rec["matrix"], rec["constraint"], rec["signal"]
    if rec.shape[0]:
        if int(m.max()) > 1:
            raise where(f"a coefficient names matrix {int(m.max())}; only 0 (A) and 1 (B) exist")
        if int(row.max()) >= domain_size:
            raise where(f"a coefficient is in row {int(row.max())}, outside the domain of {domain_size}")
        if int(col.max()) >= n_vars:
            raise where(f"a coefficient names signal {int(col.max())}; the key has {n_vars}")
    stored = np.ascontiguousarray(rec["value"])
    bad = FR.first_noncanonical(stored)
    if bad >= 0:
        raise where(f"coefficient {bad} is not below the scalar prime")
    values = FR.to_canonical(stored)  # c R^2 / R = c R
    out = []
    for k in (0, 1):
        sel = np.flatnonzero(m == k)
        rows = row[sel].astype(np.int64)
        if rows.size > 1 and not bool(np.all(rows[1:] >= rows[:-1])):
            order = np.argsort(rows, kind="stable")
            sel, rows = sel[order], rows[order]
        indptr = np.zeros(domain_size + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=domain_size), out=indptr[1:])
        out.append(
            CsrMatrix(
                indptr=indptr,
                indices=col[sel].astype(np.int32),
                data=values[sel],
                shape=(domain_size, n_vars),
            )
        )
    return out[0], out[1]


class UnboundInputsWarning(UserWarning):
    """A key's IC point is infinity: that public input is bound by nothing, any value verifies."""


def unbound_inputs(ic: np.ndarray) -> list[int]:
    """Indices i >= 1 whose IC point is infinity: public input i is bound by no constraint."""
    inf = G1.is_identity(ic)
    return [int(i) for i in np.flatnonzero(inf) if i > 0]


def warn_if_unbound(ic: np.ndarray, source: str) -> list[int]:
    """Warn (UnboundInputsWarning) when public inputs have IC points at infinity; returns them."""
    bad = unbound_inputs(ic)
    if bad:
        shown = ", ".join(str(i) for i in bad[:8]) + (", ..." if len(bad) > 8 else "")
        warnings.warn(
            UnboundInputsWarning(
                f"{source}: {len(bad)} of {ic.shape[0] - 1} public signals ({shown}; 1-based, public.json "
                "order) have IC points at infinity: they are bound by nothing, so a proof verifies for ANY "
                "value of them. A key made from a powers-of-tau without a contribution (tau = 1) looks "
                "like this; do not trust proofs made with it."
            ),
            stacklevel=2,
        )
    return bad


def _check_points(
    where: ErrorFactory, name: str, pts: np.ndarray, curve: Curve, *, allow_infinity: bool, subgroup: bool
) -> None:
    if pts.shape[0] == 0:
        return
    flat = np.ascontiguousarray(pts).reshape(-1, C.FQ_LIMBS)
    bad = FQ.first_noncanonical(flat)
    if bad >= 0:
        per = flat.shape[0] // pts.shape[0]
        raise where(f"{name} point {bad // per} has a coordinate that is not below the base prime")
    on = curve.is_on_curve(pts)
    if not on.all():
        raise where(f"{name} point {int(np.argmin(on))} is not on the curve")
    inf = curve.is_identity(pts)
    if not allow_infinity and inf.any():
        raise where(f"{name} point {int(np.argmax(inf))} is the point at infinity")
    if subgroup:
        ok = curve.in_subgroup(pts) | inf
        if not ok.all():
            raise where(f"{name} point {int(np.argmin(ok))} is not in the prime-order subgroup")


def read_zkey(path: str | os.PathLike[str]) -> Zkey:
    """Map a .zkey and check its structure, its curve and its verifying-key points."""
    f = BinFile(path, MAGIC, (VERSION,))
    rd = f.reader(f.section(HEADER, "protocol", size=4))
    protocol = rd.u32("protocol")
    if protocol != GROTH16:
        name = PROTOCOLS.get(protocol, f"unknown protocol {protocol}")
        raise f.error(f"this is a {name} key; cuzk proves Groth16 keys only")
    rd = f.reader(f.section(GROTH_HEADER, "Groth16 header"))
    n8q = rd.u32("n8q")
    q = rd.bigint(n8q, "q")
    require_base_prime(f.error, q, n8q)
    n8r = rd.u32("n8r")
    r = rd.bigint(n8r, "r")
    require_scalar_prime(f.error, r, n8r)
    n_vars, n_public, domain = rd.u32("nVars"), rd.u32("nPublic"), rd.u32("domainSize")
    points = [rd.array("<u8", 12, p) for p in ("alpha1", "beta1")]
    points += [rd.array("<u8", 24, p) for p in ("beta2", "gamma2")]
    points += [rd.array("<u8", 12, "delta1"), rd.array("<u8", 24, "delta2")]
    if rd.remaining:
        raise f.error(f"section 2 (Groth16 header) has {rd.remaining} unexpected trailing bytes")
    if n_vars < n_public + 1:
        raise f.error(f"nVars = {n_vars} cannot hold ONE and {n_public} public signals")
    if domain < 2 or domain & (domain - 1):
        raise f.error(f"domainSize = {domain} is not a power of two")
    if domain.bit_length() - 1 > MAX_LOG_N:
        raise f.error(f"domainSize 2^{domain.bit_length() - 1} exceeds the supported 2^{MAX_LOG_N}")
    if domain <= n_public:
        raise f.error(f"domainSize = {domain} has no room for the {n_public + 1} public-binding rows")
    alpha1, beta1 = (p.reshape(1, 2, 6) for p in points[:2])
    beta2, gamma2 = (p.reshape(1, 2, 2, 6) for p in points[2:4])
    delta1, delta2 = points[4].reshape(1, 2, 6), points[5].reshape(1, 2, 2, 6)
    pt: np.ndarray  # G1 points in the first loop, G2 in the second
    for name, pt in (("alpha1", alpha1), ("beta1", beta1), ("delta1", delta1)):
        _check_points(f.error, name, pt, G1, allow_infinity=False, subgroup=True)
    for name, pt in (("beta2", beta2), ("gamma2", gamma2), ("delta2", delta2)):
        _check_points(f.error, name, pt, G2, allow_infinity=False, subgroup=True)

    def g1s(kind: int, what: str, n: int) -> np.ndarray:
        sec = f.section(kind, what, size=n * G1_BYTES)
        return f.view(sec.offset, "<u8", n * 12).reshape(n, 2, 6)

    ic = g1s(IC, "IC", n_public + 1)
    _check_points(f.error, "IC", ic, G1, allow_infinity=True, subgroup=True)
    sec = f.section(COEFFS, "coefficients")
    count = f.reader(sec).u32("coefficient count")
    if sec.size != 4 + count * COEF_DTYPE.itemsize:
        raise f.error(
            f"section 4 (coefficients) has {sec.size} bytes; {count} records need {4 + count * COEF_DTYPE.itemsize}"
        )
    coeffs = f.view(sec.offset + 4, COEF_DTYPE, count)
    a = g1s(POINTS_A, "A points", n_vars)
    b1 = g1s(POINTS_B1, "B1 points", n_vars)
    sec = f.section(POINTS_B2, "B2 points", size=n_vars * G2_BYTES)
    b2 = f.view(sec.offset, "<u8", n_vars * 24).reshape(n_vars, 2, 2, 6)
    c = g1s(POINTS_C, "C points", n_vars - n_public - 1)
    h = g1s(POINTS_H, "H points", domain)
    contributions = None
    if f.has(CONTRIBUTIONS):
        sec = f.section(CONTRIBUTIONS, "contributions")
        contributions = f.view(sec.offset, np.uint8, sec.size).tobytes()
    return Zkey(
        n_vars, n_public, domain, alpha1, beta1, beta2, gamma2, delta1, delta2, ic, coeffs, a, b1, b2, c, h,
        contributions, Path(path),
    )  # fmt: skip


def write_zkey(path: str | os.PathLike[str], zk: Zkey) -> None:
    """Write a .zkey snarkjs reads; a fresh section 10 carries a BLAKE2b-512 hash of sections 2-9."""
    header = b"".join(
        [
            binfile.u32(FQ_BYTES),
            binfile.bigint(C.Q, FQ_BYTES),
            binfile.u32(FR_BYTES),
            binfile.bigint(C.R, FR_BYTES),
            binfile.u32(zk.n_vars),
            binfile.u32(zk.n_public),
            binfile.u32(zk.domain_size),
        ]
    )
    vk_points = [zk.alpha_g1, zk.beta_g1, zk.beta_g2, zk.gamma_g2, zk.delta_g1, zk.delta_g2]
    body: list[tuple[int, list[bytes | np.ndarray]]] = [
        (GROTH_HEADER, [header, *(_points(p) for p in vk_points)]),
        (IC, [_points(zk.ic)]),
        (COEFFS, [binfile.u32(zk.coeffs.shape[0]), np.ascontiguousarray(zk.coeffs, dtype=COEF_DTYPE)]),
        (POINTS_A, [_points(zk.a)]),
        (POINTS_B1, [_points(zk.b1)]),
        (POINTS_B2, [_points(zk.b2)]),
        (POINTS_C, [_points(zk.c)]),
        (POINTS_H, [_points(zk.h)]),
    ]
    hasher = hashlib.blake2b(digest_size=64)
    with BinFileWriter(path, MAGIC, VERSION, 10) as w:
        w.section(HEADER, binfile.u32(GROTH16))
        for kind, chunks in body:
            w.section(kind, *chunks)
            if zk.contributions is None:
                for chunk in chunks:
                    hasher.update(chunk if isinstance(chunk, bytes) else chunk.data.cast("B"))
        w.section(CONTRIBUTIONS, zk.contributions or hasher.digest() + binfile.u32(0))


def _points(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype="<u8")
