"""The one load chain of a proving key, shared by LocalProver and the engine's SRS loader.

Registry circuit: circuit -> topology (span `topology`) -> parameters and resident SRS
(`resident_parameters`: a `cuzk setup` folder, the cache, or a fresh setup generated straight
into residency; spans `load_params`, `make_resident`). zkey: the key file -> the resident key (`load_key`). Both keep
`precompute` shifted copies of the G1 bases when asked (the msm.precompute toggle).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cuzk.backends.base import Backend
from cuzk.engine.keys import KeyId
from cuzk.groth16.prover import ProvingKey
from cuzk.groth16.srs import Copies
from cuzk.instrument import Timeline


@dataclass
class LoadedKey:
    key: ProvingKey
    circuit: Any  # the registry Circuit whose witnesses the key proves; None for a zkey
    params_dir: Path | None = None  # where the parameters (and their .vk) are; None for a zkey


def load_key(
    ident: KeyId,
    backend: Backend,
    *,
    g2_backend: Backend | None = None,
    precompute: Copies = 1,
    checked: bool = False,
    progress: Callable[[str], None] | None = None,
    timeline: Timeline | None = None,
) -> LoadedKey:
    """Load `ident`'s proving key onto `backend` (G2 work on `g2_backend`), spans on `timeline`."""
    tl = timeline if timeline is not None else Timeline()
    say = progress or (lambda _m: None)
    g2 = g2_backend or backend
    if ident.is_zkey:
        from cuzk.interop.prover import load_proving_key
        from cuzk.interop.zkey import read_zkey

        with tl.span("load_key"):
            say(f"loading {ident.zkey_path}")
            pk = load_proving_key(
                read_zkey(ident.zkey_path), backend, g2_backend=g2, precompute=precompute, progress=say
            )
        return LoadedKey(pk, None)
    from cuzk.circuits import get_circuit
    from cuzk.groth16.api import resident_parameters

    circuit = get_circuit(ident.ref)
    with tl.span("topology"):
        topo = circuit.topology()
    # spans load_params and make_resident: disk or a fresh setup straight into residency
    params_dir, key = resident_parameters(
        circuit.name,
        topo,
        topo.hash,
        backend,
        g2_backend=g2,
        directory=None if ident.params_dir is None else Path(ident.params_dir),
        checked=checked,
        precompute=precompute,
        progress=say,
        timeline=tl,
    )
    return LoadedKey(key, circuit, params_dir)
