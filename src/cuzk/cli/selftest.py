"""`cuzk selftest`: every algebra check on fresh random data, as one table.

Each check compares a batch operation with an independent computation: Python
integers for the fields, another formula or py_arkworks_bls12381 for the
groups, pairings-free definitions for the subgroup ([r] P == O), arkworks'
zcash bytes for the encodings, per-point scalar multiplication for the MSM, a
Horner evaluation for the NTT, Python ints for SpMV. Backend operations (MSM,
NTT, SpMV, fixed-base, Fr vectors) run on the chosen backend; the host algebra
they rest on is checked too. Exit code 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import secrets
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Self, TypeVar

import numpy as np

from cuzk.cli.output import (
    add_backend_option,
    console,
    err_console,
    nonnegative_int,
    positive_int,
    progress_printer,
)

DEFAULT_SIZE = 2048
#: Kernel modules whose numba cache files tell whether a first run will compile.
_KERNEL_MODULES = (
    "cuzk/algebra/_field_kernels.py",
    "cuzk/algebra/_curve_kernels.py",
    "cuzk/algebra/encoding.py",
    "cuzk/backends/cpu/msm.py",
    "cuzk/backends/cpu/ntt.py",
    "cuzk/backends/cpu/spmv.py",
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("selftest", help="run every algebra check on random data and print a table")
    add_backend_option(p)
    p.add_argument(
        "--size",
        type=positive_int,
        default=DEFAULT_SIZE,
        help=f"elements per check (default {DEFAULT_SIZE}); the NTT uses the power of two >= 8x this",
    )
    p.add_argument(
        "--seed", type=nonnegative_int, default=None, help="seed the random data (default: fresh each run)"
    )
    p.set_defaults(func=cmd_selftest)


class _Summable(Protocol):
    """A py_arkworks point (G1Point, G2Point): added only to one of its own group."""

    def __add__(self, rhs: Self, /) -> Self: ...


_P = TypeVar("_P", bound=_Summable)


def _pairwise_sums(a: Sequence[_P], b: Sequence[_P]) -> list[_P]:
    return [u + v for u, v in zip(a, b, strict=True)]


class CheckFailed(AssertionError):
    """A computed value differs from its reference."""


def expect(ok: Any, what: str) -> None:
    if not bool(np.all(ok)):
        raise CheckFailed(what)


@dataclass
class Outcome:
    name: str
    size: int
    passed: bool
    seconds: float
    detail: str = ""


class Checks:
    """The checks, sharing one backend, one Generator and one size."""

    def __init__(self, backend: Any, rng: np.random.Generator, size: int) -> None:
        self.backend = backend
        self.rng = rng
        self.n = size

    def plan(self) -> list[tuple[str, int, Callable[[int], None]]]:
        n = self.n
        small = max(8, min(n, 256))  # checks with a per-element Python or arkworks reference
        return [
            ("Fr arithmetic vs ints", n, self.fr_arithmetic),
            ("Fq arithmetic vs ints", n, self.fq_arithmetic),
            ("Fq2 arithmetic vs ints", n, self.fq2_arithmetic),
            ("G1 group law", small, self.group_law_g1),
            ("G2 group law", small, self.group_law_g2),
            ("G1 subgroup check", small, self.subgroup_g1),
            ("G2 subgroup check", small, self.subgroup_g2),
            ("G1 encodings round trip", n, self.encodings_g1),
            ("G2 encodings round trip", n, self.encodings_g2),
            ("field bytes round trip", n, self.field_bytes),
            ("Fr vector ops (backend)", n, self.fr_vectors),
            ("MSM G1 vs naive", n, self.msm_g1),
            ("MSM G2 vs naive", max(8, n // 4), self.msm_g2),
            ("fixed-base mul G1", n, self.fixed_base),
            ("NTT vs naive (gen 7, 5)", 32, self.ntt_naive),
            ("NTT round trip", _pow2_at_least(8 * n), self.ntt_round_trip),
            ("SpMV vs ints", n, self.spmv),
        ]

    # --- fields ------------------------------------------------------------------------------
    def _prime_field(self, F: Any, n: int) -> None:
        p = F.modulus
        a, b = F.random(n, self.rng), F.random(n, self.rng)
        a[0], b[1] = 0, 0
        x, y = F.to_ints(a), F.to_ints(b)
        expect(F.to_ints(F.add(a, b)) == [(u + v) % p for u, v in zip(x, y, strict=True)], "add")
        expect(F.to_ints(F.sub(a, b)) == [(u - v) % p for u, v in zip(x, y, strict=True)], "sub")
        expect(F.to_ints(F.mul(a, b)) == [u * v % p for u, v in zip(x, y, strict=True)], "mul")
        expect(F.to_ints(F.inv(a)) == [pow(u, -1, p) if u else 0 for u in x], "batch inverse")
        e = int(self.rng.integers(1, 1 << 62)) << 190 | 12345
        expect(F.to_ints(F.pow(a[:64], e)) == [pow(u, e, p) for u in x[:64]], "pow")

    def fr_arithmetic(self, n: int) -> None:
        from cuzk.algebra import FR

        self._prime_field(FR, n)

    def fq_arithmetic(self, n: int) -> None:
        from cuzk.algebra import FQ

        self._prime_field(FQ, n)

    def fq2_arithmetic(self, n: int) -> None:
        from cuzk.algebra import FQ2

        p = FQ2.modulus
        a, b = FQ2.random(n, self.rng), FQ2.random(n, self.rng)
        x, y = FQ2.to_ints(a), FQ2.to_ints(b)
        want = [
            ((u0 * v0 - u1 * v1) % p, (u0 * v1 + u1 * v0) % p)
            for (u0, u1), (v0, v1) in zip(x, y, strict=True)
        ]
        expect(FQ2.to_ints(FQ2.mul(a, b)) == want, "mul")
        expect(FQ2.eq(FQ2.square(a), FQ2.mul(a, a)), "square")
        expect(FQ2.eq(FQ2.mul(a, FQ2.inv(a)), FQ2.ones(n)), "inverse")

    # --- groups ---------------------------------------------------------------------------------
    def _group_law(self, curve: Any, n: int) -> None:
        from cuzk.algebra import FR
        from cuzk.algebra import encoding as E

        to_ark = E.to_arkworks_g1 if curve.name == "G1" else E.to_arkworks_g2
        p, q = curve.random(n, self.rng), curve.random(n, self.rng)
        q[: n // 8] = p[: n // 8]  # doubling through add
        q[n // 8 : n // 4] = curve.neg(p[n // 8 : n // 4])  # P + (-P)
        p[-1] = 0
        jp, jq = curve.to_jacobian(p), curve.to_jacobian(q)
        s = curve.to_affine(curve.add(jp, jq))
        expect(np.array_equal(curve.to_affine(curve.add_mixed(jp, q)), s), "mixed add == Jacobian add")
        expect(np.array_equal(curve.add_affine(p, q), s), "batch affine add == Jacobian add")
        expect(np.array_equal(curve.to_affine(curve.double(jp)), curve.add_affine(p, p)), "double == P + P")
        expect(curve.is_identity(s[n // 8 : n // 4]), "P + (-P) == O")
        k = min(n, 32)
        ours = to_ark(s[:k])
        theirs = _pairwise_sums(to_ark(p[:k]), to_ark(q[:k]))
        expect(ours == theirs, "sums agree with py_arkworks")
        a, b = FR.random(k, self.rng), FR.random(k, self.rng)
        lhs = curve.add(curve.scalar_mul(p[:k], a), curve.scalar_mul(p[:k], b))
        expect(curve.eq(lhs, curve.scalar_mul(p[:k], FR.add(a, b))), "[a]P + [b]P == [a+b]P")
        minus = curve.to_affine(curve.scalar_mul(p[:k], FR.neg(FR.ones(k))))
        expect(np.array_equal(minus, curve.neg(p[:k])), "[r-1]P == -P")
        expect(curve.is_on_curve(s), "results on the curve")

    def group_law_g1(self, n: int) -> None:
        from cuzk.algebra import G1

        self._group_law(G1, n)

    def group_law_g2(self, n: int) -> None:
        from cuzk.algebra import G2

        self._group_law(G2, n)

    def _off_subgroup(self, curve: Any, n: int) -> np.ndarray:
        """Curve points from random x (decompressed), almost surely outside the subgroup.

        About half of all x have a point; draw batches until n are found.
        """
        from cuzk.algebra.encoding import k_decompress

        F = curve.field
        found: list[np.ndarray] = []
        total = 0
        for _ in range(64):
            xs = F.random(2 * n + 16, self.rng)
            out = np.empty((xs.shape[0], 2 * F.width), dtype=np.uint64)
            ok = np.empty(xs.shape[0], dtype=np.bool_)
            largest = np.zeros(xs.shape[0], dtype=np.bool_)
            k_decompress(
                curve.tag, xs.reshape(xs.shape[0], F.width), largest, ~largest, out, ok, 0, xs.shape[0]
            )
            found.append(out[ok])
            total += int(ok.sum())
            if total >= n:
                break
        pts = np.concatenate(found)[:n].reshape(-1, *curve.affine_shape)
        expect(pts.shape[0] == n, "random x values give curve points about half the time")
        return pts

    def _subgroup(self, curve: Any, n: int) -> None:
        from cuzk.algebra import FR
        from cuzk.algebra import encoding as E

        to_ark = E.to_arkworks_g1 if curve.name == "G1" else E.to_arkworks_g2
        members = curve.random(n, self.rng)
        expect(curve.in_subgroup(members), "multiples of the generator pass")
        outside = self._off_subgroup(curve, n)
        expect(curve.is_on_curve(outside), "random-x points are on the curve")
        inside = curve.in_subgroup(outside)
        k = min(n, 16)
        # The definition, [r] P == O, as [r-1] P + P in Jacobian arithmetic.
        r_p = curve.add_mixed(curve.scalar_mul(outside[:k], FR.neg(FR.ones(k))), outside[:k])
        expect(inside[:k] == curve.is_identity(curve.to_affine(r_p)), "agrees with [r]P == O")
        arks = [p.is_in_subgroup() for p in to_ark(outside[:k])]
        expect(inside[:k].tolist() == arks, "agrees with py_arkworks' is_in_subgroup")
        expect(~inside, "random curve points are rejected")

    def subgroup_g1(self, n: int) -> None:
        from cuzk.algebra import G1

        self._subgroup(G1, n)

    def subgroup_g2(self, n: int) -> None:
        from cuzk.algebra import G2

        self._subgroup(G2, n)

    # --- encodings -------------------------------------------------------------------------------------
    def _encodings(self, curve: Any, n: int) -> None:
        from cuzk.algebra import encoding as E
        from cuzk.errors import InvalidFlagsError

        to_ark = E.to_arkworks_g1 if curve.name == "G1" else E.to_arkworks_g2
        pts = curve.random(n, self.rng)
        pts[n // 2] = 0
        for compressed in (True, False):
            raw = E.encode_points(curve, pts, compressed=compressed)
            back = E.decode_points(curve, raw.tobytes(), compressed=compressed)
            expect(np.array_equal(back, pts), f"{'compressed' if compressed else 'uncompressed'} round trip")
        k = min(n, 64)
        comp = E.encode_points(curve, pts[:k], compressed=True)
        expect(
            [bytes(r) for r in comp] == [p.to_compressed_bytes() for p in to_ark(pts[:k])],
            "bytes == arkworks",
        )
        comp[k // 3, 0] &= 0x7F
        try:
            E.decode_points(curve, comp, compressed=True)
        except InvalidFlagsError as exc:
            expect(f"point {k // 3}" in str(exc), "the error names the bad point")
        else:
            raise CheckFailed("a missing compression flag was accepted")

    def encodings_g1(self, n: int) -> None:
        from cuzk.algebra import G1

        self._encodings(G1, n)

    def encodings_g2(self, n: int) -> None:
        from cuzk.algebra import G2

        self._encodings(G2, n)

    def field_bytes(self, n: int) -> None:
        from cuzk.algebra import FQ, FR
        from cuzk.algebra import encoding as E

        for F, enc, dec, nb in ((FR, E.encode_fr, E.decode_fr, 32), (FQ, E.encode_fq, E.decode_fq, 48)):
            a = F.random(n, self.rng)
            raw = enc(a)
            expect(raw.tobytes() == b"".join(v.to_bytes(nb, "big") for v in F.to_ints(a)), f"{F.name} bytes")
            expect(np.array_equal(dec(raw), a), f"{F.name} round trip")

    # --- backend ----------------------------------------------------------------------------------------
    def fr_vectors(self, n: int) -> None:
        from cuzk.algebra import FR

        be = self.backend
        a, b, c = (FR.random(n, self.rng) for _ in range(3))
        s = int(self.rng.integers(2, 1 << 62))
        da, db, dc = be.to_device(a), be.to_device(b), be.to_device(c)
        r = FR.modulus
        x, y, z = FR.to_ints(a), FR.to_ints(b), FR.to_ints(c)
        expect(
            FR.to_ints(be.to_host(be.fr_mul(da, db))) == [u * v % r for u, v in zip(x, y, strict=True)], "mul"
        )
        expect(np.array_equal(be.to_host(be.fr_add(da, db)), FR.add(a, b)), "add")
        expect(np.array_equal(be.to_host(be.fr_sub(da, db)), FR.sub(a, b)), "sub")
        want = [(u * v - w) * s % r for u, v, w in zip(x, y, z, strict=True)]
        expect(FR.to_ints(be.to_host(be.fr_mul_sub_scale(da, db, dc, s))) == want, "mul_sub_scale")

    def _msm(self, curve: Any, group: str, n: int) -> None:
        import py_arkworks_bls12381 as ark

        from cuzk.algebra import FR
        from cuzk.algebra import encoding as E

        be = self.backend
        bases = curve.random(n, self.rng)
        bases[3] = bases[2]
        bases[5] = 0
        scalars = FR.random(n, self.rng)
        scalars[: n // 4] = FR.ones(n // 4)  # the 0/1 fast path
        scalars[n // 4 : n // 4 + 3] = FR.zeros(3)
        scalars[-1] = FR.neg(FR.ones(1))[0]
        got = be.msm(be.load_bases(bases, group), be.to_device(scalars))
        naive = curve.sum_jacobian(curve.scalar_mul(bases, scalars))
        expect(curve.eq(np.asarray(got)[None], naive[None]), "MSM == sum of [s_i] P_i")
        k = min(n, 1024)
        to_ark = E.to_arkworks_g1 if group == "g1" else E.to_arkworks_g2
        part = be.msm(be.load_bases(bases[:k], group), be.to_device(scalars[:k]))
        ark_scalars = E.to_arkworks_scalars(scalars[:k])
        theirs = (
            ark.G1Point.multiexp_unchecked(E.to_arkworks_g1(bases[:k]), ark_scalars)
            if group == "g1"
            else ark.G2Point.multiexp_unchecked(E.to_arkworks_g2(bases[:k]), ark_scalars)
        )
        expect(to_ark(curve.to_affine(np.asarray(part)[None]))[0] == theirs, "MSM == py_arkworks multiexp")

    def msm_g1(self, n: int) -> None:
        from cuzk.algebra import G1

        self._msm(G1, "g1", n)

    def msm_g2(self, n: int) -> None:
        from cuzk.algebra import G2

        self._msm(G2, "g2", n)

    def fixed_base(self, n: int) -> None:
        from cuzk.algebra import FR, G1

        base = G1.random(1, self.rng)
        s = FR.random(n, self.rng)
        got = np.asarray(self.backend.fixed_base_mul(base, self.backend.to_device(s), "g1"))
        want = G1.to_affine(G1.scalar_mul(np.repeat(base, n, axis=0), s))
        expect(np.array_equal(got, want), "fixed-base == per-point scalar mul")

    def ntt_naive(self, n: int) -> None:
        from cuzk.algebra import FR
        from cuzk.algebra import constants as C

        be, r = self.backend, FR.modulus
        log_n = n.bit_length() - 1
        for gen in (C.BELLPERSON_GENERATOR, C.SNARKJS_GENERATOR):
            omega = C.root_of_unity(log_n, gen)
            a = FR.random(n, self.rng)
            coeffs = FR.to_ints(a)
            for coset in (None, gen):
                shift = coset or 1
                want = []
                for i in range(n):
                    x, acc = shift * pow(omega, i, r) % r, 0
                    for c in reversed(coeffs):
                        acc = (acc * x + c) % r
                    want.append(acc)
                got = FR.to_ints(be.to_host(be.ntt(be.to_device(a), omega, coset=coset)))
                expect(got == want, f"generator {gen}, coset {coset}")

    def ntt_round_trip(self, n: int) -> None:
        from cuzk.algebra import FR
        from cuzk.algebra import constants as C

        be = self.backend
        log_n = n.bit_length() - 1
        a = FR.random(n, self.rng)
        d = be.to_device(a)
        for gen in (C.BELLPERSON_GENERATOR, C.SNARKJS_GENERATOR):
            omega = C.root_of_unity(log_n, gen)
            back = be.to_host(be.intt(be.ntt(d, omega), omega))
            expect(np.array_equal(back, a), f"intt(ntt(a)) == a, generator {gen}")
            back = be.to_host(be.intt(be.ntt(d, omega, coset=gen), omega, coset=gen))
            expect(np.array_equal(back, a), f"coset round trip, generator {gen}")

    def spmv(self, n: int) -> None:
        from cuzk.algebra import FR
        from cuzk.backends import CsrMatrix

        r = FR.modulus
        cols = max(4, n // 2)
        counts = self.rng.integers(0, 6, n)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        nnz = int(indptr[-1])
        indices = self.rng.integers(0, cols, nnz).astype(np.int64)
        data = FR.random(nnz, self.rng)
        data[::3] = FR.ones(data[::3].shape[0])
        data[1::5] = FR.neg(FR.ones(data[1::5].shape[0]))
        w = FR.random(cols, self.rng)
        m = CsrMatrix(indptr, indices, data, (n, cols))
        got = FR.to_ints(self.backend.to_host(self.backend.spmv(m, self.backend.to_device(w))))
        dv, wv = FR.to_ints(data), FR.to_ints(w)
        want = [sum(dv[k] * wv[indices[k]] for k in range(indptr[i], indptr[i + 1])) % r for i in range(n)]
        expect(got == want, "A.w == Python-int sums")


def _pow2_at_least(n: int) -> int:
    return 1 << max(1, (n - 1).bit_length())


def numba_cache_looks_cold() -> bool:
    """True when a kernel module has no numba index file next to it (cheap, a heuristic)."""
    from numba.core import config

    # a custom cache location: do not guess (numba sets its config names at run time, unseen by mypy)
    if config.CACHE_DIR:  # type: ignore[attr-defined]
        return False
    root = Path(__file__).resolve().parents[2]
    for rel in _KERNEL_MODULES:
        src = root / rel
        if not any((src.parent / "__pycache__").glob(f"{src.stem}.*.nbi")):
            return True
    return False


@contextmanager
def _progress(total: int) -> Iterator[Callable[[str], None]]:
    """A live spinner and bar on a terminal; timestamped lines otherwise (logs, CI)."""
    con = err_console()
    if not con.is_terminal:
        yield progress_printer()
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=con,
        transient=True,
    ) as bar:
        task = bar.add_task("selftest", total=total)
        started = [False]

        def step(message: str) -> None:
            if started[0]:
                bar.advance(task)
            started[0] = True
            bar.update(task, description=message)

        yield step


def run_checks(checks: Checks, say: Callable[[str], None] | None = None) -> list[Outcome]:
    """Run the plan; an exception in a check is that check's failure, never the run's."""
    outcomes = []
    for name, size, fn in checks.plan():
        if say:
            say(f"{name} ({size})")
        t0 = time.perf_counter()
        try:
            fn(size)
        except CheckFailed as exc:
            outcomes.append(Outcome(name, size, False, time.perf_counter() - t0, str(exc)))
        except Exception as exc:
            last = traceback.extract_tb(exc.__traceback__)[-1]
            where = f" ({Path(last.filename).name}:{last.lineno})"
            outcomes.append(
                Outcome(name, size, False, time.perf_counter() - t0, f"{type(exc).__name__}: {exc}{where}")
            )
        else:
            outcomes.append(Outcome(name, size, True, time.perf_counter() - t0))
    return outcomes


def cmd_selftest(args: argparse.Namespace) -> int:
    from rich.table import Table

    from cuzk.backends import get_backend
    from cuzk.errors import FormatError

    if args.size < 8:
        raise FormatError("--size must be at least 8")
    backend = get_backend(args.backend)
    seed = args.seed if args.seed is not None else secrets.randbits(63)
    if numba_cache_looks_cold():
        err_console().print(
            "note: numba's kernel cache looks cold: this first run compiles the kernels (a few minutes); "
            "later runs start in seconds"
        )
    checks = Checks(backend, np.random.default_rng(seed), args.size)
    t0 = time.perf_counter()
    with _progress(len(checks.plan())) as say:
        outcomes = run_checks(checks, say)
    table = Table(title=f"cuzk selftest on {backend.name} (seed {seed})", title_justify="left")
    table.add_column("check")
    table.add_column("size", justify="right")
    table.add_column("result")
    table.add_column("seconds", justify="right")
    for o in outcomes:
        result = "[green]pass[/green]" if o.passed else f"[red]FAIL[/red] {o.detail}"
        table.add_row(o.name, str(o.size), result, f"{o.seconds:.2f}")
    con = console()
    con.print(table)
    failed = [o for o in outcomes if not o.passed]
    total = time.perf_counter() - t0
    if failed:
        con.print(f"[red]{len(failed)} of {len(outcomes)} checks failed[/red] in {total:.1f} s (seed {seed})")
        return 1
    con.print(f"[green]all {len(outcomes)} checks passed[/green] in {total:.1f} s")
    return 0
