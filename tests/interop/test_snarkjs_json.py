"""proof.json / public.json / verification_key.json: snarkjs's layout, number forms and errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1, G2
from cuzk.algebra.fields import FR
from cuzk.errors import InteropError
from cuzk.groth16.proof import Proof
from cuzk.interop import snarkjs_json as J
from cuzk.interop.zkey import read_zkey


def _points(rng: np.random.Generator) -> Proof:
    return Proof(a=G1.random(1, rng), b=G2.random(1, rng), c=G1.random(1, rng))


def test_proof_round_trip_and_layout(rng: np.random.Generator, tmp_path) -> None:
    proof = _points(rng)
    path = tmp_path / "proof.json"
    J.write_proof(path, proof)
    text = path.read_text()
    obj = json.loads(text)
    assert list(obj) == ["pi_a", "pi_b", "pi_c", "protocol", "curve"]
    assert obj["protocol"] == "groth16" and obj["curve"] == "bls12381"
    (ax, ay), ((bx0, bx1), (by0, by1)) = G1.to_ints(proof.a)[0], G2.to_ints(proof.b)[0]
    assert obj["pi_a"] == [str(ax), str(ay), "1"]
    assert obj["pi_b"] == [[str(bx0), str(bx1)], [str(by0), str(by1)], ["1", "0"]]
    assert text.startswith('{\n "pi_a": [\n  "') and text.endswith('"\n}')  # JSON.stringify(p, null, 1)
    back = J.read_proof(path)
    for name in ("a", "b", "c"):
        assert np.array_equal(getattr(back, name), getattr(proof, name))
    assert J.proof_points_valid(back)


def test_public_json_bytes(tmp_path) -> None:
    path = tmp_path / "public.json"
    J.write_public(path, [C.R - 1, 7])
    assert path.read_text() == f'[\n "{C.R - 1}",\n "7"\n]'
    assert J.read_public(path) == [C.R - 1, 7]
    assert J.public_from_json(["0x10", 5]) == [16, 5]


def test_infinity_encodings() -> None:
    assert J.g1_to_json(G1.identity(1)) == ["0", "1", "0"]
    assert J.g2_to_json(G2.identity(1)) == [["0", "0"], ["1", "0"], ["0", "0"]]
    assert G1.is_identity(J.g1_from_json(["0", "1", "0"], "p")).all()
    assert G2.is_identity(J.g2_from_json([["0", "0"], ["1", "0"], ["0", "0"]], "p")).all()


def test_projective_coordinates_are_jacobian(rng: np.random.Generator) -> None:
    """ffjavascript keeps (X, Y, Z) with x = X / Z^2, y = Y / Z^3; a reader must honour any Z."""
    p = G1.random(1, rng)
    (x, y), z = G1.to_ints(p)[0], 0xABCDEF1234567
    jac = [str(x * z * z % C.Q), str(y * z**3 % C.Q), str(z)]
    assert np.array_equal(J.g1_from_json(jac, "p"), p)
    assert np.array_equal(J.g1_from_json([str(x), str(y)], "p"), p)


def test_vk_round_trip(toy_files) -> None:
    zk = read_zkey(toy_files.zkey_path)
    obj = J.vk_to_json(zk.verifying_key())
    assert list(obj) == [
        "protocol", "curve", "nPublic", "vk_alpha_1", "vk_beta_2", "vk_gamma_2", "vk_delta_2",
        "vk_alphabeta_12", "IC",
    ]  # fmt: skip
    assert obj["nPublic"] == 2 and len(obj["IC"]) == 3
    ab = obj["vk_alphabeta_12"]
    assert [len(ab), len(ab[0]), len(ab[0][0])] == [2, 3, 2]
    assert all(0 <= int(v) < C.Q for half in ab for pair in half for v in pair)
    vk = J.vk_from_json(json.loads(J.dumps(obj)))
    for name in ("alpha_g1", "beta_g2", "gamma_g2", "delta_g2", "ic"):
        assert np.array_equal(getattr(vk, name), getattr(zk, name)), name


def test_off_curve_proof_is_invalid_not_malformed(rng: np.random.Generator) -> None:
    obj = J.proof_to_json(_points(rng))
    obj["pi_a"][0] = str((int(obj["pi_a"][0]) + 1) % C.Q)
    proof = J.proof_from_json(obj)  # parses: snarkjs reports such a proof as invalid
    assert not J.proof_points_valid(proof)


BAD_PROOFS = {
    "protocol": (lambda o: o.update(protocol="plonk"), "protocol 'plonk'; cuzk verifies groth16 only"),
    "curve": (lambda o: o.update(curve="bn128"), "curve 'bn128'; cuzk serves bls12381 only"),
    "missing": (lambda o: o.pop("pi_b"), "missing 'pi_b'"),
    "number": (lambda o: o["pi_a"].__setitem__(0, "12a"), r"pi_a\[0\]: '12a' is not a decimal number string"),
    "range": (
        lambda o: o["pi_c"].__setitem__(1, str(C.Q)),
        r"pi_c\[1\]: \d+ is not below the base field prime",
    ),
    "shape": (lambda o: o.update(pi_a=["1"]), "pi_a: expected a list of 2 or 3 entries"),
    "g2": (lambda o: o["pi_b"].__setitem__(0, ["1"]), r"pi_b\[0\]: expected a list of 2 entries"),
}


@pytest.mark.parametrize("case", sorted(BAD_PROOFS))
def test_bad_proof_json(case: str, rng: np.random.Generator) -> None:
    obj = J.proof_to_json(_points(rng))
    mutate, message = BAD_PROOFS[case]
    mutate(obj)
    with pytest.raises(InteropError, match=message):
        J.proof_from_json(obj)


def test_bad_vk_and_public_json(toy_files, tmp_path) -> None:
    obj = J.vk_to_json(read_zkey(toy_files.zkey_path).verifying_key())
    with pytest.raises(InteropError, match="nPublic = 5 but IC holds 3 points"):
        J.vk_from_json({**obj, "nPublic": 5})
    bad = json.loads(json.dumps(obj))
    bad["vk_delta_2"][0][0] = str(int(bad["vk_delta_2"][0][0]) ^ 1)
    with pytest.raises(InteropError, match="vk_delta_2 is not a point of the prime-order group"):
        J.vk_from_json(bad)
    with pytest.raises(InteropError, match="expected a JSON list"):
        J.public_from_json({"a": 1})
    with pytest.raises(InteropError, match="is negative"):
        J.public_from_json([-3])
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(InteropError, match="not valid JSON"):
        J.read_vk(tmp_path / "x.json")


def test_fr_values_survive_as_decimal(rng: np.random.Generator) -> None:
    vals = FR.to_ints(FR.random(5, rng))
    assert J.public_from_json(json.loads(J.dumps(J.public_to_json(vals)))) == vals
