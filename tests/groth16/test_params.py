"""Setup semantics and the bellperson file layouts: round trips, truncation, corruption."""

from __future__ import annotations

import json

import numpy as np
import pytest
from toy import build

from cuzk.algebra import encoding
from cuzk.errors import ParamsError, SetupError
from cuzk.groth16 import generate_parameters, make_resident, prove, verify
from cuzk.groth16 import params_io as io
from cuzk.groth16.srs import check_shape


def test_vk_layout_is_bellperson_byte_for_byte(cubic_setup, tmp_path):
    _, _, params, _ = cubic_setup
    vk = params.vk
    data = io.vk_to_bytes(vk)
    assert len(data) == 96 + 96 + 192 + 192 + 96 + 192 + 4 + 96 * vk.num_inputs
    assert data[:96] == encoding.encode_g1(vk.alpha_g1, compressed=False).tobytes()
    assert data[384:576] == encoding.encode_g2(vk.gamma_g2, compressed=False).tobytes()
    assert int.from_bytes(data[864:868], "big") == vk.num_inputs
    back = io.vk_from_bytes(data)
    for name in ("alpha_g1", "beta_g1", "beta_g2", "gamma_g2", "delta_g1", "delta_g2", "ic"):
        assert np.array_equal(getattr(back, name), getattr(vk, name))


def test_params_round_trip_byte_for_byte(cpu, cubic_setup, tmp_path):
    cs, w, params, _ = cubic_setup
    path = tmp_path / "c.params"
    digest = io.write_params(params, path)
    assert digest == io.sha256_file(path)
    loaded = io.ParamsFile(path, checked=True).parameters()
    path2 = tmp_path / "again.params"
    io.write_params(loaded, path2)
    assert path.read_bytes() == path2.read_bytes()
    # sections in bellperson's order with u32 big-endian counts
    counts = io.ParamsFile(path).counts()
    assert [counts[k] for k in ("ic", "h", "l", "a", "b_g1", "b_g2")] == [
        2,
        params.h.shape[0],
        3,
        params.a.shape[0],
        params.b_g1.shape[0],
        params.b_g2.shape[0],
    ]
    srs = make_resident(loaded, cs, cpu)
    assert verify(loaded.vk, [35], prove(srs, [w]).proofs[0])


def test_trailing_bytes_after_b_g2_are_ignored(cubic_setup, tmp_path):
    _, _, params, _ = cubic_setup
    path = tmp_path / "c.params"
    io.write_params(params, path)
    path.write_bytes(path.read_bytes() + b"extra")
    assert io.ParamsFile(path).parameters().h.shape == params.h.shape


def test_truncated_params_are_rejected(cubic_setup, tmp_path):
    _, _, params, _ = cubic_setup
    path = tmp_path / "c.params"
    io.write_params(params, path)
    full = path.read_bytes()
    for cut in (10, 900, len(full) - 1):
        path.write_bytes(full[:cut])
        with pytest.raises(ParamsError, match="truncated"):
            io.ParamsFile(path)


def test_bit_flips_are_rejected(cubic_setup, tmp_path):
    _, _, params, _ = cubic_setup
    path = tmp_path / "c.params"
    io.write_params(params, path)
    full = bytearray(path.read_bytes())
    full[96 * 2 + 192 * 2 + 60] ^= 0x04  # a coordinate byte of delta_g1
    path.write_bytes(bytes(full))
    with pytest.raises(ParamsError, match="delta_g1"):
        io.ParamsFile(path).vk()


def test_infinity_points_are_rejected(cubic_setup, tmp_path):
    _, _, params, _ = cubic_setup
    path = tmp_path / "c.params"
    io.write_params(params, path)
    full = bytearray(path.read_bytes())
    sec = io.ParamsFile(path)._layout.sections["l"]
    full[sec.offset : sec.offset + 96] = bytes([0x40]) + bytes(95)
    path.write_bytes(bytes(full))
    with pytest.raises(ParamsError, match=r"l: .*infinity"):
        io.ParamsFile(path).query("l")


def test_manifest_hash_mismatch(cubic_setup, tmp_path):
    _, _, params, _ = cubic_setup
    manifest_path = io.save(params, tmp_path, "cubic", meta={"topology_hash": "ab" * 32})
    manifest = io.read_manifest(tmp_path, "cubic")
    assert manifest["sizes"]["h"] == params.h.shape[0]
    assert "not a ceremony" in manifest["setup"]
    io.verify_files(tmp_path, manifest)
    vk_path = tmp_path / "cubic.vk"
    data = bytearray(vk_path.read_bytes())
    data[-1] ^= 1
    vk_path.write_bytes(bytes(data))
    with pytest.raises(ParamsError, match="sha256"):
        io.verify_files(tmp_path, manifest)
    manifest_path.write_text(json.dumps({"format": "other"}))
    with pytest.raises(ParamsError, match="manifest"):
        io.read_manifest(tmp_path, "cubic")


def test_params_for_another_circuit_are_refused(cubic_setup, random_setup):
    cs, _, _, _ = cubic_setup
    _, _, other_params, _ = random_setup
    with pytest.raises(ParamsError, match="do not fit"):
        check_shape(other_params, cs)


def test_unconstrained_aux_is_refused(cpu):
    # aux 1 appears in no constraint at all
    cs = build(2, 2, [({2: 1}, {2: 1}, {1: 1})], ["sq"])
    with pytest.raises(SetupError, match="aux variable 1 is unconstrained"):
        generate_parameters(cs, cpu)


def test_unbound_public_input_is_refused(cpu):
    # without bellperson's x_i * 0 = 0 rows, input 2 appears nowhere: its ic point would be infinity
    cs = build(3, 1, [({3: 1}, {0: 1}, {1: 1})], ["copy"], input_rows=False)
    with pytest.raises(SetupError, match="public input 2 is bound by no constraint"):
        generate_parameters(cs, cpu)


@pytest.mark.parametrize(
    "text",
    [
        "[1, 2]",
        "5",
        '"params"',
        json.dumps({"format": io.MANIFEST_FORMAT, "version": io.MANIFEST_VERSION, "files": [1, 2]}),
        json.dumps({"format": io.MANIFEST_FORMAT, "version": io.MANIFEST_VERSION, "files": {"x.vk": 3}}),
    ],
)
def test_a_manifest_of_the_wrong_shape_is_a_params_error(tmp_path, text):
    (tmp_path / "cubic.json").write_text(text)
    with pytest.raises(ParamsError, match=r"manifest|'files'"):
        io.read_manifest(tmp_path, "cubic")


def _set_bytes(directory, name):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_a_failure_while_writing_a_set_keeps_the_old_set(cubic_setup, random_setup, tmp_path, monkeypatch):
    _, _, params, _ = cubic_setup
    _, _, other, _ = random_setup
    io.save(params, tmp_path, "k", meta={"topology_hash": "ab" * 32})
    before = _set_bytes(tmp_path, "k")
    real, calls = io._encode, []

    def encode_then_fail(points):
        calls.append(1)
        if len(calls) == 14:  # the .params file written whole, the .vk file half written
            raise KeyboardInterrupt
        return real(points)

    monkeypatch.setattr(io, "_encode", encode_then_fail)
    with pytest.raises(KeyboardInterrupt):
        io.save(other, tmp_path, "k", meta={"topology_hash": "cd" * 32})
    assert _set_bytes(tmp_path, "k") == before  # no temporaries, no new file beside old ones
    io.verify_files(tmp_path, io.read_manifest(tmp_path, "k"))
    loaded = io.ParamsFile(tmp_path / "k.params").parameters()
    assert np.array_equal(loaded.h, params.h)


def test_an_interrupt_during_the_renames_waits_until_the_set_is_whole(
    cubic_setup, random_setup, tmp_path, monkeypatch
):
    import os
    import signal

    _, _, params, _ = cubic_setup
    _, _, other, _ = random_setup
    io.save(params, tmp_path, "k", meta={"topology_hash": "ab" * 32})
    real = os.replace
    renamed = []

    def replace_and_interrupt(src, dst):
        if not renamed:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C right after the first rename began
        renamed.append(dst)
        real(src, dst)

    monkeypatch.setattr(io.os, "replace", replace_and_interrupt)
    with pytest.raises(KeyboardInterrupt):
        io.save(other, tmp_path, "k", meta={"topology_hash": "cd" * 32})
    assert [p.name for p in renamed] == ["k.params", "k.vk", "k.json"]  # the manifest last
    manifest = io.read_manifest(tmp_path, "k")
    assert manifest["topology_hash"] == "cd" * 32
    io.verify_files(tmp_path, manifest)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_mixed_set_is_refused_by_its_manifest(cubic_setup, random_setup, tmp_path):
    """What a SIGKILL between the renames could leave: the reader refuses it, it never loads."""
    _, _, params, _ = cubic_setup
    _, _, other, _ = random_setup
    io.save(params, tmp_path, "k", meta={"topology_hash": "ab" * 32})
    io.write_params(other, tmp_path / "k.params")
    with pytest.raises(ParamsError, match="differs from the manifest"):
        io.verify_files(tmp_path, io.read_manifest(tmp_path, "k"))
