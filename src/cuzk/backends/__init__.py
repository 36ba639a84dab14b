"""Backend selection: `cuda` where CuPy imports and sees a GPU, else `cpu`.

`CUZK_BACKEND` (or an explicit name, e.g. from `--backend`) overrides the
automatic choice; asking for `cuda` where there is none is an error, never a
silent fallback.

There is one instance per (name, device, settings), made on first request under a lock, so
threads asking at once share it: `get_backend("cuda", device=1)` is the second GPU,
`get_backend("cpu", device=k)` a distinct logical CPU device (multi-device paths in CI).
A backend's settings (`settings=`, its constructor's keywords; `backend_settings` maps the
backend-level toggles to them) are fixed when it is made: an engine, or each side of a bench,
asks for the instance with its own settings, and nothing changes a shared one at run time.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from cuzk import config
from cuzk.backends.base import Backend, Bases, CsrMatrix
from cuzk.errors import BackendUnavailableError

__all__ = ["Backend", "Bases", "CsrMatrix", "available_backends", "cuda_unavailable_reason", "get_backend"]

NAMES = ("auto", "cpu", "cuda")


def cuda_unavailable_reason() -> str | None:
    """None when the CUDA backend can run here, else why not."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install
        return f"CuPy is not importable ({type(exc).__name__}: {exc}); install cuzk[gpu]"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return f"CUDA runtime reports no usable device ({exc})"
    return None if count > 0 else "no CUDA device is present"


def available_backends() -> list[str]:
    return ["cpu"] + ([] if cuda_unavailable_reason() else ["cuda"])


_instances: dict[tuple[str, int, tuple[tuple[str, Any], ...]], Backend] = {}
_instances_lock = threading.Lock()

#: Backend-level toggles (cuzk.toggles names) and the constructor setting each one becomes.
#: The CPU backend has none: it ignores settings.
SETTING_OF_TOGGLE = {
    "staging.pinned": "pinned_staging",
    "msm.split": "msm_split",
    "msm.chunk_cap": "msm_chunk_cap",
}


def backend_settings(values: Mapping[str, Any]) -> dict[str, Any]:
    """The constructor settings named by backend-level toggles among `values` (resolved toggles)."""
    return {arg: values[t] for t, arg in SETTING_OF_TOGGLE.items() if t in values}


def _make(name: str, device: int, settings: Mapping[str, Any]) -> Backend:
    # The factory is the one module outside a backend that imports its implementation
    # (the layer test's allowlist names these two imports).
    if name == "cpu":
        from cuzk.backends.cpu import CpuBackend

        return CpuBackend(device=device)
    reason = cuda_unavailable_reason()
    if reason is not None:
        raise BackendUnavailableError(f"backend 'cuda' was requested but {reason}")
    import cupy

    count = cupy.cuda.runtime.getDeviceCount()
    if device >= count:
        raise BackendUnavailableError(
            f"backend 'cuda' device {device} was requested but this machine has {count} CUDA device(s)"
        )
    from cuzk.backends.cuda import CudaBackend

    return CudaBackend(device=device, **settings)


def get_backend(
    name: str | None = None, *, device: int = 0, settings: Mapping[str, Any] | None = None
) -> Backend:
    """The backend named (cpu | cuda | auto) on device `device`; None reads CUZK_BACKEND, default auto.

    `settings`: constructor settings (see `backend_settings`), fixed for the instance's life."""
    chosen = (name or config.get().backend.name).strip().lower()
    if chosen not in NAMES:
        raise BackendUnavailableError(f"unknown backend {chosen!r}; choose one of {', '.join(NAMES)}")
    if isinstance(device, bool) or not isinstance(device, int) or device < 0:
        raise BackendUnavailableError(f"a device is an ordinal >= 0, got {device!r}")
    if chosen == "auto":
        chosen = "cuda" if cuda_unavailable_reason() is None else "cpu"
    fixed = {} if chosen == "cpu" else dict(settings or {})
    key = (chosen, device, tuple(sorted(fixed.items())))
    with _instances_lock:
        backend = _instances.get(key)
        if backend is None:
            backend = _instances[key] = _make(chosen, device, fixed)
    return backend
