"""The runtime pool's cudaMalloc against a fake CuPy: a full device gets the default pool's
cached blocks back once, any other failure passes through unchanged.

The fake runtime module has no `errorMemoryAllocation`, as CuPy 14's has not: reading it there
raised AttributeError in place of the retry (H100, 2026-12-07)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from cuzk.backends.cuda._runtime import _device_malloc


class FakeCudaError(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"CUDA error {status}")
        self.status = status


def _fake_cupy(monkeypatch: pytest.MonkeyPatch, failures: list[int], cached: int) -> SimpleNamespace:
    """Memory(size) raises the statuses in `failures` first, then allocates."""
    calls: list[int] = []

    def memory(size: int) -> tuple[str, int]:
        calls.append(size)
        if failures:
            raise FakeCudaError(failures.pop(0))
        return ("mem", size)

    default = SimpleNamespace(freed=0, free_bytes=lambda: cached)
    default.free_all_blocks = lambda: setattr(default, "freed", default.freed + 1)
    fake = SimpleNamespace(
        cuda=SimpleNamespace(
            Memory=memory,
            MemoryPointer=lambda mem, offset: (mem, offset),
            runtime=SimpleNamespace(CUDARuntimeError=FakeCudaError),
        ),
        get_default_memory_pool=lambda: default,
        calls=calls,
        default=default,
    )
    monkeypatch.setitem(sys.modules, "cupy", fake)
    return fake


def test_a_full_device_gets_the_default_pools_blocks_back_and_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = _fake_cupy(monkeypatch, failures=[2], cached=1 << 30)
    assert _device_malloc(1 << 20) == (("mem", 1 << 20), 0)
    assert fake.default.freed == 1 and fake.calls == [1 << 20, 1 << 20]


def test_a_full_device_with_nothing_cached_raises_the_allocation_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = _fake_cupy(monkeypatch, failures=[2], cached=0)
    with pytest.raises(FakeCudaError) as info:
        _device_malloc(1 << 20)
    assert info.value.status == 2 and fake.default.freed == 0  # the pool's own retry comes next


def test_other_cuda_errors_pass_through_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_cupy(monkeypatch, failures=[700], cached=1 << 30)  # an illegal address
    with pytest.raises(FakeCudaError) as info:
        _device_malloc(1 << 20)
    assert info.value.status == 700 and fake.default.freed == 0 and fake.calls == [1 << 20]
