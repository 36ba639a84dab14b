"""Round trips and layout facts of the .r1cs, .wtns and .zkey readers and writers."""

from __future__ import annotations

import mmap
import struct

import numpy as np
import pytest
from circom_toy import random_circuit, witness_array

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1, G2
from cuzk.algebra.fields import FR
from cuzk.backends.base import Backend
from cuzk.interop.binfile import BinFile
from cuzk.interop.r1cs import read_r1cs, write_r1cs
from cuzk.interop.wtns import read_wtns, write_wtns
from cuzk.interop.zkey import read_zkey, snarkjs_domain_size, write_zkey


def _same_csr(a, b) -> None:
    assert a.shape == b.shape
    assert np.array_equal(a.indptr, b.indptr)
    assert np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.data, b.data)


def test_r1cs_round_trip_and_satisfaction(tmp_path, cpu: Backend) -> None:
    r1cs, w = random_circuit(7, n_internal=60)
    path = tmp_path / "c.r1cs"
    write_r1cs(path, r1cs)
    back = read_r1cs(path)
    for name in ("A", "B", "C"):
        _same_csr(getattr(r1cs, name), getattr(back, name))
    assert (back.n_wires, back.n_pub_out, back.n_pub_in, back.n_prv_in) == (r1cs.n_wires, 2, 2, 3)
    assert back.first_unsatisfied(witness_array(w), cpu) == -1
    w[r1cs.n_wires - 5] += 1  # an internal wire: its own constraint breaks first
    assert back.first_unsatisfied(witness_array(w), cpu) == r1cs.n_wires - 5 - (1 + 2 + 5)


def test_r1cs_layout_by_hand(tmp_path) -> None:
    """One constraint 3 w1 * w1 = w2, bytes laid out per FORMATS.md, read back."""
    header = struct.pack("<I", 32) + C.R.to_bytes(32, "little") + struct.pack("<IIIIQI", 3, 1, 0, 0, 3, 1)
    term = lambda wire, v: struct.pack("<I", wire) + v.to_bytes(32, "little")  # noqa: E731
    body = (
        struct.pack("<I", 1)
        + term(1, 3)
        + struct.pack("<I", 1)
        + term(1, 1)
        + struct.pack("<I", 1)
        + term(2, 1)
    )
    labels = struct.pack("<3Q", 0, 1, 2)
    secs = [(2, body), (1, header), (3, labels)]  # any order
    raw = b"r1cs" + struct.pack("<II", 1, 3) + b"".join(struct.pack("<IQ", t, len(b)) + b for t, b in secs)
    path = tmp_path / "hand.r1cs"
    path.write_bytes(raw)
    r = read_r1cs(path)
    assert r.n_constraints == 1 and r.n_public == 1
    assert FR.to_ints(r.A.data) == [3] and r.A.indices.tolist() == [1]
    assert r.labels is not None and r.labels.tolist() == [0, 1, 2]


def test_wtns_round_trip(tmp_path) -> None:
    w = [1, *(pow(3, i, C.R) * 0x9E3779B97F4A7C15 % C.R for i in range(20))]
    path = tmp_path / "w.wtns"
    write_wtns(path, FR.from_ints(w))
    assert FR.to_ints(read_wtns(path)) == w
    f = BinFile(path, b"wtns", (2,))
    assert f.version == 2 and f.section(2, "values").size == 32 * len(w)


def test_zkey_round_trip_is_byte_exact(toy_files, tmp_path) -> None:
    zk = read_zkey(toy_files.zkey_path)
    out = tmp_path / "again.zkey"
    write_zkey(out, zk)
    assert out.read_bytes() == toy_files.zkey_path.read_bytes()
    back = read_zkey(out)
    for name in ("ic", "a", "b1", "b2", "c", "h", "alpha_g1", "beta_g2", "gamma_g2", "delta_g2"):
        assert np.array_equal(getattr(back, name), getattr(zk, name)), name


def test_zkey_sections_are_views_of_the_file(toy_files) -> None:
    zk = read_zkey(toy_files.zkey_path)
    for arr in (zk.a, zk.b2, zk.h, zk.coeffs):
        base = arr
        while isinstance(base, np.ndarray):
            base = base.base
        if isinstance(base, memoryview):
            base = base.obj
        assert isinstance(base, mmap.mmap)  # no copy: the array lives in the mapped file
    zk.validate_points(subgroup=True)
    assert G1.is_on_curve(zk.a).all() and G2.is_on_curve(zk.b2).all()
    assert G1.is_identity(zk.a[7:8]).all()  # wire 7 is in no constraint: its A point is zero


def test_zkey_matrices_hold_the_public_binding_rows(toy_files) -> None:
    zk = read_zkey(toy_files.zkey_path)
    a, b = zk.matrices()
    r = toy_files.r1cs
    n = r.n_constraints
    assert a.shape == (zk.domain_size, zk.n_vars)
    for s in range(zk.n_public + 1):  # A[nC + s][s] = 1
        lo, hi = a.indptr[n + s], a.indptr[n + s + 1]
        assert a.indices[lo:hi].tolist() == [s] and FR.to_ints(a.data[lo:hi]) == [1]
    assert np.array_equal(a.indices[: r.A.nnz], r.A.indices)
    assert np.array_equal(a.data[: r.A.nnz], r.A.data)
    assert b.indptr[n] == r.B.nnz == b.nnz  # B gets no extra rows
    assert np.array_equal(b.indptr[: n + 1], r.B.indptr) and np.array_equal(b.data, r.B.data)


@pytest.mark.parametrize(
    ("n_constraints", "n_public", "domain"),
    [(241, 2, 256), (254, 2, 512), (1, 0, 2), (29160, 6, 1 << 15), ((1 << 19) - 2, 2, 1 << 20)],
)
def test_domain_size_rule(n_constraints: int, n_public: int, domain: int) -> None:
    assert snarkjs_domain_size(n_constraints, n_public) == domain
