"""The library entry points: prove (the phases in order, then verification) and cached parameters."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cuzk.backends.base import Backend
from cuzk.errors import ParamsError, ProofError
from cuzk.groth16 import params_io
from cuzk.groth16.keys import Parameters
from cuzk.groth16.proof import Proof
from cuzk.groth16.prover import WitnessLike, finalize, public_inputs, start, synthesize
from cuzk.groth16.qap import ConstraintMatrices
from cuzk.groth16.setup import generate_parameters
from cuzk.groth16.srs import ResidentParameters
from cuzk.groth16.verifier import prepare, verify, verify_batch
from cuzk.instrument import Timeline
from cuzk.paths import cache_dir, locked


@dataclass
class ProveResult:
    proofs: list[Proof]
    public_inputs: list[list[int]]  # per proof, without ONE
    timeline: Timeline

    def proof_bytes(self) -> bytes:
        from cuzk.groth16.proof import proofs_to_bytes

        return proofs_to_bytes(self.proofs)


def prove(
    cs: ConstraintMatrices,
    witnesses: Sequence[WitnessLike],
    srs: ResidentParameters,
    *,
    synthesis_backend: Backend | None = None,
    check: bool = True,
    timeline: Timeline | None = None,
) -> ProveResult:
    """Prove a batch of witnesses of one topology; each proof is verified unless check=False.

    A witness that breaks a constraint raises UnsatisfiedError before any MSM;
    a proof that fails verification raises ProofError: none is ever returned.
    """
    tl = timeline or Timeline("prove")
    assignment = synthesize(cs, witnesses, synthesis_backend or srs.backend, timeline=tl)
    pending = start(assignment, srs)
    proofs = finalize(pending, srs)
    inputs = public_inputs(pending)
    if check:
        with tl.span("verify", proofs=len(proofs)):
            pvk = prepare(srs.vk)
            if not verify_batch(pvk, inputs, proofs):
                bad = [j for j, p in enumerate(proofs) if not verify(pvk, inputs[j], p)]
                raise ProofError(f"proof(s) {bad} failed verification; refusing to return them")
    return ProveResult(proofs=proofs, public_inputs=inputs, timeline=tl)


def params_dir_for(circuit_name: str, topology_hash: str) -> Path:
    return cache_dir("params", f"{circuit_name}-{topology_hash[:16]}")


def load_or_create_parameters(
    name: str,
    cs: ConstraintMatrices,
    topology_hash: str,
    backend: Backend,
    *,
    directory: str | Path | None = None,
    checked: bool = False,
    progress: Callable[[str], None] | None = None,
    timeline: Timeline | None = None,
) -> tuple[Path, Parameters]:
    """Parameters from DIR (default: the user cache), generating and saving them once if absent.

    Cached files are ours, so they load unchecked by default but always against
    the manifest's sha256; a manifest for another topology is an error. Generation
    into the cache holds a file lock beside the folder, so concurrent processes
    make one key and all load it (none proves against a key that was replaced).
    """
    say = progress or (lambda _m: None)
    if directory is not None:
        dirpath = Path(directory)
        if not (dirpath / f"{name}.json").exists():
            raise ParamsError(f"no parameters for {name} in {dirpath} (run `cuzk setup --circuit {name}`)")
    else:
        dirpath = params_dir_for(name, topology_hash)
        with locked(dirpath.with_name(f".{dirpath.name}.lock")):
            if not (dirpath / f"{name}.json").exists():
                say(f"generating parameters for {name} (once; cached in {dirpath})")
                params = generate_parameters(cs, backend, timeline=timeline, progress=say)
                params_io.save(params, dirpath, name, meta=_meta(cs, topology_hash))
    return dirpath, _load_checked_set(dirpath, name, topology_hash, checked, say)


def _load_checked_set(
    dirpath: Path, name: str, topology_hash: str, checked: bool, say: Callable[[str], None]
) -> Parameters:
    """The parameters of DIR/NAME.json, after checking its topology and every file's sha256."""
    manifest = params_io.read_manifest(dirpath, name)
    if manifest.get("topology_hash") != topology_hash:
        raise ParamsError(
            f"{dirpath / f'{name}.json'} was made for topology {str(manifest.get('topology_hash'))[:16]}, "
            f"not this circuit's {topology_hash[:16]}"
        )
    params_io.verify_files(dirpath, manifest)
    say(f"loading parameters from {dirpath}")
    return params_io.ParamsFile(dirpath / f"{name}.params", checked=checked).parameters()


def _meta(cs: ConstraintMatrices, topology_hash: str) -> dict:
    return {
        "topology_hash": topology_hash,
        "num_inputs": cs.num_inputs,
        "num_aux": cs.num_aux,
        "num_constraints": cs.num_constraints,
    }
