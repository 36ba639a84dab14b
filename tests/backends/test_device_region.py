"""CupyRuntime.guard without a GPU: the regions it enters and leaves, and the errors it translates.

The runtime is built around fakes of the three CuPy context managers, so the order of entries
and exits is visible; the translations are the ones the device tests see for real.
"""

from __future__ import annotations

import types
from typing import Any

import pytest

from cuzk.backends.cuda._runtime import CupyRuntime
from cuzk.errors import DeviceError, DeviceMemoryError


class OutOfMemoryError(MemoryError):
    pass


class Region:
    def __init__(self, name: str, log: list[str], fail_enter: bool = False) -> None:
        self.name, self.log, self.fail_enter = name, log, fail_enter

    def __enter__(self) -> None:
        if self.fail_enter:
            raise RuntimeError(f"{self.name} failed")
        self.log.append(f"enter {self.name}")

    def __exit__(self, *exc: Any) -> bool:
        self.log.append(f"exit {self.name}")
        return False


def runtime(log: list[str], *, fail_stream: bool = False, budget: int | None = None) -> CupyRuntime:
    rt = object.__new__(CupyRuntime)
    cuda = types.SimpleNamespace(
        using_allocator=lambda malloc: Region("allocator", log),
        memory=types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError),
    )
    rt.cp = types.SimpleNamespace(cuda=cuda)
    rt.device = Region("device", log)
    rt.compute = Region("stream", log, fail_enter=fail_stream)
    rt.pool = types.SimpleNamespace(malloc=None)
    rt.budget = budget
    return rt


def cupy_error() -> Exception:
    cls = type("CUDARuntimeError", (RuntimeError,), {"__module__": "cupy_backends.cuda.api.runtime"})
    return cls("cudaErrorIllegalAddress: an illegal memory access was encountered")


def test_regions_enter_in_order_and_leave_in_reverse() -> None:
    log: list[str] = []
    with runtime(log).guard("work"):
        log.append("body")
    assert log == [
        "enter device",
        "enter allocator",
        "enter stream",
        "body",
        "exit stream",
        "exit allocator",
        "exit device",
    ]


def test_regions_are_left_when_the_body_raises() -> None:
    log: list[str] = []
    with pytest.raises(ValueError, match="bad size"), runtime(log).guard("work"):
        raise ValueError("bad size")
    assert log[-3:] == ["exit stream", "exit allocator", "exit device"]


def test_a_failed_entry_leaves_what_was_entered() -> None:
    log: list[str] = []
    with pytest.raises(RuntimeError, match="stream failed"), runtime(log, fail_stream=True).guard("work"):
        log.append("body")
    assert log == ["enter device", "enter allocator", "exit allocator", "exit device"]


def test_out_of_memory_becomes_device_memory_error_naming_the_budget() -> None:
    expected = r"msm: device memory exhausted \(budget 2.00 GiB\)"
    with pytest.raises(DeviceMemoryError, match=expected) as info, runtime([], budget=2 << 30).guard("msm"):
        raise OutOfMemoryError("out of memory allocating 4 GiB")
    assert isinstance(info.value.__cause__, OutOfMemoryError)


def test_cuda_errors_become_device_errors() -> None:
    expected = "ntt: CUDARuntimeError: cudaErrorIllegalAddress"
    with pytest.raises(DeviceError, match=expected), runtime([]).guard("ntt"):
        raise cupy_error()


@pytest.mark.parametrize("exc", [ValueError("v"), KeyError("k"), RuntimeError("not CUDA")])
def test_other_errors_pass_unchanged(exc: Exception) -> None:
    with pytest.raises(type(exc)) as info, runtime([]).guard("work"):
        raise exc
    assert info.value is exc


def test_a_device_error_is_not_wrapped_twice() -> None:
    inner = DeviceError("ntt: already translated")
    with pytest.raises(DeviceError) as info, runtime([]).guard("outer"):
        raise inner
    assert info.value is inner


def test_a_small_budget_reads_in_mib() -> None:
    with (
        pytest.raises(DeviceMemoryError, match=r"\(budget 4.00 MiB\)"),
        runtime([], budget=4 << 20).guard("ntt"),
    ):
        raise OutOfMemoryError("out of memory")
