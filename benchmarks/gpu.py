"""The one device script of the CUDA backend: compile, check against the CPU backend, time.

    PYTHONPATH=src python3 benchmarks/gpu.py [--out DIR] [--quick | --emulate] [--skip SECTIONS]
        [--prove porep-small,...] [--circom DIR]

1. compiles every kernel module (NVRTC through CuPy) and reports the seconds;
2. checks every kernel against the CPU backend on fresh random inputs, edge cases included
   (zero scalars, r - 1, identity and repeated points), plus two large checks that need no
   CPU reference: an MSM over bases [t_i] G with known t_i must equal [sum s_i t_i] G, and
   intt(ntt(x)) == x at 2^27;
3. times with CUDA events (warm-up, median of repeats): the Fq/Fr product rate, NTT 2^16..2^27
   (data on the device), G1 MSM 2^16..2^26 and G2 MSM 2^16..2^24 (bases resident, uniform
   scalars uploaded from pageable host memory inside the timed call), the pinned-staging
   variant and its pinning cost, sum_bases, and SpMV on a porep-medium-shaped matrix;
4. with --prove, per-phase times of native proofs; with --circom DIR, the zkey prover on a
   circom circuit (DIR holds circuit.r1cs and circuit.wtns): the key from
   `cuzk groth16 setup --backend cuda`, warm in-process proofs, cold `cuzk groth16 prove` runs
   on the GPU and one on the CPU backend of the same machine, every proof verified. Warm
   proofs go through the job layer (cuzk.engine.LocalProver), so `synthesis` includes the
   witness (circuit.witness, or reading the .wtns; sub-spans witness and matvec);
5. prints the table last and writes results.json and log.txt under --out ($OUT by default).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests" / "backends"))

from cuzk.algebra import constants as C  # noqa: E402
from cuzk.algebra.curves import G1, G2  # noqa: E402
from cuzk.algebra.fields import FR  # noqa: E402
from cuzk.backends.cuda.msm import make_plan  # noqa: E402
from cuzk.backends.cuda.ntt import plan_passes, products_per_element  # noqa: E402
from cuzk.errors import DeviceMemoryError  # noqa: E402
from cuzk.toggles import FULL_COPIES  # noqa: E402

#: measured integer peak of the H200 (ANCHORS.md): 32-bit multiply-adds per second
IMAD_PEAK = 16.5e12
#: multiply-adds per Montgomery product in our CIOS code (4 N^2 + N: the 32-bit mads in the PTX;
#: ptxas fuses each lo/hi pair of the even/odd form into one wide IMAD, see field.cuh)
IMADS = {"fq": 4 * 12 * 12 + 12, "fr": 4 * 8 * 8 + 8}
#: Fq products per mixed XYZZ addition in the MSM's accumulate kernel (curve.cuh xyzz_madd)
MADD_PRODUCTS = 10

#: The prover's spans of the GPU part (msm_l for bellperson keys, msm_c for zkeys); the witness
#: upload has its own span since it stopped hiding inside the private query's MSM.
GPU_PHASES = frozenset({"ntt_h", "msm_h", "upload_witness", "msm_l", "msm_c", "msm_a", "msm_b_g1"})

LOG: list[str] = []
RESULTS: dict[str, Any] = {"checks": {}, "timings": [], "info": {}}


def log(msg: str) -> None:
    line = f"[{time.strftime('%H:%M:%S')}] {msg}"
    print(line, flush=True)
    LOG.append(line)


def save(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(RESULTS, indent=1, default=str))
    (out / "log.txt").write_text("\n".join(LOG) + "\n")


def check(name: str, fn: Callable[[], object]) -> bool:
    t0 = time.perf_counter()
    try:
        fn()
        ok, detail = True, ""
    except Exception as exc:
        ok, detail = False, "".join(traceback.format_exception(exc))[-3000:]
    dt = time.perf_counter() - t0
    RESULTS["checks"][name] = {"ok": ok, "seconds": round(dt, 2), "detail": detail}
    log(f"check {name}: {'ok' if ok else 'FAILED'} ({dt:.1f} s){'' if ok else chr(10) + detail}")
    return ok


class Timer:
    """CUDA events on the backend's compute stream around a call; median of repeats."""

    def __init__(self, be: Any) -> None:
        self.be = be
        self.cp = None if be.xp is np else be.xp

    def __call__(self, fn: Callable[[], Any], reps: int = 5, warmup: int = 1) -> dict[str, float]:
        if self.cp is None:  # the emulator (--emulate smoke runs): host clock only
            fn()
            t0 = time.perf_counter()
            fn()
            return {
                "ms": 1e3 * (time.perf_counter() - t0),
                "wall_ms": 1e3 * (time.perf_counter() - t0),
                "reps": 1,
            }
        cp, stream = self.cp, self.be.rt.compute
        for _ in range(warmup):
            fn()
        self.be.synchronize()
        ev, wall = [], []
        for _ in range(reps):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            t0 = time.perf_counter()
            a.record(stream)
            fn()
            b.record(stream)
            b.synchronize()
            wall.append(time.perf_counter() - t0)
            ev.append(cp.cuda.get_elapsed_time(a, b))
        return {
            "ms": float(np.median(ev)),
            "wall_ms": 1e3 * float(np.median(wall)),
            "reps": reps,
            "min_ms": float(min(ev)),
            "max_ms": float(max(ev)),
        }


def row(kind: str, size: str, t: dict[str, float], **extra: Any) -> None:
    entry = {
        "kind": kind,
        "size": size,
        **{k: round(v, 3) if isinstance(v, float) else v for k, v in t.items()},
    }
    entry.update(extra)
    RESULTS["timings"].append(entry)
    log(f"time {kind} {size}: {t['ms']:.3f} ms (wall {t.get('wall_ms', float('nan')):.3f}) {extra or ''}")


@lru_cache(maxsize=3)
def host_scalars(log_n: int) -> np.ndarray:
    """The MSM rows' random host scalars of one size, kept for the later sections at that size
    (2^27 of them take ~20 s to draw on the device's host)."""
    return FR.random(1 << log_n, np.random.default_rng(100 + log_n))


def random_fr_device(be: Any, n: int, seed: int) -> Any:
    """Random Fr elements in [0, r) generated on the device (any value below r is a valid
    Montgomery representation), for sizes where host generation would dominate the run."""
    cp = be.xp
    if cp is np:
        return FR.random(n, np.random.default_rng(seed))
    rs = cp.random.RandomState(seed)
    with be.rt.guard("random"):
        r1, r2, r3 = (rs.randint(0, 2**31, size=(n, 4), dtype=cp.int64).view(cp.uint64) for _ in range(3))
        x = (r1 << cp.uint64(33)) ^ (r2 << cp.uint64(2)) ^ r3
        x[:, 3] %= cp.uint64(C.R >> 192)  # top limb below r's: the value is below r
    return x


def fr_sum_device(be: Any, v: Any) -> int:
    """sum of a power-of-two-length device Fr vector, by halving with fr_add."""
    while v.shape[0] > 1:
        h = v.shape[0] // 2
        v = be.fr_add(v[:h], v[h : 2 * h])
    return FR.to_ints(be.to_host(v))[0]


def kernel_checks(be: Any, rng: np.random.Generator, small: bool) -> None:
    import cuda_checks as K  # type: ignore[import-not-found]  # tests/backends, on sys.path above

    d = 6 if small else 0  # the emulator runs everything 2^6 smaller
    ntt_sizes = [1, 3, 10, 11, 12] if small else [1, 3, 10, 11, 12, 16, 20, 22, 23, 24]
    check(f"fr_ops 2^{16 - d}", lambda: K.check_fr_ops(be, rng, 1 << (16 - d)))
    check(f"fq/fq2 mul 2^{14 - d}", lambda: K.check_base_fields(be, rng, 1 << (14 - d)))
    check(f"ntt {ntt_sizes} (fwd/inv/coset)", lambda: K.check_ntt(be, rng, ntt_sizes))
    check(
        f"msm g1 2^{13 - d} (windows 7/13/auto, chunks)",
        lambda: K.check_msm(be, rng, "g1", 1 << (13 - d), (None, 7, 13), (None, 3)),
    )
    check(f"msm g2 2^{10 - d}", lambda: K.check_msm(be, rng, "g2", 1 << (10 - d)))
    check("msm g1 skewed (ones, repeats)", lambda: K.check_msm_skewed(be, rng, 4500 if small else 1 << 15))
    check(f"scalar classes 2^{16 - d}", lambda: K.check_scalar_classes(be, rng, 1 << (16 - d)))
    check(
        f"msm g1 split 2^{13 - d}", lambda: K.check_msm_split(be, rng, "g1", 1 << (13 - d), windows=(None, 7))
    )
    check(
        "sum_bases g1 / g2",
        lambda: (
            K.check_sum_bases(be, rng, "g1", 1 << (14 - d)),
            K.check_sum_bases(be, rng, "g2", 1 << (10 - d)),
        ),
    )
    check(
        "fixed_base g1 / g2",
        lambda: (
            K.check_fixed_base(be, rng, "g1", 1 << (12 - d)),
            K.check_fixed_base(be, rng, "g2", 1 << (9 - d)),
        ),
    )
    check(f"spmv 2^{16 - d} x 2^{15 - d}", lambda: K.check_spmv(be, rng, 1 << (16 - d), 1 << (15 - d)))


def dlog_check(be: Any, curve: Any, bases: Any, logs: Any, n: int, seed: int) -> None:
    """msm(bases = [t] G, s) == [sum s t] G, with s uniform on the host."""
    s = FR.random(n, np.random.default_rng(seed))
    got = be.msm(bases, s)
    k = fr_sum_device(be, be.fr_mul(be.to_device(s), logs[:n]))
    want = curve.scalar_mul(curve.generator(), FR.from_ints([k]))
    assert curve.eq(got[None], want)[0], (
        f"{curve.name} MSM 2^{n.bit_length() - 1} disagrees with the discrete logs"
    )


def make_bases(be: Any, curve: Any, group: str, log_max: int, seed: int) -> tuple[Any, Any]:
    n = 1 << log_max
    logs = random_fr_device(be, n, seed)
    t0 = time.perf_counter()
    rows = be.fixed_base_mul(curve.generator(), logs, group, on_device=True)
    be.synchronize()
    log(f"generated 2^{log_max} {group} bases on the device in {time.perf_counter() - t0:.1f} s")
    return be.bases_from_device(rows, group), logs


def share(products: float, field: str) -> float | None:
    """Time the products take at the product rate measured in this run, in ms (None before it)."""
    rate = RESULTS["info"].get("product_rate", {}).get(field)
    return None if not rate else 1e3 * products / rate


#: source variants for A/Bs of kernel changes in the same run (GPU_NOTES v14): field.cuh's
#: multiplier-free limb 0 of Fr's reduction off, and ptx.cuh's products as C instead of PTX
GENERIC_REDC = (("bool LOW_ONE = true;", "bool LOW_ONE = false;"),)
C_MUL = (
    *GENERIC_REDC,
    ('asm("mul.lo.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));', "r = a * b;"),
    ('asm("mul.hi.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));', "r = __umulhi(a, b);"),
)
#: v16 (measured, the default since): the reduction's multiplier from constant memory; the
#: folded constant is the old default's product
FOLDED_INV = (("#define CUZK_OPAQUE_INV 1", "#define CUZK_OPAQUE_INV 0"),)
#: v18: the radix-2 network's entry point at five 256-thread blocks per SM (48 registers, 12 B of
#: spills: 40 warps with 128-thread blocks)
R2_FIVE_BLOCKS = (("ntt_pass_r2, __launch_bounds__(256, 4)", "ntt_pass_r2, __launch_bounds__(256, 5)"),)
#: v19: the radix-4 entry point at four 256-thread blocks per SM (64 registers; 100 B of spills
#: then, 20 B since v25): eight 128-thread blocks, so that a 2^20 pass's 2048 blocks run in 1.94
#: waves instead of 2.59 (2.22 with the default's 72 registers)
R4_FOUR_BLOCKS = (("ntt_pass, __launch_bounds__(256, 3)", "ntt_pass, __launch_bounds__(256, 4)"),)
#: v23: the cheaper swizzle, the last radix-2 stage in the tile instead of in the store (with the
#: contiguous tile everywhere: v22's layout)
SHIFT_SWIZZLE = (("#define CUZK_NTT_SWIZZLE 1", "#define CUZK_NTT_SWIZZLE 2"),)
UNFUSED_LAST = (("#define CUZK_NTT_FUSED_LAST 1", "#define CUZK_NTT_FUSED_LAST 0"),)
SOURCE_VARIANTS = {
    "swizzle-shifts": SHIFT_SWIZZLE,
    "unfused-last": UNFUSED_LAST,
    "v22-layout": UNFUSED_LAST,
    "generic-redc": GENERIC_REDC,
    "c-mul": C_MUL,
    "folded-inv": FOLDED_INV,
    "radix2-40-warps": R2_FIVE_BLOCKS,
    "radix4-32-warps": R4_FOUR_BLOCKS,
}
#: timings per variant in tune_ntt, interleaved one per variant per round
TUNE_ROUNDS = 7
#: modules built from edited sources, kept for the run so that variants can be interleaved
_VARIANT_MODULES: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}


def edited_source(module: str, edits: tuple[tuple[str, str], ...]) -> str | None:
    """`module`'s source with each (old, new) edit applied; None if an `old` is not in it exactly once."""
    from cuzk.backends.cuda._source import module_source

    src = module_source(module)
    for old, new in edits:
        if src.count(old) != 1:
            return None
        src = src.replace(old, new)
    return src


@contextmanager
def source_variant(be: Any, module: str, edits: tuple[tuple[str, str], ...]) -> Iterator[None]:
    """Run the block with `module` compiled from its source with each (old, new) edit applied:
    an A/B of a kernel change in the same run. Reaches into the runtime's module cache on purpose."""
    from cuzk.backends.cuda._runtime import NVRTC_OPTIONS

    rt = be.rt
    built = _VARIANT_MODULES.get((module, edits))
    if built is None:
        src = edited_source(module, edits)
        if src is None:
            raise ValueError(f"the edits {edits!r} do not each match once in the {module} source")
        with rt.guard("source variant"):
            built = _VARIANT_MODULES[(module, edits)] = be.xp.RawModule(code=src, options=NVRTC_OPTIONS)

    def drop() -> None:
        for cache in (rt._functions, rt._direct, rt._shared_limit):
            for key in [k for k in cache if k[0] == module]:
                del cache[key]

    saved = rt._modules.get(module)
    rt._modules[module] = built
    drop()
    try:
        yield
    finally:
        if saved is None:
            rt._modules.pop(module, None)
        else:
            rt._modules[module] = saved
        drop()


def profiled(
    be: Any, name: str, fn: Callable[[], Any], bound: dict[str, tuple[float, str]] | None = None
) -> None:
    """Run fn once with per-kernel CUDA events and store the per-kernel totals; `bound` maps a
    kernel to its modelled product count and field, so its share of the arithmetic bound prints."""
    rt = be.rt
    be.synchronize()
    rt.profile = []
    t0 = time.perf_counter()
    fn()
    be.synchronize()
    wall = 1e3 * (time.perf_counter() - t0)
    report = rt.profile_report()
    rt.profile = None
    for kernel, (products, field) in (bound or {}).items():
        floor = share(products, field)
        if kernel in report and floor is not None:
            report[kernel]["bound_ms"] = round(floor, 3)
            report[kernel]["arith_share"] = round(floor / report[kernel]["ms"], 3)
            log(f"profile {name}: {kernel} {report[kernel]['ms']:.2f} ms, products alone {floor:.2f} ms")
    RESULTS.setdefault("profiles", {})[name] = {"wall_ms": round(wall, 2), "kernels": report}
    top = sorted(report.items(), key=lambda kv: -kv[1]["ms"])[:8]
    log(
        f"profile {name}: wall {wall:.1f} ms; "
        + "; ".join(f"{k} {v['ms']:.2f} ms x{v['launches']}" for k, v in top)
    )


def tune_msm(
    be: Any,
    timer: Timer,
    bases: Any,
    profile_logs: tuple[int, ...] = (20, 22, 24),
    variants: dict[int, list[tuple[int, int, int]]] | None = None,
) -> None:
    """Per-kernel profile of the default plans, then window / chunk / L variants."""
    from cuzk.backends.cuda import msm as M

    for log_n in profile_logs:
        host = FR.random(1 << log_n, np.random.default_rng(300 + log_n))
        plan = make_plan(1 << log_n, None, be.msm_chunks, host_scalars=True)
        madds = (1 << log_n) * plan.windows
        profiled(
            be,
            f"msm_g1 2^{log_n}",
            partial(be.msm, bases, host),
            {"msm_accumulate_g1": (madds * MADD_PRODUCTS, "fq")},
        )
    variants = (
        variants
        or {  # GPU_NOTES v8: window 19's big buckets without the second wait; the refit's picks
            16: [(10, 1, 32), (11, 1, 32)],
            24: [(16, 8, 32), (16, 4, 32), (17, 4, 32), (19, 4, 32), (19, 1, 32)],
            26: [(17, 8, 32), (19, 4, 32), (19, 8, 32), (20, 8, 32)],
        }
    )
    for log_n, plans in variants.items():
        if bases.n < 1 << log_n:
            continue
        host = host_scalars(log_n)
        for c, k, L in plans:
            M.ACCUMULATE_L, M.BIG_ENTRIES = L, L * 64
            be.msm_chunks = k
            try:
                t = timer(partial(be.msm, bases, host, window=c), reps=3)
                row("msm_g1_variant", f"2^{log_n}", t, window=c, chunks=k, L=L)
            finally:
                M.ACCUMULATE_L, M.BIG_ENTRIES = 32, 32 * 64
                be.msm_chunks = None


def tune_ntt(
    be: Any, timer: Timer, log_sizes: tuple[int, ...] = (20, 22, 24, 27), only: set[str] | None = None
) -> None:
    """The default NTT against its variants in the same run (each output compared to the default's)."""
    from cuzk.backends.cuda import ntt as N

    knobs = (
        "TILE_LOG",
        "MAX_PASS_LOG",
        "THREADS",
        "SMALL_PASS_LOG",
        "SMALL_THREADS",
        "FULL_TABLE_LOG",
        "RADIX4",
        "KERNEL",
        "THREE_PASS_LOG",
        "PLANS",
        "SMALL_FULL_THREADS",
        "OVERLAP",
        "SWIZZLE_MAX_LOG",
        "SCRATCH_MAX_LOG",
    )
    defaults = {k: getattr(N, k) for k in knobs}
    variants: list[tuple[str, dict[str, Any]]] = [
        ("default", {}),
        ("radix2", {"RADIX4": False}),
        ("radix2-32-warps", {"RADIX4": False, "KERNEL": "ntt_pass_r2"}),
        ("no-register-cap", {"KERNEL": "ntt_pass_regs"}),
        ("large-tiles", {"SMALL_PASS_LOG": 0}),
        ("two-passes", {"THREE_PASS_LOG": 99}),
        ("tile-8", {"SMALL_PASS_LOG": 8, "SMALL_THREADS": 64}),
        ("threads-64", {"SMALL_THREADS": 64}),
        ("full-tile-128", {"SMALL_FULL_THREADS": 128}),
        ("table-20", {"FULL_TABLE_LOG": 20}),
        ("table-19", {"FULL_TABLE_LOG": 19}),
        ("plans-677", {"PLANS": {20: (6, 7, 7), 22: (7, 7, 8)}}),
        ("balanced-20", {"PLANS": {}}),
        ("plans-767", {"PLANS": {20: (7, 6, 7), 22: (7, 8, 7)}}),
        ("no-overlap", {"OVERLAP": False}),
        ("no-scratch", {"SCRATCH_MAX_LOG": 0}),
        # the same plan, kernels built from edited sources (SOURCE_VARIANTS)
        ("swizzle-none", {"SWIZZLE_MAX_LOG": 0}),
        ("swizzle-all", {"SWIZZLE_MAX_LOG": 99}),
        ("swizzle-shifts", {}),
        ("unfused-last", {}),
        # v22's tile and store (contiguous, unfused), with v25's step order
        ("v22-layout", {"SWIZZLE_MAX_LOG": 0}),
        ("generic-redc", {}),
        ("c-mul", {}),
        ("folded-inv", {}),
        ("radix2-40-warps", {"RADIX4": False, "KERNEL": "ntt_pass_r2"}),
        ("radix4-32-warps", {}),
    ]
    unknown = (only or set()) - {name for name, _ in variants}
    if unknown:
        raise ValueError(f"unknown NTT variants {sorted(unknown)}; known: {[name for name, _ in variants]}")
    variants = [v for v in variants if only is None or v[0] in only]

    @contextmanager
    def use(name: str, values: dict[str, Any], inst: dict[str, Any]) -> Iterator[None]:
        """The knobs and source of one variant, with its own table cache (built on first use)."""
        edits = SOURCE_VARIANTS.get(name)
        try:
            for k, v in {**defaults, **values}.items():
                setattr(N, k, v)
            if name not in inst:
                inst[name] = N.CudaNtt(be.rt)
            be._ntt = inst[name]
            with source_variant(be, "ntt", edits) if edits else nullcontext():
                yield
        finally:
            for k, v in defaults.items():
                setattr(N, k, v)
            be._ntt = default_ntt

    default_ntt = be._ntt
    for log_n in log_sizes:
        x = random_fr_device(be, 1 << log_n, seed=log_n)
        w = C.root_of_unity(log_n)
        ref = be.ntt(x, w)
        profiled(be, f"ntt 2^{log_n}", partial(be.ntt, x, w))
        inst: dict[str, Any] = {}
        live: list[tuple[str, dict[str, Any], bool, float]] = []  # name, knobs, same, table MiB
        for name, values in variants:
            try:
                with use(name, values, inst):
                    same = bool((be.ntt(x, w) == ref).all())
                    live.append((name, values, same, N.full_table_bytes(log_n) / 2**20))
            except Exception as exc:
                log(f"ntt variant {name} 2^{log_n} failed: {exc}")
        # rounds of one timing per variant, so that a drift of the clock or of the device's
        # state during the run falls on every variant alike
        times: dict[str, list[dict[str, float]]] = {name: [] for name, *_ in live}
        for _ in range(TUNE_ROUNDS):
            for name, values, *_ in live:
                with use(name, values, inst):
                    times[name].append(timer(partial(be.ntt, x, w), reps=1, warmup=1))
        for name, _, same, mib in live:
            t = {k: float(np.median([r[k] for r in times[name]])) for k in ("ms", "wall_ms")} | {
                "reps": TUNE_ROUNDS
            }
            row("ntt_variant", f"2^{log_n}", t, variant=name, same_as_default=same, table_mib=mib)
            if not same:
                RESULTS["checks"][f"ntt variant {name} 2^{log_n}"] = {"ok": False, "detail": "differs"}
        del x, ref, inst


def time_msm(
    be: Any,
    timer: Timer,
    curve: Any,
    group: str,
    log_sizes: list[int],
    dlog_at: list[int],
    small: bool = False,
    tune: bool = True,
    precompute: bool = False,
    glv: bool = False,
    plan_variants: dict[int, list[tuple[int, int, int]]] | None = None,
    split: bool = False,
    split_sizes: list[int] | None = None,
    h_copies: tuple[int, ...] = (),
    h_windows: tuple[int, ...] = (),
    beside_staging: bool = False,
    h_chunk_caps: tuple[int, ...] = (),
    h_accumulate_l: tuple[int, ...] = (),
) -> None:
    wants_largest = split or h_copies or h_windows or beside_staging or h_chunk_caps or h_accumulate_l
    split_sizes = (split_sizes or log_sizes) if group == "g1" and wants_largest else []
    largest = max(log_sizes + split_sizes)
    bases, logs = make_bases(be, curve, group, largest, seed=11 if group == "g1" else 12)
    if split:  # first: its device-scalar rows need no host scalars drawn
        time_split(be, timer, bases, logs, split_sizes)
    if beside_staging:
        time_msm_beside_staging(be, timer, bases, max(split_sizes))
    if h_copies or h_windows or h_chunk_caps or h_accumulate_l:
        time_h_copies(be, timer, bases, max(split_sizes), h_copies, h_windows, h_chunk_caps, h_accumulate_l)
    for log_n in log_sizes:
        n = 1 << log_n
        if log_n in dlog_at:
            check(
                f"msm {group} 2^{log_n} vs discrete logs",
                partial(dlog_check, be, curve, bases, logs, n, log_n),
            )
        host = host_scalars(log_n)
        reps = 3 if log_n >= 24 else 5
        t = timer(partial(be.msm, bases, host), reps=reps)
        plan = make_plan(n, None, be.msm_chunks, host_scalars=True)
        row(f"msm_{group}", f"2^{log_n}", t, window=plan.c, chunks=len(plan.chunks))
    if group == "g1" and 24 in log_sizes:
        n = 1 << 24
        host = FR.random(n, np.random.default_rng(7))
        be.rt.pinned_staging = True
        t = timer(lambda: be.msm(bases, host), reps=3)
        be.rt.pinned_staging = False
        row("msm_g1_pinned_staging", "2^24", t, pin_seconds=round(be.rt.pin_seconds, 4))
        dev = be.to_device(host)
        t = timer(lambda: be.msm(bases, dev), reps=3)
        row("msm_g1_scalars_on_device", "2^24", t)
        mask = be.to_device(np.random.default_rng(8).random(n) < 0.5)
        t = timer(lambda: be.sum_bases(bases, mask), reps=3)
        row("sum_bases_g1_half", "2^24", t)
    if group == "g1" and not small and tune:
        msm_source_variants(be, timer, bases, [k for k in (20, 24) if k in log_sizes])
        tune_msm(be, timer, bases)
    if group == "g1" and plan_variants:
        tune_msm(be, timer, bases, profile_logs=(), variants=plan_variants)
    if group == "g1" and glv:
        time_glv(be, timer, bases, log_sizes)
    if group == "g1" and precompute:
        time_precomputed(be, timer, bases, log_sizes, small=small)
    be.release(bases)


#: (name, zeros, ones) of the split rows: porep-medium's aux as measured on the CPU (49.9% zeros,
#: 49.8% ones, 0.3% full; snap-medium's: 49.7 / 49.5 / 0.8), 30% full, and all full (the H query)
SPLIT_MIXES = (("witness", 0.499, 0.498), ("30% full", 0.35, 0.35), ("all full", 0.0, 0.0))


def mixed_device(be: Any, n: int, zeros: float, ones: float, seed: int) -> Any:
    """n device scalars: about `zeros` of them 0, `ones` of them 1, the rest uniform below r."""
    xp = be.xp
    x = random_fr_device(be, n, seed)
    if xp is np:
        u = np.random.default_rng(seed).random(n)
    else:
        u = xp.random.RandomState(seed + 1).random_sample(n)
    one = be.to_device(FR.one()[None])
    x = xp.where((u < zeros)[:, None], xp.zeros_like(one), x)
    return xp.ascontiguousarray(xp.where(((u >= zeros) & (u < zeros + ones))[:, None], one, x))


def time_split(be: Any, timer: Timer, bases: Any, logs: Any, log_sizes: list[int]) -> None:
    """G1 MSMs over device scalars (the prover's case) with the 0/1 split (msm_split, off
    by default until these rows are measured) beside the plain MSM of the same scalars (msm_split off), per mix of SPLIT_MIXES;
    every split result equal to the plain one, and the witness mix's to its discrete logs."""
    from cuzk.backends.cuda import msm as M

    was = be.msm_split
    for log_n in log_sizes:
        n = 1 << log_n
        reps = 3 if log_n >= 24 else 5
        for k, (name, zeros, ones) in enumerate(SPLIT_MIXES):
            key = f"msm split 2^{log_n} {name}"
            try:
                sc = mixed_device(be, n, zeros, ones, seed=500 + 10 * log_n + k)
                n_ones, n_fulls = (int(a.shape[0]) for a in M.scalar_classes(be.rt, sc))
                be.msm_split = False
                want = be.msm(bases, sc)
                t_plain = timer(partial(be.msm, bases, sc), reps=reps)
                be.msm_split = True
                got = be.msm(bases, sc)
                same = bool(G1.eq(got[None], want[None])[0])
                RESULTS["checks"][key] = {"ok": same, "detail": "" if same else "differs from the plain MSM"}
                if name == "witness":
                    s_dlog = fr_sum_device(be, be.fr_mul(sc, logs[:n]))
                    dl = G1.scalar_mul(G1.generator(), FR.from_ints([s_dlog]))
                    check(f"{key} vs discrete logs", partial(_assert_eq, got, dl[0]))
                t = timer(partial(be.msm, bases, sc), reps=reps)
                row(
                    "msm_g1_split",
                    f"2^{log_n}",
                    t,
                    mix=name,
                    ones=n_ones,
                    fulls=n_fulls,
                    plain_ms=round(t_plain["ms"], 3),
                    ratio_to_plain=round(t["ms"] / t_plain["ms"], 3),
                    same_as_plain=same,
                )
                if log_n == max(log_sizes) and name != "all full":
                    profiled(be, f"msm_g1 split 2^{log_n} {name}", partial(be.msm, bases, sc))
                del sc
            except Exception as exc:
                RESULTS["checks"][key] = {"ok": False, "detail": repr(exc)[-2000:]}
                log(f"{key}: {exc}")
            finally:
                be.msm_split = was
    n = 1 << max(log_sizes)
    host = np.ones((n, 4), dtype=np.uint64)  # pages touched: a witness-sized pageable array
    t = timer(partial(be.to_device, host), reps=3)
    row("upload_witness", f"2^{max(log_sizes)}", t, gb_per_s=round(host.nbytes / t["ms"] / 1e6, 2))


def _assert_eq(got: np.ndarray, want: np.ndarray) -> None:
    assert G1.eq(got[None], want[None])[0], "differs"


def time_h_copies(
    be: Any,
    timer: Timer,
    bases: Any,
    log_n: int,
    caps: tuple[int, ...],
    windows: tuple[int, ...] = (),
    chunk_caps: tuple[int, ...] = (),
    accumulate_l: tuple[int, ...] = (),
) -> None:
    """The H query's MSM (full device scalars) over a few precomputed copies of its bases, what
    fits beside the real set and one partition (docs/GPU_NOTES.md), against the plain MSM; the
    plain MSM in one chunk at other windows, which tells a copy's gain from its window's; and
    the plain MSM under other chunk caps (msm.chunk_cap: log2 points per chunk) and with other
    numbers of entries per accumulate thread (msm.ACCUMULATE_L: fewer partials to merge)."""
    from cuzk.backends.cuda import msm as M

    n = 1 << log_n
    sc = random_fr_device(be, n, seed=600 + log_n)
    try:
        want = be.msm(bases, sc)
        plain = timer(partial(be.msm, bases, sc), reps=3)
        sc_kept = sc  # the knobs' closure (the `del sc` below ends this function's own name)

        def knob(
            kind: str, label: str, apply: Callable[[], None], undo: Callable[[], None], **attrs: Any
        ) -> None:
            """The plain MSM of the same scalars with one module or backend setting changed."""
            scalars = sc_kept
            apply()
            try:
                same = bool(G1.eq(be.msm(bases, scalars)[None], want[None])[0])
                RESULTS["checks"][f"msm h {label} 2^{log_n}"] = {
                    "ok": same,
                    "detail": "" if same else "differs from the default plan's MSM",
                }
                t = timer(partial(be.msm, bases, scalars), reps=3)
                row(kind, f"2^{log_n}", t, **attrs, plain_ms=round(plain["ms"], 3),
                    ratio_to_plain=round(t["ms"] / plain["ms"], 3), same_as_plain=same)  # fmt: skip
            except DeviceMemoryError as exc:
                log(f"h {label} 2^{log_n}: {exc}")
            finally:
                undo()

        default_cap, default_l = be.msm_max_chunk, M.ACCUMULATE_L
        for cap in chunk_caps:
            knob("msm_g1_h_chunk_cap", f"chunk cap {cap}",
                 partial(setattr, be, "msm_max_chunk", 1 << cap), partial(setattr, be, "msm_max_chunk", default_cap),
                 chunk_cap=cap, chunks=-(-n // min(n, 1 << cap)), plain_cap=default_cap.bit_length() - 1)  # fmt: skip
        for L in accumulate_l:
            knob("msm_g1_h_accumulate_l", f"accumulate L {L}",
                 partial(setattr, M, "ACCUMULATE_L", L), partial(setattr, M, "ACCUMULATE_L", default_l),
                 accumulate_l=L, plain_l=default_l)  # fmt: skip
        for c in windows:  # a window given over device scalars plans one chunk (make_plan)
            same = bool(G1.eq(be.msm(bases, sc, window=c)[None], want[None])[0])
            RESULTS["checks"][f"msm h window {c} 2^{log_n}"] = {
                "ok": same,
                "detail": "" if same else "differs from the default plan's MSM",
            }
            t = timer(partial(be.msm, bases, sc, window=c), reps=3)
            row(
                "msm_g1_h_window",
                f"2^{log_n}",
                t,
                window=c,
                chunks=1,
                plain_ms=round(plain["ms"], 3),
                ratio_to_plain=round(t["ms"] / plain["ms"], 3),
                same_as_plain=same,
            )
        for cap in caps:
            handle = be.bases_from_device(bases.rows[:n], "g1")
            try:
                t0 = time.perf_counter()
                extra = be.precompute(handle, cap)
                be.synchronize()
                build = time.perf_counter() - t0
                same = bool(G1.eq(be.msm(handle, sc)[None], want[None])[0])
                RESULTS["checks"][f"msm h copies {cap} 2^{log_n}"] = {
                    "ok": same,
                    "detail": "" if same else "differs from the plain MSM",
                }
                t = timer(partial(be.msm, handle, sc), reps=3)
                row(
                    "msm_g1_h_copies",
                    f"2^{log_n}",
                    t,
                    copies=handle.copies,
                    window=handle.window,
                    extra_gib=round(extra / 2**30, 2),
                    build_s=round(build, 2),
                    plain_ms=round(plain["ms"], 3),
                    ratio_to_plain=round(t["ms"] / plain["ms"], 3),
                    same_as_plain=same,
                )
            except DeviceMemoryError as exc:
                log(f"h copies {cap} 2^{log_n}: {exc}")
            finally:
                be.release(handle)
    finally:
        del sc


def time_msm_beside_staging(be: Any, timer: Timer, bases: Any, log_n: int) -> None:
    """The H MSM (full device scalars) alone, then while another thread stages a witness-sized
    array again and again (Runtime.stage: the engine's other GPU worker, outside the device
    lock), from pageable memory and through the pinned slots (GPU_NOTES v33)."""
    n = 1 << log_n
    sc = random_fr_device(be, n, seed=700 + log_n)
    host = np.random.default_rng(701).integers(0, 1 << 62, size=(n, 4), dtype=np.uint64)
    rt, was = be.rt, be.rt.pinned_staging
    try:
        alone = timer(partial(be.msm, bases, sc), reps=3)
        row("msm_g1_beside_staging", f"2^{log_n}", alone, staging="none")
        for pinned in (False, True):
            rt.pinned_staging = pinned
            stop, staged = threading.Event(), [0]

            def stager(stop: threading.Event = stop, staged: list[int] = staged) -> None:
                while not stop.is_set():
                    rt.stage(host)
                    staged[0] += 1

            th = threading.Thread(target=stager, daemon=True)
            th.start()
            try:
                t = timer(partial(be.msm, bases, sc), reps=3)
            finally:
                stop.set()
                th.join()
            row("msm_g1_beside_staging", f"2^{log_n}", t, staging="pinned" if pinned else "pageable",
                stages=staged[0], alone_ms=round(alone["ms"], 3), ratio_to_alone=round(t["ms"] / alone["ms"], 3))  # fmt: skip
    finally:
        rt.pinned_staging = was
        del sc


#: GLV window variants per size besides the model's pick (GPU_NOTES v28)
GLV_WINDOWS: dict[int, tuple[int, ...]] = {24: (17, 20), 26: (21,), 27: (21,)}


def time_glv(be: Any, timer: Timer, bases: Any, log_sizes: list[int]) -> None:
    """G1 MSMs with GLV-split scalars (CudaBackend.msm_glv) beside the plain MSM of the same
    scalars, timed one after the other per size; each result equal to the plain one."""
    from cuzk.backends.cuda import msm as M

    for log_n in log_sizes:
        n = 1 << log_n
        host = host_scalars(log_n)
        reps = 3 if log_n >= 24 else 5
        be.msm_glv = False
        try:
            want = be.msm(bases, host)
            t_plain = timer(partial(be.msm, bases, host), reps=reps)
            plain_plan = make_plan(n, None, be.msm_chunks, host_scalars=True)
            row("msm_g1_glv_plain", f"2^{log_n}", t_plain, window=plain_plan.c, chunks=len(plain_plan.chunks))
            profiled(be, f"msm_g1 plain 2^{log_n}", partial(be.msm, bases, host))
            be.msm_glv = True
            resident = be.memory_info()["resident"] or 0
            t0 = time.perf_counter()
            be._glv_table(bases)
            be.synchronize()
            built = time.perf_counter() - t0
            extra = (be.memory_info()["resident"] or 0) - resident
            for window in (None, *GLV_WINDOWS.get(log_n, ())):
                got = be.msm(bases, host, window=window)
                same = bool(G1.eq(got[None], want[None])[0])
                RESULTS["checks"][f"msm glv 2^{log_n} window {window}"] = {
                    "ok": same,
                    "detail": "" if same else "differs from the plain MSM",
                }
                t = timer(partial(be.msm, bases, host, window=window), reps=reps)
                plan = M.make_plan(n, window, be.msm_chunks, True, stride=bases.n, halves=2)
                if window is None:
                    profiled(be, f"msm_g1 glv 2^{log_n}", partial(be.msm, bases, host))
                row(
                    "msm_g1_glv",
                    f"2^{log_n}",
                    t,
                    window=plan.c,
                    chunks=len(plan.chunks),
                    sets=plan.sets,
                    same_as_plain=same,
                    ratio_to_plain=round(t["ms"] / t_plain["ms"], 3),
                    table_build_s=round(built, 2),
                    extra_gib=round(extra / 2**30, 2),
                )
        except Exception as exc:
            RESULTS["checks"][f"msm glv 2^{log_n}"] = {"ok": False, "detail": repr(exc)[-2000:]}
            log(f"glv 2^{log_n}: {exc}")
        finally:
            be.msm_glv = False


#: (copies cap, window or None for the model's) per size: the precomputed-bases rows
PRECOMPUTE_PLANS: dict[int, list[tuple[int, int | None]]] = {
    16: [(FULL_COPIES, None)],
    18: [(FULL_COPIES, None)],
    20: [(FULL_COPIES, None)],
    22: [(FULL_COPIES, None)],
    24: [(4, None), (8, None), (FULL_COPIES, None), (FULL_COPIES, 18), (FULL_COPIES, 22)],
    26: [(8, None), (FULL_COPIES, None)],
}


#: copies of the porep-13m G1 queries for the precomputed prove rows (8 if full does not fit)
PROVE_PRECOMPUTE = (8, FULL_COPIES)


def time_precomputed(be: Any, timer: Timer, bases: Any, log_sizes: list[int], small: bool) -> None:
    """G1 MSMs over precomputed shifted copies of the bases (the engine's msm_precompute), each
    result compared with the plain MSM's, beside the plain time of the same run, with the
    table's memory cost and build time."""
    from cuzk.backends.cuda import msm as M

    plans = {k: [(FULL_COPIES, None)] for k in log_sizes} if small else PRECOMPUTE_PLANS
    for log_n in log_sizes:
        n = 1 << log_n
        host = FR.random(n, np.random.default_rng(400 + log_n))
        reps = 3 if log_n >= 24 else 5
        plain = timer(partial(be.msm, bases, host), reps=reps)
        ref = be.msm(bases, host)
        for cap, window in plans.get(log_n, []):
            handle = be.bases_from_device(bases.rows[:n], "g1")
            try:
                t0 = time.perf_counter()
                extra = be.precompute(handle, cap, window=window)
                be.synchronize()
                build = time.perf_counter() - t0
                same = bool(G1.eq(be.msm(handle, host)[None], ref[None])[0])
                t = timer(partial(be.msm, handle, host), reps=reps)
                plan = M.make_plan(n, handle.window, be.msm_chunks, True, copies=handle.copies, stride=n)
                row(
                    "msm_g1_precomputed",
                    f"2^{log_n}",
                    t,
                    copies=handle.copies,
                    window=handle.window,
                    chunks=len(plan.chunks),
                    extra_gib=round(extra / 2**30, 2),
                    build_s=round(build, 2),
                    plain_ms=round(plain["ms"], 3),
                    ratio_to_plain=round(t["ms"] / plain["ms"], 3),
                    same_as_plain=same,
                )
                if not same:
                    RESULTS["checks"][f"msm precomputed 2^{log_n} copies {cap}"] = {
                        "ok": False,
                        "detail": "differs from the plain MSM",
                    }
                if log_n == 24 and cap == FULL_COPIES and window is None:
                    profiled(be, "msm_g1 precomputed 2^24", partial(be.msm, handle, host))
            except DeviceMemoryError as exc:
                log(f"precomputed 2^{log_n} copies {cap}: {exc}")
            finally:
                be.release(handle)


def msm_source_variants(be: Any, timer: Timer, bases: Any, log_sizes: list[int]) -> None:
    """The G1 MSM with the curve kernels built from edited sources, same run, result compared."""
    for log_n in log_sizes:
        host = FR.random(1 << log_n, np.random.default_rng(200 + log_n))
        ref = be.msm(bases, host)
        with source_variant(be, "curve_g1", C_MUL):
            same = bool(G1.eq(be.msm(bases, host)[None], ref[None])[0])
            t = timer(partial(be.msm, bases, host), reps=3 if log_n >= 24 else 5)
        row("msm_g1 c-mul", f"2^{log_n}", t, same_as_default=same)
        if not same:
            RESULTS["checks"][f"msm c-mul 2^{log_n}"] = {"ok": False, "detail": "differs from the default"}


def time_ntt(be: Any, timer: Timer, log_sizes: list[int]) -> None:
    for log_n in log_sizes:
        n = 1 << log_n
        x = random_fr_device(be, n, seed=log_n)
        w = C.root_of_unity(log_n)
        # median of 11: a 2^20 row of 5 moved by 1-3% between runs of one tree (GPU_NOTES v22);
        # 20 warm-ups: after a pause the first ~10 calls of 2^20 took up to 1.7x (v27), the
        # host's path, not the kernels (sppark's harness, C++ with its GPU hot, needs none)
        t = timer(partial(be.ntt, x, w), reps=11, warmup=20)
        passes = len(plan_passes(log_n))
        floor = share(products_per_element(log_n) * n, "fr")
        row(
            "ntt",
            f"2^{log_n}",
            t,
            passes=passes,
            gb_per_s=round(2 * 32 * n * passes / (t["ms"] * 1e-3) / 1e9, 1),
            products_ms=None if floor is None else round(floor, 3),
            arith_share=None if floor is None else round(floor / t["ms"], 3),
        )
        if log_n in (20, 24):
            t = timer(partial(be.intt, x, w, coset=7), reps=5, warmup=1)
            row("intt_coset", f"2^{log_n}", t)
        if log_n == 27:

            def roundtrip(x: Any = x, w: int = w) -> None:
                back = be.intt(be.ntt(x, w), w)
                assert bool((back == x).all()), "intt(ntt(x)) != x at 2^27"

            check("ntt 2^27 roundtrip", roundtrip)
        del x


def time_mul_rate(be: Any, timer: Timer, small: bool = False) -> None:
    threads, iters = (64, 4) if small else (132 * 2048, 256)
    for field, kernel, words in (("fq", "fq_mul_rate", 12), ("fr", "fr_mul_rate", 8)):
        if be.xp is not np:  # the product's source A/Bs (GPU_NOTES v14, v16) in the same run
            for name, edits in SOURCE_VARIANTS.items():
                if (field == "fr" or name == "c-mul") and edited_source("fr", edits) is not None:
                    with source_variant(be, "fr", edits):
                        _rate(be, timer, threads, iters, field, kernel, words, f"{field} {name}")
        _rate(be, timer, threads, iters, field, kernel, words, field)


def _rate(
    be: Any, timer: Timer, threads: int, iters: int, field: str, kernel: str, words: int, label: str
) -> None:
    """One product-rate row: `iters` rounds of 4 independent products on each of `threads`."""
    src = random_fr_device(be, threads * 4 * words // 8, seed=3).reshape(-1)
    out = be.xp.empty(threads * words // 2 + 8, dtype=np.uint64)

    def run() -> None:
        with be.rt.guard(kernel):
            be.rt.launch("fr", kernel, threads, (np.uint64(threads), np.int32(iters), src, out), block=128)

    t = timer(run, reps=5, warmup=1)
    rate = threads * iters * 4 / (t["ms"] * 1e-3)
    if label == field:
        RESULTS["info"].setdefault("product_rate", {})[field] = rate
    row(
        f"{field}_mul_rate" if label == field else f"{label} mul_rate",
        f"{threads} thr x {iters}",
        t,
        gmul_per_s=round(rate / 1e9, 2),
        peak_fraction=round(rate * IMADS[field] / IMAD_PEAK, 3),
    )


def time_spmv(be: Any, timer: Timer, log_rows: int = 20) -> None:
    """A porep-medium-shaped system (2^20 constraints; nnz per row as the real PoRep's A, B, C,
    mostly +-1 coefficients), synthetic so that the row needs no circuit synthesis."""
    import cuda_checks as K

    rng = np.random.default_rng(21)
    rows = cols = 1 << log_rows
    w = be.to_device(FR.random(cols, rng))
    for name, per_row in (("A", 2.4), ("B", 1.0), ("C", 2.2)):
        m = K.random_csr(rng, rows, cols, per_row)
        be.spmv(m, w)
        t = timer(partial(be.spmv, m, w), reps=5)
        row(f"spmv_{name}", f"2^{log_rows} rows, {m.nnz / rows:.1f} nnz/row", t)


def time_prove(
    be: Any, names: list[str], g2_on_cpu: bool = False, reps: int = 2, precompute: tuple[int, ...] = ()
) -> None:
    """Per-phase GPU prove times through the job layer (LocalProver): parameters from the cache
    (generated on this backend the first time), SRS resident, one warm-up proof, then `reps`
    timed proofs, each verified by the prover; then the same with the G1 queries precomputed to
    each of `precompute` copies. Synthesis includes computing the witness."""
    from cuzk.backends.cpu import CpuBackend
    from cuzk.engine import LocalProver, ProofRequest
    from cuzk.instrument import Timeline

    prover = LocalProver(be, g2_backend=CpuBackend() if g2_on_cpu else None, progress=log)
    for name in names:
        request = ProofRequest(circuit=name, seed=1)
        load = Timeline(name)
        key = prover.resident(request, timeline=load)
        spans = {k: round(v, 1) for k, v in load.totals().items() if k in ("topology", "load_params")}
        log(f"{name}: {key.cs.num_constraints} constraints, loaded in {spans} s")
        prover.prove(request)  # warm-up (compiles, builds twiddles)
        queries = (key.h, key.l, key.a, key.b_g1)
        for copies in (1, *precompute):
            extra = 0
            if copies > 1:
                t0 = time.perf_counter()
                try:
                    extra = sum(be.precompute(q, copies) for q in queries)
                except DeviceMemoryError as exc:
                    log(f"{name}: precompute {copies}: {exc}")
                    for q in queries:
                        be.precompute(q, 1)
                    continue
                be.synchronize()
                log(f"{name}: {copies} copies, {extra / 2**30:.1f} GiB in {time.perf_counter() - t0:.1f} s")
            totals: list[dict[str, float]] = []
            for _ in range(reps):
                tl = Timeline(name)
                be.synchronize()
                t0 = time.perf_counter()
                res = prover.prove(request, timeline=tl)
                wall = time.perf_counter() - t0
                assert len(res.proofs) == 1
                phases = {k: 1e3 * v for k, v in tl.totals().items()}
                phases["total"] = 1e3 * wall
                totals.append(phases)
            med = {k: float(np.median([t[k] for t in totals])) for k in totals[0]}
            gpu_part = sum(v for k, v in med.items() if k in GPU_PHASES)
            row(
                "prove" if copies == 1 else "prove_precomputed",
                name,
                {"ms": med["total"], "wall_ms": med["total"]},
                constraints=key.cs.num_constraints,
                gpu_part_ms=round(gpu_part, 1),
                **{k: round(v, 1) for k, v in med.items() if k != "total"},
                g2=("cpu" if g2_on_cpu else "gpu"),
                params_s=round(load.totals()["load_params"], 1),
                copies=[q.copies for q in queries],
                extra_gib=round(extra / 2**30, 2),
            )
        for q in queries:
            be.precompute(q, 1)


def _cli(*args: Any) -> tuple[float, str]:
    """Wall seconds and stderr of one `cuzk` process (a cold start: imports, key load, compiles)."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "cuzk.cli.main", *map(str, args)], capture_output=True, text=True, check=False
    )
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(
            f"cuzk {' '.join(map(str, args))} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
        )
    return dt, proc.stderr


def time_circom(be: Any, directory: Path, reps: int = 5, cold: int = 3) -> None:
    """The zkey prover on a circom circuit; see the module docstring (step 4)."""
    from cuzk.backends.cpu import CpuBackend
    from cuzk.engine import LocalProver, ProofRequest
    from cuzk.groth16.prover import synthesize
    from cuzk.groth16.verifier import verify
    from cuzk.instrument import Timeline
    from cuzk.interop.wtns import read_wtns

    work = Path(os.environ.get("TMPDIR", "/tmp")) / "cuzk-circom"
    work.mkdir(parents=True, exist_ok=True)
    r1cs, wtns = directory / "circuit.r1cs", directory / "circuit.wtns"
    zkey, vk = work / "circuit.zkey", work / "verification_key.json"
    t_setup, err = _cli("groth16", "setup", "--backend", be.name, "--timing", r1cs, zkey)
    log(f"circom setup on {be.name}: {t_setup:.1f} s\n{err[-2500:]}")
    _cli("groth16", "export-vk", zkey, vk)

    # Warm proofs through the job layer: the key resident, the .wtns read inside synthesis.
    request = ProofRequest(zkey=zkey, witnesses=[wtns])
    prover = LocalProver(be)
    load = Timeline("circom-load")
    pk = prover.resident(request, timeline=load)
    t_load = load.totals()["load_key"]
    witness = read_wtns(wtns)
    size = f"{pk.num_vars} signals, domain 2^{pk.zkey.log_n}"

    def h_matches_cpu() -> None:
        cpu = CpuBackend()
        cpk = LocalProver(cpu).resident(request)
        want = cpu.to_host(cpk.qap.h(cpu, *synthesize(cpk, [witness]).abc[0]))
        got = be.to_host(pk.qap.h(be, *synthesize(pk, [witness]).abc[0]))
        assert np.array_equal(np.asarray(got), np.asarray(want)), "H at the odd roots differs from the CPU"

    check("circom_h_vs_cpu", h_matches_cpu)

    warm = prover.prove(request)  # warm-up; verified inside
    (proof,), (public,) = warm.proofs, warm.public_inputs

    def rejects_tampering() -> None:
        import dataclasses

        vkey = pk.vk
        assert verify(vkey, public, proof)
        assert not verify(vkey, [*public[:-1], (public[-1] + 1) % C.R], proof), "wrong public input accepted"
        assert not verify(vkey, public, dataclasses.replace(proof, a=proof.c, c=proof.a)), "tampered proof"

    check("circom_rejects_tampering", rejects_tampering)

    totals: list[dict[str, float]] = []
    for _ in range(reps):
        tl = Timeline("circom")
        be.synchronize()
        t0 = time.perf_counter()
        prover.prove(request, timeline=tl)
        wall = time.perf_counter() - t0
        phases = {k: 1e3 * v for k, v in tl.totals().items()}
        phases["total"] = 1e3 * wall
        totals.append(phases)
    med = {k: float(np.median([t[k] for t in totals])) for k in totals[0]}
    gpu_part = sum(v for k, v in med.items() if k in GPU_PHASES)

    proof_json, public_json = work / "proof.json", work / "public.json"
    cold_gpu = [
        _cli("groth16", "prove", "--backend", be.name, zkey, wtns, proof_json, public_json)[0]
        for _ in range(cold)
    ]
    _cli("groth16", "verify", vk, public_json, proof_json)  # raises unless it prints OK (exit 0)
    cold_cpu, _ = _cli("groth16", "prove", "--backend", "cpu", zkey, wtns, proof_json, public_json)
    _cli("groth16", "verify", vk, public_json, proof_json)
    row(
        "prove_circom",
        size,
        {"ms": med["total"], "wall_ms": med["total"]},
        gpu_part_ms=round(gpu_part, 1),
        **{k: round(v, 1) for k, v in med.items() if k != "total"},
        setup_cli_s=round(t_setup, 1),
        key_load_s=round(t_load, 2),
        cli_cuda_s=round(float(np.median(cold_gpu)), 2),
        cli_cpu_s=round(cold_cpu, 2),
        reps=reps,
    )


def print_table() -> None:
    print("\n| kernel | size | median ms (CUDA events) | wall ms | notes |")
    print("|---|---|---|---|---|")
    for r in RESULTS["timings"]:
        notes = ", ".join(
            f"{k}={v}" for k, v in r.items() if k not in {"kind", "size", "ms", "wall_ms", "reps"}
        )
        print(f"| {r['kind']} | {r['size']} | {r['ms']:.3f} | {r.get('wall_ms', 0):.1f} | {notes} |")
    bad = [k for k, v in RESULTS["checks"].items() if not v["ok"]]
    print(f"\nchecks: {len(RESULTS['checks']) - len(bad)} ok, {len(bad)} failed {bad or ''}")
    print("info:", json.dumps(RESULTS["info"], default=str))


def parse_plan_variants(text: str) -> dict[int, list[tuple[int, int, int]]]:
    """'27:19x8,21x8;26:20x4' -> {27: [(19, 8, L), (21, 8, L)], 26: [(20, 4, L)]} (L the default)."""
    from cuzk.backends.cuda import msm as M

    out: dict[int, list[tuple[int, int, int]]] = {}
    for part in filter(None, text.split(";")):
        log_n, plans = part.split(":")
        out[int(log_n)] = [
            (int(c), int(k), M.ACCUMULATE_L) for c, k in (p.split("x") for p in plans.split(",") if p)
        ]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run on the device)")
    ap.add_argument("--emulate", action="store_true", help="tiny sizes on the host emulator (no GPU)")
    ap.add_argument("--prove", default="", help="comma list of circuits for per-phase prove rows")
    ap.add_argument("--reps", type=int, default=2, help="timed proofs per --prove circuit (median)")
    ap.add_argument("--circom", type=Path, help="directory of a circom circuit.r1cs and circuit.wtns")
    ap.add_argument("--ntt-variants", default="", help="comma list: time only these NTT variants in tune")
    ap.add_argument(
        "--skip",
        default="",
        help="comma list of sections to skip: checks,rate,ntt,msm1,msm2,spmv,tune,msmtune (the G1 plan and source variants),precompute (G1 MSMs over precomputed bases),glv (G1 MSMs with GLV-split scalars),split (G1 MSMs over 0/1-heavy device scalars, split and plain)",
    )
    ap.add_argument(
        "--msm-variants",
        default="",
        help="G1 plan rows: LOG:WINDOWxCHUNKS,... separated by ';' (e.g. 27:19x8,21x8), beside the defaults",
    )
    ap.add_argument(
        "--split-sizes",
        default="",
        help="comma list of log2 sizes of the split rows and of --h-copies (default: the G1 sizes)",
    )
    ap.add_argument(
        "--h-copies",
        default="",
        help="comma list of precomputed-copy caps for H-query rows at the largest G1 size (device scalars)",
    )
    ap.add_argument(
        "--beside-staging",
        action="store_true",
        help="the H-query MSM at the largest split size alone and beside a staging thread, pageable and pinned",
    )
    ap.add_argument(
        "--h-chunk-caps",
        default="",
        help="comma list of msm.chunk_cap values (log2 points per chunk): the H-query MSM under each, beside the default",
    )
    ap.add_argument(
        "--h-accumulate-l",
        default="",
        help="comma list of entries per accumulate thread: the H-query MSM with each, beside the default 32",
    )
    ap.add_argument(
        "--h-windows",
        default="",
        help="comma list of windows: the H-query MSM without copies, one chunk, beside the default plan",
    )
    ap.add_argument(
        "--g1-sizes", default="", help="comma list of log2 sizes of the G1 MSM rows (default 16..26)"
    )
    ap.add_argument(
        "--ntt-sizes", default="", help="comma list of log2 sizes of the ntt section (default 16..27)"
    )
    args = ap.parse_args()
    out = Path(args.out)
    skip = set(filter(None, args.skip.split(",")))
    from cuzk.backends.cuda import CudaBackend

    # CUZK_COMMIT first: the device's copy of the tree may carry a .git of an older commit
    commit = os.environ.get("CUZK_COMMIT", "")
    if not commit:
        try:
            commit = subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=False
            ).stdout.strip()
        except OSError:
            commit = ""
    RESULTS["info"].update(
        date=time.strftime("%Y-%m-%d %H:%M"),
        commit=commit or "?",
        python=platform.python_version(),
        argv=sys.argv[1:],
    )
    if args.emulate:
        from cuzk.backends.cuda._emulator import EmulatorRuntime

        be = CudaBackend(runtime=EmulatorRuntime())
        ntt_sizes, g1_sizes, g1_dlog, g2_sizes = [10, 12], [10, 11], [10], [8]
    else:
        import cupy

        from cuzk.backends.cuda._runtime import CupyRuntime

        RESULTS["info"]["cupy"] = cupy.__version__
        be = CudaBackend()
        if args.quick:
            ntt_sizes, g1_sizes, g1_dlog, g2_sizes = [16, 20, 24], [16, 20], [20], [16]
        else:
            ntt_sizes = [16, 18, 20, 22, 24, 26, 27]
            g1_sizes, g1_dlog, g2_sizes = [16, 18, 20, 22, 24, 26], [20, 24], [16, 18, 20, 22, 24]
        t0 = time.perf_counter()
        whole = "checks" not in skip or bool(args.prove or args.circom)  # these use both groups
        modules = ["fr", "ntt"] + [
            m for m, sec in (("curve_g1", "msm1"), ("curve_g2", "msm2")) if whole or sec not in skip
        ]
        assert isinstance(be.rt, CupyRuntime)
        comp = be.rt.compile_all(modules)
        RESULTS["info"]["compile_seconds"] = {k: round(v, 1) for k, v in comp.items()}
        log(f"compiled in {time.perf_counter() - t0:.1f} s: {comp}")
    if args.g1_sizes:
        g1_sizes = [int(v) for v in args.g1_sizes.split(",")]
        g1_dlog = [k for k in g1_dlog if k in g1_sizes]
    if args.ntt_sizes:
        ntt_sizes = [int(v) for v in args.ntt_sizes.split(",")]
    RESULTS["info"].update(be.describe())
    log(f"device: {RESULTS['info']}")
    save(out)
    timer = Timer(be)
    rng = np.random.default_rng(int(time.time()))
    sections = [
        ("checks", lambda: kernel_checks(be, rng, small=args.emulate)),
        ("rate", lambda: time_mul_rate(be, timer, small=args.emulate)),
        ("ntt", lambda: time_ntt(be, timer, ntt_sizes)),
        (
            "msm1",
            lambda: time_msm(
                be,
                timer,
                G1,
                "g1",
                g1_sizes,
                g1_dlog,
                small=args.emulate or args.quick,
                tune="msmtune" not in skip,
                precompute="precompute" not in skip,
                glv="glv" not in skip,
                plan_variants=parse_plan_variants(args.msm_variants),
                split="split" not in skip,
                split_sizes=[int(v) for v in args.split_sizes.split(",") if v],
                h_copies=tuple(int(v) for v in args.h_copies.split(",") if v),
                h_windows=tuple(int(v) for v in args.h_windows.split(",") if v),
                beside_staging=args.beside_staging,
                h_chunk_caps=tuple(int(v) for v in args.h_chunk_caps.split(",") if v),
                h_accumulate_l=tuple(int(v) for v in args.h_accumulate_l.split(",") if v),
            ),
        ),
        ("msm2", lambda: time_msm(be, timer, G2, "g2", g2_sizes, [g2_sizes[0]], small=True)),
        ("spmv", lambda: time_spmv(be, timer, log_rows=10 if args.emulate else 20)),
        (
            "tune",
            lambda: (
                None
                if args.emulate or args.quick
                else tune_ntt(
                    be, timer, only=set(args.ntt_variants.split(",")) if args.ntt_variants else None
                )
            ),
        ),
        ("circom", lambda: time_circom(be, args.circom) if args.circom else None),
        (
            "prove",
            lambda: (
                time_prove(
                    be,
                    names,
                    reps=args.reps,
                    precompute=() if "precompute" in skip else PROVE_PRECOMPUTE,
                )
                if (names := [c for c in args.prove.split(",") if c])
                else None
            ),
        ),
    ]
    for name, fn in sections:
        if name in skip:
            continue
        try:
            fn()
        except Exception as exc:
            detail = "".join(traceback.format_exception(exc))[-3000:]
            RESULTS["checks"][f"section {name}"] = {"ok": False, "detail": detail}
            log(f"section {name} FAILED:\n{detail}")
        be.synchronize()
        save(out)
    print_table()
    save(out)
    return 0 if all(v["ok"] for v in RESULTS["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
