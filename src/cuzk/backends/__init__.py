"""Backend selection: `cuda` where CuPy imports and sees a GPU, else `cpu`.

`CUZK_BACKEND` (or an explicit name, e.g. from `--backend`) overrides the
automatic choice; asking for `cuda` where there is none is an error, never a
silent fallback.
"""

from __future__ import annotations

from functools import cache

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


@cache
def _make(name: str) -> Backend:
    if name == "cpu":
        from cuzk.backends.cpu import CpuBackend

        return CpuBackend()
    reason = cuda_unavailable_reason()
    if reason is not None:
        raise BackendUnavailableError(f"backend 'cuda' was requested but {reason}")
    from cuzk.backends.cuda import CudaBackend

    return CudaBackend()


def get_backend(name: str | None = None) -> Backend:
    """The backend named (cpu | cuda | auto); None reads CUZK_BACKEND, default auto."""
    chosen = (name or config.get().backend.name).strip().lower()
    if chosen not in NAMES:
        raise BackendUnavailableError(f"unknown backend {chosen!r}; choose one of {', '.join(NAMES)}")
    if chosen == "auto":
        chosen = "cuda" if cuda_unavailable_reason() is None else "cpu"
    return _make(chosen)
