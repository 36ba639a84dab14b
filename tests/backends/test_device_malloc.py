"""The runtime pool's cudaMalloc against a fake CuPy: a full device gets the default pool's
cached blocks back once, any other failure passes through unchanged.

The fake runtime module has no `errorMemoryAllocation`, as CuPy 14's has not: reading it there
raised AttributeError in place of the retry (H100, 2026-12-07)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from cuzk.backends.cuda import _runtime
from cuzk.backends.cuda._runtime import _device_malloc, _MallocCounts


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
    monkeypatch.setattr(_runtime, "MALLOC_COUNTS", _MallocCounts())
    return fake


def _counts() -> tuple[int, int]:
    return _runtime.MALLOC_COUNTS.calls, _runtime.MALLOC_COUNTS.full


def test_a_full_device_gets_the_default_pools_blocks_back_and_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = _fake_cupy(monkeypatch, failures=[2], cached=1 << 30)
    assert _device_malloc(1 << 20) == (("mem", 1 << 20), 0)
    assert fake.default.freed == 1 and fake.calls == [1 << 20, 1 << 20]
    assert _counts() == (1, 1)  # one pool allocation, which found the device full


def test_a_full_device_with_nothing_cached_raises_the_allocation_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = _fake_cupy(monkeypatch, failures=[2], cached=0)
    with pytest.raises(FakeCudaError) as info:
        _device_malloc(1 << 20)
    assert info.value.status == 2 and fake.default.freed == 0  # the pool's own retry comes next
    assert _counts() == (1, 1)


def test_other_cuda_errors_pass_through_untouched(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _fake_cupy(monkeypatch, failures=[700], cached=1 << 30)  # an illegal address
    with pytest.raises(FakeCudaError) as info:
        _device_malloc(1 << 20)
    assert info.value.status == 700 and fake.default.freed == 0 and fake.calls == [1 << 20]
    assert _counts() == (1, 0)


def test_allocations_are_counted_and_the_runtime_reports_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the pool asks of the device, as `memory_info` gives it (`mallocs`, `mallocs_full`):
    the pool's own full-device retry comes back here as a second allocation."""
    _fake_cupy(monkeypatch, failures=[2], cached=0)
    with pytest.raises(FakeCudaError):
        _device_malloc(1 << 20)  # full: the pool frees its cached blocks ...
    for _ in range(3):
        _device_malloc(1 << 20)  # ... and asks again, then twice more
    rt = object.__new__(_runtime.CupyRuntime)  # no CUDA: malloc_counts reads only the counts
    assert rt.malloc_counts() == {"mallocs": 4, "mallocs_full": 1}
