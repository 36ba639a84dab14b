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
from cuzk.engine.settings import EngineConfig, default_abc_on_worker

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
            g2_on=g2_placement(cfg, name, self.backend(device)),
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
    return work.srs_split(
        circuit, total, on_device=backend.name != "cpu", g2_on=g2_placement(cfg, circuit, backend)
    )


def copies_plan(cfg: EngineConfig, circuit: str, backend: Backend) -> Copies:
    """The precomputed copies `circuit`'s G1 queries get on `backend`: cfg.msm_precompute, or
    with auto (0) the plan below, made once per circuit and backend and logged."""
    from cuzk.toggles import AUTO_COPIES

    if cfg.msm_precompute != AUTO_COPIES:
        return cfg.msm_precompute
    g2_on = g2_placement(cfg, circuit, backend)
    return auto_copies(circuit, backend, g2_on, cfg.abc_on_worker_for(backend.name), _others(cfg, backend))


def g2_placement(cfg: EngineConfig, circuit: str, backend: Backend) -> str:
    """Where `circuit`'s G2 query lives on `backend` under cfg.g2_on (auto resolved, resolve_g2)."""
    return resolve_g2(cfg.g2_on, circuit, backend, cfg.abc_on_worker_for(backend.name), _others(cfg, backend))


def resolve_g2(
    g2_on: str, circuit: str, backend: Backend, abc_on_worker: bool | None = None, others: int = 0
) -> str:
    """`g2_on`, or for auto: cpu off a GPU, else device where the model fits the set with its G2
    query beside one unit and `others` staged units on the card, else stream (once per circuit
    and backend, logged). `abc_on_worker` None: the backend's default."""
    if g2_on != "auto":
        return g2_on
    if backend.name == "cpu":
        return "cpu"
    abc = default_abc_on_worker(backend.name) if abc_on_worker is None else abc_on_worker
    return _auto_g2(circuit, backend, abc, others)


def _others(cfg: EngineConfig, backend: Backend) -> int:
    """Staged units beside the one proving on a device: the other GPU workers' and the urgent lane's."""
    return cfg.gpu_workers_per_device - 1 + (1 if cfg.urgent_lane_for(backend.name != "cpu") else 0)


def _card(backend: Backend) -> int:
    """The device bytes `backend` may use (its budget, else its size); 0 where it does not say."""
    mem = backend.memory_info() if backend.name != "cpu" else {}
    return int(mem.get("budget") or mem.get("total") or 0)


def _left(circuit: str, backend: Backend, g2_on: str, abc_on_worker: bool, others: int) -> tuple[int, str]:
    """(device bytes the model leaves when `circuit` runs alone with its G2 query as `g2_on`, how):
    the card less the margin, the plain set, one unit's peak and `others` staged units."""
    card = _card(backend)
    dev = work.srs_split(circuit, work.srs_bytes(circuit), on_device=True, g2_on=g2_on)[1]
    ws = work.working_set(circuit, on_device=True, abc_on_worker=abc_on_worker, g2_on=g2_on, backend=backend)
    left = card - work.DEVICE_MARGIN_BYTES - dev - ws.device_peak - others * ws.device_staged
    how = (
        f"{_gib(left)} left beside the set {_gib(dev)}, one unit's peak {_gib(ws.device_peak)} and {others} "
        f"staged unit(s) of {_gib(ws.device_staged)}, of {_gib(card)} less a {_gib(work.DEVICE_MARGIN_BYTES)} margin"
    )
    return left, how


def _gib(b: int) -> str:
    return f"{b / 2**30:.1f} GiB"


@functools.lru_cache(maxsize=64)
def _auto_g2(circuit: str, backend: Backend, abc_on_worker: bool, others: int) -> str:
    if not _card(backend):
        return "device"
    left, how = _left(circuit, backend, "device", abc_on_worker, others)
    place = "device" if left >= 0 else "stream"
    log.info("msm.g2_on=auto: %s's G2 query goes %s on %s (with it on the device: %s)",
             circuit, "on the device" if place == "device" else "through the card from host memory (stream)",
             backend.label, how)  # fmt: skip
    return place


@functools.lru_cache(maxsize=64)
def auto_copies(circuit: str, backend: Backend, g2_on: str, abc_on_worker: bool, others: int) -> Copies:
    """Copies of the H query only (the one full-scalar MSM of a proof: the 0/1 split leaves A,
    L and B_G1 tails of a few scalars), as many as fit, up to D.MSM_AUTO_COPIES, in what the
    device model leaves when `circuit` runs alone (_left). 1 (none) off a GPU, or where the
    backend keeps no copies."""
    h = work.g1_query_points(circuit)["h"]
    if not _card(backend) or backend.precompute_cost(h, "g1", 2) == 0:
        return 1
    left, how = _left(circuit, backend, g2_on, abc_on_worker, others)
    fits = [k for k in range(2, D.MSM_AUTO_COPIES + 1) if backend.precompute_cost(h, "g1", k) <= left]
    copies = max(fits, default=1)
    log.info("msm.precompute=auto: %s's H query (%d points) gets %d copies (%s more) on %s: %s",
             circuit, h, copies, _gib(backend.precompute_cost(h, "g1", copies)), backend.label, how)  # fmt: skip
    return {"h": copies}
