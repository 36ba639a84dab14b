"""Bases kept on the host and streamed through the device per MSM (msm.g2_on=stream), on the
CUDA emulator against the CPU backend; small chunks so that every sum spans several."""

from __future__ import annotations

import threading

import cuda_checks as K
import numpy as np
import pytest

from cuzk.algebra.curves import G2
from cuzk.algebra.fields import FR
from cuzk.backends.cuda import CudaBackend
from cuzk.backends.cuda._emulator import EmulatorRuntime, host_compiler
from cuzk.backends.cuda.host_rows import HostRowBases, HostRowsBackend

pytestmark = pytest.mark.skipif(host_compiler() is None, reason="the CUDA emulator needs a C++ compiler")

WAIT = 60.0


@pytest.fixture(scope="module")
def dev() -> CudaBackend:
    return CudaBackend(runtime=EmulatorRuntime())


@pytest.fixture
def streamed(dev) -> HostRowsBackend:
    return HostRowsBackend(dev, chunk=7)


def test_the_twin_shares_the_device_backends_runtime_and_is_made_once(dev):
    twin = dev.streamed()
    assert isinstance(twin, HostRowsBackend) and twin is dev.streamed() and twin.streamed() is twin
    assert twin.rt is dev.rt and twin.bases_on_host and not dev.bases_on_host
    assert twin.msm_split == dev.msm_split and twin.msm_max_chunk == dev.msm_max_chunk


@pytest.mark.parametrize(("group", "n"), [("g2", 40), ("g1", 100)])
def test_streamed_msm_equals_the_cpu_msm(streamed, rng, group, n):
    """Device and host scalars, windows, a start offset and stacked MSMs (cuda_checks.check_msm),
    over 6 to 15 chunks, the last one short."""
    K.check_msm(streamed, rng, group, n, windows=(None, 4))


def test_streamed_sum_bases_equals_the_cpu_sum(streamed, rng):
    K.check_sum_bases(streamed, rng, "g2", 30)


def test_the_rows_stay_on_the_host_and_nothing_is_resident(dev, streamed, rng):
    pts = G2.random(20, rng)
    before = dev.rt.resident_bytes
    b = streamed.load_bases(pts, "g2")
    assert isinstance(b, HostRowBases) and isinstance(b.rows, np.ndarray)
    assert b.nbytes == pts.nbytes and dev.rt.resident_bytes == before
    assert streamed.precompute(b, 4) == 0 and streamed.precompute_cost(20, "g2", 4) == 0
    from_dev = streamed.bases_from_device(dev.to_device(G2._aff(pts)), "g2")
    assert np.array_equal(from_dev.rows, b.rows)


def test_the_next_chunk_is_staged_while_the_current_one_is_summed(dev, rng, monkeypatch):
    """Chunk 0's MSM waits until chunk 1's staging has begun: it can only end if that staging
    runs beside it, on the prefetch thread."""
    twin = HostRowsBackend(dev, chunk=8)
    pts, sc = G2.random(24, rng), FR.random(24, rng)
    bases = twin.load_bases(pts, "g2")
    staged: list[int] = []
    second = threading.Event()
    real_stage, real_msm = twin.rt.stage, CudaBackend.msm

    def stage(rows, **kw):
        staged.append(len(staged))
        if len(staged) == 2:
            second.set()
        return real_stage(rows, **kw)

    def msm(self, bases, scalars, **kw):
        if not second.is_set():
            assert second.wait(WAIT), "chunk 1 was not staged while chunk 0 was summed"
        return real_msm(self, bases, scalars, **kw)

    monkeypatch.setattr(twin.rt, "stage", stage)
    monkeypatch.setattr(CudaBackend, "msm", msm)
    got = twin.msm(bases, sc)
    monkeypatch.undo()
    cpu = K.CPU
    assert G2.eq(got[None], cpu.msm(cpu.load_bases(pts, "g2"), sc)[None])[0]
    assert staged == [0, 1, 2]


def test_an_error_mid_sum_propagates_after_the_copy_in_flight_lands(dev, rng, monkeypatch):
    twin = HostRowsBackend(dev, chunk=5)
    bases = twin.load_bases(G2.random(12, rng), "g2")
    landed = threading.Event()
    real_stage = twin.rt.stage

    def stage(rows, **kw):
        out = real_stage(rows, **kw)
        landed.set()
        return out

    def msm(self, bases, scalars, **kw):
        raise RuntimeError("the chunk's MSM failed")

    monkeypatch.setattr(twin.rt, "stage", stage)
    monkeypatch.setattr(CudaBackend, "msm", msm)
    with pytest.raises(RuntimeError, match="the chunk's MSM failed"):
        twin.msm(bases, FR.random(12, rng))
    assert landed.is_set()


def test_foreign_released_and_out_of_range_handles_are_refused(dev, streamed, rng):
    pts = G2.random(10, rng)
    mine, theirs = streamed.load_bases(pts, "g2"), dev.load_bases(pts, "g2")
    with pytest.raises(TypeError, match="not loaded by this"):
        streamed.msm(theirs, FR.random(10, rng))
    with pytest.raises(TypeError, match="not loaded by this cuda backend"):
        dev.msm(mine, FR.random(10, rng))
    with pytest.raises(ValueError, match="out of range for 10 bases"):
        streamed.msm(mine, FR.random(4, rng), start=8)
    with pytest.raises(ValueError, match=r"shape \(n, 4\) uint64"):
        streamed.msm(mine, np.zeros((10, 3), dtype=np.uint64))
    streamed.release(mine)
    streamed.release(mine)  # twice: a no-op
    with pytest.raises(ValueError, match="released"):
        streamed.msm(mine, FR.random(10, rng))
    with pytest.raises(ValueError, match="at least one point"):
        HostRowsBackend(dev, chunk=0)


@pytest.mark.gpu
def test_streamed_msm_on_the_device_equals_the_cpu_msm(rng):
    """The same checks on a CUDA device, 2^10-point chunks: the pinned staging, the upload
    stream and the prefetch thread for real."""
    from cuzk.backends import get_backend

    twin = HostRowsBackend(get_backend("cuda"), chunk=1 << 10)
    K.check_msm(twin, rng, "g2", 5000)
    K.check_msm(twin, rng, "g1", 5000)
    K.check_sum_bases(twin, rng, "g2", 3000)
