"""On-disk cache of recordings (topology + witness program), so a shape is recorded once.

One ``.npz`` file per circuit spec (its name and parameters hashed with the
format version), holding the arrays and a JSON header. The header carries the
format version, the topology hash and a content hash over every array; a file
that does not parse, has another version, or whose hashes do not match is
reported (a log warning), removed and rebuilt, never used. Files are written
to a temporary name and renamed, so a crash leaves no half file behind.

"Record if absent" runs under an exclusive file lock (flock on a `.lock`
sibling), so processes that ask for one shape at once record it once: the
first records and writes, the others wait and then read that file. The
kernel drops the lock when its holder dies, even by SIGKILL.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from cuzk import config
from cuzk.backends.base import CsrMatrix
from cuzk.paths import open_atomic
from cuzk.r1cs.program import CallGroup, Source, WitnessProgram
from cuzk.r1cs.replicate import Layout, ReplicatedNames, ReplicatedTopology
from cuzk.r1cs.topology import ConstraintNames, Topology

log = logging.getLogger(__name__)

#: Bump when the file layout or the meaning of any stored array changes.
#: 2: files of replicated topologies (header "kind": "replicated"): the head's and one copy's
#: rows with coefficient codes, and the layout, instead of the full matrices.
FORMAT_VERSION = 2


class CacheMiss(Exception):
    """A cache file is absent or unusable; `reason` says why (internal: callers rebuild)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def cache_dir() -> Path:
    """<cache root>/r1cs (config: CUZK_CACHE_DIR, else the user cache dir); not created here."""
    return config.get().cache.root / "r1cs"


def spec_key(spec: dict[str, Any]) -> str:
    """A short stable hash of a circuit spec (name, parameters, gadget code version)."""
    blob = json.dumps({"spec": spec, "format": FORMAT_VERSION}, sort_keys=True).encode()
    return hashlib.blake2b(blob, digest_size=12).hexdigest()


def _content_hash(arrays: dict[str, np.ndarray], header: dict[str, Any]) -> str:
    h = hashlib.blake2b(digest_size=32)
    h.update(json.dumps(header, sort_keys=True).encode())
    for k in sorted(arrays):
        a = np.ascontiguousarray(arrays[k])
        h.update(k.encode())
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.data if a.size else b"")
    return h.hexdigest()


def _names_arrays(arrays: dict[str, Any], prefix: str, nm: ConstraintNames) -> dict[str, Any]:
    arrays[f"{prefix}row_ns"], arrays[f"{prefix}row_tmpl"] = nm.row_ns, nm.row_tmpl
    arrays[f"{prefix}row_local"] = nm.row_local
    return {"ns_paths": nm.ns_paths, "direct_names": nm.direct_names, "template_names": nm.template_names}


def _names_from(arrays: dict[str, np.ndarray], prefix: str, strings: dict[str, Any]) -> ConstraintNames:
    return ConstraintNames(
        ns_paths=strings["ns_paths"],
        direct_names=strings["direct_names"],
        template_names=strings["template_names"],
        row_ns=arrays[f"{prefix}row_ns"],
        row_tmpl=arrays[f"{prefix}row_tmpl"],
        row_local=arrays[f"{prefix}row_local"],
    )


def save(path: Path, topo: Topology, program: WitnessProgram, spec: dict[str, Any]) -> None:
    arrays: dict[str, Any] = {}  # values: arrays (Any: numpy's savez stub mistypes **kwds)
    extra: dict[str, Any] = {}
    if isinstance(topo, ReplicatedTopology):
        arrays["coefs"] = topo.coefs
        for part, mats, codes in (("head", topo.head, topo.head_codes), ("unit", topo.unit, topo.unit_codes)):
            for n, m, cd in zip("ABC", mats, codes, strict=True):
                arrays[f"{part}_{n}_indptr"] = m.indptr
                arrays[f"{part}_{n}_indices"] = m.indices
                arrays[f"{part}_{n}_codes"] = cd
        rn = topo.names
        assert isinstance(rn, ReplicatedNames)
        extra = {
            "kind": "replicated",
            "layout": topo.layout.as_json(),
            "copy_prefix": rn.prefix,
            "head_names": _names_arrays(arrays, "head_", rn.head),
            "unit_names": _names_arrays(arrays, "unit_", rn.unit),
        }
    else:
        for n, m in (("A", topo.A), ("B", topo.B), ("C", topo.C)):
            arrays[f"{n}_indptr"] = m.indptr
            arrays[f"{n}_indices"] = m.indices
            arrays[f"{n}_data"] = m.data
        extra = {"kind": "plain", **_names_arrays(arrays, "", topo.names)}
    for i, s in enumerate(program.sources):
        arrays[f"src{i}"] = s.cols
    for i, g in enumerate(program.groups):
        arrays[f"g{i}_ports"], arrays[f"g{i}_bases"] = g.ports, g.bases
    header = {
        "format_version": FORMAT_VERSION,
        "spec": spec,
        "num_inputs": topo.num_inputs,
        "num_aux": topo.num_aux,
        "topology_hash": topo.hash,
        **extra,
        "templates": program.templates,
        "sources": [{"name": s.name, "kind": s.kind} for s in program.sources],
        "groups": [{"template": g.template, "level": g.level, "n_aux": g.n_aux} for g in program.groups],
    }
    header["content_hash"] = _content_hash(arrays, header)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_atomic(path) as f:
        np.savez(f, **arrays)


def load(path: Path, spec: dict[str, Any]) -> tuple[Topology, WitnessProgram]:
    """Read a cache file; raise CacheMiss (with the reason) for anything but a perfect match."""
    if not path.exists():
        raise CacheMiss("no cache file")
    try:
        with open(path, "rb") as f, np.load(f, allow_pickle=False) as z:  # our handle: closed even on errors
            arrays = {k: z[k] for k in z.files}
        header = json.loads(arrays.pop("header").tobytes().decode())
    except Exception as exc:  # zip, npy, JSON or decode errors: all mean a damaged file
        raise CacheMiss(f"unreadable ({type(exc).__name__}: {exc})") from exc
    if header.get("format_version") != FORMAT_VERSION:
        raise CacheMiss(f"format version {header.get('format_version')} != {FORMAT_VERSION}")
    if header.get("spec") != spec:
        raise CacheMiss("recorded for another circuit spec")
    stored = header.pop("content_hash", None)
    if stored != _content_hash(arrays, header):
        raise CacheMiss("content hash mismatch (corrupted file)")
    try:
        ni, na = int(header["num_inputs"]), int(header["num_aux"])
        topo: Topology
        if header["kind"] == "replicated":
            topo = _load_replicated(arrays, header, ni + na)
        else:
            mats = []
            for n in "ABC":
                indptr = arrays[f"{n}_indptr"]
                mats.append(
                    CsrMatrix(
                        indptr=indptr,
                        indices=arrays[f"{n}_indices"],
                        data=arrays[f"{n}_data"],
                        shape=(indptr.shape[0] - 1, ni + na),
                    )
                )
            names = _names_from(arrays, "", header)
            topo = Topology(num_inputs=ni, num_aux=na, A=mats[0], B=mats[1], C=mats[2], names=names)
        program = WitnessProgram(
            num_inputs=ni,
            num_aux=na,
            templates=header["templates"],
            sources=[
                Source(name=s["name"], kind=s["kind"], cols=arrays[f"src{i}"])
                for i, s in enumerate(header["sources"])
            ],
            groups=[
                CallGroup(
                    template=g["template"],
                    level=g["level"],
                    n_aux=g["n_aux"],
                    ports=arrays[f"g{i}_ports"],
                    bases=arrays[f"g{i}_bases"],
                )
                for i, g in enumerate(header["groups"])
            ],
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise CacheMiss(f"inconsistent contents ({type(exc).__name__}: {exc})") from exc
    if topo.hash != header["topology_hash"]:
        raise CacheMiss("topology hash mismatch")
    return topo, program


def _load_replicated(arrays: dict[str, np.ndarray], header: dict[str, Any], ncols: int) -> ReplicatedTopology:
    layout = Layout(**header["layout"])
    parts = {}
    for part in ("head", "unit"):
        mats = []
        for n in "ABC":
            indptr = arrays[f"{part}_{n}_indptr"]
            codes = arrays[f"{part}_{n}_codes"]
            mats.append(CsrMatrix(indptr, arrays[f"{part}_{n}_indices"], codes, (indptr.shape[0] - 1, ncols)))
        parts[part] = (mats[0], mats[1], mats[2])
    names = ReplicatedNames(
        _names_from(arrays, "head_", header["head_names"]),
        _names_from(arrays, "unit_", header["unit_names"]),
        layout,
        header["copy_prefix"],
    )
    topo = ReplicatedTopology(layout, arrays["coefs"], parts["head"], parts["unit"], names)
    if (topo.num_inputs, topo.num_aux) != (int(header["num_inputs"]), int(header["num_aux"])):
        raise ValueError("the layout's sizes disagree with the header's")
    return topo


@contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on `path` (created if absent); without one (a read-only cache dir)
    go on unlocked, since the cache must not stop proving (at worst two processes record)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        log.warning("cuzk: recording without the cache lock %s: %s", path, exc)
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing drops the lock; the lock file stays (removing it races a waiter)


def load_or_record(
    path: Path, spec: dict[str, Any], record: Callable[[], tuple[Topology, WitnessProgram]]
) -> tuple[Topology, WitnessProgram, str]:
    """(topology, program, status) where status is 'hit', 'recorded' or 'rebuilt: <reason>'.

    A hit needs no lock (files appear whole, by rename); a miss takes the file lock and looks
    again, since another process may have recorded the shape while this one waited.
    """
    try:
        topo, program = load(path, spec)
        return topo, program, "hit"
    except CacheMiss:
        pass
    with _exclusive(path.with_name(path.name + ".lock")):
        try:
            topo, program = load(path, spec)
            return topo, program, "hit"
        except CacheMiss as miss:
            status = "recorded" if miss.reason == "no cache file" else f"rebuilt: {miss.reason}"
            if status != "recorded":
                log.warning("cuzk: discarding cached recording %s: %s", path, miss.reason)
                path.unlink(missing_ok=True)
        topo, program = record()
        try:
            save(path, topo, program, spec)
        except OSError as exc:  # a read-only cache dir must not stop proving
            log.warning("cuzk: could not write the recording cache %s: %s", path, exc)
    return topo, program, status
