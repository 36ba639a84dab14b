"""Every call the engine makes into the prover and the parameter code, in one place.

The pipeline stages (gpu.py, finalize.py, engine.py) never import the prover
themselves: they call these functions, so re-pointing the engine at another
prover (the unified native/zkey prover, `LocalProver`) is an edit here only.

Memory estimates (`working_set`): one partition's bytes in flight, from the
circuit's sizes (n constraints, a domain of m = 2^k >= n, `cols` variables;
Fr elements are 32 bytes, G1 affine points 96, G2 192):
  a/b/c share:  a, b, c as handed over (3 n), plus the prover's NTT buffers in
                `start` (10 m: each vector padded, transformed back and onto
                the coset, the quotient and its inverse transform, and the
                MSM's scalar copies), released when `start` returns;
  rest:         the witness four times (the worker's shared-memory copy, the
                engine's copy, the gathered a and b scalars) and 1 MiB for the
                MSM sums and the result, released when the partition is finalized.
Measured (CPU backend; the shared-memory hand-over plus the tracemalloc peak of
build_assignment + start + finalize, second run): porep-tiny 3.87 MB against an
estimate of 4.73 MB, porep-small 56.4 MB against 63.6 MB
(benchmarks/engine_working_set.py).
On a GPU (`on_device`) the NTT buffers and a/b/c live on the device, and the host
keeps the hand-over (the witness, and a/b/c when the workers compute them), with
a/b/c handed over a stacked copy of the witness for its upload, and the G2 scalars
when the G2 MSM runs on the CPU: at porep-32g (witness only) 4.2 GB per partition
instead of the CPU model's 72 GB. The device side has two figures:
what a partition holds from prestaging until `start` ends (`device_staged`) and the
most `start` holds under the device lock (`device_peak`); the engine checks
SRS + peak + (GPU workers - 1) x staged against the card before accepting a job.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from cuzk.backends.base import Backend
from cuzk.engine.keys import ZKEY_PREFIX, is_zkey
from cuzk.groth16 import prover
from cuzk.groth16.proof import Proof, proofs_to_bytes
from cuzk.groth16.qap import Densities, Domain
from cuzk.groth16.srs import Copies, copies_for
from cuzk.groth16.verifier import PreparedVerifyingKey, prepare, verify, verify_batch
from cuzk.instrument import Timeline

log = logging.getLogger("cuzk.engine")

FR_BYTES, G1_BYTES, G2_BYTES = 32, 96, 192
_FIXED_BYTES = 1 << 20  # per partition: Pending's MSM sums, Python objects, the result buffers


def device_backend(name: str, device: int, settings: Mapping[str, Any] | None = None) -> Backend:
    """The backend that runs kernels on `device` (with the CPU backend every device is the CPU),
    with these constructor settings (cuzk.backends.backend_settings) fixed for its life."""
    from cuzk.backends import get_backend
    from cuzk.errors import UsageError

    try:
        return get_backend(name, device=device, settings=settings)
    except TypeError:  # a get_backend without device keys: one backend per name
        backend = get_backend(name)
    if device != 0 and backend.name != "cpu":
        raise UsageError(f"device {device}: this build's {backend.name} backend drives device 0 only")
    return backend


def cpu_backend() -> Backend:
    from cuzk.backends import get_backend

    return get_backend("cpu")


def g2_backend(g2_on: str, backend: Backend) -> Backend:
    """Where b_g2 lives and its MSM runs under a resolved msm.g2_on (auto is resolved per key,
    cuzk.engine.loader.resolve_g2): the CPU, `backend` itself, or its streamed twin
    (Backend.streamed: the rows on the host, summed on the device)."""
    from cuzk import defaults as D
    from cuzk.errors import UsageError

    if g2_on not in D.G2_PLACES:
        raise UsageError(
            f"msm.g2_on must be one of {', '.join(D.G2_PLACES)} here (auto resolved), not {g2_on!r}"
        )
    return cpu_backend() if g2_on == "cpu" else backend.streamed() if g2_on == "stream" else backend


def circuit(name: str) -> Any:
    """The registry circuit (UnknownCircuitError if there is none); cheap, records nothing."""
    from cuzk.circuits import get_circuit

    return get_circuit(name)


def topology(name: str) -> Any:
    return circuit(name).topology()


@cache
def _zkey(name: str, mtime_ns: int) -> Any:
    from cuzk.interop.zkey import read_zkey

    return read_zkey(name[len(ZKEY_PREFIX) :])


def zkey(name: str) -> Any:
    """The mapped snarkjs key (read once per file version; FormatError if it is not one)."""
    from cuzk.errors import UsageError

    try:
        mtime = os.stat(name[len(ZKEY_PREFIX) :]).st_mtime_ns
    except OSError as exc:
        raise UsageError(f"{name[len(ZKEY_PREFIX) :]}: cannot read the zkey: {exc.strerror or exc}") from exc
    return _zkey(name, mtime)


@dataclass(frozen=True)
class WorkingSet:
    """One partition's bytes: on the host while in flight (`total`, of which `abc` is released
    after `start`), and on its device (`device_staged` from prestaging until `start` returns,
    `device_peak` at most while `start` runs under the device lock; 0 on the CPU backend)."""

    total: int
    abc: int
    device_staged: int = 0
    device_peak: int = 0


def working_set(name: str, *, on_device: bool = False, abc_on_worker: bool = True,
                g2_on: str = "device", backend: Backend | None = None) -> WorkingSet:  # fmt: skip
    """The model of the module docstring. `on_device`: the NTT buffers and MSM scratch live on
    a GPU (the host keeps only the hand-over and its staged copy), the scratch as `backend`
    plans it (Backend.msm_scratch_bytes; none without one); `abc_on_worker`: the synthesis
    workers hand a, b, c over (else only the witness, multiplied on the device)."""
    if is_zkey(name):  # the same accounting on snarkjs's domain (n = domainSize) and its signals
        zk = zkey(name)
        n = m = zk.domain_size
        cols = b_size = zk.n_vars
    else:
        topo = topology(name)
        n, cols = topo.num_constraints, topo.num_inputs + topo.num_aux
        m = Domain.for_constraints(n).m
        b_size = Densities.of(topo).b_size
    if not on_device:
        abc = (3 * n + 10 * m) * FR_BYTES
        return WorkingSet(total=abc + 4 * cols * FR_BYTES + _FIXED_BYTES, abc=abc)
    handed = (cols + (3 * n if abc_on_worker else 0)) * FR_BYTES  # the worker's shared memory
    # With a/b/c handed over, the witness is stacked on the host for its upload under the lock;
    # a witness-only hand-over goes to the device from where it lies (`stage`), no host copy.
    staged = cols * FR_BYTES if abc_on_worker else 0
    kept = (b_size * FR_BYTES if g2_on == "cpu" else 0) + _FIXED_BYTES  # G2 scalars until finalized
    return WorkingSet(
        total=handed + staged + kept,
        abc=handed + staged,
        device_staged=handed,
        device_peak=device_peak_bytes(
            n,
            m,
            cols,
            msm_scratch=backend.msm_scratch_bytes(max(m, cols)) if backend else 0,
            abc_on_worker=abc_on_worker,
            g2_stream=backend.streamed().msm_scratch_bytes(b_size, "g2")
            if backend and g2_on == "stream"
            else 0,
            b_size=b_size,
        ),
    )


def device_peak_bytes(
    n: int,
    m: int,
    cols: int,
    *,
    msm_scratch: int,
    abc_on_worker: bool = False,
    g2_stream: int = 0,
    b_size: int = 0,
) -> int:
    """The most one partition's `start` holds on the device at once, the larger of its two
    phases. H's transforms: the witness and 4 domain-length vectors (products made on the device
    come at the domain's length and BellpersonQap.h transforms them in their own memory with one
    more buffer; before 2026-12-07, 3n + 7m: 49 GB at porep-32g, 47.8 measured on the H200).
    The MSMs: the witness, H and `msm_scratch`, the backend's scratch for the largest (H's m
    points or the aux's; 9.9 GB in 4 chunks at 2^27, where one chunk's 31 GB did not fit an
    80 GB card, H100 2026-12-07). Handed-over a/b/c (n rows) stay staged through all: 3n more.
    With msm.g2_on=stream a third phase: the witness, the `b_size` B scalars and `g2_stream`, the
    streamed G2 MSM's chunks and scratch (below the MSMs' at real size; counted for small ones)."""
    handed = 3 * n if abc_on_worker else 0
    transforms = (cols + handed + 4 * m) * FR_BYTES
    msm = (cols + handed + m) * FR_BYTES + msm_scratch
    g2 = (cols + handed + b_size) * FR_BYTES + g2_stream if g2_stream else 0
    return max(transforms, msm, g2) + _FIXED_BYTES


def srs_split(name: str, total: int, *, on_device: bool, g2_on: str) -> tuple[int, int]:
    """(host, device) bytes of a resident set of `total` bytes (`srs_bytes`): on a GPU only the
    G2 query stays on the host, and only when its MSM runs there or streams it (msm.g2_on cpu or
    stream); on the CPU all is host."""
    if not on_device:
        return total, 0
    if is_zkey(name):
        g2 = zkey(name).b2.shape[0] * G2_BYTES
    else:
        g2 = Densities.of(topology(name)).b_size * G2_BYTES
    host = g2 if g2_on != "device" else 0
    return host, total - host


def g1_query_points(name: str) -> dict[str, int]:
    """The points of each G1 query of `name`'s parameters (h, l, a, b_g1)."""
    if is_zkey(name):
        zk = zkey(name)
        return {"h": zk.h.shape[0], "l": zk.c.shape[0], "a": zk.a.shape[0], "b_g1": zk.b1.shape[0]}
    topo = topology(name)
    dens = Densities.of(topo)
    m = Domain.for_constraints(topo.num_constraints).m
    return {"h": m - 1, "l": topo.num_aux, "a": dens.a_size, "b_g1": dens.b_size}


def srs_bytes(name: str, *, precompute: Copies = 1, backend: Backend | None = None) -> int:
    """The resident parameters' size: h, l, a, b_g1 in G1, b_g2 in G2, the vk's ic (zkey: its
    sections), plus the copies `backend` keeps of each G1 query with its `precompute` count
    (Backend.precompute_cost: 0 where the backend keeps none)."""
    queries = g1_query_points(name)
    if is_zkey(name):
        zk = zkey(name)
        base = (
            (sum(queries.values()) + zk.ic.shape[0]) * G1_BYTES
            + zk.b2.shape[0] * G2_BYTES
            + zk.coeffs.nbytes * 2
        )
    else:
        topo = topology(name)
        b_size = queries["b_g1"]
        base = (sum(queries.values()) + topo.num_inputs) * G1_BYTES + b_size * G2_BYTES
    if backend is None:
        return base
    return base + sum(backend.precompute_cost(n, "g1", copies_for(precompute, q)) for q, n in queries.items())


@dataclass
class Resident:
    """What a GPU worker proves with: the resident parameters (or zkey proving key) and the prepared vk."""

    srs: Any  # a ProvingKey: ResidentParameters, or interop.prover.ZkeyProvingKey for a zkey
    pvk: PreparedVerifyingKey
    circuit: str
    device: int
    #: msm.g2_on=device: the G2 MSM is device work, run under the unit's own hold (GpuWorker);
    #: on the CPU it is the finalizer's.
    g2_in_hold: bool = False


def load_resident(
    name: str,
    backend_name: str | Backend,
    device: int,
    *,
    g2_on: str,
    params_dir: str | os.PathLike[str] | None,
    precompute: Copies = 1,
) -> Resident:
    """Parameters for `name` on `device` (generated and cached once when absent), made resident;
    `precompute` > 1 keeps that many shifted copies of the G1 queries (the msm.precompute toggle;
    per query where it is a mapping).
    `backend_name`: a backend's name, or the Backend itself (an engine's, its settings fixed)."""
    from cuzk.engine.keys import KeyId
    from cuzk.engine.load import load_key

    backend = device_backend(backend_name, device) if isinstance(backend_name, str) else backend_name
    g2 = g2_backend(g2_on, backend)

    def say(msg: str) -> None:
        log.info("%s on %s: %s", name, backend.label, msg)

    folder = None if params_dir is None else os.fspath(params_dir)
    loaded = load_key(KeyId(name, folder), backend, g2_backend=g2, precompute=precompute, progress=say)
    pk: Any = loaded.key
    pvk = pk.pvk if is_zkey(name) else prepare(pk.vk)  # a zkey's key carries its prepared vk
    return Resident(srs=pk, pvk=pvk, circuit=name, device=device, g2_in_hold=g2_on != "cpu")


def stage(
    resident: Resident, parts: Sequence[Any], timeline: Timeline, times: dict[str, float] | None = None
) -> Callable[[], Any]:
    """Copy a unit's hand-over out of shared memory (and onto the device) ahead of the device lock.

    Returns the call that makes the prover Assignment under the lock. Nothing either refers
    to the hand-over, which the caller closes after this returns: with a/b/c from the
    workers they are copied to the backend here and the call has nothing left to do;
    without them the witnesses are uploaded here straight from the hand-over (no host copy)
    and the call runs only the sparse products and the satisfaction check on the device copy,
    which `start` reuses for the MSMs. A zkey hand-over is a circom witness (`source`: a .wtns
    path or an array), loaded and multiplied here. `times` gets the copies' parts (Backend.stage).
    """
    backend = resident.srs.backend
    if is_zkey(resident.circuit):
        zk = prover.synthesize(resident.srs, [p.source for p in parts], timeline=timeline)
        return lambda: zk
    from cuzk.errors import CircuitError

    n_in, n_vars = len(parts[0].inputs), len(parts[0].inputs) + len(parts[0].aux)
    for j, p in enumerate(parts):
        if (len(p.inputs), len(p.inputs) + len(p.aux)) != (n_in, n_vars):
            raise CircuitError(
                f"witness {j} has {len(p.inputs)} + {len(p.aux)} values, witness 0 {n_in} + {n_vars - n_in}"
            )
    inputs = np.stack([p.inputs for p in parts])
    if all(p.abc is not None for p in parts):
        abc = [tuple(backend.stage(v, times=times) for v in p.abc) for p in parts]
        ws = np.empty((len(parts), n_vars, 4), dtype=np.uint64)  # uploaded under the lock, once
        for j, p in enumerate(parts):
            ws[j, :n_in], ws[j, n_in:] = p.inputs, p.aux
        done = prover.Assignment(witness=ws, inputs=inputs, abc=abc, timeline=timeline)
        return lambda: done
    pieces = [v for p in parts for v in (p.inputs, p.aux)]
    dev = backend.stage(*pieces, times=times).reshape(len(parts), n_vars, 4)
    return lambda: prover.synthesize_staged(resident.srs, inputs, dev, backend, timeline=timeline)


def build_assignment(resident: Resident, parts: Sequence[Any], timeline: Timeline) -> Any:
    """The prover Assignment of k witnesses from synthesis hand-overs, at once (see `stage`)."""
    return stage(resident, parts, timeline)()


def start(
    assignment: prover.Assignment,
    resident: Resident,
    windows: Mapping[str, int] | None = None,
    *,
    checkpoint: Callable[[], None] | None = None,
    g2: bool = False,
) -> prover.Pending:
    """The kernel region: one prover for both key kinds (cuzk.groth16.prover); `checkpoint` is
    called between its phases (the device lock's yield to a waiting urgent unit); `g2`: the G2
    MSM too, under the caller's hold (prover.start)."""
    return prover.start(assignment, resident.srs, windows=windows, checkpoint=checkpoint, g2=g2)


#: Device memory `device_room` leaves free (the CUDA context, kernel modules, allocator rounding).
DEVICE_MARGIN_BYTES = 4 << 30


def device_room(backend: Backend) -> int:
    """Device bytes free for another unit now: the card (or its budget) less what is in use and
    the margin; 0 where the backend does not say."""
    mem = backend.memory_info()
    card = int(mem.get("budget") or mem.get("total") or 0)
    return max(0, card - int(mem.get("used") or 0) - DEVICE_MARGIN_BYTES) if card else 0


def finalize(
    pending: prover.Pending, resident: Resident, timeline: Timeline, windows: Mapping[str, int] | None = None
) -> list[Proof]:
    """The G2 MSM and assembly; their spans go to `timeline` (the finalizer's, not the GPU pass's)."""
    pending.timeline = timeline
    return prover.finalize(pending, resident.srs, windows=windows)


def public_inputs(pending: prover.Pending, resident: Resident) -> list[list[int]]:
    """Per proof: the public inputs without ONE (for a zkey: snarkjs's public signals, in order)."""
    return prover.public_inputs(pending)


def bad_proofs(resident: Resident, inputs: Sequence[Sequence[int]], proofs: Sequence[Proof]) -> list[int]:
    """Indices of the proofs that fail verification: one batched check, one by one only on failure."""
    if verify_batch(resident.pvk, inputs, proofs):
        return []
    return [j for j, p in enumerate(proofs) if not verify(resident.pvk, inputs[j], p)]


def proof_bytes(proofs: Sequence[Proof]) -> bytes:
    return proofs_to_bytes(list(proofs))


def prove_one_by_one(name: str, seeds: Sequence[int], resident: Resident) -> list[float]:
    """The baseline without the pipeline: each instance's witness, proof and check in turn (seconds each)."""
    import time

    c = circuit(name)
    times = []
    for seed in seeds:
        t0 = time.perf_counter()
        prover.prove(resident.srs, [c.witness(c.random_instance(seed))])
        times.append(time.perf_counter() - t0)
    return times
