"""Native cuzk (bellperson-format) keys and proofs as snarkjs JSON, so `snarkjs groth16 verify` checks them.

Every native proof can be expressed this way: Groth16 verification needs only
alpha_g1, beta_g2, gamma_g2, delta_g2, the IC points (bellperson's ic, ONE
first, is snarkjs's IC) and the proof's A, B, C; the equation is the same, and
neither side's choice of generators or of root of unity enters it. A
multi-partition proof (k proofs of 192 bytes concatenated) becomes k snarkjs
proofs, each with its own public inputs.
"""

from __future__ import annotations

import os
from pathlib import Path

from cuzk.errors import FormatError
from cuzk.groth16.keys import VerifyingKey
from cuzk.groth16.proof import Proof, proofs_from_bytes
from cuzk.interop import snarkjs_json


def read_native_public(path: str | os.PathLike[str], count: int) -> list[list[int]]:
    """`cuzk prove --public-out` files: one list of decimal strings, or a list of them (k proofs).

    Strict, as the README documents: each value a string of decimal digits only (no JSON number,
    sign, space, underscore or hex, all of which int() or snarkjs would take).
    """
    data = snarkjs_json.read_json(path)
    lists = data if isinstance(data, list) and data and isinstance(data[0], list) else [data]
    if not isinstance(data, list) or len(lists) != count:
        raise FormatError(f"{path}: expected public inputs for {count} proof(s)")
    for i, values in enumerate(lists):
        for j, v in enumerate(values if isinstance(values, list) else []):
            if not (isinstance(v, str) and v.isascii() and v.isdigit()):
                raise FormatError(f'{path}[{i}][{j}]: {v!r:.40} is not a decimal string such as "12"')
    return [snarkjs_json.public_from_json(x, f"{path}[{i}]") for i, x in enumerate(lists)]


def export_snarkjs(
    vk: VerifyingKey,
    out_dir: str | os.PathLike[str],
    proofs: list[Proof] | None = None,
    public_inputs: list[list[int]] | None = None,
) -> list[Path]:
    """Write verification_key.json, and proof[_i].json / public[_i].json per proof; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "verification_key.json"]
    snarkjs_json.write_vk(written[0], vk)
    proofs = proofs or []
    publics = public_inputs or []
    if len(publics) != len(proofs):
        raise FormatError(f"{len(proofs)} proofs but {len(publics)} public input lists")
    for i, (proof, pub) in enumerate(zip(proofs, publics, strict=True)):
        if len(pub) != vk.num_inputs - 1:
            raise FormatError(f"proof {i}: the key expects {vk.num_inputs - 1} public inputs, got {len(pub)}")
        suffix = "" if len(proofs) == 1 else f"_{i}"
        paths = out / f"proof{suffix}.json", out / f"public{suffix}.json"
        snarkjs_json.write_proof(paths[0], proof)
        snarkjs_json.write_public(paths[1], pub)
        written += paths
    return written


def export_native_files(
    vk_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    proof_path: str | os.PathLike[str] | None = None,
    public_path: str | os.PathLike[str] | None = None,
) -> list[Path]:
    """The CLI's job: read a .vk (and a proof file with its public inputs) and export them."""
    from cuzk.groth16.params_io import read_vk

    vk = read_vk(vk_path)
    if (proof_path is None) != (public_path is None):
        raise FormatError("a proof needs its public inputs (give both --proof and --public, or neither)")
    proofs: list[Proof] = []
    publics: list[list[int]] = []
    if proof_path is not None and public_path is not None:
        try:
            data = Path(proof_path).read_bytes()
        except OSError as exc:
            raise FormatError(f"cannot read {proof_path}: {exc.strerror or exc}") from exc
        proofs = proofs_from_bytes(data)
        publics = read_native_public(public_path, len(proofs))
    return export_snarkjs(vk, out_dir, proofs, publics)
