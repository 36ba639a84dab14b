"""`cuzk cache info | clear`: where cuzk keeps recorded topologies, parameters and tools, and
how large each kind has grown. (numba's compiled kernels live beside the sources, in
__pycache__, and are not part of it.)"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from cuzk.cli.output import console, require_subcommand
from cuzk.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache", help="the cache of topologies and parameters: info, clear")
    cmds = p.add_subparsers(dest="cache_command", metavar="COMMAND")
    require_subcommand(p)

    q = cmds.add_parser("info", help="the cache folder and the size of each kind in it")
    q.set_defaults(func=cmd_info)

    q = cmds.add_parser("clear", help="delete the cache (or one kind of it); everything is remade on use")
    q.add_argument(
        "kinds", nargs="*", metavar="KIND", help="only these kinds (e.g. r1cs params); default all"
    )
    q.add_argument("--yes", action="store_true", help="do not ask (required when stdin is not a terminal)")
    q.set_defaults(func=cmd_clear)


def tree_bytes(path: Path) -> int:
    """Bytes of the regular files under `path` (0 if it is absent); unreadable entries count 0."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for p in path.rglob("*"):
        try:
            if p.is_file() and not p.is_symlink():
                total += p.stat().st_size
        except OSError:
            continue
    return total


def human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def kinds(root: Path) -> dict[str, int]:
    """Each top-level folder (kind) of the cache with its size in bytes."""
    if not root.is_dir():
        return {}
    return {p.name: tree_bytes(p) for p in sorted(root.iterdir()) if p.is_dir()}


def summary_line() -> str:
    """One line naming the cache root and its total size (for listings)."""
    from cuzk.paths import cache_root

    root = cache_root()
    return f"cache: {root} ({human(sum(kinds(root).values()))}; `cuzk cache info` for details)"


def cmd_info(args: argparse.Namespace) -> int:
    from rich.table import Table

    from cuzk.paths import cache_root

    root = cache_root()
    sizes = kinds(root)
    console().print(f"cuzk cache: {root} (CUZK_CACHE_DIR moves it)", soft_wrap=True)
    table = Table()
    table.add_column("kind", no_wrap=True)
    table.add_column("size", justify="right", no_wrap=True)
    for name, n in sizes.items():
        table.add_row(name, human(n))
    table.add_row("total", human(sum(sizes.values())))
    console().print(table)
    return 0


def cmd_clear(args: argparse.Namespace) -> int:
    from cuzk.paths import cache_root

    root = cache_root()
    sizes = kinds(root)
    unknown = sorted(set(args.kinds) - set(sizes))
    if unknown:
        raise UsageError(
            f"no cache kind {', '.join(unknown)} in {root} (there are: {', '.join(sizes) or 'none'})"
        )
    chosen = {k: sizes[k] for k in (args.kinds or sizes)}
    what = f"{', '.join(chosen) or 'nothing'} in {root} ({human(sum(chosen.values()))})"
    if not chosen:
        console().print(f"nothing to clear in {root}")
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError(f"refusing to delete {what} without --yes (stdin is not a terminal)")
        if input(f"delete {what}? [y/N] ").strip().lower() not in ("y", "yes"):
            console().print("nothing deleted")
            return 1
    for name in chosen:
        try:
            shutil.rmtree(root / name)
        except OSError as exc:
            raise UsageError(f"{root / name}: cannot delete: {exc.strerror or exc}") from exc
    console().print(f"deleted {what}", soft_wrap=True)
    return 0
