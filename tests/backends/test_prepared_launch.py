"""CupyRuntime.prepare without a GPU: the kernel-parameter array a prepared launch hands the driver.

A fake driver reads, at launch time, the pointers cuLaunchKernel would read: each parameter's
address and, for the leading device arrays, the device address stored there. The GPU tests run
the same path for real (every NTT goes through it).
"""

from __future__ import annotations

import ctypes
import threading
import types
from typing import Any

import numpy as np
import pytest

from cuzk.backends.cuda import _runtime
from cuzk.backends.cuda._runtime import CupyRuntime
from cuzk.errors import DeviceError

KEY = ("ntt", "ntt_pass")


class FakeDriver:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def launchKernel(self, f: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared: int,
                     stream: int, kargs: int, extra: int) -> None:  # fmt: skip
        params = (ctypes.c_void_p * 3).from_address(kargs)
        self.calls.append(
            {
                "f": f,
                "geometry": (gx, gy, gz, bx, by, bz, shared),
                "stream": stream,
                "extra": extra,
                "params": [int(p or 0) for p in params],
                "lead": [ctypes.c_uint64.from_address(int(params[i] or 0)).value for i in range(2)],
            }
        )


def device_array(ptr: int) -> Any:
    return types.SimpleNamespace(data=types.SimpleNamespace(ptr=ptr))


def runtime(driver: Any) -> tuple[CupyRuntime, dict[str, list[Any]]]:
    seen: dict[str, list[Any]] = {"contexts": [], "launching": [], "plain": []}
    rt = object.__new__(CupyRuntime)
    runtime_api = types.SimpleNamespace(memGetInfo=lambda: seen["contexts"].append(threading.get_ident()))
    rt.cp = types.SimpleNamespace(cuda=types.SimpleNamespace(driver=driver, runtime=runtime_api))
    rt.profile = None
    rt.clock = types.SimpleNamespace(launching=lambda: seen["launching"].append(1))
    rt.compute = types.SimpleNamespace(ptr=0)
    rt.props = {"major": 9}
    rt._threads = threading.local()
    rt._shared_limit = {}
    rt._functions = {KEY: types.SimpleNamespace(max_dynamic_shared_size_bytes=48 * 1024)}
    rt._direct = {KEY: types.SimpleNamespace(ptr=0xF00D)}
    rt.launch = lambda *args, **kwargs: seen["plain"].append((args, kwargs))  # type: ignore[method-assign]
    return rt, seen


@pytest.fixture
def params() -> Any:
    buf = np.zeros(1, np.dtype([("log_n", np.int32), ("ptr", np.uint64)], align=True))
    return types.SimpleNamespace(ptr=buf.ctypes.data, keep=buf)


def test_the_driver_gets_each_arrays_address_and_the_bound_struct(params: Any) -> None:
    driver = FakeDriver()
    rt, seen = runtime(driver)
    launch = rt.prepare(*KEY, 2, (params,), grid=2048, block=128, shared=16 << 10)
    launch(device_array(0x1000), device_array(0x2000))
    launch(device_array(0x3000), device_array(0x1000))
    first, second = driver.calls
    assert first["f"] == 0xF00D and first["geometry"] == (2048, 1, 1, 128, 1, 1, 16 << 10)
    assert first["lead"] == [0x1000, 0x2000] and second["lead"] == [0x3000, 0x1000]
    assert first["params"][2] == params.ptr and first["stream"] == 0 and first["extra"] == 0
    assert len(seen["launching"]) == 2 and not seen["plain"]


def test_large_shared_memory_is_allowed_once_at_prepare_time(params: Any) -> None:
    rt, _ = runtime(FakeDriver())
    rt.prepare(*KEY, 2, (params,), grid=1, block=256, shared=96 << 10)
    assert rt._functions[KEY].max_dynamic_shared_size_bytes == 96 << 10
    assert rt._shared_limit[KEY] == 96 << 10


def test_the_context_is_made_current_once_per_thread(params: Any) -> None:
    rt, seen = runtime(FakeDriver())
    launch = rt.prepare(*KEY, 2, (params,), grid=1, block=128)
    launch(device_array(1), device_array(2))
    launch(device_array(1), device_array(2))
    worker = threading.Thread(target=launch, args=(device_array(3), device_array(4)))
    worker.start()
    worker.join()
    assert len(seen["contexts"]) == 2 and len(set(seen["contexts"])) == 2


def test_a_wrong_number_of_arrays_launches_nothing(params: Any) -> None:
    driver = FakeDriver()
    rt, _ = runtime(driver)
    launch = rt.prepare(*KEY, 2, (params,), grid=1, block=128)
    with pytest.raises(TypeError, match="ntt_pass takes 2 leading arrays, got 1"):
        launch(device_array(1))
    assert not driver.calls


def test_under_kernel_profiling_a_plain_launch_records_the_events(params: Any) -> None:
    driver = FakeDriver()
    rt, seen = runtime(driver)
    launch = rt.prepare(*KEY, 2, (params,), grid=8, block=128, shared=1024)
    rt.profile = []
    a, b = device_array(1), device_array(2)
    launch(a, b)
    assert not driver.calls
    (args, kwargs), = seen["plain"]  # fmt: skip
    assert args == ("ntt", "ntt_pass", 0, (a, b, params))
    assert kwargs == {"grid": 8, "block": 128, "shared": 1024}


def test_without_the_driver_entry_point_prepare_falls_back_to_plain_launches(params: Any) -> None:
    rt, seen = runtime(types.SimpleNamespace())
    launch = rt.prepare(*KEY, 2, (params,), grid=4, block=64)
    launch(device_array(1), device_array(2))
    assert len(seen["plain"]) == 1


def test_a_tail_argument_without_an_address_falls_back_to_plain_launches() -> None:
    driver = FakeDriver()
    rt, seen = runtime(driver)
    launch = rt.prepare(*KEY, 2, (np.int32(3),), grid=4, block=64)
    launch(device_array(1), device_array(2))
    assert not driver.calls and len(seen["plain"]) == 1


class FakeLaunchEx:
    """cuLaunchKernelEx: reads the launch configuration and parameters as the driver would."""

    def __init__(self, status: int = 0) -> None:
        self.status = status
        self.calls: list[dict[str, Any]] = []

    def __call__(self, config: int, f: int, kargs: int, extra: Any) -> int:
        c = _runtime._LaunchConfig.from_address(config)
        params = (ctypes.c_void_p * 3).from_address(kargs)
        attrs = [(c.attrs[i].id, c.attrs[i].value[0]) for i in range(c.numAttrs)]
        self.calls.append(
            {
                "f": f,
                "geometry": (c.gx, c.gy, c.gz, c.bx, c.by, c.bz, c.shared),
                "stream": c.stream,
                "attrs": attrs,
                "extra": extra,
                "lead": [ctypes.c_uint64.from_address(int(params[i] or 0)).value for i in range(2)],
                "tail": int(params[2] or 0),
            }
        )
        return self.status


def test_an_overlapped_launch_goes_through_launch_ex_with_programmatic_serialization(
    params: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ex, driver = FakeLaunchEx(), FakeDriver()
    monkeypatch.setattr(_runtime, "launch_ex", lambda: ex)
    rt, _ = runtime(driver)
    launch = rt.prepare(*KEY, 2, (params,), grid=1024, block=256, shared=64 << 10, overlap=True)
    launch(device_array(0x10), device_array(0x20))
    (call,) = ex.calls
    assert call["f"] == 0xF00D and call["geometry"] == (1024, 1, 1, 256, 1, 1, 64 << 10)
    assert call["attrs"] == [(6, 1)] and call["stream"] is None and call["extra"] is None
    assert call["lead"] == [0x10, 0x20] and call["tail"] == params.ptr and not driver.calls


def test_a_failed_overlapped_launch_is_a_device_error(params: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_runtime, "launch_ex", lambda: FakeLaunchEx(status=1))
    rt, _ = runtime(FakeDriver())
    launch = rt.prepare(*KEY, 2, (params,), grid=1, block=128, overlap=True)
    with pytest.raises(DeviceError, match="ntt_pass: cuLaunchKernelEx failed with CUresult 1"):
        launch(device_array(1), device_array(2))


@pytest.mark.parametrize("major, has_ex", [(8, True), (9, False)])
def test_overlap_needs_sm_90_and_the_driver_entry_point(
    params: Any, monkeypatch: pytest.MonkeyPatch, major: int, has_ex: bool
) -> None:
    ex, driver = FakeLaunchEx(), FakeDriver()
    monkeypatch.setattr(_runtime, "launch_ex", lambda: ex if has_ex else None)
    rt, _ = runtime(driver)
    rt.props = {"major": major}
    rt.prepare(*KEY, 2, (params,), grid=1, block=128, overlap=True)(device_array(1), device_array(2))
    assert not ex.calls and len(driver.calls) == 1
