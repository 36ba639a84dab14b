"""The engine's SRS loader: what an entry of the SrsManager costs and how it is loaded and freed.

Entries are keyed SrsKey(ref, device, params_dir) (cuzk.engine.keys). `srs_size` is where the
memory model's SRS estimate is read (cuzk.engine.work.srs_bytes, with the precomputed copies
`copies_plan` gives each G1 query).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from cuzk import defaults as D
from cuzk.engine import work
from cuzk.engine.keys import SrsKey
from cuzk.engine.settings import EngineConfig

if TYPE_CHECKING:
    from cuzk.backends.base import Backend
    from cuzk.groth16.srs import Copies

log = logging.getLogger(__name__)


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
            precompute=copies_plan(cfg, name, self.backend(device)),
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
    copies = copies_plan(cfg, circuit, backend)
    total = work.srs_bytes(circuit, precompute=copies, backend=backend)
    return work.srs_split(circuit, total, on_device=backend.name != "cpu", g2_on=cfg.g2_on)


def copies_plan(cfg: EngineConfig, circuit: str, backend: Backend) -> Copies:
    """The precomputed copies `circuit`'s G1 queries get on `backend`: cfg.msm_precompute, or
    with auto (0) the plan below, made once per circuit and backend and logged."""
    from cuzk.toggles import AUTO_COPIES

    if cfg.msm_precompute != AUTO_COPIES:
        return cfg.msm_precompute
    on_device = backend.name != "cpu"
    others = cfg.gpu_workers_per_device - 1 + (1 if cfg.urgent_lane_for(on_device) else 0)
    return auto_copies(circuit, backend, cfg.g2_on, cfg.abc_on_worker_for(backend.name), others)


@functools.lru_cache(maxsize=64)
def auto_copies(circuit: str, backend: Backend, g2_on: str, abc_on_worker: bool, others: int) -> Copies:
    """Copies of the H query only (the one full-scalar MSM of a proof: the 0/1 split leaves A,
    L and B_G1 tails of a few scalars), as many as fit, up to D.MSM_AUTO_COPIES, in what the
    device model leaves on the card when `circuit` runs alone: the card (or its budget) less
    the margin, the plain set, one unit's peak and `others` staged units (the other GPU workers
    and the urgent lane's). 1 (none) off a GPU, or where the backend keeps no copies."""
    mem = backend.memory_info() if backend.name != "cpu" else {}
    card = int(mem.get("budget") or mem.get("total") or 0)
    h = work.g1_query_points(circuit)["h"]
    if not card or backend.precompute_cost(h, "g1", 2) == 0:
        return 1
    dev = work.srs_split(circuit, work.srs_bytes(circuit), on_device=True, g2_on=g2_on)[1]
    ws = work.working_set(circuit, on_device=True, abc_on_worker=abc_on_worker, g2_on=g2_on, backend=backend)
    left = card - work.DEVICE_MARGIN_BYTES - dev - ws.device_peak - others * ws.device_staged
    fits = [k for k in range(2, D.MSM_AUTO_COPIES + 1) if backend.precompute_cost(h, "g1", k) <= left]
    copies = max(fits, default=1)
    gib = lambda b: f"{b / 2**30:.1f} GiB"  # noqa: E731
    log.info(
        "msm.precompute=auto: %s's H query (%d points) gets %d copies (%s more) on %s: %s left beside the "
        "set %s, one unit's peak %s and %d staged unit(s) of %s, of %s less a %s margin",
        circuit, h, copies, gib(backend.precompute_cost(h, "g1", copies)), backend.label, gib(max(0, left)),
        gib(dev), gib(ws.device_peak), others, gib(ws.device_staged), gib(card), gib(work.DEVICE_MARGIN_BYTES),
    )  # fmt: skip
    return {"h": copies}
