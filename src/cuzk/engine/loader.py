"""The engine's SRS loader: what an entry of the SrsManager costs and how it is loaded and freed.

Entries are keyed SrsKey(ref, device, params_dir) (cuzk.engine.keys). `srs_size` is where the
memory model's SRS estimate is read (cuzk.engine.work.srs_bytes, with precomputed copies).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from cuzk.engine import work
from cuzk.engine.keys import SrsKey
from cuzk.engine.settings import EngineConfig

if TYPE_CHECKING:
    from cuzk.backends.base import Backend


class Loader:
    """SrsLoader for the engine: keys are SrsKey(ref, device, params_dir) (cuzk.engine.keys);
    entries load on the engine's own backends (`backends`: device -> Backend)."""

    def __init__(self, config: EngineConfig, backends: Mapping[int, Backend] | None = None) -> None:
        self.config = config
        self.backends = backends or {}

    def backend(self, device: int) -> Backend:
        return self.backends.get(device) or engine_backend(self.config, device)

    def size(self, key: Hashable) -> int:
        name, device, _ = SrsKey(*key)  # type: ignore[misc]
        return srs_footprint(self.config, name, self.backend(device))[0]

    def load(self, key: Hashable) -> Any:
        name, device, params_dir = SrsKey(*key)  # type: ignore[misc]
        cfg = self.config
        return work.load_resident(
            name,
            self.backend(device),
            device,
            g2_on=cfg.g2_on,
            params_dir=params_dir,
            precompute=cfg.msm_precompute,
        )

    def unload(self, key: Hashable, value: Any) -> None:
        """Free the entry's device bases now (no lease holds it: the manager unloads only idle
        entries), so the backend's memory and its `resident` count drop at eviction, not at the
        next garbage collection; precomputed copies can be tens of GiB."""
        from cuzk.groth16.srs import release_queries

        release_queries(value.srs)


def engine_backend(cfg: EngineConfig, device: int) -> Backend:
    """The backend an engine with `cfg` proves on at `device`: its settings (the backend-level
    toggles of cfg.toggles) fixed when it is made, one instance per distinct settings."""
    from cuzk.backends import backend_settings

    return work.device_backend(cfg.backend, device, backend_settings(cfg.toggles))


def srs_size(cfg: EngineConfig, circuit: str, device: int) -> int:
    """Host bytes a loaded SRS of `circuit` holds for `device` (the memory budget's share)."""
    return srs_footprint(cfg, circuit, engine_backend(cfg, device))[0]


def srs_footprint(cfg: EngineConfig, circuit: str, backend: Backend) -> tuple[int, int]:
    """(host, device) bytes of a loaded SRS of `circuit` on `backend`, with its precomputed
    copies: on a GPU the queries are resident there and the host keeps at most the G2 query."""
    if cfg.msm_precompute <= 1:
        total = work.srs_bytes(circuit)
    else:
        total = work.srs_bytes(circuit, precompute=cfg.msm_precompute, backend=backend)
    return work.srs_split(circuit, total, on_device=backend.name != "cpu", g2_on=cfg.g2_on)
