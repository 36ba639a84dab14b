"""Fuzz targets: every parser of outside bytes, each with valid seed inputs made fresh at start-up.

A target takes bytes and either decodes them or raises an error of the
project's tree (cuzk.errors.CuzkError) whose message says what was wrong.
Anything else (another exception class, a crash, a hang) is a bug. Seeds are
small valid files of each format (a toy circuit's parameters, vk, zkey, r1cs,
wtns, proofs, JSON, TOML and gRPC messages), so mutations reach deep into
each decoder.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for helper in ("tests/groth16", "tests/interop"):  # the hand-built toy circuits of the test suite
    if str(ROOT / helper) not in sys.path:
        sys.path.insert(0, str(ROOT / helper))

Decode = Callable[[bytes], Any]


@dataclass(frozen=True)
class Target:
    name: str
    seeds: tuple[bytes, ...]
    decode: Decode


class _Scratch:
    """One reusable file per target for decoders that take a path (tmpfs where there is one)."""

    def __init__(self) -> None:
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None
        self.dir = Path(tempfile.mkdtemp(prefix="cuzk-fuzz-", dir=base))
        atexit.register(shutil.rmtree, self.dir, True)  # tmpfs is memory: leave nothing behind

    def file(self, name: str, data: bytes) -> Path:
        path = self.dir / name
        path.write_bytes(data)
        return path


SCRATCH = _Scratch()
SET_DIR = SCRATCH.dir / "set"  # a parameter set (params, vk, manifest) for the manifest target


def _through_file(name: str, reader: Callable[[Path], Any]) -> Decode:
    return lambda data: reader(SCRATCH.file(name, data))


@cache
def _bellperson() -> tuple[bytes, bytes, bytes, bytes, bytes]:
    """.params, .vk, a 192-byte proof, its public inputs (JSON) and the set's manifest: the toy cubic circuit."""
    import toy  # tests/groth16/toy.py

    from cuzk.backends import get_backend
    from cuzk.groth16 import generate_parameters, make_resident, prove
    from cuzk.groth16.params_io import save, vk_to_bytes, write_params

    cs, w = toy.cubic(3)
    be = get_backend("cpu")
    params = generate_parameters(cs, be)
    path = SCRATCH.dir / "seed.params"
    write_params(params, path)
    result = prove(make_resident(params, cs, be), [w])
    public = json.dumps([str(x) for x in result.public_inputs[0]]).encode()
    manifest = save(params, SET_DIR, "toy", meta={"topology_hash": "00" * 32}).read_bytes()
    return path.read_bytes(), vk_to_bytes(params.vk), result.proof_bytes(), public, manifest


@cache
def _circom() -> tuple[bytes, bytes, bytes, dict[str, bytes]]:
    """.r1cs, .wtns, .zkey of the toy circom circuit, and snarkjs JSON (proof, vk, public)."""
    import circom_toy  # tests/interop/circom_toy.py

    from cuzk.backends import get_backend
    from cuzk.interop import snarkjs_json
    from cuzk.interop.r1cs import write_r1cs
    from cuzk.interop.setup import setup_zkey
    from cuzk.interop.wtns import write_wtns
    from cuzk.interop.zkey import write_zkey

    r1cs, w = circom_toy.toy()
    d = SCRATCH.dir
    write_r1cs(d / "seed.r1cs", r1cs)
    write_wtns(d / "seed.wtns", circom_toy.witness_array(w))
    zk = setup_zkey(r1cs, get_backend("cpu"))
    write_zkey(d / "seed.zkey", zk)
    vk = zk.verifying_key()
    jsons = {
        "vk": json.dumps(snarkjs_json.vk_to_json(vk)).encode(),
        "public": json.dumps(snarkjs_json.public_to_json(w[1 : 1 + r1cs.n_public])).encode(),
    }
    return (
        (d / "seed.r1cs").read_bytes(),
        (d / "seed.wtns").read_bytes(),
        (d / "seed.zkey").read_bytes(),
        jsons,
    )


def _points(group: str, compressed: bool) -> bytes:
    from cuzk.algebra import encoding
    from cuzk.algebra.curves import G1, G2
    from cuzk.algebra.fields import FR

    curve = G1 if group == "g1" else G2
    pts = curve.to_affine(curve.scalar_mul(np.repeat(curve.generator(), 3, axis=0), FR.from_ints([2, 3, 5])))
    return bytes(encoding.encode_points(curve, pts, compressed=compressed).tobytes())


def _decode_points(group: str, compressed: bool) -> Decode:
    from cuzk.algebra import encoding

    fn = encoding.decode_g1 if group == "g1" else encoding.decode_g2
    return lambda data: fn(data, compressed=compressed, check_subgroup=True)


def _field(name: str) -> Decode:
    from cuzk.algebra import encoding

    fn = encoding.decode_fr if name == "fr" else encoding.decode_fq
    return lambda data: fn(data)


def _json_of(fn: Callable[[Any], Any]) -> Decode:
    """JSON text -> fn(value); undecodable text is refused as the CLI and daemon refuse it."""

    def decode(data: bytes) -> Any:
        from cuzk.errors import FormatError

        try:
            value = json.loads(data.decode())
        except (UnicodeDecodeError, ValueError) as exc:
            raise FormatError(f"not JSON: {exc}") from exc
        return fn(value)

    return decode


def _toml(data: bytes) -> Any:
    from cuzk.server.config import load_config

    return load_config(SCRATCH.file("cuzk.toml", data))


def _request(message: str) -> Decode:
    """Bytes parsed as the gRPC request message `message`, then the service's validation of it."""

    def decode(data: bytes) -> Any:
        from google.protobuf.message import DecodeError

        from cuzk.errors import FormatError
        from cuzk.server.config import DaemonConfig
        from cuzk.server.service import check_request
        from cuzk.server.v1 import proving_pb2 as pb

        try:
            msg = getattr(pb, message).FromString(data)
        except DecodeError as exc:  # grpc answers these itself, before any handler runs
            raise FormatError(f"not a {message}: {exc}") from exc
        return check_request(msg, DaemonConfig())

    return decode


def _request_seeds() -> dict[str, tuple[bytes, ...]]:
    """Valid messages of every request type of cuzk.v1.ProvingEngine."""
    from cuzk.server.v1 import proving_pb2 as pb

    submits = (
        pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=3, partitions=2, priority=pb.HIGH),
        pb.SubmitProofRequest(proof_kind=pb.WINNING_POST, request_id="winpost-1000-abcd"),
        pb.SubmitProofRequest(proof_kind=pb.POREP_SEAL_COMMIT, vanilla_proof=b"{}"),
        pb.SubmitProofRequest(circuit="winning-tiny", instances_json=_instances_json("winning-tiny")),
    )
    jobs = (pb.AwaitProofRequest(job_id="job-1", timeout_ms=50), pb.AwaitProofRequest(job_id="x" * 300))
    return {
        "SubmitProofRequest": tuple(m.SerializeToString() for m in submits),
        "ProveRequest": tuple(pb.ProveRequest(submit=m).SerializeToString() for m in submits),
        "AwaitProofRequest": tuple(m.SerializeToString() for m in jobs),
        "CancelProofRequest": (pb.CancelProofRequest(job_id="job-1").SerializeToString(),),
        "PreloadSrsRequest": (pb.PreloadSrsRequest(circuit_id="porep-tiny").SerializeToString(),),
        "EvictSrsRequest": (pb.EvictSrsRequest(circuit_id="snap-tiny").SerializeToString(),),
        "GetStatusRequest": (b"", b"\x08\x01"),  # empty, and one unknown field (kept, ignored)
        "GetMetricsRequest": (b"", b"\x12\x00"),
    }


def _instances_json(circuit_name: str) -> str:
    """One explicit instance of the circuit in the wire's instances_json form (field elements as decimals)."""
    from cuzk.algebra.fields import FR
    from cuzk.circuits import get_circuit

    circuit = get_circuit(circuit_name)
    inst = circuit.random_instance(seed=1)
    obj = {}
    for name, (kind, shape) in circuit.schema().items():
        arr = np.asarray(inst[name])
        if kind == "bits":
            obj[name] = arr.astype(int).tolist()
        else:
            ints = FR.to_ints(arr.reshape(-1, 4))
            obj[name] = np.asarray([str(x) for x in ints], dtype=object).reshape(shape).tolist()
    return json.dumps([obj])


def targets() -> list[Target]:
    from cuzk.groth16.params_io import ParamsFile, read_manifest, verify_files, vk_from_bytes
    from cuzk.groth16.proof import proofs_from_bytes
    from cuzk.interop import snarkjs_json
    from cuzk.interop.r1cs import read_r1cs
    from cuzk.interop.wtns import read_wtns
    from cuzk.interop.zkey import read_zkey

    params, vk, proof, public, manifest = _bellperson()
    r1cs, wtns, zkey, jsons = _circom()

    def manifest_decode(data: bytes) -> Any:
        (SET_DIR / "toy.json").write_bytes(data)
        found = read_manifest(SET_DIR, "toy")
        verify_files(SET_DIR, found)
        return found

    def public_decode(data: bytes) -> Any:
        from cuzk.interop.export import read_native_public

        return read_native_public(SCRATCH.file("public.json", data), 1)

    def zkey_decode(data: bytes) -> Any:
        zk = read_zkey(SCRATCH.file("x.zkey", data))
        zk.validate_points(subgroup=True)
        return zk

    shapes = (b"[1, 2]", b"{}", b"5", b'"x"', b"null", b'[["1"], "2"]', b'{"a": [1]}')  # other JSON shapes
    return [
        Target("proof", (proof, proof * 2), proofs_from_bytes),
        Target("g1-compressed", (_points("g1", True),), _decode_points("g1", True)),
        Target("g1-uncompressed", (_points("g1", False),), _decode_points("g1", False)),
        Target("g2-compressed", (_points("g2", True),), _decode_points("g2", True)),
        Target("g2-uncompressed", (_points("g2", False),), _decode_points("g2", False)),
        Target("fr", (bytes(32), (7).to_bytes(32, "big")), _field("fr")),
        Target("fq", (bytes(48), (7).to_bytes(48, "big")), _field("fq")),
        Target("vk", (vk,), lambda data: vk_from_bytes(data, checked=True)),
        Target("params", (params,), _through_file("x.params", lambda p: ParamsFile(p, checked=True).parameters())),
        Target("manifest", (manifest, *shapes), manifest_decode),
        Target("r1cs", (r1cs,), _through_file("x.r1cs", read_r1cs)),
        Target("wtns", (wtns,), _through_file("x.wtns", read_wtns)),
        Target("zkey", (zkey,), zkey_decode),
        Target("snarkjs-vk", (jsons["vk"], *shapes), _json_of(snarkjs_json.vk_from_json)),
        Target("snarkjs-public", (jsons["public"], *shapes), _json_of(snarkjs_json.public_from_json)),
        Target("public-json", (public, *shapes), public_decode),
        Target("toml-config", (b'[daemon]\nlisten = "unix:///tmp/x.sock"\n[memory]\ntotal_budget = "4GiB"\n',), _toml),
        *(
            Target(f"grpc-{message[: -len('Request')].lower()}", seeds, _request(message))
            for message, seeds in _request_seeds().items()
        ),
    ]  # fmt: skip
