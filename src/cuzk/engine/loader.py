"""The engine's SRS loader: what an entry of the SrsManager costs and how it is loaded and freed.

Entries are keyed SrsKey(ref, device, params_dir) (cuzk.engine.keys). `srs_size` is where the
memory model's SRS estimate is read (cuzk.engine.work.srs_bytes, with precomputed copies).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from cuzk.engine import work
from cuzk.engine.keys import SrsKey
from cuzk.engine.settings import EngineConfig


class Loader:
    """SrsLoader for the engine: keys are SrsKey(ref, device, params_dir) (cuzk.engine.keys)."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config

    def size(self, key: Hashable) -> int:
        name, device, _ = SrsKey(*key)  # type: ignore[misc]
        return srs_size(self.config, name, device)

    def load(self, key: Hashable) -> Any:
        name, device, params_dir = SrsKey(*key)  # type: ignore[misc]
        cfg = self.config
        return work.load_resident(
            name,
            cfg.backend,
            device,
            g2_on_cpu=cfg.g2_on_cpu,
            params_dir=params_dir,
            precompute=cfg.msm_precompute,
        )

    def unload(self, key: Hashable, value: Any) -> None:
        """Free the entry's device bases now (no lease holds it: the manager unloads only idle
        entries), so the backend's memory and its `resident` count drop at eviction, not at the
        next garbage collection; precomputed copies can be tens of GiB."""
        from cuzk.groth16.srs import release_queries

        release_queries(value.srs)


def srs_size(cfg: EngineConfig, circuit: str, device: int) -> int:
    """Host bytes a loaded SRS of `circuit` holds for `device` (the memory budget's share)."""
    return srs_footprint(cfg, circuit, device)[0]


def srs_footprint(cfg: EngineConfig, circuit: str, device: int) -> tuple[int, int]:
    """(host, device) bytes of a loaded SRS of `circuit` on `device`, with its precomputed
    copies: on a GPU the queries are resident there and the host keeps at most the G2 query."""
    backend = work.device_backend(cfg.backend, device)
    if cfg.msm_precompute <= 1:
        total = work.srs_bytes(circuit)
    else:
        total = work.srs_bytes(circuit, precompute=cfg.msm_precompute, backend=backend)
    return work.srs_split(circuit, total, on_device=backend.name != "cpu", g2_on_cpu=cfg.g2_on_cpu)
