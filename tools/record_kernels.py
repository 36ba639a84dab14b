"""Record the numba kernels one `cuzk` command compiles on a cold cache, for
cuzk/algebra/_kernel_manifest.py (a maintainer's tool: it runs the CLI, which the algebra layer
must not import).

    python tools/record_kernels.py -- prove --circuit porep-tiny --params DIR ...
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

Entry = tuple[str, str, str]


def record(argv: Sequence[str]) -> dict[str, list[Entry]]:
    """Run `cuzk ARGV` and list the outermost kernels it compiled (run it on a cold cache)."""
    import threading

    from numba.core import event

    from cuzk.cli.main import main

    seen: list[Entry] = []
    local = threading.local()

    class Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            local.depth = getattr(local, "depth", 0) + 1

        def on_end(self, ev: Any) -> None:
            local.depth -= 1
            data = ev.data or {}
            func = getattr(data.get("dispatcher"), "py_func", None)
            if local.depth == 0 and func is not None:
                entry = (func.__module__, func.__qualname__, str(data.get("args")))
                if entry not in seen:
                    seen.append(entry)

    with event.install_listener("numba:compile", Listener()):
        main(list(argv))
    return {argv[0]: seen}


if __name__ == "__main__":
    if "--" not in sys.argv:
        sys.exit("usage: python tools/record_kernels.py -- COMMAND ARGS...")
    print(json.dumps(record(sys.argv[sys.argv.index("--") + 1 :]), indent=1))
