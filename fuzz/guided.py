"""Coverage-guided fuzzing of one decoder with atheris (libFuzzer): `python fuzz/guided.py TARGET [--runs N]`.

The same targets and outcome rule as fuzz/run.py (decoded, or refused with a
cuzk error whose message is not empty), but libFuzzer picks the mutations: it
keeps an input that reaches new branches of cuzk's Python code (instrumented at
import) and mutates from there, starting from the target's valid seeds. Any
other exception is reported by libFuzzer as a crash, with the input written to
--out (`crash-<sha1>`), and a run that passes -timeout wall seconds on one input
as a hang. Prints one JSON line at the end (inputs, decoded, refused, corpus);
exits non-zero on a finding. Run it once per target (libFuzzer owns the
process): `for t in $(python fuzz/guided.py --list); do python fuzz/guided.py $t; done`.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import atheris

#: decorators whose functions numba compiles from their bytecode
JIT_DECORATORS = frozenset(
    {"njit", "jit", "register_jitable", "vectorize", "guvectorize", "stencil", "cfunc"}
)
SRC = Path(__file__).resolve().parents[1] / "src"


def numba_modules(src: Path = SRC) -> list[str]:
    """cuzk modules with a numba-compiled function: numba cannot compile instrumented bytecode,
    so these go uninstrumented (their Python parse code too: r1cs sections, point encodings).
    Read from the source (a list kept by hand would miss the next kernel module)."""

    def jitted(tree: ast.AST) -> bool:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                for d in node.decorator_list:
                    f = d.func if isinstance(d, ast.Call) else d
                    if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)) in JIT_DECORATORS:
                        return True
        return False

    return sorted(
        ".".join(p.relative_to(src).with_suffix("").parts)
        for p in (src / "cuzk").rglob("*.py")
        if jitted(ast.parse(p.read_text()))
    )


NUMBA_MODULES = numba_modules()

with atheris.instrument_imports(include=["cuzk"], exclude=NUMBA_MODULES):
    from targets import Target, targets

    from cuzk.errors import CuzkError


def instrumented_targets() -> list[Target]:
    """The targets, built under instrumentation: they import their decoders' modules lazily."""
    with atheris.instrument_imports(include=["cuzk"], exclude=NUMBA_MODULES):
        return targets()


class EmptyMessage(Exception):
    """A cuzk error that does not say what was wrong: a finding like any crash."""


def fuzz(target: Target, *, runs: int, out: Path, timeout: int = 60, max_len: int = 0, seed: int = 1) -> None:
    """libFuzzer on one target from its seeds; ends the process (exit 0 after `runs`, else a finding)."""
    # The seeds once before libFuzzer starts: numba compiles on the first calls, and modules a
    # decoder imports on first use are instrumented like the rest.
    with atheris.instrument_imports(include=["cuzk"], exclude=NUMBA_MODULES):
        for data in target.seeds:
            with contextlib.suppress(CuzkError):
                target.decode(data)
    counts: Counter[str] = Counter()
    out.mkdir(parents=True, exist_ok=True)
    corpus = Path(tempfile.mkdtemp(prefix=f"cuzk-fuzz-{target.name}-"))
    for i, data in enumerate(target.seeds):
        (corpus / f"seed-{i}").write_bytes(data)
    t0 = time.perf_counter()

    def report() -> None:
        row = {
            "target": target.name,
            "engine": "atheris",
            "inputs": counts.total(),
            "decoded": counts["decoded"],
            "refused": counts["refused"],
            "corpus": len(list(corpus.iterdir())),
            "seconds": round(time.perf_counter() - t0, 1),
        }
        print(json.dumps(row), flush=True)
        shutil.rmtree(corpus, ignore_errors=True)  # the inputs libFuzzer kept: nothing to keep them for

    def one_input(data: bytes) -> None:
        try:
            target.decode(data)
        except CuzkError as exc:
            if not str(exc).strip():
                raise EmptyMessage(f"{type(exc).__name__} with an empty message") from exc
            counts["refused"] += 1
        else:
            counts["decoded"] += 1
        if counts.total() == runs:  # libFuzzer exits the process after its last run
            report()

    atheris.Setup(
        [
            sys.argv[0],
            f"-runs={runs}",
            f"-timeout={timeout}",
            f"-max_len={max_len or 4 * max(len(s) for s in target.seeds)}",
            f"-seed={seed}",
            f"-artifact_prefix={out}/{target.name}-",
            "-print_final_stats=1",
            str(corpus),
        ],
        one_input,
    )
    atheris.Fuzz()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("target", nargs="?", help="a target name (see --list)")
    p.add_argument("--list", action="store_true", help="print the target names and exit")
    p.add_argument("--runs", type=int, default=100_000, help="inputs to try (default 100000)")
    p.add_argument("--timeout", type=int, default=60, help="wall seconds for one input before a hang")
    p.add_argument("--max-len", type=int, default=0, help="longest input (default: 4x the longest seed)")
    p.add_argument("--out", type=Path, default=Path("fuzz-findings"), help="where crash inputs are written")
    p.add_argument("--seed", type=int, default=1, help="libFuzzer's random seed")
    args = p.parse_args(argv)
    by_name = {t.name: t for t in instrumented_targets()}
    if args.list:
        print("\n".join(sorted(by_name)))
        return 0
    if args.target not in by_name:
        p.error(f"unknown target {args.target!r}; the targets: {', '.join(sorted(by_name))}")
    fuzz(by_name[args.target], runs=args.runs, out=args.out, timeout=args.timeout, max_len=args.max_len,
         seed=args.seed)  # fmt: skip
    return 0  # not reached: libFuzzer ends the process


if __name__ == "__main__":
    sys.exit(main())
