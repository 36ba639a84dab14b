"""Results read back from the journal are checked before anyone gets them (issue 32 item 3).

A stored result outlives the process that proved it: it sits in SQLite for the retention
period and is served after restarts. The tester flipped one bit of a stored proof (AwaitProof
answered COMPLETED with bytes that do not decode) and put another job's proof in a row
(COMPLETED with a proof that fails `verify`). Here every finished row carries a checksum over
its id, request and result (`journal.row_checksum`), and a completed result read from the
journal must also decode and verify against its circuit's verifying key (once per row and run:
the verdict is remembered by checksum). A result that fails any of these is a BadStoredResult;
the service proves the job again, or fails it naming the reason, and never returns it.

snarkjs (zkey) results are checked by checksum and by decoding their points; their pairing
check would need the zkey's verifying key read from a file of many GiB.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError

from cuzk.errors import CuzkError
from cuzk.server.config import DaemonConfig
from cuzk.server.journal import JournalEntry, row_checksum
from cuzk.server.v1 import proving_pb2 as pb


class BadStoredResult(Exception):
    """A journaled result that must not be returned; the message says why."""


class StoredResults:
    """Checks journaled results (checksum, decoding, proof verification) for one daemon run."""

    def __init__(self, cfg: DaemonConfig, circuit_of: Any) -> None:
        self.cfg = cfg
        self._circuit_of = circuit_of  # SubmitProofRequest -> the registry circuit it proves ("" for a zkey)
        self._lock = threading.Lock()
        self._verified: dict[str, str] = {}  # job id -> the checksum of the row whose proofs verified
        self._vks: dict[str, Any] = {}

    def check(self, entry: JournalEntry) -> pb.AwaitProofResponse:
        """The row's AwaitProofResponse once it passed every check; BadStoredResult otherwise."""
        assert entry.result is not None
        if entry.checksum is not None and entry.checksum != row_checksum(
            entry.job_id, entry.request, entry.result
        ):
            raise BadStoredResult("its checksum does not match: the row was damaged or changed")
        try:
            resp = pb.AwaitProofResponse.FromString(entry.result)
        except DecodeError as exc:
            raise BadStoredResult(f"it does not decode: {exc}") from None
        if resp.job_id != entry.job_id:
            raise BadStoredResult(f"it is the result of job {resp.job_id[:80]!r}")
        if resp.status != pb.AwaitProofResponse.COMPLETED:
            return resp
        with self._lock:
            if entry.checksum is not None and self._verified.get(entry.job_id) == entry.checksum:
                return resp
        self._verify(entry, resp)
        if entry.checksum is not None:
            with self._lock:
                self._verified[entry.job_id] = entry.checksum
        return resp

    def _verify(self, entry: JournalEntry, resp: pb.AwaitProofResponse) -> None:
        from cuzk.groth16 import proofs_from_bytes
        from cuzk.groth16 import verify as groth16_verify

        try:
            proofs = proofs_from_bytes(resp.proof)
        except CuzkError as exc:
            raise BadStoredResult(f"its proof does not decode: {exc}") from None
        try:
            publics = [[int(x) for x in p] for p in json.loads(resp.public_inputs_json)]
        except (ValueError, TypeError) as exc:
            raise BadStoredResult(f"its public inputs do not parse: {exc}") from None
        if len(publics) != len(proofs):
            raise BadStoredResult(f"{len(proofs)} proofs but {len(publics)} sets of public inputs")
        try:
            circuit = self._circuit_of(pb.SubmitProofRequest.FromString(entry.request))
        except (CuzkError, DecodeError) as exc:
            raise BadStoredResult(f"its request does not decode: {exc}") from None
        if not circuit:
            return  # a zkey job: checksum and point decoding only (see the module docstring)
        vk = self._vk(circuit)
        for j, (proof, inputs) in enumerate(zip(proofs, publics, strict=True)):
            try:
                good = groth16_verify(vk, inputs, proof)
            except CuzkError:
                good = False
            if not good:
                raise BadStoredResult(f"proof {j} does not verify against {circuit}'s verifying key")

    def _vk(self, circuit: str) -> Any:
        """The circuit's verifying key from its parameter folder (its sha256 checked against the manifest)."""
        with self._lock:
            if circuit in self._vks:
                return self._vks[circuit]
        from cuzk.circuits import get_circuit
        from cuzk.groth16 import params_io
        from cuzk.groth16.api import params_dir_for
        from cuzk.groth16.verifier import prepare

        if self.cfg.param_cache:
            folder = Path(self.cfg.param_cache)
        else:
            folder = params_dir_for(circuit, get_circuit(circuit).topology().hash)
        try:
            manifest = params_io.read_manifest(folder, circuit)
            info = manifest["files"].get(f"{circuit}.vk", {})
            if params_io.sha256_file(folder / f"{circuit}.vk") != info.get("sha256"):
                raise BadStoredResult(f"{folder / f'{circuit}.vk'} differs from its manifest")
            vk = prepare(params_io.read_vk(folder / f"{circuit}.vk"))
        except (CuzkError, OSError) as exc:
            raise BadStoredResult(f"its circuit's verifying key cannot be read: {exc}") from None
        with self._lock:
            self._vks[circuit] = vk
        return vk
