"""NTT over Fr on the device: pass plans, twiddle tables cached per domain, and the launches.

Semantics are the CPU backend's (cpu/ntt.py): natural order in and out, `coset` multiplies
input i by coset^i before the forward transform, the inverse includes 1/n and undoes the coset.
The algorithm is the four-step recursion described in kernels/ntt.cuh: 1 pass up to 2^11
points, 2 passes up to 2^18, 3 beyond (each pass a DFT of at most 2^MAX_PASS_LOG = 2^11 points
in shared memory), so a 2^27 transform reads and writes the data three times.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from threading import Lock
from typing import Any, TypeVar

import numpy as np

from cuzk.algebra import constants as C
from cuzk.algebra.domain import check_root, log2_exact, powers
from cuzk.algebra.fields import fr_mont
from cuzk.backends.cuda._runtime import NULL, Runtime

_T = TypeVar("_T")

#: log2 of the shared-memory tile in elements (2^11 x 32 bytes = 64 KiB per block); a pass of
#: more points than the tile gets a tile of its own size (one column)
TILE_LOG = 11
MAX_PASS_LOG = 11
THREADS = 256
#: passes of at most 2^SMALL_PASS_LOG points (with the default plans, every pass of a transform
#: of more than 2^11 points) use tiles of that many points and SMALL_THREADS threads per block: measured 3% faster
#: than the 2^11 tiles at 2^24 and 2^27 (docs/GPU_NOTES.md v12), slower for passes of 2^10 and
#: 2^11 points, which keep the 2^11 tiles. 0 turns it off.
SMALL_PASS_LOG = 9
SMALL_THREADS = 128
#: threads of a pass that fills a small tile by itself (2^9 points, one column: 2^18 and 2^25
#: up): 2^27 ran 2% faster with 64 than with 128 (docs/GPU_NOTES.md v15)
SMALL_FULL_THREADS = 64
#: passes whose sub-problem has at most 2^FULL_TABLE_LOG points read omega_S^j from one table
#: (one load) instead of the two-level table (two loads and a product). The memory/speed toggle:
#: 24 costs 512 MiB of device memory per cached 2^24 root (`full_table_bytes`), 20 at most 32 MiB
FULL_TABLE_LOG = 24
#: run the shared-memory network two stages per step (a radix-4 step holding four elements in
#: registers) instead of one radix-2 stage per step: half the tile round trips and barriers
RADIX4 = True
#: the entry point: "ntt_pass" caps registers at three THREADS-thread blocks per SM (its
#: __launch_bounds__ assume THREADS <= 256), "ntt_pass_regs" leaves them to ptxas,
#: "ntt_pass_r2" runs the radix-2 network alone at four blocks (use it with RADIX4 = False)
KERNEL = "ntt_pass"
#: passes of at most 2^SWIZZLE_MAX_LOG points run KERNEL with the swizzled tile, larger ones its
#: `_plain` twin with the contiguous tile: the swizzle removed the bank conflicts everywhere
#: (ncu: 5.25 M -> 1.06 M shared wavefronts per 2^20 pass) but paid only on passes of up to 2^8
#: points (2^20 -2.2%, 2^24 -2.5%); on the 2^9-point passes of 2^27 its instructions cost 3%
#: (docs/GPU_NOTES.md v23)
SWIZZLE_MAX_LOG = 8
#: launch each pass after the first with programmatic dependent launch (sm_90 and up): its
#: blocks are scheduled while the pass before runs its tail and wait in the kernel for its end,
#: instead of the launch starting only after it (docs/GPU_NOTES.md v21)
OVERLAP = True
#: transforms of at most 2^SCRATCH_MAX_LOG points keep their between-pass buffer with the cached
#: tables (one per root: 32 MiB at 2^20, 128 MiB at 2^22) instead of allocating it before the
#: first launch: at 2^20 the host time before the first kernel is device idle time inside the
#: call (~15-35 us against 250 us of kernels on the H200, docs/GPU_NOTES.md v27). The
#: transforms that share one buffer hold the tables' lock while they queue their launches;
#: stream order on the one compute stream keeps a later transform's first pass behind the last
#: pass of the one before. 0 turns it off.
SCRATCH_MAX_LOG = 22


#: the kernel's argument block holds the sizes of at most this many passes
MAX_PASSES = 4
#: from 2^THREE_PASS_LOG points up, at least three passes: 2^20 as (7, 7, 6) and 2^22 as
#: (8, 7, 7) on the small tiles ran 8-9% faster than two passes of 2^10 / 2^11 points on 2^11
#: tiles (docs/GPU_NOTES.md v13)
THREE_PASS_LOG = 19


#: kernels/ntt.cuh's NttParams: a pass's launch parameters, one by-value kernel argument
NTT_PARAMS = np.dtype(
    {
        "names": [
            *("log_n", "log_N", "log_S", "log_T", "npass", "logs", "tw_bits", "out_mode", "radix4"),
            *("wsub", "tw_lo", "tw_hi", "tw_full", "in_lo", "in_hi", "out_c", "out_lo", "out_hi"),
        ],
        "formats": [np.int32] * 5 + [(np.int32, (MAX_PASSES,))] + [np.int32] * 3 + [np.uint64] * 9,
    },
    align=True,
)
assert NTT_PARAMS.itemsize == 120, "NTT_PARAMS must match kernels/ntt.cuh's NttParams"

#: a pass of a plan: its launch from `Runtime.prepare` (called with the source and destination,
#: NttParams bound), and the arrays the params' pointers name, held as long as the plan
Launch = tuple[Callable[..., None], tuple[Any, ...]]


#: fixed pass plans by log2 size, in place of the balanced split (first pass first). 2^20 as
#: (6, 7, 7) instead of (7, 7, 6): 1% faster in two runs (docs/GPU_NOTES.md v18, v22)
PLANS: dict[int, tuple[int, ...]] = {20: (6, 7, 7)}


def plan_passes(log_n: int) -> tuple[int, ...]:
    """DFT sizes (log2) of the passes, largest first, each <= MAX_PASS_LOG: as few passes as
    that allows (1 up to 2^11 points, 2 up to 2^18, 3 beyond with the defaults), but at least
    three from 2^THREE_PASS_LOG, unless PLANS fixes the plan of this size."""
    fixed = PLANS.get(log_n)
    if fixed is not None:
        if sum(fixed) != log_n or len(fixed) > MAX_PASSES or not all(1 <= k <= TILE_LOG for k in fixed):
            raise ValueError(
                f"NTT plan {fixed} for 2^{log_n}: passes of 1..{TILE_LOG} bits summing to {log_n}"
            )
        return fixed
    npass = max(1, -(-log_n // MAX_PASS_LOG), 3 if log_n >= THREE_PASS_LOG else 1)
    if npass > MAX_PASSES:
        raise ValueError(f"NTT size 2^{log_n} is beyond this plan's 2^{MAX_PASSES * MAX_PASS_LOG}")
    base, extra = divmod(log_n, npass)
    return tuple(base + (1 if p < extra else 0) for p in range(npass))


@dataclass(frozen=True)
class PassGeometry:
    log_N: int  # DFT size of the pass
    log_S: int  # sub-problem size
    log_T: int  # columns per block
    blocks: int
    threads: int
    shared: int  # bytes of dynamic shared memory


def pass_geometry(log_n: int) -> list[PassGeometry]:
    """Launch shape of every pass (pure arithmetic, unit-tested)."""
    logs = plan_passes(log_n)
    out = []
    log_S = log_n
    for p, log_N in enumerate(logs):
        last = p == len(logs) - 1
        small = log_N <= SMALL_PASS_LOG
        tile_log, threads = (min(TILE_LOG, SMALL_PASS_LOG), SMALL_THREADS) if small else (TILE_LOG, THREADS)
        room = max(0, tile_log - log_N)
        if small and room == 0:
            threads = SMALL_FULL_THREADS
        log_T = min(room, log_n - log_N) if last else min(room, log_S - log_N)
        elems = 1 << (log_N + log_T)
        out.append(
            PassGeometry(
                log_N=log_N,
                log_S=log_S,
                log_T=log_T,
                blocks=1 << (log_n - log_N - log_T),
                threads=max(1, min(threads, elems // 2, 1024)),
                shared=elems * 32,
            )
        )
        log_S -= log_N
    return out


def products_per_element(log_n: int) -> float:
    """Fr products per element of one forward transform (no coset), for the arithmetic bound:
    a DFT of 2^k points costs 2^(k-1) (1 - 2^-h) twiddle products at its stage of half-size 2^h,
    and every pass but the last multiplies all but its zero-exponent outputs by one inter-pass
    twiddle (one table load where the pass's sub-problem has at most 2^FULL_TABLE_LOG points,
    else two loads and one more product)."""
    total = 0.0
    for g in pass_geometry(log_n):
        total += sum(0.5 * (1 - 2.0**-h) for h in range(g.log_N))
        if g.log_S != g.log_N:
            nonzero = (1 - 2.0**-g.log_N) * (1 - 2.0 ** (g.log_N - g.log_S))
            total += nonzero * (1 if g.log_S <= FULL_TABLE_LOG else 2)
    return total


def full_table_bytes(log_n: int) -> int:
    """Device bytes of the one-load twiddle tables of one root of a 2^log_n transform."""
    return sum(32 << g.log_S for g in pass_geometry(log_n)[:-1] if g.log_S <= FULL_TABLE_LOG)


def tw_bits(log_n: int) -> int:
    return (log_n + 1) // 2


class _Tables:
    """Device tables for one (n, root): per-pass-size roots and the two-level omega^e table."""

    def __init__(self, rt: Runtime, omega: int, log_n: int) -> None:
        n = 1 << log_n
        self.wsub: dict[int, Any] = {}
        for k in set(plan_passes(log_n)):
            root = pow(omega, n >> k, C.R)
            self.wsub[k] = rt.upload(powers(root, max(1, (1 << k) // 2)))
        b = tw_bits(log_n)
        self.lo = rt.upload(powers(omega, 1 << b))
        self.hi = rt.upload(powers(pow(omega, 1 << b, C.R), 1 << (log_n - b)))
        self.full: dict[int, Any] = {}
        for g in pass_geometry(log_n)[:-1]:
            if g.log_S <= FULL_TABLE_LOG:
                self.full[g.log_S] = rt.upload(powers(pow(omega, n >> g.log_S, C.R), 1 << g.log_S))
        #: the prepared launches per (coset, inverse), so that a transform does no Python work
        #: beyond its launches
        self.plans: dict[tuple[int | None, bool], list[Launch]] = {}
        #: the between-pass buffer of small transforms (SCRATCH_MAX_LOG), used under `lock`
        self.scratch: Any = None
        if log_n <= SCRATCH_MAX_LOG and len(plan_passes(log_n)) > 1:
            rt.reserve(n * 32, f"the 2^{log_n} NTT's pass buffer")
            self.scratch = rt.xp.empty((n, 4), dtype=np.uint64)
        self.lock = Lock()


@lru_cache(maxsize=64)
def _inverse(x: int) -> int:
    """x^-1 mod r, cached: the host time before an inverse transform's first launch is idle."""
    return pow(x, -1, C.R)


def _two_level(rt: Runtime, base: int, log_n: int, start: int = 1) -> tuple[Any, Any]:
    """(lo, hi) with start * base^e = hi[e >> b] * lo[e & (2^b - 1)]."""
    b = tw_bits(log_n)
    lo = rt.upload(powers(base, 1 << b))
    hi = rt.upload(powers(pow(base, 1 << b, C.R), 1 << (log_n - b), start=start))
    return lo, hi


class CudaNtt:
    """NTTs with a small LRU cache of device tables, keyed like the CPU backend's."""

    def __init__(self, rt: Runtime, cache_entries: int = 8) -> None:
        self.rt = rt
        self._cache: OrderedDict[tuple, Any] = OrderedDict()
        self._entries = cache_entries
        self._lock = Lock()

    def _cached(self, key: tuple, make: Callable[[], _T]) -> _T:
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit
        value = make()
        with self._lock:
            self._cache[key] = value
            while len(self._cache) > self._entries:
                self._cache.popitem(last=False)
        return value

    def tables(self, omega: int, log_n: int) -> _Tables:
        def make() -> _Tables:
            check_root(omega, log_n)
            return _Tables(self.rt, omega, log_n)

        return self._cached(("tw", log_n, omega), make)

    def _plan(self, tables: _Tables, log_n: int, coset: int | None, inverse: bool) -> list[Launch]:
        rt = self.rt
        n = 1 << log_n
        in_lo = in_hi = out_c = out_lo = out_hi = NULL
        out_mode = 0
        if coset is not None and not inverse:
            in_lo, in_hi = self._cached(("coset", log_n, coset % C.R), lambda: _two_level(rt, coset, log_n))
        if inverse:
            n_inv = pow(n, -1, C.R)
            if coset is None:
                out_mode = 1
                out_c = self._cached(("const", n_inv), lambda: rt.upload(fr_mont(n_inv)[None]))
            else:
                out_mode = 2
                g_inv = pow(coset, -1, C.R)
                out_lo, out_hi = self._cached(
                    ("icoset", log_n, coset % C.R), lambda: _two_level(rt, g_inv, log_n, start=n_inv)
                )
        geo = pass_geometry(log_n)
        plan = []
        for p, g in enumerate(geo):
            first, last = p == 0, p == len(geo) - 1
            arrays = {
                "wsub": tables.wsub[g.log_N],
                "tw_lo": tables.lo,
                "tw_hi": tables.hi,
                "tw_full": tables.full.get(g.log_S, NULL) if not last else NULL,
                "in_lo": in_lo if first else NULL,
                "in_hi": in_hi if first else NULL,
                "out_c": out_c,
                "out_lo": out_lo,
                "out_hi": out_hi,
            }
            fields = {
                "log_n": log_n,
                "log_N": g.log_N,
                "log_S": g.log_S,
                "log_T": g.log_T,
                "npass": len(geo),
                "tw_bits": tw_bits(log_n),
                "out_mode": out_mode if last else 0,
                "radix4": int(RADIX4),
                **{name: rt.address(arr) for name, arr in arrays.items()},
            }
            params = np.zeros(1, NTT_PARAMS)
            for name, value in fields.items():
                params[name] = value
            params["logs"][0, : len(geo)] = [x.log_N for x in geo]
            keep = tuple(a for a in arrays.values() if a is not NULL)
            tail = (rt.struct_arg(params),)
            launch = rt.prepare(
                "ntt",
                KERNEL if g.log_N <= SWIZZLE_MAX_LOG else f"{KERNEL}_plain",
                2,
                tail,
                grid=g.blocks,
                block=g.threads,
                shared=g.shared,
                overlap=OVERLAP and not first,
            )
            plan.append((launch, keep))
        return plan

    def transform(
        self, a: Any, omega: int, *, coset: int | None, inverse: bool, overwrite: bool = False
    ) -> Any:
        rt = self.rt
        log_n = log2_exact(a.shape[0])
        n = 1 << log_n
        root = _inverse(omega) if inverse else omega
        if n == 1:
            check_root(omega, 0)
            return a.copy()
        tables = self.tables(root, log_n)
        key = (None if coset is None else coset % C.R, inverse)
        plan = tables.plans.get(key)
        if plan is None:
            plan = tables.plans[key] = self._plan(tables, log_n, coset, inverse)
        into = a if overwrite and len(plan) > 1 else None  # a is read by the first pass only
        if tables.scratch is not None:
            with tables.lock:
                return self._run(plan, a, tables.scratch, into)
        return self._run(plan, a, rt.empty_like(a) if len(plan) > 1 else None, into)

    def _run(self, plan: list[Launch], a: Any, work: Any, into: Any | None) -> Any:
        """Queue the passes: the first from `a` into `work`, the middle ones in place (each
        writes back the index set it read), the last into `into` (a itself, when it may be
        overwritten), else into a new array, allocated after the first launch while the device
        works."""
        src, last, out = a, len(plan) - 1, None
        for p, (launch, _) in enumerate(plan):
            if p == last:
                dst = out = self.rt.empty_like(a) if into is None else into
            else:
                dst = work
            launch(src, dst)
            src = dst
        return out
