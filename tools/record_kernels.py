"""Record the numba kernels each `cuzk` command compiles on a cold cache, with the seconds each
took, and write them as cuzk/algebra/_kernel_manifest.py (a maintainer's tool: it runs the CLI,
which the algebra layer must not import).

    python tools/record_kernels.py write            # setup, prove, verify of porep-tiny; rewrites the manifest
    python tools/record_kernels.py -- COMMAND ...   # one command, printed as JSON

Each command runs in a process of its own against an empty numba cache (NUMBA_CACHE_DIR, a
temporary folder) with the compile-ahead step off, so it compiles what it needs one by one, as
a first run without the manifest would. Rerun `write` after changing a kernel's signature or
the kernels a command calls; entries that no longer match a kernel are skipped, not fatal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Entry = tuple[str, str, str]
ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "src" / "cuzk" / "algebra" / "_kernel_manifest.py"


def record(argv: Sequence[str]) -> list[tuple[Entry, float]]:
    """Run `cuzk ARGV` and list the outermost kernels it compiled, each with its wall seconds
    (callees compiled with it included); run it on a cold cache."""
    import threading

    from numba.core import event

    from cuzk.cli import main as cli

    seen: dict[Entry, float] = {}
    local = threading.local()

    class Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            local.depth = getattr(local, "depth", 0) + 1
            if local.depth == 1:
                local.t0 = time.perf_counter()

        def on_end(self, ev: Any) -> None:
            local.depth -= 1
            data = ev.data or {}
            func = getattr(data.get("dispatcher"), "py_func", None)
            if local.depth == 0 and func is not None:
                entry = (func.__module__, func.__qualname__, str(data.get("args")))
                seen[entry] = seen.get(entry, 0.0) + time.perf_counter() - local.t0

    cli._compile_ahead = lambda args: None  # record what the command itself meets
    with event.install_listener("numba:compile", Listener()):
        code = cli.main(list(argv))
    if code:
        raise SystemExit(f"cuzk {' '.join(argv)} exited {code}")
    return list(seen.items())


def _record_cold(argv: Sequence[str], env: dict[str, str]) -> list[tuple[Entry, float]]:
    out = Path(tempfile.mkdtemp(prefix="cuzk-record-")) / "entries.json"
    subprocess.run(
        [sys.executable, __file__, "--json", str(out), "--", *argv],
        env={**os.environ, **env, "NUMBA_CACHE_DIR": str(out.parent / "numba")},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return [((m, q, t), s) for (m, q, t), s in json.loads(out.read_text())]


def record_all() -> dict[str, list[tuple[Entry, float]]]:
    """setup, prove (--params) and verify of porep-tiny on the CPU backend, each cold."""
    work = Path(tempfile.mkdtemp(prefix="cuzk-record-work-"))
    env = {"CUZK_CACHE_DIR": str(work / "cache"), "CUZK_BACKEND": "cpu"}
    params, proof, public = work / "params", work / "proof.bin", work / "public.json"
    vk = params / "porep-tiny.vk"
    return {
        "setup": _record_cold(["setup", "--circuit", "porep-tiny", "--out", str(params)], env),
        "prove": _record_cold(
            [
                "prove",
                "--circuit",
                "porep-tiny",
                "--params",
                str(params),
                "--out",
                str(proof),
                "--public-out",
                str(public),
            ],
            env,
        ),
        "verify": _record_cold(
            ["verify", "--vk", str(vk), "--proof", str(proof), "--public", str(public)], env
        ),
    }


HEADER = '''"""The numba kernels each command compiles on a cold cache (cuzk.algebra.precompile), with the
seconds each took to compile there (its callees not compiled before it included).

Written by `python tools/record_kernels.py write` ({date}, porep-tiny, CPU backend, each command
on an empty numba cache, one process): `setup` is `cuzk setup` (topology and parameter
generation), `prove` a `cuzk prove --params DIR`, `verify` a `cuzk verify`. A kernel missing
here still compiles on first use; an entry that no longer matches its kernel (renamed, or its
signature changed) is skipped (tests/cli/test_precompile.py checks every entry resolves).
"""

from __future__ import annotations

'''


def write(lists: dict[str, list[tuple[Entry, float]]]) -> str:
    """The manifest's source text for these recordings."""
    lines = [HEADER.format(date=time.strftime("%Y-%m-%d", time.gmtime()))]
    lines.append("KERNELS: dict[str, tuple[tuple[str, str, str], ...]] = {\n")
    for name, rows in lists.items():
        lines.append(f"    {name!r}: (\n")
        lines.extend(f"        {entry!r},\n" for entry, _ in rows)
        lines.append("    ),\n")
    lines.append("}\n\n")
    lines.append(
        "#: seconds each entry took to compile when recorded (for the compile-ahead notice's estimate)\n"
    )
    lines.append("COMPILE_S: dict[tuple[str, str, str], float] = {\n")
    costs: dict[Entry, float] = {}
    for rows in lists.values():
        for entry, seconds in rows:
            costs.setdefault(entry, seconds)  # the first recording: the order a cold run meets it
    lines.extend(f"    {entry!r}: {seconds:.2f},\n" for entry, seconds in costs.items())
    lines.append("}\n")
    return "".join(lines)


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["write"]:
        text = write(record_all())
        MANIFEST.write_text(text)
        subprocess.run([sys.executable, "-m", "ruff", "format", "-q", str(MANIFEST)], check=False)
        print(f"wrote {MANIFEST}")
        return 0
    if "--" not in argv:
        print(__doc__)
        return 2
    rows = record(argv[argv.index("--") + 1 :])
    if argv[:1] == ["--json"]:
        Path(argv[1]).write_text(json.dumps(rows))
    else:
        print(json.dumps({argv[argv.index("--") + 1]: rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
