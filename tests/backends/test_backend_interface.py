"""The device side of the Backend interface on the CPU backend and the CUDA emulator, and the
factory: one instance per (name, device), made once even when threads ask at the same time."""

from __future__ import annotations

import threading

import interface_checks as K
import numpy as np
import pytest

from cuzk import backends
from cuzk.backends import get_backend
from cuzk.backends.cpu import CpuBackend
from cuzk.backends.cuda import CudaBackend
from cuzk.backends.cuda._emulator import EmulatorRuntime, host_compiler
from cuzk.errors import BackendUnavailableError

needs_cxx = pytest.mark.skipif(host_compiler() is None, reason="the CUDA emulator needs a C++ compiler")


def test_cpu_identity_and_memory() -> None:
    be = get_backend("cpu", device=3)
    K.check_identity(be, "cpu", 3)
    info = be.memory_info()
    assert info["total"] is None or info["total"] >= (info["free"] or 0) > 0


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_cpu_resident_lifecycle(group: str, rng: np.random.Generator) -> None:
    K.check_resident_lifecycle(get_backend("cpu", device=0), get_backend("cpu", device=1), rng, group)


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_cpu_bases_from_device(group: str, rng: np.random.Generator) -> None:
    K.check_bases_from_device(CpuBackend(), rng, group)


@needs_cxx
def test_emulator_interface(rng: np.random.Generator) -> None:
    rt = EmulatorRuntime()
    be, other = CudaBackend(runtime=rt), CudaBackend(runtime=rt, device=1)
    K.check_identity(be, "cuda", 0)
    K.check_identity(other, "cuda", 1)
    assert be.describe()["device"] == "emulator"
    K.check_resident_lifecycle(be, other, rng, "g1")
    K.check_bases_from_device(be, rng, "g1")
    info = be.memory_info()
    assert info["total"] is None and info["free"] is None and info["used"] == info["resident"]


def test_one_instance_per_name_and_device() -> None:
    a0, a1 = get_backend("cpu"), get_backend("cpu", device=1)
    assert a0 is get_backend("cpu", device=0) is get_backend(" CPU ")
    assert a1 is get_backend("cpu", device=1) and a1 is not a0
    assert (a0.device, a1.device) == (0, 1)


def test_concurrent_first_requests_share_one_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight threads ask for a new (name, device) at once: one construction, one instance.

    The factory is slowed (a short wait inside it) only to widen the window in which an
    unlocked factory would construct twice; with the lock the outcome does not depend on it.
    """
    made: list[int] = []
    real = backends._make

    def slow_make(name: str, device: int, settings: dict):
        made.append(device)
        threading.Event().wait(0.02)
        return real(name, device, settings)

    monkeypatch.setattr(backends, "_make", slow_make)
    device = 4242
    barrier = threading.Barrier(8)
    got: list[object] = []

    def ask() -> None:
        barrier.wait()
        got.append(get_backend("cpu", device=device))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert made == [device]
    assert len(got) == 8 and all(b is got[0] for b in got)


@pytest.mark.parametrize("device", [-1, 1.5, True, "1"])
def test_bad_device_ordinals(device: object) -> None:
    with pytest.raises(BackendUnavailableError, match="ordinal"):
        get_backend("cpu", device=device)  # type: ignore[arg-type]


def test_backend_level_toggles_become_constructor_settings() -> None:
    """An engine's backend is made with its settings (issue 30), not switched at run time."""
    assert backends.backend_settings({"staging.pinned": True, "msm.window.h": 12}) == {"pinned_staging": True}
    assert backends.backend_settings({"msm.window.h": 12}) == {}
    assert backends.backend_settings({"msm.split": True}) == {"msm_split": True}
    assert backends.backend_settings({"msm.chunk_cap": 27}) == {"msm_chunk_cap": 27}
    # the host has nothing to set: every CPU engine shares the one CPU backend of its device
    assert get_backend("cpu", settings={"pinned_staging": True}) is get_backend("cpu")
