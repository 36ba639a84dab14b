"""circom's .r1cs (version 1): the constraint system as three CSR matrices over Fr.

Sections (FORMATS.md section 2): 1 header (n8, prime, wire and signal counts,
constraint count), 2 constraints (per constraint, the linear combinations A, B,
C, each a u32 term count then (u32 wire, n8-byte LE coefficient) terms), 3 the
wire -> label map. Wire order: 0 = ONE, public outputs, public inputs, private
inputs, internal wires. Sections 4/5 (custom gates) only exist for PLONK and are
refused.

Section 2 has variable-length records, so one compiled pass walks it, checking
every count and wire index against the header, and scatters the terms into flat
arrays; the CSR rows then come out already sorted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from numba import njit

from cuzk.algebra.fields import FR
from cuzk.backends.base import Backend, CsrMatrix
from cuzk.errors import NonCanonicalError
from cuzk.interop import binfile
from cuzk.interop.binfile import BinFile, BinFileWriter
from cuzk.interop.primes import FR_BYTES, require_scalar_prime

MAGIC = b"r1cs"
VERSION = 1
HEADER, CONSTRAINTS, WIRE_LABELS, CUSTOM_GATES_LIST, CUSTOM_GATES_USES = 1, 2, 3, 4, 5

_OK, _TRUNCATED, _BAD_WIRE, _TRAILING = 0, 1, 2, 3


@dataclass(frozen=True)
class R1cs:
    """A circom constraint system; matrices are (n_constraints, n_wires), Fr in Montgomery form."""

    n_wires: int
    n_pub_out: int
    n_pub_in: int
    n_prv_in: int
    n_labels: int
    A: CsrMatrix
    B: CsrMatrix
    C: CsrMatrix
    labels: np.ndarray | None = None  # (n_wires,) uint64 label ids, when section 3 is present

    @property
    def n_constraints(self) -> int:
        return self.A.shape[0]

    @property
    def n_public(self) -> int:
        """Public signals (outputs first, then public inputs), without ONE."""
        return self.n_pub_out + self.n_pub_in

    def first_unsatisfied(self, witness: np.ndarray, backend: Backend) -> int:
        """The first constraint with (A.w)(B.w) != C.w, or -1 when the witness satisfies all."""
        w = backend.to_device(witness)
        a, b, c = (backend.spmv(m, w) for m in (self.A, self.B, self.C))
        with backend.activate():
            bad = backend.to_host(backend.xp.any(backend.fr_mul(a, b) != c, axis=1))
        return int(np.argmax(bad)) if bad.any() else -1


@njit(cache=True)
def _u32(buf, p):
    return (
        np.int64(buf[p])
        | (np.int64(buf[p + 1]) << 8)
        | (np.int64(buf[p + 2]) << 16)
        | (np.int64(buf[p + 3]) << 24)
    )


@njit(cache=True)
def _scan(buf, n_constraints, n_wires, n8, mat, row, col, coef):
    """Scatter every term of section 2; returns (status, constraint or offset where it failed)."""
    p = 0
    k = 0
    size = buf.shape[0]
    nnz = mat.shape[0]
    for c in range(n_constraints):
        for m in range(3):
            if p + 4 > size:
                return _TRUNCATED, c
            count = _u32(buf, p)
            p += 4
            if count > nnz - k or p + count * (4 + n8) > size:
                return _TRUNCATED, c
            for _ in range(count):
                w = _u32(buf, p)
                if w >= n_wires:
                    return _BAD_WIRE, c
                mat[k] = m
                row[k] = c
                col[k] = w
                for j in range(n8):
                    coef[k, j] = buf[p + 4 + j]
                p += 4 + n8
                k += 1
    if p != size:
        return _TRAILING, p
    return _OK, k


def read_r1cs(path: str | os.PathLike[str]) -> R1cs:
    """Read and check an .r1cs file; InteropError names the first defect."""
    f = BinFile(path, MAGIC, (VERSION,))
    if f.has(CUSTOM_GATES_LIST) or f.has(CUSTOM_GATES_USES):
        raise f.error("the circuit uses custom gates, which exist only for PLONK; Groth16 cannot prove it")
    rd = f.reader(f.section(HEADER, "header"))
    n8 = rd.u32("field size")
    prime = rd.bigint(n8, "prime")
    require_scalar_prime(f.error, prime, n8)
    n_wires, n_out, n_pub, n_prv = (rd.u32(w) for w in ("nWires", "nPubOut", "nPubIn", "nPrvIn"))
    n_labels = rd.u64("nLabels")
    n_constraints = rd.u32("nConstraints")
    if rd.remaining:
        raise f.error(f"section 1 (header) has {rd.remaining} unexpected trailing bytes")
    if n_wires < 1 + n_out + n_pub + n_prv:
        raise f.error(f"{n_wires} wires cannot hold ONE and {n_out + n_pub + n_prv} input/output signals")

    sec = f.section(CONSTRAINTS, "constraints")
    term = 4 + n8
    spare = sec.size - 12 * n_constraints
    if spare < 0 or spare % term:
        raise f.error(
            f"section 2 (constraints) has {sec.size} bytes, which no list of {n_constraints} "
            f"constraints with {term}-byte terms fills"
        )
    nnz = spare // term
    mat = np.empty(nnz, dtype=np.uint8)
    row = np.empty(nnz, dtype=np.int64)
    col = np.empty(nnz, dtype=np.int32)
    coef = np.empty((nnz, FR_BYTES), dtype=np.uint8)
    status, where = _scan(
        f.view(sec.offset, np.uint8, sec.size), n_constraints, n_wires, n8, mat, row, col, coef
    )
    if status == _TRUNCATED:
        raise f.error(f"section 2 (constraints) ends inside constraint {where}")
    if status == _BAD_WIRE:
        raise f.error(f"constraint {where} uses a wire beyond the {n_wires} the header declares")
    if status == _TRAILING:
        raise f.error(f"section 2 (constraints) has bytes after its {n_constraints} constraints")
    try:
        values = FR.from_canonical(coef.view("<u8").astype(np.uint64, copy=False))
    except NonCanonicalError as exc:
        raise f.error(f"a constraint coefficient is not below the prime ({exc})") from None
    a, b, c = (_csr(mat == m, row, col, values, (n_constraints, n_wires)) for m in range(3))

    labels = None
    if f.has(WIRE_LABELS):
        lab = f.section(WIRE_LABELS, "wire labels", size=8 * n_wires)
        labels = f.view(lab.offset, "<u8", n_wires)
    return R1cs(n_wires, n_out, n_pub, n_prv, n_labels, a, b, c, labels)


def _csr(
    sel: np.ndarray, row: np.ndarray, col: np.ndarray, values: np.ndarray, shape: tuple[int, int]
) -> CsrMatrix:
    """Rows arrive sorted (file order), so CSR is a count per row."""
    counts = np.bincount(row[sel], minlength=shape[0])
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return CsrMatrix(indptr=indptr, indices=col[sel], data=values[sel], shape=shape)


def write_r1cs(path: str | os.PathLike[str], r1cs: R1cs) -> None:
    """Write an .r1cs file circom would accept (tests and synthetic benchmark circuits)."""
    n = r1cs.n_constraints
    header = b"".join(
        [
            binfile.u32(FR_BYTES),
            binfile.bigint(FR.modulus, FR_BYTES),
            *(binfile.u32(v) for v in (r1cs.n_wires, r1cs.n_pub_out, r1cs.n_pub_in, r1cs.n_prv_in)),
            binfile.u64(r1cs.n_labels),
            binfile.u32(n),
        ]
    )
    mats = (r1cs.A, r1cs.B, r1cs.C)
    counts = np.stack([np.diff(m.indptr) for m in mats], axis=1)  # (n, 3)
    nnz = int(counts.sum())
    out = np.zeros(12 * n + nnz * (4 + FR_BYTES), dtype=np.uint8)
    ia, ib, ic = (m.indices.astype(np.int64) for m in mats)
    va, vb, vc = (FR.to_canonical(m.data).view(np.uint8).reshape(-1, FR_BYTES) for m in mats)
    _pack(counts.astype(np.int64), ia, ib, ic, va, vb, vc, out)
    labels = r1cs.labels if r1cs.labels is not None else np.arange(r1cs.n_wires, dtype="<u8")
    with BinFileWriter(path, MAGIC, VERSION, 3) as w:
        w.section(HEADER, header)
        w.section(CONSTRAINTS, out)
        w.section(WIRE_LABELS, np.asarray(labels, dtype="<u8"))


@njit(cache=True)
def _pack(counts, ia, ib, ic, va, vb, vc, out):
    p = 0
    ka = kb = kc = 0
    for c in range(counts.shape[0]):
        for m in range(3):
            cnt = counts[c, m]
            for s in range(4):
                out[p + s] = (cnt >> (8 * s)) & 0xFF
            p += 4
            for _ in range(cnt):
                if m == 0:
                    wire, vals, k = ia[ka], va, ka
                    ka += 1
                elif m == 1:
                    wire, vals, k = ib[kb], vb, kb
                    kb += 1
                else:
                    wire, vals, k = ic[kc], vc, kc
                    kc += 1
                for s in range(4):
                    out[p + s] = (wire >> (8 * s)) & 0xFF
                for j in range(32):
                    out[p + 4 + j] = vals[k, j]
                p += 36
