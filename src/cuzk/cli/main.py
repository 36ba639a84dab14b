"""`cuzk` entry point: subcommands live in their own modules and register here.

Each command module exposes `register(subparsers)`, which adds its parser and
sets `func` (a callable taking the parsed args and returning an exit code).
Exit codes: 0 success, 1 a negative result (an invalid proof), 2 usage or
input errors (argparse's convention: also malformed files, unknown circuits,
a backend this machine lacks), 3 other cuzk errors (an unsatisfied witness,
a degenerate setup, a device failure).
"""

from __future__ import annotations

import argparse
import importlib
import sys

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
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cuzk", description="Groth16 proving engine for BLS12-381")
    parser.add_argument("--version", action="version", version=f"cuzk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from cuzk.errors import CuzkError, exit_code

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except CuzkError as exc:
        print(f"cuzk: error: {exc}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        print("cuzk: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
