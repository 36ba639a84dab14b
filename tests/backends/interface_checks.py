"""Checks of the device side of the Backend interface (identity, resident handles, memory),
shared by the CPU and emulator tests (CI) and the @gpu tests (device)."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk.algebra.curves import G1, G2
from cuzk.algebra.fields import FR
from cuzk.backends import Backend

CURVES = {"g1": G1, "g2": G2}
MEMORY_KEYS = {"resident", "used", "total", "free", "budget"}


def check_identity(be: Backend, name: str, device: int) -> None:
    assert (be.name, be.device, be.label) == (name, device, f"{name}:{device}")
    info = be.describe()
    assert (info["backend"], info["ordinal"], info["label"]) == (name, device, be.label)
    assert isinstance(info["device"], str) and info["device"]
    with be.activate():  # a context on every backend
        pass


def check_resident_lifecycle(be: Backend, other: Backend, rng: np.random.Generator, group: str) -> None:
    """load -> resident bytes up; release -> down, idempotent; released or foreign bases refused."""
    curve = CURVES[group]
    pts = curve.random(20, rng)
    before = be.memory_info()
    assert set(before) >= MEMORY_KEYS
    extra = set(before) - MEMORY_KEYS  # per-pool holdings and allocation counts, where the backend has pools
    pooled = {k for k in extra if k.endswith("_held")} | ({"mallocs", "mallocs_full"} & extra)
    assert extra == pooled and all(isinstance(before[k], int) for k in extra), extra
    bases = be.load_bases(pts, group)  # type: ignore[arg-type]
    assert bases.nbytes == pts.nbytes
    assert be.memory_info()["resident"] == before["resident"] + pts.nbytes
    scalars = FR.random(20, rng)
    want = be.msm(bases, scalars)
    with pytest.raises(TypeError, match="not loaded by this"):
        other.msm(bases, scalars)
    with pytest.raises(TypeError, match="not loaded by this"):
        other.release(bases)
    be.release(bases)
    assert be.memory_info()["resident"] == before["resident"]
    be.release(bases)  # twice: nothing more to free
    assert be.memory_info()["resident"] == before["resident"]
    with pytest.raises(ValueError, match="released"):
        be.msm(bases, scalars)
    with pytest.raises(ValueError, match="released"):
        be.sum_bases(bases, np.ones(20, dtype=np.bool_))
    again = be.load_bases(pts, group)  # type: ignore[arg-type]
    assert curve.eq(be.msm(again, scalars)[None], want[None]).all()
    be.release(again)


def check_bases_from_device(be: Backend, rng: np.random.Generator, group: str) -> None:
    """fixed_base_mul output, handed over as rows without a copy, gives the same MSM as load_bases."""
    curve = CURVES[group]
    width = curve.field.width
    pts = curve.to_affine(curve.scalar_mul(curve.generator(), FR.random(1, rng)))
    mults = be.fixed_base_mul(pts, FR.random(16, rng), group)  # type: ignore[arg-type]
    rows = be.to_device(np.ascontiguousarray(mults).reshape(16, 2 * width))
    handle = be.bases_from_device(rows, group)  # type: ignore[arg-type]
    loaded = be.load_bases(mults, group)  # type: ignore[arg-type]
    scalars = FR.random(16, rng)
    assert curve.eq(be.msm(handle, scalars)[None], be.msm(loaded, scalars)[None]).all()
    with pytest.raises(ValueError, match="shape"):
        be.bases_from_device(rows[:, :width], group)  # type: ignore[arg-type]
    be.release(handle)
    be.release(loaded)
