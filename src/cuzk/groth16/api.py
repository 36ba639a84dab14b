"""The library entry points: prove (groth16.prover: the phases in order, then verification) and
cached parameters."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

from cuzk.backends.base import Backend
from cuzk.errors import ParamsError
from cuzk.groth16 import params_io
from cuzk.groth16.keys import Parameters
from cuzk.groth16.prover import ProveResult, prove
from cuzk.groth16.qap import ConstraintMatrices
from cuzk.groth16.setup import generate_parameters, generate_queries
from cuzk.groth16.srs import Copies, ResidentParameters, resident_from_rows
from cuzk.instrument import Timeline
from cuzk.paths import cache_dir, locked

log = logging.getLogger("cuzk.params")

__all__ = ["ProveResult", "load_or_create_parameters", "params_dir_for", "prove", "resident_parameters"]

#: Sets above this many bytes are generated straight into residency at each start and not
#: written to the user cache (a real-size PoRep set is 44 GiB; the H200 box has a 64 GiB disk);
#: `cuzk setup --out DIR` writes a set of any size, and a DIR given to the engine is loaded.
CACHE_LIMIT_BYTES = 8 << 30


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
    generate: bool = False,
) -> tuple[Path, Parameters]:
    """Parameters from DIR (default: the user cache), generating and saving them once if absent.

    Cached files are ours, so they load unchecked by default but always against
    the manifest's sha256; a manifest for another topology is an error. Reading a
    complete set takes no lock (a read-only cache works). Generation into the cache
    holds a file lock beside the folder, so concurrent processes make one key and
    all load it (none proves against a key that was replaced). A set that was made
    here before and is gone (its folder without a manifest, or the record beside it)
    is a ParamsError naming the path, not a silent new key, unless `generate` asks
    for one: proofs made with a new key fail against the vk its users already have.
    """
    say = progress or (lambda _m: None)
    if directory is not None:
        dirpath = Path(directory)
        if not (dirpath / f"{name}.json").exists():
            raise ParamsError(f"no parameters for {name} in {dirpath} (run `cuzk setup --circuit {name}`)")
    else:
        dirpath = params_dir_for(name, topology_hash)
        if not (dirpath / f"{name}.json").exists():
            with locked(dirpath.with_name(f".{dirpath.name}.lock")):
                if not (dirpath / f"{name}.json").exists():
                    if not generate:
                        _refuse_vanished(dirpath, name)
                    log.warning("no parameters for %s: generating a new key in %s", name, dirpath)
                    say(f"generating parameters for {name} (once; cached in {dirpath})")
                    params = generate_parameters(cs, backend, timeline=timeline, progress=say)
                    params_io.save(params, dirpath, name, meta=_meta(cs, topology_hash))
                    _made_record(dirpath).touch()
    return dirpath, _load_checked_set(dirpath, name, topology_hash, checked, say)


def _refuse_vanished(dirpath: Path, name: str) -> None:
    """ParamsError naming the path when a set was made in the cache folder and is gone."""
    gone = _made_before(dirpath, name)
    if gone:
        raise ParamsError(
            f"the parameters of {name} in {dirpath} are gone ({gone}); a new key would not "
            f"match the vk already handed out. Restore them, or make a new key with "
            f"`cuzk setup --circuit {name} --out {dirpath}`"
        )


def _made_record(dirpath: Path) -> Path:
    """A file beside a cache folder saying a set was generated there (it outlives the folder)."""
    return dirpath.with_name(f".{dirpath.name}.made")


def _made_before(dirpath: Path, name: str) -> str | None:
    """Why a cache folder without a manifest once held a set, or None for one never made."""
    if (dirpath / f"{name}.vk").exists() or (dirpath / f"{name}.params").exists():
        return f"{name}.json is missing beside its other files"
    if _made_record(dirpath).exists():
        return f"a set was generated there before ({_made_record(dirpath).name} records it)"
    return None


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


def set_bytes(cs: ConstraintMatrices) -> int:
    """Bytes of the circuit's .params file: the queries' points, uncompressed."""
    from cuzk.groth16.qap import Densities, Domain

    dens = Densities.of(cs)
    g1 = Domain.for_constraints(cs.num_constraints).m - 1 + cs.num_aux + dens.a_size + dens.b_size
    return (g1 + cs.num_inputs) * params_io.G1_BYTES + dens.b_size * params_io.G2_BYTES


def resident_parameters(
    name: str,
    cs: ConstraintMatrices,
    topology_hash: str,
    backend: Backend,
    *,
    g2_backend: Backend | None = None,
    directory: str | Path | None = None,
    checked: bool = False,
    precompute: Copies = 1,
    progress: Callable[[str], None] | None = None,
    timeline: Timeline | None = None,
    generate: bool = False,
) -> tuple[Path | None, ResidentParameters]:
    """The resident proving key for the circuit, the way that scales to real sizes.

    From DIR (or the user cache, when it holds a set for this topology): the file goes from
    disk to the backend's memory in chunks, decoded and checked there (params_io.load_rows),
    its sha256 checked against the manifest from the same reads. Otherwise a fresh setup is
    generated straight into residency (setup.generate_queries) and, when the set is at most
    CACHE_LIMIT_BYTES, saved to the cache from the same rows. Returns (the folder of the files,
    or None when none were written; the key). A cached set that was made and is gone is a
    ParamsError naming the path unless `generate` asks for a new key (load_or_create_parameters
    says why). Spans: load_params (source "file" or "generated",
    with generate_queries' own and save_params inside), make_resident.
    """
    say = progress or (lambda _m: None)
    tl = timeline or Timeline("params")
    # b_g2 whose MSM runs from host memory (the CPU's, or the device's streamed twin) is made or
    # loaded a pass at a time into host rows, never whole on the card
    g2_on_host = g2_backend is not None and g2_backend is not backend and g2_backend.bases_on_host
    if directory is not None:
        dirpath: Path = Path(directory)
        if not (dirpath / f"{name}.json").exists():
            raise ParamsError(f"no parameters for {name} in {dirpath} (run `cuzk setup --circuit {name}`)")
    else:
        dirpath = params_dir_for(name, topology_hash)
    # a complete set is read without the lock (a read-only cache works); generating takes it
    missing = not (dirpath / f"{name}.json").exists()
    with locked(dirpath.with_name(f".{dirpath.name}.lock")) if missing else nullcontext():
        if not (dirpath / f"{name}.json").exists():
            if not generate:
                _refuse_vanished(dirpath, name)
            log.warning("no parameters for %s: generating a new key into residency", name)
            with tl.span("load_params", source="generated"):
                say(f"generating parameters for {name} into residency")
                gen = generate_queries(cs, backend, timeline=tl, progress=say, g2_on_host=g2_on_host)
                out: Path | None = None
                if set_bytes(cs) <= CACHE_LIMIT_BYTES:
                    with tl.span("save_params", bytes=set_bytes(cs)):
                        params_io.save_rows(
                            gen.vk, gen.rows, backend, dirpath, name, _meta(cs, topology_hash)
                        )
                    _made_record(dirpath).touch()
                    out = dirpath
            with tl.span("make_resident"):
                key = resident_from_rows(
                    gen.vk, gen.rows, cs, backend, g2_backend=g2_backend, precompute=precompute, progress=say
                )
            return out, key
    manifest = params_io.read_manifest(dirpath, name)
    if manifest.get("topology_hash") != topology_hash:
        raise ParamsError(
            f"{dirpath / f'{name}.json'} was made for topology {str(manifest.get('topology_hash'))[:16]}, "
            f"not this circuit's {topology_hash[:16]}"
        )
    files = manifest["files"]
    vk_info = files.get(f"{name}.vk", {})
    if params_io.sha256_file(dirpath / f"{name}.vk") != vk_info.get("sha256"):
        raise ParamsError(f"{dirpath / f'{name}.vk'}: sha256 differs from the manifest")
    with tl.span("load_params", source="file"):
        say(f"loading parameters from {dirpath} ({'checked' if checked else 'trusted: no subgroup checks'})")
        vk, rows = params_io.load_rows(
            dirpath / f"{name}.params",
            backend,
            checked=checked,
            sha256=files.get(f"{name}.params", {}).get("sha256"),
            progress=say,
            host=("b_g2",) if g2_on_host else (),
        )
    with tl.span("make_resident"):
        key = resident_from_rows(
            vk, rows, cs, backend, g2_backend=g2_backend, precompute=precompute, progress=say
        )
    return dirpath, key
