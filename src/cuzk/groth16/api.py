"""The library entry points: prove (groth16.prover: the phases in order, then verification) and
cached parameters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cuzk.backends.base import Backend
from cuzk.errors import ParamsError
from cuzk.groth16 import params_io
from cuzk.groth16.keys import Parameters
from cuzk.groth16.prover import ProveResult, prove
from cuzk.groth16.qap import ConstraintMatrices
from cuzk.groth16.setup import generate_parameters
from cuzk.instrument import Timeline
from cuzk.paths import cache_dir

__all__ = ["ProveResult", "load_or_create_parameters", "params_dir_for", "prove"]


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
    the manifest's sha256; a manifest for another topology is an error.
    """
    dirpath = Path(directory) if directory is not None else params_dir_for(name, topology_hash)
    say = progress or (lambda _m: None)
    manifest_path = dirpath / f"{name}.json"
    if not manifest_path.exists():
        if directory is not None:
            raise ParamsError(f"no parameters for {name} in {dirpath} (run `cuzk setup --circuit {name}`)")
        say(f"generating parameters for {name} (once; cached in {dirpath})")
        params = generate_parameters(cs, backend, timeline=timeline, progress=say)
        params_io.save(params, dirpath, name, meta=_meta(cs, topology_hash))
        return dirpath, params
    manifest = params_io.read_manifest(dirpath, name)
    if manifest.get("topology_hash") != topology_hash:
        raise ParamsError(
            f"{manifest_path} was made for topology {str(manifest.get('topology_hash'))[:16]}, "
            f"not this circuit's {topology_hash[:16]}"
        )
    params_io.verify_files(dirpath, manifest)
    say(f"loading parameters from {dirpath}")
    params = params_io.ParamsFile(dirpath / f"{name}.params", checked=checked).parameters()
    return dirpath, params


def _meta(cs: ConstraintMatrices, topology_hash: str) -> dict:
    return {
        "topology_hash": topology_hash,
        "num_inputs": cs.num_inputs,
        "num_aux": cs.num_aux,
        "num_constraints": cs.num_constraints,
    }
