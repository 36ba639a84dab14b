"""Malformed .r1cs / .wtns / .zkey files, made by hand, are refused with specific InteropErrors."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from cuzk.algebra import constants as C
from cuzk.errors import InteropError
from cuzk.interop.binfile import BinFile, BinFileWriter
from cuzk.interop.primes import BN254_Q, BN254_R
from cuzk.interop.r1cs import read_r1cs
from cuzk.interop.wtns import read_wtns
from cuzk.interop.zkey import read_zkey, write_zkey


def container(
    magic: bytes, version: int, sections: list[tuple[int, bytes]], count: int | None = None
) -> bytes:
    body = b"".join(struct.pack("<IQ", t, len(b)) + b for t, b in sections)
    return magic + struct.pack("<II", version, len(sections) if count is None else count) + body


def _term(wire: int, value: int) -> bytes:
    return struct.pack("<I", wire) + value.to_bytes(32, "little")


def r1cs_sections(
    *, prime: int = C.R, n8: int = 32, wire: int = 1, coef: int = 3, body_extra: bytes = b"", count_a: int = 1
) -> list[tuple[int, bytes]]:
    """One constraint coef * w_wire * w1 = w2 over 3 wires (1 public output)."""
    header = struct.pack("<I", n8) + prime.to_bytes(n8, "little") + struct.pack("<IIIIQI", 3, 1, 0, 0, 3, 1)
    body = struct.pack("<I", count_a) + _term(wire, coef) + struct.pack("<I", 1) + _term(1, 1)
    body += struct.pack("<I", 1) + _term(2, 1) + body_extra
    return [(1, header), (2, body), (3, struct.pack("<3Q", 0, 1, 2))]


def wtns_sections(*, prime: int = C.R, values: tuple[int, ...] = (1, 5, 7), n: int | None = None) -> list:
    header = (
        struct.pack("<I", 32)
        + prime.to_bytes(32, "little")
        + struct.pack("<I", len(values) if n is None else n)
    )
    return [(1, header), (2, b"".join(v.to_bytes(32, "little") for v in values))]


R1CS_CASES: dict[str, tuple[bytes, str]] = {
    "short": (b"r1cs\x01", "shorter than the 12-byte file header"),
    "magic": (container(b"wtns", 1, r1cs_sections()), "bad magic b'wtns'"),
    "version": (container(b"r1cs", 2, r1cs_sections()), "unsupported .r1cs version 2"),
    "truncated": (container(b"r1cs", 1, r1cs_sections())[:-9], "truncated: section 3 claims 24 bytes"),
    "count": (container(b"r1cs", 1, r1cs_sections(), count=4), "announces 4 sections"),
    "missing": (container(b"r1cs", 1, r1cs_sections()[::2]), r"section 2 \(constraints\) is missing"),
    "duplicate": (container(b"r1cs", 1, [*r1cs_sections(), r1cs_sections()[0]]), "appears 2 times"),
    "bn128": (container(b"r1cs", 1, r1cs_sections(prime=BN254_R)), "the field is bn128, not bls12381"),
    "unknown_prime": (container(b"r1cs", 1, r1cs_sections(prime=101)), "unknown prime 0x65"),
    "n8": (
        container(b"r1cs", 1, r1cs_sections(n8=48)),
        "field elements are 48 bytes; BLS12-381 scalars take 32",
    ),
    "wire": (container(b"r1cs", 1, r1cs_sections(wire=3)), "constraint 0 uses a wire beyond the 3"),
    "coef": (container(b"r1cs", 1, r1cs_sections(coef=C.R)), "coefficient is not below the prime"),
    "size": (container(b"r1cs", 1, r1cs_sections(body_extra=b"\0")), "which no list of 1 constraints"),
    "trailing": (
        container(b"r1cs", 1, r1cs_sections(body_extra=_term(0, 1))),
        "bytes after its 1 constraints",
    ),
    "count_a": (container(b"r1cs", 1, r1cs_sections(count_a=9)), "ends inside constraint 0"),
    "custom": (container(b"r1cs", 1, [*r1cs_sections(), (4, b"")]), "custom gates"),
    "labels": (
        container(b"r1cs", 1, [*r1cs_sections()[:2], (3, b"\0" * 8)]),
        r"section 3 \(wire labels\) has 8",
    ),
}

WTNS_CASES: dict[str, tuple[bytes, str]] = {
    "version": (container(b"wtns", 1, wtns_sections()), "unsupported .wtns version 1"),
    "size": (container(b"wtns", 2, wtns_sections(n=4)), "has 96 bytes; the header implies 128"),
    "one": (container(b"wtns", 2, wtns_sections(values=(2, 5))), "value 0 must be 1"),
    "range": (container(b"wtns", 2, wtns_sections(values=(1, C.R))), "not below the prime"),
    "bn128": (container(b"wtns", 2, wtns_sections(prime=BN254_R)), "bn128"),
    "empty": (container(b"wtns", 2, wtns_sections(values=())), "witness is empty"),
    "zkey": (container(b"zkey", 1, wtns_sections()), "not a .wtns file"),
}


def _write(tmp_path: Path, raw: bytes, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(raw)
    return path


@pytest.mark.parametrize("case", sorted(R1CS_CASES))
def test_bad_r1cs(case: str, tmp_path: Path) -> None:
    raw, message = R1CS_CASES[case]
    with pytest.raises(InteropError, match=message):
        read_r1cs(_write(tmp_path, raw, "bad.r1cs"))


def test_good_hand_made_r1cs_reads(tmp_path: Path) -> None:
    """The baseline of the cases above is itself valid, so each case fails for its one defect."""
    r = read_r1cs(_write(tmp_path, container(b"r1cs", 1, r1cs_sections()), "ok.r1cs"))
    assert r.n_constraints == 1 and r.A.nnz == r.B.nnz == r.C.nnz == 1


@pytest.mark.parametrize("case", sorted(WTNS_CASES))
def test_bad_wtns(case: str, tmp_path: Path) -> None:
    raw, message = WTNS_CASES[case]
    with pytest.raises(InteropError, match=message):
        read_wtns(_write(tmp_path, raw, "bad.wtns"))


def test_good_hand_made_wtns_reads(tmp_path: Path) -> None:
    assert read_wtns(_write(tmp_path, container(b"wtns", 2, wtns_sections()), "ok.wtns")).shape == (3, 4)


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(InteropError, match="cannot read"):
        read_zkey(tmp_path / "nope.zkey")
    with pytest.raises(InteropError, match="the file is empty"):
        read_wtns(_write(tmp_path, b"", "empty.wtns"))


# --- zkey: a valid key with one defect patched in --------------------------------------------------
Patch = Callable[[bytearray, dict[int, int]], None]


def _u32_at(pos: int, value: int) -> Patch:
    return lambda raw, off: raw.__setitem__(slice(off[2] + pos, off[2] + pos + 4), struct.pack("<I", value))


def _protocol(value: int) -> Patch:
    return lambda raw, off: raw.__setitem__(slice(off[1], off[1] + 4), struct.pack("<I", value))


def _q(raw: bytearray, off: dict[int, int]) -> None:
    raw[off[2] + 4 : off[2] + 52] = BN254_Q.to_bytes(48, "little")


def _zero_alpha(raw: bytearray, off: dict[int, int]) -> None:
    start = off[2] + 4 + 48 + 4 + 32 + 12
    raw[start : start + 96] = bytes(96)


def _ic_off_curve(raw: bytearray, off: dict[int, int]) -> None:
    raw[off[3] + 50] ^= 1


def _ic_noncanonical(raw: bytearray, off: dict[int, int]) -> None:
    raw[off[3] : off[3] + 48] = (C.Q + 1).to_bytes(48, "little")


def _coef_field(field: int, value: int) -> Patch:
    def patch(raw: bytearray, off: dict[int, int]) -> None:
        at = off[4] + 4 + 4 * field  # the first record's field
        raw[at : at + 4] = struct.pack("<I", value)

    return patch


def _coef_value(raw: bytearray, off: dict[int, int]) -> None:
    at = off[4] + 4 + 12
    raw[at : at + 32] = C.R.to_bytes(32, "little")


ZKEY_CASES: dict[str, tuple[Patch, str]] = {
    "plonk": (_protocol(2), "this is a plonk key; cuzk proves Groth16 keys only"),
    "fflonk": (_protocol(10), "this is a fflonk key"),
    "protocol": (_protocol(7), "unknown protocol 7"),
    "curve": (_q, "the key is for the curve bn128"),
    "nvars": (_u32_at(4 + 48 + 4 + 32, 9), r"section 5 \(A points\) has 768 bytes; the header implies 864"),
    "npublic": (_u32_at(4 + 48 + 4 + 32 + 4, 3), r"section 3 \(IC\) has 288 bytes; the header implies 384"),
    "domain": (_u32_at(4 + 48 + 4 + 32 + 8, 24), "domainSize = 24 is not a power of two"),
    "alpha": (_zero_alpha, "alpha1 point 0 is the point at infinity"),
    "ic_curve": (_ic_off_curve, "IC point 0 is not on the curve"),
    "ic_range": (_ic_noncanonical, "IC point 0 has a coordinate that is not below the base prime"),
}

MATRIX_CASES: dict[str, tuple[Patch, str]] = {
    "matrix": (_coef_field(0, 2), "names matrix 2"),
    "row": (_coef_field(1, 1 << 20), "outside the domain"),
    "signal": (_coef_field(2, 99), "names signal 99"),
    "value": (_coef_value, "coefficient 0 is not below the scalar prime"),
}


def _patched(toy_files, tmp_path: Path, patch: Patch) -> Path:
    f = BinFile(toy_files.zkey_path, b"zkey", (1,))
    offsets = {t: s[0].offset for t, s in f.sections.items()}
    raw = bytearray(toy_files.zkey_path.read_bytes())
    patch(raw, offsets)
    return _write(tmp_path, bytes(raw), "bad.zkey")


@pytest.mark.parametrize("case", sorted(ZKEY_CASES))
def test_bad_zkey(case: str, toy_files, tmp_path: Path) -> None:
    patch, message = ZKEY_CASES[case]
    with pytest.raises(InteropError, match=message):
        read_zkey(_patched(toy_files, tmp_path, patch))


@pytest.mark.parametrize("case", sorted(MATRIX_CASES))
def test_bad_zkey_coefficients(case: str, toy_files, tmp_path: Path) -> None:
    patch, message = MATRIX_CASES[case]
    zk = read_zkey(_patched(toy_files, tmp_path, patch))
    with pytest.raises(InteropError, match=message):
        zk.matrices()


def test_truncated_zkey(toy_files, tmp_path: Path) -> None:
    raw = toy_files.zkey_path.read_bytes()
    with pytest.raises(InteropError, match="truncated"):
        read_zkey(_write(tmp_path, raw[: len(raw) - 100], "cut.zkey"))
    with pytest.raises(InteropError, match="bad magic"):
        read_zkey(_write(tmp_path, b"ptau" + raw[4:], "ptau.zkey"))


def test_zkey_section_size_must_match_the_header(toy_files, tmp_path: Path) -> None:
    f = BinFile(toy_files.zkey_path, b"zkey", (1,))
    raw = toy_files.zkey_path.read_bytes()
    sec = f.section(9, "H")
    # drop one H point and shrink the section's size field accordingly
    head = raw[: sec.offset - 8] + struct.pack("<Q", sec.size - 96)
    cut = head + raw[sec.offset : sec.offset + sec.size - 96] + raw[sec.offset + sec.size :]
    with pytest.raises(InteropError, match=r"section 9 \(H points\) has \d+ bytes; the header implies"):
        read_zkey(_write(tmp_path, cut, "short_h.zkey"))


def test_validate_points_finds_a_damaged_query_point(toy_files, tmp_path: Path) -> None:
    """Large sections are checked on request only; a flipped bit in B2 is then named."""
    f = BinFile(toy_files.zkey_path, b"zkey", (1,))
    raw = bytearray(toy_files.zkey_path.read_bytes())
    raw[f.section(7, "B2").offset + 3 * 192 + 5] ^= 0x10  # B2 point 3 (x.c0)
    zk = read_zkey(_write(tmp_path, bytes(raw), "b2.zkey"))
    with pytest.raises(InteropError, match="B2 point 3 is not on the curve"):
        zk.validate_points()


def test_a_failed_write_leaves_the_old_file_alone(toy_files, tmp_path: Path, monkeypatch) -> None:
    target = _write(tmp_path, toy_files.zkey_path.read_bytes(), "keep.zkey")
    before = target.read_bytes()
    zk = read_zkey(toy_files.zkey_path)

    def full_disk(self, kind, *chunks):
        raise InteropError(f"{self.path}: cannot write: No space left on device")

    monkeypatch.setattr(BinFileWriter, "section", full_disk)
    with pytest.raises(InteropError, match="No space left"):
        write_zkey(target, zk)
    monkeypatch.undo()
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.zkey"]  # no partial file left
    with (
        pytest.raises(InteropError, match="wrote 1 sections, announced 2"),
        BinFileWriter(target, b"zkey", 1, 2) as w,
    ):
        w.section(1, b"\0" * 4)
    assert target.read_bytes() == before
    write_zkey(target, zk)  # a complete write replaces it
    assert read_zkey(target).n_vars == zk.n_vars
