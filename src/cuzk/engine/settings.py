"""The engine's settings (EngineConfig), the named toggles that are its fields, and its test hooks.

Every setting is validated when the config is made; `with_settings` reads the CLI's `--set`
texts and `with_toggles` the named toggles (cuzk.toggles). Sizes follow cuzk.units.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cuzk import defaults as D
from cuzk.engine.memory import auto_budget
from cuzk.errors import UsageError
from cuzk.units import parse_size

#: Named toggles (cuzk.toggles) that are EngineConfig fields: toggle -> (field, value as the field holds it).
TOGGLE_FIELDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "batch.max_size": ("max_batch_size", int),
    "gpu.workers_per_device": ("gpu_workers_per_device", int),
    "synthesis.workers": ("synthesis_workers", int),
    "msm.g2_on": ("g2_on", str),
    "synthesis.abc_on": ("abc_on_worker", lambda v: None if v == "auto" else v == "worker"),
    "finalize.split": ("split_finalize", bool),
    "upload.prestage": ("prestage_uploads", bool),
    "msm.precompute": ("msm_precompute", int),
}
#: Toggles a single request may set (ProofRequest.options): they change how its partitions are proved,
#: not the engine's shape. Jobs with different options never share a batch.
REQUEST_TOGGLES = ("synthesis.abc_on", "msm.window.h", "msm.window.l", "msm.window.a", "msm.window.b_g1",
                   "msm.window.b_g2")  # fmt: skip


# --- configuration -------------------------------------------------------------------------------


class EngineHooks:
    """Test hooks: callables the stages call at named points with (job_id, partition).

    A hook runs on the stage's own thread, so a hook that waits on an event holds that stage
    (how tests make orderings certain without sleeping); a hook that raises fails the partition.
    """

    POINTS = ("dispatched", "before_synth", "synth_hold", "after_synth", "before_gpu", "after_gpu",
              "before_finalize", "parked")  # fmt: skip
    # dispatched: the job's batch is queued for synthesis (called for each of its partitions);
    # synth_hold: may return a folder for SynthTask.hold (the worker blocks there: kill tests);
    # after_synth: the partition's witness is handed to the GPU stage;
    # parked: the job's batch waits for room on its device (partition 0; see Dispatcher).

    def __init__(self, **hooks: Callable[[str, int], Any]) -> None:
        self._hooks: dict[str, Callable[[str, int], Any]] = {}
        for name, fn in hooks.items():
            self.set(name, fn)

    def set(self, name: str, fn: Callable[[str, int], Any] | None) -> None:
        if name not in self.POINTS:
            raise UsageError(f"unknown hook {name!r}; hooks are {', '.join(self.POINTS)}")
        if fn is None:
            self._hooks.pop(name, None)
        else:
            self._hooks[name] = fn

    def clear(self) -> None:
        self._hooks.clear()

    def has(self, name: str) -> bool:
        return name in self._hooks

    def call(self, name: str, job_id: str, partition: int) -> Any:
        fn = self._hooks.get(name)
        return fn(job_id, partition) if fn is not None else None


@dataclass(frozen=True)
class EngineConfig:
    """Every engine setting, validated; defaults follow the reference where they mean the same here.

    Sizes take a byte count or text ("14GiB", "512MiB"). `memory_budget` "auto" is the
    memory available now minus `memory_margin`.
    """

    backend: str = "auto"  # cpu | cuda | auto
    devices: tuple[int, ...] = (0,)  # device ordinals (with cpu: that many CPU "devices")
    gpu_workers_per_device: int = D.GPU_WORKERS_PER_DEVICE
    synthesis_workers: int = D.SYNTHESIS_WORKERS  # worker processes
    synthesis_threads: int = 0  # numba threads per synthesis worker; 0: cores // synthesis_workers
    finalizer_workers: int = 2
    max_batch_size: int = D.MAX_BATCH_SIZE
    max_batch_wait_ms: int = D.MAX_BATCH_WAIT_MS
    memory_budget: int | str = "auto"
    memory_margin: int | str = "2GiB"
    result_retention_s: float = 600.0  # the reference keeps results forever; we prune
    min_srs_idle_s: float = D.EVICTION_MIN_IDLE_S  # an idle SRS entry is evictable after this long
    queue_limit: int = D.QUEUE_LIMIT  # jobs accepted and not yet finished
    #: partitions dispatched to a device (their SRS leased) and not yet finished, beyond which
    #: the dispatcher takes only HIGH and CRITICAL batches, so the rest keep their priority order
    #: in the queue; 0: auto, 2 x (synthesis_workers + gpu_workers_per_device)
    dispatch_ahead: int = 0
    #: a/b/c computed in the synthesis worker (True) or on the device (False); None: by backend,
    #: on the device with CUDA (porep-full on an H200: 3.88 s per sector against 6.83 s, where the
    #: workers' CPU SpMV bound the run), in the worker on the CPU backend (else the SpMV moves
    #: onto the one "device" stage).
    abc_on_worker: bool | None = None
    split_finalize: bool = (
        D.SPLIT_FINALIZE
    )  # finalize in finalizer threads (else in the GPU worker, after the lock)
    prestage_uploads: bool = D.PRESTAGE_UPLOADS  # a unit's vectors go to the device before the lock is taken
    #: the urgent lane: one more synthesis process and GPU worker per device kept for HIGH and
    #: CRITICAL units, and a unit on the device yields it between phases to a waiting one of
    #: higher priority; None: on with a GPU backend (WinningPoSt under a PoRep load, issue 34)
    urgent_lane: bool | None = None
    #: shifted copies of each G1 query base kept with a loaded SRS (1: none); their bytes count
    #: in the SRS's reservation (the msm.precompute toggle; CUDA backend only). 0 (auto,
    #: cuzk.toggles.AUTO_COPIES): copies of the H query planned from the device memory left
    #: (cuzk.engine.loader.copies_plan)
    msm_precompute: int = D.MSM_PRECOMPUTE
    toggles: Mapping[str, Any] = field(
        default_factory=dict
    )  # the other named toggles (msm.window.*, staging)
    #: where the B MSM on G2 runs (msm.g2_on, D.G2_ON_CHOICES): cpu (in the finalizer: the
    #: reference's split), device (under the unit's hold), stream (there too, its bases on the
    #: host); auto: per key, cuzk.engine.loader.g2_placement
    g2_on: str = D.G2_ON
    cache_dir: str | None = None  # CUZK_CACHE_DIR for the workers (None: inherited)
    #: the parameter folder of requests that name none, and of preload/evict (the daemon's
    #: srs.param_cache); None: the user cache
    params_dir: str | None = None
    hooks: EngineHooks | None = field(default=None, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    #: Fields `with_settings` (the CLI's --set) may change; hooks and clock are for code only.
    SETTABLE = (
        "backend", "devices", "gpu_workers_per_device", "synthesis_workers", "synthesis_threads",
        "finalizer_workers",
        "max_batch_size", "max_batch_wait_ms", "memory_budget", "memory_margin", "result_retention_s",
        "min_srs_idle_s", "queue_limit", "dispatch_ahead", "abc_on_worker", "g2_on", "cache_dir", "split_finalize",
        "urgent_lane",
        "prestage_uploads", "params_dir",
    )  # fmt: skip

    def __post_init__(self) -> None:
        from cuzk.backends import NAMES

        if self.backend not in NAMES:
            raise UsageError(f"backend must be one of {', '.join(NAMES)}, not {self.backend!r}")
        devices = tuple(self.devices) if isinstance(self.devices, list | tuple) else None
        if not devices or any(isinstance(d, bool) or not isinstance(d, int) or d < 0 for d in devices):
            raise UsageError(f"devices must be a non-empty list of device ordinals, not {self.devices!r}")
        if len(set(devices)) != len(devices):
            raise UsageError(f"devices lists a device twice: {list(devices)}")
        object.__setattr__(self, "devices", devices)
        for name in ("gpu_workers_per_device", "synthesis_workers", "finalizer_workers",
                     "max_batch_size", "queue_limit"):  # fmt: skip
            _positive_int(name, getattr(self, name))
        _positive_int("msm_precompute", self.msm_precompute, minimum=0)  # 0: auto
        _positive_int("max_batch_wait_ms", self.max_batch_wait_ms, minimum=0)
        _positive_int("synthesis_threads", self.synthesis_threads, minimum=0)
        _positive_int("dispatch_ahead", self.dispatch_ahead, minimum=0)
        for name in ("result_retention_s", "min_srs_idle_s"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not v >= 0:
                raise UsageError(f"{name} must be a non-negative number of seconds, not {v!r}")
        for name in ("abc_on_worker", "urgent_lane"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), bool):
                raise UsageError(
                    f"{name} must be true, false or None (by backend), not {getattr(self, name)!r}"
                )
        if self.g2_on not in D.G2_ON_CHOICES:
            raise UsageError(f"g2_on must be one of {', '.join(D.G2_ON_CHOICES)}, not {self.g2_on!r}")
        for name in ("split_finalize", "prestage_uploads"):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be true or false, not {getattr(self, name)!r}")
        if self.memory_budget != "auto":
            parse_size(self.memory_budget)
        parse_size(self.memory_margin)
        if self.params_dir is not None:
            if not isinstance(self.params_dir, str | os.PathLike):
                raise UsageError(f"params_dir must be a folder path or None, not {self.params_dir!r}")
            object.__setattr__(self, "params_dir", os.fspath(self.params_dir))
        if self.hooks is not None and not isinstance(self.hooks, EngineHooks):
            raise UsageError("hooks must be an EngineHooks")

    def budget_bytes(self) -> int:
        if self.memory_budget == "auto":
            return auto_budget(parse_size(self.memory_margin))
        return parse_size(self.memory_budget)

    def abc_on_worker_for(self, backend_name: str) -> bool:
        """abc_on_worker with None resolved for an engine on `backend_name`."""
        return self.abc_on_worker if self.abc_on_worker is not None else default_abc_on_worker(backend_name)

    def urgent_lane_for(self, on_device: bool) -> bool:
        """urgent_lane with None resolved (on with a GPU backend)."""
        return self.urgent_lane if self.urgent_lane is not None else on_device

    @property
    def dispatch_depth(self) -> int:
        """dispatch_ahead, with auto resolved."""
        return self.dispatch_ahead or 2 * (self.synthesis_workers + self.gpu_workers_per_device)

    def with_settings(self, settings: Mapping[str, str]) -> EngineConfig:
        """A copy with `key=value` texts applied (the CLI's --set): named toggles (cuzk.toggles) or
        EngineConfig fields; unknown keys and bad values are refused with the valid ones."""
        from cuzk.toggles import TOGGLES

        parsed: dict[str, Any] = {}
        changes: dict[str, Any] = {}
        for key, text in settings.items():
            if key in TOGGLES:
                parsed[key] = TOGGLES[key].parse(text)
            elif key in self.SETTABLE:
                changes[key] = _parse_setting(key, text, getattr(self, key))
            else:
                raise UsageError(
                    f"unknown setting {key!r}; toggles: {', '.join(TOGGLES)}; "
                    f"engine settings: {', '.join(self.SETTABLE)}"
                )
        return dataclasses.replace(self, **changes).with_toggles(parsed)

    def with_toggles(self, values: Mapping[str, Any]) -> EngineConfig:
        """A copy with parsed toggle values applied: engine toggles to their fields, the rest kept."""
        from cuzk.toggles import resolved

        resolved(values)  # unknown names refused
        changes: dict[str, Any] = {}
        rest = dict(self.toggles)
        for key, value in values.items():
            if key in TOGGLE_FIELDS:
                name, convert = TOGGLE_FIELDS[key]
                changes[name] = convert(value)
            else:
                rest[key] = value
        return dataclasses.replace(self, **changes, toggles=rest)

    @classmethod
    def from_toggles(cls, values: Mapping[str, Any], **fields: Any) -> EngineConfig:
        """An EngineConfig with these fields and named toggles (the engine mode of `bench ab`)."""
        return cls(**fields).with_toggles(values)


def default_abc_on_worker(backend_name: str) -> bool:
    """Where a/b/c are computed when nobody says: on the device with CUDA, else in the worker."""
    return backend_name != "cuda"


def _positive_int(name: str, v: Any, *, minimum: int = 1) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise UsageError(f"{name} must be an integer >= {minimum}, not {v!r}")


def _parse_setting(key: str, text: str, current: Any) -> Any:
    t = text.strip()
    if key == "devices":
        try:
            return tuple(int(x) for x in t.split(",") if x.strip())
        except ValueError:
            raise UsageError(f"devices must be comma-separated ordinals (0,1), not {text!r}") from None
    if key in ("abc_on_worker", "urgent_lane") and t.lower() in ("auto", "none", ""):
        return None
    if isinstance(current, bool) or key in ("abc_on_worker", "urgent_lane"):
        if t.lower() in ("1", "true", "yes", "on"):
            return True
        if t.lower() in ("0", "false", "no", "off"):
            return False
        raise UsageError(f"{key} must be true or false, not {text!r}")
    if key in ("memory_budget", "memory_margin"):
        return t if t == "auto" else parse_size(t)
    if key in ("cache_dir", "params_dir"):
        return t or None
    kind = {int: "an integer", float: "a number"}.get(type(current))
    try:
        return type(current)(t) if kind else t
    except ValueError:
        raise UsageError(f"{key} must be {kind}, not {text!r}") from None
