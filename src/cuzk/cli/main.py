"""`cuzk` entry point: subcommands live in their own modules and register here.

Each command module exposes `register(subparsers)`, which adds its parser and
sets `func` (a callable taking the parsed args and returning an exit code).
Exit codes: 0 success, 1 a negative result (an invalid proof), 2 usage or
input errors (argparse's convention: also malformed files, unknown circuits,
a backend this machine lacks), 3 other cuzk errors (an unsatisfied witness,
a degenerate setup, a device failure), 70 an internal error (an exception that
is not a cuzk error: a bug; `--debug` or CUZK_DEBUG=1 prints its traceback),
130 interrupted. The mapping from error class to code is `cuzk.errors.exit_code`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
import traceback

from cuzk import __version__

COMMAND_MODULES: tuple[str, ...] = (
    "cuzk.cli.prove",
    "cuzk.cli.groth16",
    "cuzk.cli.selftest",
    "cuzk.cli.circuits",
    "cuzk.cli.bench",
    "cuzk.cli.timeline",
    "cuzk.cli.daemon",
    "cuzk.cli.client",
    "cuzk.cli.cache",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cuzk", description="Groth16 proving engine for BLS12-381")
    parser.add_argument("--version", action="version", version=f"cuzk {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="print the traceback of an error (also CUZK_DEBUG=1)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


#: Exit code of an exception that is not a CuzkError (BSD sysexits' EX_SOFTWARE: a bug in cuzk).
INTERNAL_ERROR_EXIT = 70


def _debug_from_env() -> bool:
    from cuzk import config
    from cuzk.errors import CuzkError

    try:
        return config.reload().debug.traceback  # the environment as the command starts
    except CuzkError:  # a bad setting elsewhere is reported by the command that needs it
        return False


def main(argv: list[str] | None = None) -> int:
    """Run one command; every error ends as one line on stderr and an exit code, never a traceback."""
    from cuzk.errors import CuzkError, exit_code

    parser = build_parser()
    args = parser.parse_args(argv)
    debug = args.debug or _debug_from_env()
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from cuzk.cli.output import watch_kernel_compilation

    try:
        with watch_kernel_compilation():
            _compile_ahead(args)
            return int(args.func(args) or 0)
    except CuzkError as exc:
        _report(debug, f"cuzk: error: {exc}")
        return exit_code(exc)
    except KeyboardInterrupt:
        _report(debug, "cuzk: interrupted")
        return 130
    except Exception as exc:
        _report(
            debug,
            f"cuzk: internal error: {type(exc).__name__}: {exc}"
            + ("" if debug else " (a bug in cuzk; --debug or CUZK_DEBUG=1 shows the traceback)"),
        )
        return INTERNAL_ERROR_EXIT


def kernel_lists(args: argparse.Namespace) -> list[str]:
    """The recorded kernel lists (cuzk.algebra.precompile) this command needs on the CPU backend.

    `setup` needs the parameter generation's kernels, and `prove` only while its parameters are
    not cached;
    a command on the CUDA backend compiles other kernels and gets none."""
    command = getattr(args, "command", None)
    if command == "verify":
        return ["verify"]
    if command not in ("prove", "setup"):
        return []
    from cuzk import backends

    if args.backend == "cuda" or (
        args.backend in (None, "auto") and backends.cuda_unavailable_reason() is None
    ):
        return []
    if command == "setup":
        return ["setup"]
    if args.params is not None:
        return ["prove"]
    from cuzk.paths import cache_dir

    made = any(cache_dir("params").glob(f"{args.circuit}-*/{args.circuit}.json"))
    return ["prove"] if made else ["setup", "prove"]


def _compile_ahead(args: argparse.Namespace) -> None:
    """Compile the kernels the command will need, not yet cached, on two processes at once."""
    lists = kernel_lists(args)
    if not lists:
        return
    from cuzk.algebra.precompile import precompile
    from cuzk.cli.output import current_watch, progress_printer

    watch = current_watch()
    say = progress_printer()
    with watch.announced() if watch is not None else contextlib.nullcontext():  # it has its own notice
        done = precompile(lists, say=say)
    if done.kernels:
        say(
            f"compiled {done.kernels} CPU kernels in {done.seconds:.1f} s on {done.processes} processes "
            "(once; numba caches them on disk)"
        )


def _report(debug: bool, line: str) -> None:
    if debug:
        traceback.print_exc(file=sys.stderr)
    print(line.replace("\n", " "), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
