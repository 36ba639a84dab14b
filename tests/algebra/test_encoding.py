"""zcash point encodings and field bytes against py_arkworks_bls12381 and byte-level Python.

py_arkworks' to_compressed_bytes / from_compressed_bytes are the zcash compressed
format; the uncompressed format is built here from canonical ints. For the
flag rules the reference is zcash/bls12_381 (FORMATS.md section 1), which is
stricter than arkworks: arkworks accepts an infinity flag with other bits set,
zcash (and cuzk) do not.
"""

from __future__ import annotations

import numpy as np
import py_arkworks_bls12381 as ark
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyecc_oracle import P, R, curve_rhs, random_curve_points, sqrt_fq, sqrt_fq2

from cuzk.algebra import FQ, FQ2, FR, G1, G2, Curve
from cuzk.algebra import encoding as E
from cuzk.errors import (
    InfinityError,
    InvalidFlagsError,
    NonCanonicalError,
    NotInSubgroupError,
    NotOnCurveError,
    WrongLengthError,
)

CURVES = [pytest.param(G1, id="G1"), pytest.param(G2, id="G2")]
BOTH = [pytest.param(True, id="compressed"), pytest.param(False, id="uncompressed")]
HALF = (P - 1) // 2


@pytest.fixture(autouse=True, params=["python", "kernels"])
def decode_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs twice: batches decoded with Python ints and py_arkworks (a key's or a
    proof's few points), and with the numba kernels (larger batches)."""
    monkeypatch.setattr(E, "SMALL_POINTS", 1 << 30 if request.param == "python" else 0)
    return str(request.param)


def ark_cls(curve: Curve):
    return ark.G1Point if curve is G1 else ark.G2Point


def enc(curve: Curve, pts: np.ndarray, compressed: bool) -> np.ndarray:
    return E.encode_points(curve, pts, compressed=compressed)


def dec(curve: Curve, data, compressed: bool, **kw) -> np.ndarray:
    return E.decode_points(curve, data, compressed=compressed, **kw)


# --- a byte-level reference encoder, from canonical ints -------------------------------------


def coord_bytes(curve: Curve, c) -> bytes:
    if curve is G1:
        return c.to_bytes(48, "big")
    return c[1].to_bytes(48, "big") + c[0].to_bytes(48, "big")  # c1 then c0


def lex_largest(curve: Curve, y) -> bool:
    if curve is G1:
        return y > HALF
    return y[1] > HALF if y[1] else y[0] > HALF


def reference_encoding(curve: Curve, point, compressed: bool) -> bytes:
    size = E.point_size(curve, compressed)
    if point is None:
        return bytes([0xC0 if compressed else 0x40]) + bytes(size - 1)
    x, y = point
    if not compressed:
        return coord_bytes(curve, x) + coord_bytes(curve, y)
    raw = bytearray(coord_bytes(curve, x))
    raw[0] |= 0x80 | (0x20 if lex_largest(curve, y) else 0)
    return bytes(raw)


def sample_points(curve: Curve, rng: np.random.Generator, n: int = 12) -> np.ndarray:
    pts = np.concatenate([curve.random(n, rng), curve.identity(2), curve.generator()])
    return np.concatenate([pts, curve.neg(pts[:3])])  # both signs of y for some x


# --- round trips against the references ----------------------------------------------------------


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("compressed", BOTH)
def test_encode_matches_reference_and_round_trips(
    curve: Curve, compressed: bool, rng: np.random.Generator
) -> None:
    pts = sample_points(curve, rng)
    got = enc(curve, pts, compressed)
    assert got.shape == (pts.shape[0], E.point_size(curve, compressed)) and got.dtype == np.uint8
    want = b"".join(reference_encoding(curve, p, compressed) for p in curve.to_ints(pts))
    assert got.tobytes() == want
    assert np.array_equal(dec(curve, got, compressed), pts)
    assert np.array_equal(dec(curve, got.tobytes(), compressed), pts)


@pytest.mark.parametrize("curve", CURVES)
def test_compressed_matches_arkworks(curve: Curve, rng: np.random.Generator) -> None:
    pts = sample_points(curve, rng)
    ours = E.encode_points(curve, pts, compressed=True)
    theirs = [p.to_compressed_bytes() for p in (E.to_arkworks_g1 if curve is G1 else E.to_arkworks_g2)(pts)]
    assert [bytes(r) for r in ours] == theirs
    back = [ark_cls(curve).from_compressed_bytes(b) for b in theirs]
    from_ark = E.from_arkworks_g1(back) if curve is G1 else E.from_arkworks_g2(back)
    assert np.array_equal(from_ark, pts)
    assert np.array_equal(dec(curve, b"".join(theirs), True), pts)


@pytest.mark.parametrize("curve", CURVES)
def test_arkworks_bridges(curve: Curve, rng: np.random.Generator) -> None:
    pts = sample_points(curve, rng, 4)
    to_ark = E.to_arkworks_g1 if curve is G1 else E.to_arkworks_g2
    from_ark = E.from_arkworks_g1 if curve is G1 else E.from_arkworks_g2
    objs = to_ark(pts)
    assert objs == to_ark(pts, check=True)
    pair_sum = curve.to_affine(curve.add_mixed(curve.to_jacobian(pts[:1]), pts[1:2]))
    assert objs[0] + objs[1] == to_ark(pair_sum)[0]
    assert objs[-3] == -objs[0]
    assert np.array_equal(from_ark(objs), pts)
    s = FR.random(5, rng)
    scal = E.to_arkworks_scalars(s)
    assert [int(x) for x in scal] == FR.to_ints(s)
    assert np.array_equal(E.from_arkworks_scalars(scal), s)
    assert objs[0] * scal[0] == to_ark(curve.to_affine(curve.scalar_mul(pts[:1], s[:1])))[0]


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("compressed", BOTH)
def test_input_forms(curve: Curve, compressed: bool, rng: np.random.Generator) -> None:
    pts = sample_points(curve, rng, 3)
    rows = enc(curve, pts, compressed)
    k = rows.shape[1]
    raw = rows.tobytes()
    wide = np.zeros((rows.shape[0], k + 7), dtype=np.uint8)
    wide[:, 3 : 3 + k] = rows
    view = wide[:, 3 : 3 + k]  # non-contiguous rows, as a caller slicing a record gets
    readonly = np.frombuffer(raw, dtype=np.uint8)
    for form in (raw, bytearray(raw), memoryview(raw), readonly, readonly.reshape(-1, k), view):
        assert np.array_equal(dec(curve, form, compressed), pts)
    assert np.array_equal(wide[:, 3 : 3 + k], rows)  # the input is never written
    empty = dec(curve, b"", compressed)
    assert empty.shape == (0, *curve.affine_shape)
    assert enc(curve, empty, compressed).shape == (0, k)


def test_named_wrappers(rng: np.random.Generator) -> None:
    p, q = G1.random(3, rng), G2.random(3, rng)
    for compressed in (True, False):
        assert np.array_equal(E.decode_g1(E.encode_g1(p, compressed=compressed), compressed=compressed), p)
        assert np.array_equal(E.decode_g2(E.encode_g2(q, compressed=compressed), compressed=compressed), q)
    assert E.encode_g1(p).shape == (3, 48) and E.encode_g2(q).shape == (3, 96)
    assert E.point_size(G1, False) == 96 and E.point_size(G2, False) == 192


# --- every bad-encoding class, with the index of the first bad point --------------------------------


def valid_rows(curve: Curve, compressed: bool, rng: np.random.Generator, n: int = 6) -> np.ndarray:
    return enc(curve, curve.random(n, rng), compressed).copy()


def outside_point(curve: Curve, rng: np.random.Generator) -> np.ndarray:
    return curve.from_ints(random_curve_points(curve, 1, rng))


def no_root_x(curve: Curve, rng: np.random.Generator):
    while True:
        if curve is G1:
            x = int.from_bytes(rng.bytes(48), "big") % P
            if sqrt_fq(curve_rhs(G1, x)) is None:
                return x
        else:
            x = tuple(int.from_bytes(rng.bytes(48), "big") % P for _ in range(2))
            if sqrt_fq2(curve_rhs(G2, x)) is None:
                return x


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("compressed", BOTH)
def test_wrong_length(curve: Curve, compressed: bool, rng: np.random.Generator) -> None:
    rows = valid_rows(curve, compressed, rng, 2)
    with pytest.raises(WrongLengthError, match="not a multiple"):
        dec(curve, rows.tobytes()[:-1], compressed)
    with pytest.raises(WrongLengthError, match="bytes each"):
        dec(curve, rows[:, :-1], compressed)
    with pytest.raises(WrongLengthError):
        dec(curve, rows.reshape(1, 2, -1), compressed)
    with pytest.raises(TypeError, match="uint8"):
        dec(curve, rows.astype(np.int16), compressed)
    other = E.point_size(curve, not compressed)
    with pytest.raises((WrongLengthError, InvalidFlagsError)):
        dec(curve, bytes(other), compressed)  # the other format's length


def flag_cases(curve: Curve, compressed: bool, rng: np.random.Generator) -> list[tuple[str, bytes]]:
    good = bytes(valid_rows(curve, compressed, rng, 1)[0])
    k = len(good)
    inf = 0xC0 if compressed else 0x40
    cases = [
        ("infinity with the sort flag", bytes([inf | 0x20]) + bytes(k - 1)),
        ("infinity with a set coordinate bit", bytes([inf]) + bytes(k - 2) + b"\x01"),
        ("infinity with a set low bit in byte 0", bytes([inf | 0x01]) + bytes(k - 1)),
        ("infinity flag on a real point", bytes([good[0] | 0x40]) + good[1:]),
    ]
    if compressed:
        cases += [
            ("compression flag missing", bytes([good[0] & 0x7F]) + good[1:]),
            ("infinity without the compression flag", bytes([0x40]) + bytes(k - 1)),
        ]
    else:
        cases += [
            ("compression flag on uncompressed", bytes([good[0] | 0x80]) + good[1:]),
            ("sort flag on uncompressed", bytes([good[0] | 0x20]) + good[1:]),
            ("compressed infinity in uncompressed", bytes([0xC0]) + bytes(k - 1)),
        ]
    return cases


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("compressed", BOTH)
def test_invalid_flags(curve: Curve, compressed: bool, rng: np.random.Generator) -> None:
    rows = valid_rows(curve, compressed, rng)
    for name, bad in flag_cases(curve, compressed, rng):
        data = rows.copy()
        data[3] = np.frombuffer(bad, dtype=np.uint8)
        with pytest.raises(InvalidFlagsError, match=r"point 3: invalid flags") as info:
            dec(curve, data, compressed)
        assert curve.name in str(info.value), name


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("compressed", BOTH)
def test_infinity_policy(curve: Curve, compressed: bool, rng: np.random.Generator) -> None:
    pts = curve.random(4, rng)
    pts[2] = 0
    data = enc(curve, pts, compressed)
    assert np.array_equal(dec(curve, data, compressed), pts)
    with pytest.raises(InfinityError, match="point 2 is the point at infinity"):
        dec(curve, data, compressed, allow_infinity=False)
    # All zero bytes without the infinity flag: uncompressed it is (0, 0), not a curve point;
    # compressed it lacks the compression flag.
    zero = np.zeros((1, E.point_size(curve, compressed)), dtype=np.uint8)
    with pytest.raises(NotOnCurveError if not compressed else InvalidFlagsError, match="point 0"):
        dec(curve, zero, compressed)


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("compressed", BOTH)
def test_non_canonical_coordinates(curve: Curve, compressed: bool, rng: np.random.Generator) -> None:
    rows = valid_rows(curve, compressed, rng)
    size = 48
    ncoords = rows.shape[1] // size
    for coord in range(ncoords):  # x (and y), and for G2 each of c1, c0
        for value in (P, P + 1, (1 << 381) - 1):
            data = rows.copy()
            chunk = bytearray(value.to_bytes(48, "big"))
            chunk[0] |= data[4, coord * size] & 0xE0 if coord == 0 else 0
            data[4, coord * size : (coord + 1) * size] = np.frombuffer(bytes(chunk), dtype=np.uint8)
            with pytest.raises(NonCanonicalError, match="point 4: a coordinate is not below"):
                dec(curve, data, compressed)


@pytest.mark.parametrize("curve", CURVES)
def test_compressed_x_without_root(curve: Curve, rng: np.random.Generator) -> None:
    x = no_root_x(curve, rng)
    rows = valid_rows(curve, True, rng)
    bad = bytearray(coord_bytes(curve, x))
    bad[0] |= 0x80
    rows[1] = np.frombuffer(bytes(bad), dtype=np.uint8)
    with pytest.raises(NotOnCurveError, match="point 1: x\\^3 \\+ b has no square root"):
        E.decode_points(curve, rows, compressed=True, check_subgroup=False)
    with pytest.raises(Exception):  # noqa: B017 - arkworks agrees the encoding is invalid
        ark_cls(curve).from_compressed_bytes(bytes(bad))


@pytest.mark.parametrize("curve", CURVES)
def test_uncompressed_off_curve(curve: Curve, rng: np.random.Generator) -> None:
    pts = curve.random(5, rng)
    (x, y) = curve.to_ints(pts[2:3])[0]
    y1 = (y + 1) % P if curve is G1 else ((y[0] + 1) % P, y[1])
    rows = enc(curve, pts, False)
    rows[2] = np.frombuffer(coord_bytes(curve, x) + coord_bytes(curve, y1), dtype=np.uint8)
    with pytest.raises(NotOnCurveError, match=r"point 2: .* does not satisfy the curve equation"):
        E.decode_points(curve, rows, compressed=False, check_subgroup=False)


@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("compressed", BOTH)
def test_not_in_subgroup(curve: Curve, compressed: bool, rng: np.random.Generator) -> None:
    pts = curve.random(5, rng)
    pts[3] = outside_point(curve, rng)[0]
    data = enc(curve, pts, compressed)
    with pytest.raises(NotInSubgroupError, match="point 3 is on the curve but not in the prime-order"):
        dec(curve, data, compressed)
    assert np.array_equal(dec(curve, data, compressed, check_subgroup=False), pts)
    if compressed:
        with pytest.raises(Exception):  # noqa: B017 - arkworks' checked decoding rejects it too
            ark_cls(curve).from_compressed_bytes(bytes(data[3]))


def test_g1_x_zero_is_a_point_of_order_three() -> None:
    """x = 0 gives y = +-2: on E1, outside G1 (order 3): caught by the subgroup check only."""
    data = bytes([0x80]) + bytes(47)
    with pytest.raises(NotInSubgroupError, match="point 0"):
        E.decode_g1(data)
    pt = E.decode_g1(data, check_subgroup=False)
    assert G1.to_ints(pt) == [(0, 2)]  # 2 < (p-1)/2, so the unset sort flag picks +2
    assert G1.to_ints(E.decode_g1(bytes([0xA0]) + bytes(47), check_subgroup=False)) == [(0, P - 2)]


@pytest.mark.parametrize("curve", CURVES)
def test_first_bad_point_wins(curve: Curve, rng: np.random.Generator) -> None:
    pts = curve.random(6, rng)
    pts[1] = outside_point(curve, rng)[0]
    data = enc(curve, pts, True)
    data[4, 0] &= 0x7F  # bad flags later
    with pytest.raises(NotInSubgroupError, match="point 1"):
        E.decode_points(curve, data, compressed=True)
    with pytest.raises(InvalidFlagsError, match="point 4"):
        E.decode_points(curve, data, compressed=True, check_subgroup=False)
    data2 = enc(curve, pts[::-1].copy(), True)  # subgroup failure now at 4
    data2[1, 0] &= 0x7F
    with pytest.raises(InvalidFlagsError, match="point 1"):
        E.decode_points(curve, data2, compressed=True)


# --- field element bytes ------------------------------------------------------------------------------


def test_fr_bytes(rng: np.random.Generator) -> None:
    vals = [0, 1, R - 1, *FR.to_ints(FR.random(20, rng))]
    a = FR.from_ints(vals)
    got = E.encode_fr(a)
    assert got.tobytes() == b"".join(v.to_bytes(32, "big") for v in vals)
    assert [bytes(r) for r in got] == [s.to_be_bytes() for s in E.to_arkworks_scalars(a)]
    assert np.array_equal(E.decode_fr(got), a)
    assert np.array_equal(E.decode_fr(got.tobytes()), a)
    big = [R, R + 1, 2 * R, (1 << 256) - 1]  # every value of 32 bytes is below 3r
    raw = b"".join(v.to_bytes(32, "big") for v in [5, *big])
    with pytest.raises(NonCanonicalError, match="Fr element 1 is not below"):
        E.decode_fr(raw)
    assert FR.to_ints(E.decode_fr(raw, reduce=True)) == [v % R for v in [5, *big]]
    with pytest.raises(WrongLengthError):
        E.decode_fr(raw[:-1])


def test_fq_and_fq2_bytes(rng: np.random.Generator) -> None:
    vals = [0, 1, P - 1, *FQ.to_ints(FQ.random(10, rng))]
    a = FQ.from_ints(vals)
    assert E.encode_fq(a).tobytes() == b"".join(v.to_bytes(48, "big") for v in vals)
    assert np.array_equal(E.decode_fq(E.encode_fq(a)), a)
    with pytest.raises(NonCanonicalError, match="Fq element 2"):
        E.decode_fq(b"".join(v.to_bytes(48, "big") for v in (1, 2, P)))
    top = (1 << 384) - 1
    assert FQ.to_ints(E.decode_fq(top.to_bytes(48, "big"), reduce=True)) == [top % P]
    pairs = [(1, 2), (P - 1, 0), *FQ2.to_ints(FQ2.random(5, rng))]
    b = FQ2.from_ints(pairs)
    want = b"".join(c1.to_bytes(48, "big") + c0.to_bytes(48, "big") for c0, c1 in pairs)
    assert E.encode_fq2(b).tobytes() == want
    assert np.array_equal(E.decode_fq2(E.encode_fq2(b)), b)
    with pytest.raises(NonCanonicalError, match="Fq2 element 1"):
        E.decode_fq2(bytes(96) + P.to_bytes(48, "big") + bytes(48))
    with pytest.raises(WrongLengthError):
        E.decode_fq2(bytes(95))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.binary(min_size=32, max_size=32), min_size=1, max_size=8))
def test_fr_bytes_property(chunks: list[bytes]) -> None:
    """Any 32 bytes: rejected exactly when the value is >= r, and reduce takes it mod r."""
    raw = b"".join(chunks)
    values = [int.from_bytes(c, "big") for c in chunks]
    assert FR.to_ints(E.decode_fr(raw, reduce=True)) == [v % R for v in values]
    bad = [i for i, v in enumerate(values) if v >= R]
    if bad:
        with pytest.raises(NonCanonicalError, match=f"element {bad[0]} "):
            E.decode_fr(raw)
    else:
        assert E.encode_fr(E.decode_fr(raw)).tobytes() == raw
