"""Native (bellperson-format) keys and proofs exported as snarkjs JSON still verify, and only correctly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuzk.algebra import constants as C
from cuzk.cli.main import main
from cuzk.errors import FormatError
from cuzk.groth16.verifier import verify
from cuzk.interop import snarkjs_json as J
from cuzk.interop.export import export_native_files


def test_exported_proofs_verify(native: dict[str, Path]) -> None:
    paths = export_native_files(native["vk"], native["out"], native["proof"], native["public"])
    assert [p.name for p in paths] == [
        "verification_key.json", "proof_0.json", "public_0.json", "proof_1.json", "public_1.json",
    ]  # fmt: skip
    vk = J.read_vk(paths[0])
    for i in range(2):
        proof, public = (
            J.read_proof(native["out"] / f"proof_{i}.json"),
            J.read_public(native["out"] / f"public_{i}.json"),
        )
        assert verify(vk, public, proof)
        assert not verify(vk, [public[0], (public[1] + 1) % C.R], proof)
    cross = J.read_proof(native["out"] / "proof_1.json")
    assert not verify(vk, J.read_public(native["out"] / "public_0.json"), cross)


def test_export_cli_and_groth16_verify(native: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "one"
    single = tmp_path / "one.proof"
    single.write_bytes(native["proof"].read_bytes()[:192])
    pub = tmp_path / "one.json"
    pub.write_text(json.dumps(json.loads(native["public"].read_text())[0]))
    assert (
        main(["export", "snarkjs", str(native["vk"]), str(out), "--proof", str(single), "--public", str(pub)])
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == ["proof.json", "public.json", "verification_key.json"]
    args = [str(out / n) for n in ("verification_key.json", "public.json", "proof.json")]
    assert main(["groth16", "verify", *args]) == 0


def test_export_refuses_mismatched_inputs(native: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="both --proof and --public"):
        export_native_files(native["vk"], tmp_path, native["proof"], None)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([["1", "2"]]))
    with pytest.raises(FormatError, match="expected public inputs for 2 proof"):
        export_native_files(native["vk"], tmp_path, native["proof"], bad)
