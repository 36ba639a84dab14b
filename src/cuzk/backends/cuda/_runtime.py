"""Where kernels run: CuPy on a CUDA device, or the sequential host emulator for tests.

The backend's Python logic (plans, tables, launch sequences, memory handling) is written once
against the small `Runtime` surface below. `CupyRuntime` compiles the .cu modules with NVRTC
at first use (CuPy picks the device's own architecture: sm_90 machine code on Hopper, PTX where
NVRTC does not know the chip) and caches them on disk; `EmulatorRuntime` (see _emulator.py)
builds the same sources as host C++ so CI can test the whole backend without a GPU.

CUDA and CuPy failures are translated here, in `guard`, and nowhere else.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from cuzk import config
from cuzk.backends.cuda._source import module_source
from cuzk.backends.cuda.clock import DeviceClock
from cuzk.errors import DeviceError, DeviceMemoryError, UsageError
from cuzk.units import parse_size

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

#: NVRTC options: none beyond CuPy's own (it adds the device's -arch; the default C++17 suffices).
NVRTC_OPTIONS: tuple[str, ...] = ()

#: Null device pointer for optional kernel arguments.
NULL = np.uint64(0)

_GIB = 1 << 30


def device_budget(value: str | int | None) -> int | None:
    """Bytes of a device memory budget (a size: cuzk.units), None for no budget; zero is refused."""
    if value is None or value == "":
        return None
    budget = parse_size(value, "the device memory budget (CUZK_DEVICE_MEMORY_BUDGET)")
    if budget <= 0:
        raise UsageError(f"the device memory budget must be positive, got {value!r}")
    return budget


def _fmt(nbytes: int) -> str:
    """GiB with two decimals, MiB below one GiB (a 4 MiB budget is not "0.00 GiB")."""
    return f"{nbytes / _GIB:.2f} GiB" if nbytes >= _GIB else f"{nbytes / (1 << 20):.2f} MiB"


class Runtime:
    """The surface the backend uses; see CupyRuntime and EmulatorRuntime."""

    xp: Any
    budget: int | None
    name: str
    #: bytes of resident data (bases, matrices) the backend holds; the emulator's whole usage
    resident_bytes: int = 0
    #: uploads above 1 MiB go through page-locked staging buffers (a toggle; CuPy only acts on it)
    pinned_staging: bool = False

    def launch(
        self,
        module: str,
        kernel: str,
        threads: int,
        args: Sequence[Any],
        *,
        block: int = 256,
        grid: int | None = None,
        shared: int = 0,
    ) -> None:
        raise NotImplementedError

    def prepare(
        self,
        module: str,
        kernel: str,
        lead: int,
        tail: tuple[Any, ...],
        *,
        grid: int,
        block: int,
        shared: int = 0,
        overlap: bool = False,
    ) -> Callable[..., None]:
        """A launch of fixed geometry and trailing arguments, called with its `lead` leading device
        arrays: for plans launched many times (the NTT's passes), whose host time before the first
        launch is device idle time. `overlap`: a programmatic dependent launch where the device
        has one (the kernel waits in itself for the launch before). Here a plain `launch`."""

        def run(*arrays: Any) -> None:
            self.launch(module, kernel, 0, (*arrays, *tail), grid=grid, block=block, shared=shared)

        return run

    def address(self, a: Any) -> int:
        """The device address of an array's data (0 for NULL), for pointers packed into structs."""
        raise NotImplementedError

    def reserve(self, nbytes: int, what: str) -> None:
        """Raise DeviceMemoryError now if allocating nbytes more would pass the budget."""
        if self.budget is None:
            return
        used = self.used_bytes()
        if used + nbytes > self.budget:
            raise DeviceMemoryError(
                f"{what} needs {_fmt(nbytes)} of device memory but {_fmt(used)} of the "
                f"{_fmt(self.budget)} budget is in use (raise CUZK_DEVICE_MEMORY_BUDGET or free bases)"
            )

    def used_bytes(self) -> int:
        return 0

    def held_bytes(self) -> dict[str, int]:
        """Device bytes held by memory pools, live or cached, per pool (none where no pool)."""
        return {}

    def mem_info(self) -> tuple[int | None, int | None]:
        """(total, free) bytes of the device where known."""
        return None, None

    def malloc_counts(self) -> dict[str, int]:
        """The pools' device allocations so far (`mallocs`) and those that found the device full
        (`mallocs_full`, each followed by cudaFree of the cached blocks); none where no pool."""
        return {}

    def activate(self) -> contextlib.AbstractContextManager[Any]:
        """Make this runtime's device current in the calling thread for the block."""
        return contextlib.nullcontext()

    profile: list | None = None

    def profile_report(self) -> dict[str, dict[str, Any]]:
        return {}

    def guard(self, what: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def struct_arg(self, value: np.ndarray) -> Any:
        """A one-element structured array as a by-value kernel argument, converted once."""
        raise NotImplementedError

    def empty_like(self, a: Any) -> Any:
        """An uninitialised array like `a`, inside a device region."""
        raise NotImplementedError

    def upload(self, host: np.ndarray, out: Any | None = None) -> Any:
        raise NotImplementedError

    def upload_chunks(
        self, host: np.ndarray, bounds: Sequence[tuple[int, int]], out: Any | None = None
    ) -> Iterator[tuple[Any, int, int]]:
        """Yield (device array, lo, hi) after rows lo:hi are on the device, in order.

        The device copy of chunk k+1 proceeds (on the upload stream) while the caller enqueues
        compute for chunk k on the compute stream, which waits only for chunk k.
        """
        raise NotImplementedError

    def stage(self, *pieces: np.ndarray, times: dict[str, float] | None = None) -> Any:
        """Upload made outside the device lock (the engine's pre-staging), finished when this
        returns: the pieces' rows one after another (see Backend.stage).

        It must not queue on the compute stream, which the lock holder's kernels use (see CupyRuntime).
        """
        return self.upload(pieces[0] if len(pieces) == 1 else np.concatenate(pieces))

    def synchronize(self) -> None:
        pass

    def settle(self) -> None:
        """Wait, by event, for the compute work queued so far: what a host read that the device
        must answer (a download, a count) does first, so that the read itself finds nothing
        queued (see CupyRuntime.settle)."""

    def to_host(self, a: Any) -> np.ndarray:
        """A device array's contents on the host (where the host waits for the device)."""
        return np.asarray(a)

    def device_clock(self) -> contextlib.AbstractContextManager[list[tuple[float, float]] | None]:
        """Measure the device's busy intervals over a block (see cuda.clock); None: no device clock."""
        return contextlib.nullcontext(None)

    def describe(self) -> dict[str, Any]:
        return {"runtime": self.name}


class CupyRuntime(Runtime):
    """Kernels on a CUDA device through CuPy: one compute stream, one upload stream."""

    name = "cupy"

    def __init__(
        self,
        device: int = 0,
        memory_budget: int | None = None,
        pinned_staging: bool = False,
        staging_chunk_bytes: int = 64 << 20,
    ) -> None:
        import cupy

        self.cp = cupy
        self.xp = cupy
        self.pinned_staging = pinned_staging
        self._chunk_bytes = staging_chunk_bytes
        # Two page-locked slots per use (upload, upload_chunks, stage). They outlive one upload,
        # and GPU workers share them: the event of a slot's last copy and the slot to use next
        # are the runtime's, under one lock. (Kept per upload, a new upload refilled a slot whose
        # previous copy was still in flight: wrong proofs on the H200, 2026-12-03.) Per use: a
        # slot last filled by a copy ordered after the compute stream's work frees only when the
        # kernels queued before that copy are done, and a staging upload that took it waited for
        # them (a worker's prepare 1.9 s beside the other's hold, 0.5 s alone; H100 2026-12-07).
        self._slot_sets: dict[str, _PinnedSlots] = {}
        self._slot_sets_lock = threading.Lock()
        self.pin_seconds = 0.0
        self.compile_seconds: dict[str, float] = {}
        # A handle only (no CUDA call): guard enters it around all work, including the rest of
        # this initialisation, so nothing here changes the calling thread's current device.
        self.device = cupy.cuda.Device(device)
        with self.guard("device initialisation"):
            self.props = cupy.cuda.runtime.getDeviceProperties(device)
            self.pool = cupy.cuda.MemoryPool(_device_malloc)
            total = self.device.mem_info[1]
            self.budget = memory_budget
            if memory_budget is not None and memory_budget > total:
                raise DeviceMemoryError(
                    f"the device memory budget {_fmt(memory_budget)} exceeds the device's {_fmt(total)}"
                )
            if memory_budget is not None:
                self.pool.set_limit(size=memory_budget)
            # Kernels run on the legacy default stream, so any CuPy operation a caller applies to
            # a returned array is ordered after the kernel that made it (a non-blocking compute
            # stream raced the prover's own cupy comparisons). Uploads use a non-blocking stream
            # so they overlap with that compute; the compute stream waits on their events.
            self.compute = cupy.cuda.Stream.null
            self.upload_stream = cupy.cuda.Stream(non_blocking=True)
            self._copy_pool: ThreadPoolExecutor | None = None
        self._modules: dict[str, Any] = {}
        self._functions: dict[tuple[str, str], Any] = {}
        self._direct: dict[tuple[str, str], Any] = {}
        #: the dynamic shared memory each kernel is allowed (an attribute read is a driver call)
        self._shared_limit: dict[tuple[str, str], int] = {}
        self._threads = threading.local()  # ensure_context's record of this thread
        self.clock = DeviceClock(self._event, lambda a, b: float(cupy.cuda.get_elapsed_time(a, b)))
        #: per-launch CUDA events when kernel profiling is on (CUZK_PROFILE_KERNELS=1)
        self.profile: list[tuple[str, Any, Any]] | None = [] if config.get().cuda.profile_kernels else None

    # --- errors -------------------------------------------------------------------------
    def guard(self, what: str) -> contextlib.AbstractContextManager[None]:
        """Run a device region (this device, its memory pool, the compute stream); translate errors."""
        return _DeviceRegion(self, what)

    def translate(self, what: str, exc: BaseException) -> BaseException | None:
        """The cuzk error for a failure inside a device region, or None to let it pass as is."""
        if isinstance(exc, (DeviceError, ValueError, TypeError, KeyError, IndexError)):
            return None
        if isinstance(exc, self.cp.cuda.memory.OutOfMemoryError):
            limit = f" (budget {_fmt(self.budget)})" if self.budget else ""
            return DeviceMemoryError(f"{what}: device memory exhausted{limit}: {exc}")
        if isinstance(exc, Exception) and _is_cuda_error(exc):
            return DeviceError(f"{what}: {type(exc).__name__}: {exc}")
        return None

    # --- kernels ------------------------------------------------------------------------
    def _function(self, module: str, kernel: str) -> Any:
        key = (module, kernel)
        fn = self._functions.get(key)
        if fn is None:
            mod = self._modules.get(module)
            if mod is None:
                mod = self.cp.RawModule(code=module_source(module), options=NVRTC_OPTIONS)
                self._modules[module] = mod
            t0 = time.perf_counter()
            fn = mod.get_function(kernel)  # compiles (or loads from CuPy's cache) on first use
            dt = time.perf_counter() - t0
            if dt > 0.05:
                self.compile_seconds[module] = self.compile_seconds.get(module, 0.0) + dt
            self._functions[key] = fn
            # cupy.cuda.Function of the current device (ours: launches run inside guard)
            self._direct[key] = getattr(fn, "kernel", None)
        return fn

    def _allow_shared(self, module: str, kernel: str, fn: Any, shared: int) -> None:
        if fn.max_dynamic_shared_size_bytes < shared:
            fn.max_dynamic_shared_size_bytes = shared
        self._shared_limit[(module, kernel)] = shared

    def prepare(
        self,
        module: str,
        kernel: str,
        lead: int,
        tail: tuple[Any, ...],
        *,
        grid: int,
        block: int,
        shared: int = 0,
        overlap: bool = False,
    ) -> Callable[..., None]:
        launch_kernel = getattr(self.cp.cuda.driver, "launchKernel", None)
        fn = self._function(module, kernel)
        direct = self._direct.get((module, kernel))
        if launch_kernel is None or direct is None or not all(hasattr(t, "ptr") for t in tail):
            return super().prepare(module, kernel, lead, tail, grid=grid, block=block, shared=shared)
        if shared > 48 * 1024:
            self._allow_shared(module, kernel, fn, shared)
        ex = launch_ex() if overlap and self.props.get("major", 0) >= 9 else None
        overlapped = None
        if ex is not None:
            config = _LaunchConfig(grid, 1, 1, block, 1, 1, shared, self.compute.ptr)
            config.attrs, config.numAttrs = ctypes.pointer(_PROGRAMMATIC_SERIALIZATION), 1
            overlapped = (ex, config)
        key = (module, kernel)
        return _PreparedLaunch(self, key, direct, launch_kernel, lead, tail, grid, block, shared, overlapped)

    def ensure_context(self) -> None:
        """Inside a device region, make the device's context current on this thread, once per
        thread: what CuPy's own launch does before a driver call (a thread that never made a
        runtime call has no current context, and cuLaunchKernel would fail there)."""
        if not getattr(self._threads, "ready", False):
            self.cp.cuda.runtime.memGetInfo()
            self._threads.ready = True

    def address(self, a: Any) -> int:
        return 0 if a is NULL else int(a.data.ptr)

    def struct_arg(self, value: np.ndarray) -> Any:
        # CuPy converts a numpy argument at every launch, and for a structured one that costs more
        # than the 23 scalars it replaces (16 us against 9, docs/GPU_NOTES.md v19); its own
        # converted form is passed through as is. Without it (another CuPy), the array itself.
        converted = getattr(self.cp.cuda.function, "CNumpyArray", None)
        return value if converted is None else converted(value)

    def empty_like(self, a: Any) -> Any:
        # straight from the pool: 2.5 us against 5 for cupy.empty_like under the region's allocator
        return self.cp.ndarray(a.shape, a.dtype, memptr=self.pool.malloc(a.nbytes))

    def launch(
        self,
        module: str,
        kernel: str,
        threads: int,
        args: Sequence[Any],
        *,
        block: int = 256,
        grid: int | None = None,
        shared: int = 0,
    ) -> None:
        fn = self._function(module, kernel)
        if shared > 48 * 1024 and self._shared_limit.get((module, kernel), 0) < shared:
            self._allow_shared(module, kernel, fn, shared)
        if grid is None:
            grid = max(1, math.ceil(threads / block))
        self.clock.launching()
        if self.profile is not None:
            a, b = self.cp.cuda.Event(), self.cp.cuda.Event()
            a.record(self.compute)
        direct = self._direct.get((module, kernel))
        if direct is not None:
            # the driver function with the stream as an argument, not RawKernel under a `with`
            # block: the host time before a transform's first launch is device idle time
            direct((grid,), (block,), tuple(args), shared, self.compute)
        else:
            with self.compute:  # RawKernel launches on the current stream
                fn((grid,), (block,), tuple(args), shared_mem=shared)
        if self.profile is not None:
            b.record(self.compute)
            self.profile.append((kernel, a, b))

    def profile_report(self) -> dict[str, dict[str, Any]]:
        """{kernel: {launches, ms (total), first (ms of the first launches)}} since the last report."""
        if not self.profile:
            return {}
        self.compute.synchronize()
        out: dict[str, dict[str, Any]] = {}
        for name, a, b in self.profile:
            ms = self.cp.cuda.get_elapsed_time(a, b)
            entry = out.setdefault(name, {"launches": 0, "ms": 0.0, "first": []})
            entry["launches"] += 1
            entry["ms"] = round(entry["ms"] + ms, 3)
            if len(entry["first"]) < 6:
                entry["first"].append(round(ms, 3))
        self.profile.clear()
        return out

    def compile_all(self, modules: Sequence[str]) -> dict[str, float]:
        """Compile (or load) whole modules now; seconds per module."""
        out = {}
        for name in modules:
            t0 = time.perf_counter()
            with self.guard(f"compiling {name}"):
                mod = self.cp.RawModule(code=module_source(name), options=NVRTC_OPTIONS)
                mod.compile()
            self._modules[name] = mod
            out[name] = time.perf_counter() - t0
        return out

    # --- memory -------------------------------------------------------------------------
    def used_bytes(self) -> int:
        return int(self.pool.used_bytes())

    def held_bytes(self) -> dict[str, int]:
        """Device bytes the pools hold, live or cached: this runtime's and CuPy's default pool
        (which any CuPy call outside a device region allocates from)."""
        with self.guard("pool sizes"):
            return {
                "pool": int(self.pool.total_bytes()),
                "default_pool": int(self.cp.get_default_memory_pool().total_bytes()),
            }

    def malloc_counts(self) -> dict[str, int]:
        with MALLOC_COUNTS.lock:
            return {"mallocs": MALLOC_COUNTS.calls, "mallocs_full": MALLOC_COUNTS.full}

    def mem_info(self) -> tuple[int | None, int | None]:
        with self.guard("mem_info"):
            free, total = self.device.mem_info
        return int(total), int(free)

    def activate(self) -> contextlib.AbstractContextManager[Any]:
        """The device region: CuPy calls in it allocate from this runtime's pool, which the
        budget, `used_bytes` and the out-of-memory retry cover. Outside it they allocate from
        CuPy's default pool, invisible to all three (2026-12-06: the prover's H stack, query
        gathers and the replicated topology's a/b/c, ~27 GiB in a wpost-32g proof)."""
        return self.guard("device work")

    def upload(self, host: np.ndarray, out: Any | None = None) -> Any:
        host = np.ascontiguousarray(host)
        if out is None:
            out = self.cp.empty(host.shape, dtype=host.dtype)
        if self.pinned_staging and host.nbytes > (1 << 20):
            # on the compute stream, as the pageable copy: `out` may be a block the pool just took
            # back from an array that a queued kernel still reads (on the upload stream, unordered
            # with those kernels, the copy overwrote it: porep-32g's setup lost columns, H100
            # 2026-12-07)
            self._copy_rows(host, 0, host.shape[0], out, self.compute, "upload")
        else:
            out.set(host, stream=self.compute)
        return out

    def _slots_for(self, use: str) -> _PinnedSlots:
        """The pinned slots of one use's copies, pinned at first use (pin_seconds counts it)."""
        with self._slot_sets_lock:
            slots = self._slot_sets.get(use)
            if slots is None:
                t0 = time.perf_counter()
                buffers = [self.cp.cuda.alloc_pinned_memory(self._chunk_bytes) for _ in range(2)]
                self.pin_seconds += time.perf_counter() - t0
                slots = self._slot_sets[use] = _PinnedSlots(buffers)
            return slots

    def upload_chunks(self, host, bounds, out=None):
        host = np.ascontiguousarray(host)
        if out is None:
            out = self.cp.empty(host.shape, dtype=host.dtype)
        # `out` came from the compute stream's pool, perhaps a block a queued kernel still reads:
        # the copies start once the compute work queued so far is done (the chunks' own kernels,
        # queued later, still overlap them)
        with self.device:
            self.upload_stream.wait_event(self.compute.record())
        for lo, hi in bounds:
            self._copy_rows(host, lo, hi, out, self.upload_stream, "upload_chunks")
            self.compute.wait_event(self.upload_stream.record())
            yield out, lo, hi

    def stage(self, *pieces: np.ndarray, times: dict[str, float] | None = None) -> Any:
        """On the upload stream, waited for here, from the upload stream's memory arena.

        Queued on the compute stream (the legacy stream every worker shares), a pre-staged upload
        sat behind the lock holder's kernels and held back the holder's next download until it
        was done: 52-85 ms of idle GPU in every porep-13m partition's msm_h, the gap ending when
        the other worker's staging ended (timelines of 2026-12-03). Allocated in the upload
        stream's arena, the copy never lands in a block the pool freed while a compute kernel
        still reads it, provided the caller drops a staged array only once no queued kernel reads it.
        """
        hosts = [np.ascontiguousarray(p) for p in pieces]
        first = hosts[0]
        if any(h.shape[1:] != first.shape[1:] or h.dtype != first.dtype for h in hosts):
            raise ValueError(
                f"staged pieces differ in row shape or dtype: {[(h.shape, h.dtype) for h in hosts]}"
            )
        # `times` splits the copy (gpu_prepare took 1.5 s beside a hold against 0.2 s on an idle
        # device, porep-32g on an H100, 2026-12-07): the pool, the host copies into the pinned
        # slots, the waits for a slot's last DMA, the queueing, the final wait
        clock = _Parts(times)
        with self.guard("staging upload"), self.upload_stream:
            out = self.cp.empty((sum(len(h) for h in hosts), *first.shape[1:]), dtype=first.dtype)
            clock.lap("alloc")
            at = 0
            for h in hosts:  # each piece from where it lies (a hand-over's shared memory): no host join
                if len(h):
                    self._copy_rows(h, 0, len(h), out[at : at + len(h)], self.upload_stream, "stage", clock)
                at += len(h)
            self.upload_stream.record().synchronize()
            clock.lap("drain")
        return out

    def _copy_rows(
        self, host: np.ndarray, lo: int, hi: int, out: Any, stream: Any, use: str, clock: _Parts | None = None
    ) -> None:
        """Queue rows lo:hi of host onto out on `stream` (through `use`'s pinned slots if on);
        `clock` gets the parts' seconds (stage's `times`)."""
        clock = clock or _Parts(None)
        if not self.pinned_staging:
            out[lo:hi].set(host[lo:hi], stream=stream)
            clock.lap("enqueue")
            return
        # stage through two page-locked buffers, sub-chunked to their size
        row_bytes = host.strides[0] if host.ndim else host.itemsize
        rows_per = max(1, self._chunk_bytes // row_bytes)
        slots = self._slots_for(use)
        for a in range(lo, hi, rows_per):
            b = min(hi, a + rows_per)
            with slots.lock:
                clock.lap("slot_wait")  # (the lock: another copy of this use)
                slot = slots.next
                if slots.events[slot] is not None:
                    slots.events[slot].synchronize()  # its previous copy has left the slot
                clock.lap("slot_wait")
                staged = np.ndarray((b - a, *host.shape[1:]), dtype=host.dtype, buffer=slots.buffers[slot])
                self._parallel_copy(staged, host[a:b])
                clock.lap("host_copy")
                out[a:b].set(staged, stream=stream)
                slots.events[slot] = stream.record()
                slots.next = slot ^ 1
                clock.lap("enqueue")

    def _parallel_copy(self, dst: np.ndarray, src: np.ndarray, parts: int = 8) -> None:
        """Host copy into the pinned buffer on several threads (numpy releases the GIL): one
        thread's memcpy, not the DMA, was the staging bottleneck."""
        if self._copy_pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._copy_pool = ThreadPoolExecutor(parts, thread_name_prefix="cuzk-stage")
        step = -(-dst.shape[0] // parts)
        futures = [
            self._copy_pool.submit(np.copyto, dst[i : i + step], src[i : i + step])
            for i in range(0, dst.shape[0], step)
        ]
        for f in futures:
            f.result()

    def synchronize(self) -> None:
        self.clock.quiet()
        with self.guard("synchronize"):
            self.compute.synchronize()
            self.upload_stream.synchronize()

    def settle(self) -> None:
        # A synchronous download that finds kernels queued ahead of it holds every other
        # thread's copies until they are done: a staging beside a run of MSMs took the hold's
        # length (1041 ms against 103 alone), beside NTTs with an 8-byte download every 20 of
        # them 792 ms, and 165 ms when each download came after an event's completion (H100,
        # 2026-12-07, benchmarks/staging_beside_hold.py). An event wait holds nothing.
        with self.guard("settle"):
            self.compute.record().synchronize()

    def to_host(self, a: Any) -> np.ndarray:
        if isinstance(a, np.ndarray):
            return a
        self.clock.quiet()
        with self.guard("download"):
            self.settle()
            return np.asarray(a.get())

    def device_clock(self) -> contextlib.AbstractContextManager[list[tuple[float, float]] | None]:
        return self.clock.measure()

    def _event(self) -> Any:
        """A CUDA event recorded on the compute stream now."""
        with self.device:
            ev = self.cp.cuda.Event()
            ev.record(self.compute)
        return ev

    def describe(self) -> dict[str, Any]:
        name = self.props["name"]
        return {
            "runtime": self.name,
            "device": name.decode() if isinstance(name, bytes) else str(name),
            "sms": int(self.props["multiProcessorCount"]),
            "memory_gib": round(self.device.mem_info[1] / _GIB, 1),
            "budget_gib": None if self.budget is None else round(self.budget / _GIB, 2),
            "pinned_staging": self.pinned_staging,
            "pin_seconds": round(self.pin_seconds, 4),
            "compile_seconds": {k: round(v, 2) for k, v in self.compile_seconds.items()},
        }


class _LaunchAttribute(ctypes.Structure):
    """cuda.h's CUlaunchAttribute: an id, padding to 8 bytes, a 64-byte value union."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_int * 16)]


class _LaunchConfig(ctypes.Structure):
    """cuda.h's CUlaunchConfig (cuLaunchKernelEx's first argument)."""

    _fields_ = [
        *((name, ctypes.c_uint) for name in ("gx", "gy", "gz", "bx", "by", "bz", "shared")),
        ("stream", ctypes.c_void_p),
        ("attrs", ctypes.POINTER(_LaunchAttribute)),
        ("numAttrs", ctypes.c_uint),
    ]


#: CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (6), allowed (value 1)
_PROGRAMMATIC_SERIALIZATION = _LaunchAttribute(6, b"", (ctypes.c_int * 16)(1))


@functools.cache
def launch_ex() -> Callable[..., int] | None:
    """The driver's cuLaunchKernelEx (CUDA 12 and up; CuPy does not wrap it), or None."""
    try:
        fn = ctypes.CDLL("libcuda.so.1").cuLaunchKernelEx
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    fn.restype = ctypes.c_int
    return fn


class _PreparedLaunch:
    """CupyRuntime.prepare: cuLaunchKernel with a kernel-parameter array built once. A call writes
    its arrays' addresses into the array's pointer slots and launches (~2 us of host time against
    ~5 through CuPy's Function call, which converts every argument at every launch). The slots
    are shared by the callers of one plan, so writing and launching hold a lock; the driver copies
    the parameters before cuLaunchKernel returns. Under kernel profiling, a plain launch."""

    __slots__ = (
        "_block",
        "_fn",
        "_grid",
        "_kargs",
        "_key",
        "_launch",
        "_lead",
        "_lock",
        "_overlapped",
        "_rt",
        "_shared",
        "_slots",
        "_tail",
    )

    def __init__(
        self,
        rt: CupyRuntime,
        key: tuple[str, str],
        fn: Any,
        launch: Callable[..., None],
        lead: int,
        tail: tuple[Any, ...],
        grid: int,
        block: int,
        shared: int,
        overlapped: tuple[Callable[..., int], _LaunchConfig] | None = None,
    ) -> None:
        self._rt, self._key, self._fn, self._launch = rt, key, fn, launch  # fn keeps its module loaded
        self._overlapped = overlapped  # a programmatic dependent launch: cuLaunchKernelEx, its config
        self._lead, self._tail, self._grid, self._block, self._shared = lead, tail, grid, block, shared
        self._slots = (ctypes.c_uint64 * max(lead, 1))()
        base = ctypes.addressof(self._slots)
        params = [base + 8 * i for i in range(lead)] + [int(t.ptr) for t in tail]
        self._kargs = (ctypes.c_void_p * max(len(params), 1))(*params)
        self._lock = threading.Lock()

    def __call__(self, *arrays: Any) -> None:
        rt = self._rt
        if len(arrays) != self._lead:
            raise TypeError(f"{self._key[1]} takes {self._lead} leading arrays, got {len(arrays)}")
        if rt.profile is not None:
            module, kernel = self._key
            args = (*arrays, *self._tail)
            rt.launch(module, kernel, 0, args, grid=self._grid, block=self._block, shared=self._shared)
            return
        rt.clock.launching()
        rt.ensure_context()
        slots = self._slots
        with self._lock:
            for i, a in enumerate(arrays):
                slots[i] = a.data.ptr
            if self._overlapped is not None:
                ex, config = self._overlapped
                status = ex(ctypes.addressof(config), self._fn.ptr, ctypes.addressof(self._kargs), None)
                if status != 0:
                    raise DeviceError(f"{self._key[1]}: cuLaunchKernelEx failed with CUresult {status}")
                return
            self._launch(
                self._fn.ptr,
                self._grid,
                1,
                1,
                self._block,
                1,
                1,
                self._shared,
                rt.compute.ptr,
                ctypes.addressof(self._kargs),
                0,
            )


class _PinnedSlots:
    """Two page-locked buffers that one use's copies take in turn, with the event of each one's
    last copy (the buffer is free again once it has completed)."""

    def __init__(self, buffers: list[Any]) -> None:
        self.buffers = buffers
        self.events: list[Any] = [None, None]
        self.next = 0
        self.lock = threading.Lock()


#: cudaErrorMemoryAllocation (the CUDA runtime's enum); CuPy 14 no longer exports it as
#: cupy.cuda.runtime.errorMemoryAllocation, which raised AttributeError in place of the retry
#: (porep-32g's first proof after its key generation, H100 2026-12-07)
_CUDA_ERROR_MEMORY_ALLOCATION = 2


class _Parts:
    """Seconds since the last lap, added to `times[name]`; nothing is kept when `times` is None."""

    __slots__ = ("_t", "times")
    now = staticmethod(time.perf_counter)

    def __init__(self, times: dict[str, float] | None) -> None:
        self.times = times
        self._t = self.now() if times is not None else 0.0

    def lap(self, name: str) -> None:
        if self.times is not None:
            t = self.now()
            self.times[name] = self.times.get(name, 0.0) + (t - self._t)
            self._t = t


class _MallocCounts:
    """The pools' cudaMalloc calls and the full-device failures among them, process-wide.

    A pool reuses its cached blocks without a cudaMalloc; a failure makes CuPy free every cached
    block of the pool (cudaFree, which waits for all queued device work) and retry. In a steady
    engine both counts should stand still: climbing, they say that blocks move between the
    pool's per-stream arenas through the device (GPU_NOTES v39)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls = self.full = 0

    def add(self, full: bool) -> None:
        with self.lock:
            self.calls += 1
            self.full += full


MALLOC_COUNTS = _MallocCounts()


def _device_malloc(size: int) -> Any:
    """The runtime pool's cudaMalloc: when the device is full, CuPy's default pool gives its
    cached blocks back before the pool's own retry fails. The pool already frees its own free
    blocks and retries, but not the default pool's, which allocations outside a device region
    fill (the 2026-12-06 wpost-32g run failed a 14.5 GB allocation with 27 GiB held outside
    the runtime's pool). Each call and each full-device failure is counted (MALLOC_COUNTS)."""
    import cupy

    try:
        mem = cupy.cuda.Memory(size)
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        full = exc.status == _CUDA_ERROR_MEMORY_ALLOCATION
        MALLOC_COUNTS.add(full)
        default = cupy.get_default_memory_pool()
        if not full or not default.free_bytes():
            raise
        default.free_all_blocks()
        mem = cupy.cuda.Memory(size)
    else:
        MALLOC_COUNTS.add(False)
    return cupy.cuda.MemoryPointer(mem, 0)


class _DeviceRegion:
    """CupyRuntime.guard: a class, not a generator over an ExitStack, since a transform's host
    time before its first launch is device idle time (2.4 us against 5.3, docs/GPU_NOTES.md v19)."""

    __slots__ = ("_allocator", "_rt", "_what")

    def __init__(self, rt: CupyRuntime, what: str) -> None:
        self._rt, self._what = rt, what
        self._allocator: Any = None

    def __enter__(self) -> None:
        rt = self._rt
        rt.device.__enter__()
        if hasattr(rt, "compute"):  # allocations from this backend's pool, work on its stream
            try:
                self._allocator = rt.cp.cuda.using_allocator(rt.pool.malloc)
                self._allocator.__enter__()
                try:
                    rt.compute.__enter__()
                except BaseException:
                    self._allocator.__exit__(None, None, None)
                    raise
            except BaseException:
                rt.device.__exit__(None, None, None)
                raise

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> Literal[False]:
        rt = self._rt
        if self._allocator is not None:
            rt.compute.__exit__(None, None, None)
            self._allocator.__exit__(None, None, None)
        rt.device.__exit__(None, None, None)
        if exc is not None:
            translated = rt.translate(self._what, exc)
            if translated is not None:
                raise translated from exc
        return False


def _is_cuda_error(exc: BaseException) -> bool:
    """CuPy's CUDA runtime/driver/NVRTC/compile errors (matched by module, CuPy may be absent)."""
    module = type(exc).__module__ or ""
    return module.startswith(("cupy", "cupy_backends")) or type(exc).__name__ in {
        "CUDARuntimeError",
        "CUDADriverError",
        "NVRTCError",
        "CompileException",
        "CUBLASError",
    }


def budget_from_env() -> int | None:
    return device_budget(config.get().cuda.device_memory_budget)
