"""The synchronous job layer: one ProofRequest in, its verified proofs out, in the caller's thread.

    prover = LocalProver(backend, g2_backend=None, checked=False, progress=None)
    prover.prove(request, timeline=None) -> ProveResult   every partition in one batched pass
    prover.resident(request, timeline=None) -> ProvingKey  load on first use, then kept
    prover.release(key_name) -> int                        drop a key's resident SRS

It owns the chain that the CLI and the benchmarks used to write out each time:
registry circuit -> topology -> parameters (`resident_parameters`: a
`cuzk setup` folder, or the cache, generated once) -> resident SRS -> witnesses
-> synthesize / start / finalize; and for a snarkjs zkey, the key file -> the
resident key -> the .wtns witnesses -> the same prover. Resident keys stay
across calls, one per key (and parameter folder): the seed of the SRS manager.

Spans: when a key is loaded, `topology`, `load_params`, `make_resident` (registry
circuits) or `load_key` (zkeys); then the prover's, where `synthesis` includes
computing each partition's witness (`witness`: circuit.witness, or reading the
.wtns) besides `matvec`. Partition j of a seeded request proves the random valid
instance of seed + j.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from cuzk.backends.base import Backend
from cuzk.engine.keys import KeyId
from cuzk.engine.load import LoadedKey, load_key
from cuzk.engine.request import ProofRequest
from cuzk.errors import UnknownCircuitError
from cuzk.groth16.prover import ProveResult, ProvingKey, WitnessSource, prove
from cuzk.groth16.srs import Copies, release_queries
from cuzk.instrument import Timeline


def _seeded_witness(circuit: Any, seed: int) -> Any:
    return circuit.witness(circuit.random_instance(seed=seed))


class LocalProver:
    """Proves requests one at a time on one backend, keeping each key's SRS resident."""

    def __init__(
        self,
        backend: Backend,
        *,
        g2_backend: Backend | None = None,
        checked: bool = False,
        progress: Callable[[str], None] | None = None,
        precompute: Copies = 1,
    ) -> None:
        self.backend = backend
        self.g2_backend = g2_backend or backend  # the CPU keeps finalize off the GPU
        self.checked = checked  # subgroup-check parameter files when loading them
        #: copies of the G1 query bases per resident key (msm.precompute; auto: planned per key
        #: for one unit at a time, cuzk.engine.loader.auto_copies)
        self.precompute = precompute
        self.progress = progress or (lambda _m: None)
        self.loads = 0  # keys made resident so far (a key proved again is not loaded again)
        self._resident: dict[KeyId, LoadedKey] = {}  # one per key and folder (cuzk.engine.keys)

    def prove(self, request: ProofRequest, *, timeline: Timeline | None = None) -> ProveResult:
        """All partitions of the request as one batch; every proof verified (ProofError otherwise)."""
        from cuzk.toggles import windows

        tl = timeline or Timeline(request.request_id or request.key_name)
        entry = self._entry(request, tl)
        wins = windows(request.options)  # the msm.window.* toggles of the request
        return prove(entry.key, self._witnesses(request, entry.circuit), timeline=tl, windows=wins)

    def resident(self, request: ProofRequest, *, timeline: Timeline | None = None) -> ProvingKey:
        """The request's proving key, loaded and made resident on first use (spans on `timeline`)."""
        return self._entry(request, timeline or Timeline()).key

    def release(self, key_name: str) -> int:
        """Drop the resident SRS of `key_name` (a circuit name or zkey path); how many keys went."""
        try:
            ref = KeyId.named(key_name).ref
        except UnknownCircuitError:
            return 0
        gone = [ident for ident in self._resident if ident.ref == ref]
        for ident in gone:
            release_queries(self._resident.pop(ident).key)  # device memory now (the host: the handles)
        return len(gone)

    def params_dir(self, request: ProofRequest) -> Path | None:
        """The folder holding the request's parameters and .vk (loading them if needed); None for a zkey."""
        return self._entry(request, Timeline()).params_dir

    @property
    def resident_keys(self) -> list[str]:
        """The refs of the resident keys: circuit names, "zkey:<abs path>" for zkeys."""
        return [ident.ref for ident in self._resident]

    def _entry(self, request: ProofRequest, tl: Timeline) -> LoadedKey:
        ident = KeyId.of(request)
        entry = self._resident.get(ident)
        if entry is None:
            entry = load_key(
                ident, self.backend, g2_backend=self.g2_backend, precompute=self._copies(ident.ref),
                checked=self.checked, progress=self.progress, timeline=tl,
            )  # fmt: skip
            self._resident[ident] = entry
            self.loads += 1
        return entry

    def _copies(self, ref: str) -> Copies:
        from cuzk.engine.loader import auto_copies
        from cuzk.engine.settings import default_abc_on_worker
        from cuzk.toggles import AUTO_COPIES

        if self.precompute != AUTO_COPIES:
            return self.precompute
        # the placement its backends stand for: the device itself, the CPU, or the streamed twin
        g2_on = (
            "device"
            if self.g2_backend is self.backend
            else "cpu"
            if self.g2_backend.name == "cpu"
            else "stream"
        )
        return auto_copies(ref, self.backend, g2_on, default_abc_on_worker(self.backend.name), 0)

    @staticmethod
    def _witnesses(request: ProofRequest, circuit: Any) -> list[WitnessSource]:
        """Deferred witnesses, so that computing them is timed inside synthesis."""
        if circuit is None:
            return list(request.witnesses or ())
        if request.instances is not None:
            return [partial(circuit.witness, inst) for inst in request.instances]
        return [partial(_seeded_witness, circuit, seed) for seed in request.partition_seeds()]
