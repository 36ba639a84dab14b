"""snarkjs's JSON files: proof.json, public.json and verification_key.json, as snarkjs writes them.

Numbers are decimal strings in normal form; points are projective triples
(snarkjs writes affine with z = 1, and infinity as ["0", "1", "0"]); G2
coordinates are [c0, c1]. Files are `JSON.stringify(value, null, 1)`: one-space
indentation and no final newline, which `json.dumps(value, indent=1)` matches
byte for byte.

    proof.json   {"pi_a": G1, "pi_b": G2, "pi_c": G1, "protocol": "groth16", "curve": "bls12381"}
    public.json  [signal, ...]  (outputs first, then public inputs; ONE is not listed)
    verification_key.json {protocol, curve, nPublic, vk_alpha_1, vk_beta_2, vk_gamma_2,
                           vk_delta_2, vk_alphabeta_12, IC}

Readers check structure and ranges and raise InteropError; they do not check
that a proof's points lie on the curve, since snarkjs treats such a proof as
invalid rather than malformed (see `proof_points_valid`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import py_arkworks_bls12381 as ark

from cuzk.algebra import constants as C
from cuzk.algebra.curves import G1, G2, Curve
from cuzk.algebra.encoding import to_arkworks_g1, to_arkworks_g2
from cuzk.algebra.fields import FQ, FQ2
from cuzk.errors import InteropError
from cuzk.groth16.keys import VerifyingKey
from cuzk.groth16.proof import Proof
from cuzk.interop.primes import FQ_BYTES
from cuzk.paths import write_atomic

PROTOCOL = "groth16"
CURVE = "bls12381"


# --- files ---------------------------------------------------------------------------
def dumps(value: Any) -> str:
    return json.dumps(value, indent=1)


def write_json(path: str | os.PathLike[str], value: Any) -> None:
    try:
        write_atomic(path, dumps(value))
    except OSError as exc:
        raise InteropError(f"{path}: cannot write: {exc.strerror or exc}") from exc


def read_json(path: str | os.PathLike[str]) -> Any:
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise InteropError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InteropError(f"{path}: not valid JSON ({exc})") from None


# --- numbers and points -----------------------------------------------------------------
def _int(value: Any, what: str) -> int:
    """A snarkjs number: a decimal (or 0x-hex) string, or a JSON integer."""
    if isinstance(value, bool):
        raise InteropError(f"{what}: expected a number, got {value!r}")
    if isinstance(value, int):
        out = value
    elif isinstance(value, str) and value.isascii() and value.isdigit():
        out = int(value)
    elif isinstance(value, str) and value[:2].lower() == "0x" and len(value) > 2:
        try:
            out = int(value, 16)
        except ValueError:
            raise InteropError(f"{what}: {value!r} is not a number") from None
    else:
        raise InteropError(f"{what}: {value!r} is not a decimal number string")
    if out < 0:
        raise InteropError(f"{what}: {value!r} is negative")
    return out


def _coord(value: Any, what: str) -> int:
    x = _int(value, what)
    if x >= C.Q:
        raise InteropError(f"{what}: {x} is not below the base field prime")
    return x


def _list(value: Any, n: tuple[int, ...], what: str) -> list:
    if not isinstance(value, list) or len(value) not in n:
        want = " or ".join(map(str, n))
        raise InteropError(f"{what}: expected a list of {want} entries, got {value!r:.80}")
    return value


def g1_to_json(p: np.ndarray) -> list[str]:
    """One affine G1 point (1, 2, 6) -> [x, y, "1"], infinity ["0", "1", "0"]."""
    (pt,) = G1.to_ints(p)
    if pt is None:
        return ["0", "1", "0"]
    return [str(pt[0]), str(pt[1]), "1"]


def g2_to_json(p: np.ndarray) -> list[list[str]]:
    (pt,) = G2.to_ints(p)
    if pt is None:
        return [["0", "0"], ["1", "0"], ["0", "0"]]
    (x0, x1), (y0, y1) = pt
    return [[str(x0), str(x1)], [str(y0), str(y1)], ["1", "0"]]


def _projective(curve: Curve, coords: list, what: str) -> np.ndarray:
    """Jacobian (X, Y, Z) (ffjavascript's coordinates) -> one affine point; Z = 0 is infinity."""
    field = FQ if curve is G1 else FQ2
    jac = field.from_ints(coords).reshape(1, *curve.jac_shape)
    if not jac[0, 2].any():
        return curve.identity(1)
    return curve.to_affine(jac)


def g1_from_json(value: Any, what: str) -> np.ndarray:
    v = _list(value, (2, 3), what)
    xs = [_coord(c, f"{what}[{i}]") for i, c in enumerate(v)]
    return _projective(G1, xs if len(xs) == 3 else [*xs, 1], what)


def g2_from_json(value: Any, what: str) -> np.ndarray:
    v = _list(value, (2, 3), what)
    xs = []
    for i, c in enumerate(v):
        pair = _list(c, (2,), f"{what}[{i}]")
        xs.append(tuple(_coord(e, f"{what}[{i}][{j}]") for j, e in enumerate(pair)))
    return _projective(G2, xs if len(xs) == 3 else [*xs, (1, 0)], what)


def _header(obj: Any, what: str) -> dict:
    if not isinstance(obj, dict):
        raise InteropError(f"{what}: expected a JSON object")
    protocol = obj.get("protocol", PROTOCOL)
    if protocol != PROTOCOL:
        raise InteropError(f"{what}: protocol {protocol!r}; cuzk verifies groth16 only")
    curve = obj.get("curve", CURVE)
    if curve != CURVE:
        raise InteropError(f"{what}: curve {curve!r}; cuzk serves bls12381 only")
    return obj


def _field(obj: dict, key: str, what: str) -> Any:
    if key not in obj:
        raise InteropError(f"{what}: missing {key!r}")
    return obj[key]


# --- proof.json -----------------------------------------------------------------------------
def proof_to_json(proof: Proof) -> dict[str, Any]:
    return {
        "pi_a": g1_to_json(proof.a),
        "pi_b": g2_to_json(proof.b),
        "pi_c": g1_to_json(proof.c),
        "protocol": PROTOCOL,
        "curve": CURVE,
    }


def proof_from_json(obj: Any, what: str = "proof") -> Proof:
    obj = _header(obj, what)
    return Proof(
        a=g1_from_json(_field(obj, "pi_a", what), f"{what}: pi_a"),
        b=g2_from_json(_field(obj, "pi_b", what), f"{what}: pi_b"),
        c=g1_from_json(_field(obj, "pi_c", what), f"{what}: pi_c"),
    )


def proof_points_valid(proof: Proof) -> bool:
    """snarkjs's isWellConstructed: every point on its curve and in the prime-order subgroup."""
    ok = True
    for curve, p in ((G1, proof.a), (G2, proof.b), (G1, proof.c)):
        ok = (
            ok
            and bool(curve.is_on_curve(p).all())
            and bool((curve.in_subgroup(p) | curve.is_identity(p)).all())
        )
    return ok


def write_proof(path: str | os.PathLike[str], proof: Proof) -> None:
    write_json(path, proof_to_json(proof))


def read_proof(path: str | os.PathLike[str]) -> Proof:
    return proof_from_json(read_json(path), str(path))


# --- public.json ----------------------------------------------------------------------------
def public_to_json(signals: list[int]) -> list[str]:
    return [str(int(s)) for s in signals]


def public_from_json(obj: Any, what: str = "public signals") -> list[int]:
    if not isinstance(obj, list):
        raise InteropError(f"{what}: expected a JSON list of decimal strings")
    return [_int(v, f"{what}[{i}]") for i, v in enumerate(obj)]


def write_public(path: str | os.PathLike[str], signals: list[int]) -> None:
    write_json(path, public_to_json(signals))


def read_public(path: str | os.PathLike[str]) -> list[int]:
    return public_from_json(read_json(path), str(path))


# --- verification_key.json ----------------------------------------------------------------------
def alphabeta_to_json(alpha_g1: np.ndarray, beta_g2: np.ndarray) -> list[list[list[str]]]:
    """e(alpha, beta) in Fq12 = Fq6[w] / Fq2[v] / Fq[u], as [[c0.c0, c0.c1, c0.c2], [c1...]] pairs.

    arkworks serializes an Fq12 as its twelve Fq coefficients, 48 bytes LE each,
    in exactly this tower order (the same as ffjavascript's).
    """
    (a,) = to_arkworks_g1(alpha_g1)
    (b,) = to_arkworks_g2(beta_g2)
    raw = bytes.fromhex(str(ark.GT.pairing(a, b)))
    c = [str(int.from_bytes(raw[i * FQ_BYTES : (i + 1) * FQ_BYTES], "little")) for i in range(12)]
    return [[[c[6 * h + 2 * k], c[6 * h + 2 * k + 1]] for k in range(3)] for h in range(2)]


def vk_to_json(vk: VerifyingKey) -> dict[str, Any]:
    return {
        "protocol": PROTOCOL,
        "curve": CURVE,
        "nPublic": int(vk.ic.shape[0]) - 1,
        "vk_alpha_1": g1_to_json(vk.alpha_g1),
        "vk_beta_2": g2_to_json(vk.beta_g2),
        "vk_gamma_2": g2_to_json(vk.gamma_g2),
        "vk_delta_2": g2_to_json(vk.delta_g2),
        "vk_alphabeta_12": alphabeta_to_json(vk.alpha_g1, vk.beta_g2),
        "IC": [g1_to_json(vk.ic[i : i + 1]) for i in range(vk.ic.shape[0])],
    }


def vk_from_json(obj: Any, what: str = "verification key") -> VerifyingKey:
    """The verifying key; snarkjs's JSON has no beta_g1 (the verifier never needs it): None."""
    obj = _header(obj, what)
    if "protocol" not in obj:
        raise InteropError(f"{what}: missing 'protocol' (is this a verification_key.json?)")
    ic_list = _field(obj, "IC", what)
    if not isinstance(ic_list, list) or not ic_list:
        raise InteropError(f"{what}: IC must be a non-empty list of G1 points")
    n_public = obj.get("nPublic", len(ic_list) - 1)
    if not isinstance(n_public, int) or n_public != len(ic_list) - 1:
        raise InteropError(f"{what}: nPublic = {n_public!r} but IC holds {len(ic_list)} points")
    ic = np.concatenate([g1_from_json(p, f"{what}: IC[{i}]") for i, p in enumerate(ic_list)])
    vk = VerifyingKey(
        alpha_g1=g1_from_json(_field(obj, "vk_alpha_1", what), f"{what}: vk_alpha_1"),
        beta_g1=None,
        beta_g2=g2_from_json(_field(obj, "vk_beta_2", what), f"{what}: vk_beta_2"),
        gamma_g2=g2_from_json(_field(obj, "vk_gamma_2", what), f"{what}: vk_gamma_2"),
        delta_g1=None,
        delta_g2=g2_from_json(_field(obj, "vk_delta_2", what), f"{what}: vk_delta_2"),
        ic=ic,
    )
    _check_vk_points(vk, what)
    return vk


def _check_vk_points(vk: VerifyingKey, what: str) -> None:
    for name, curve, p in (
        ("vk_alpha_1", G1, vk.alpha_g1),
        ("vk_beta_2", G2, vk.beta_g2),
        ("vk_gamma_2", G2, vk.gamma_g2),
        ("vk_delta_2", G2, vk.delta_g2),
        ("IC", G1, vk.ic),
    ):
        on = curve.is_on_curve(p) & (curve.is_identity(p) | curve.in_subgroup(p))
        if not on.all():
            at = f"[{int(np.argmin(on))}]" if p.shape[0] > 1 else ""
            raise InteropError(f"{what}: {name}{at} is not a point of the prime-order group")
        if name != "IC" and curve.is_identity(p).any():
            raise InteropError(f"{what}: {name} is the point at infinity")


def write_vk(path: str | os.PathLike[str], vk: VerifyingKey) -> None:
    write_json(path, vk_to_json(vk))


def read_vk(path: str | os.PathLike[str]) -> VerifyingKey:
    return vk_from_json(read_json(path), str(path))
