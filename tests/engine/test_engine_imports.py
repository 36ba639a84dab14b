"""No module of the engine imports another that imports it back (directly or round a longer loop),
counting every import in the AST: top level, inside functions and under TYPE_CHECKING.

Before the split (issue 30), engine.py imported gpu.py and finalize.py, which imported engine.py
back for the Unit type; the data they share now lives in model.py, which imports neither.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "cuzk"
ENGINE = PACKAGE / "engine"
ROOT = "cuzk.engine"


def imports(path: Path) -> set[str]:
    """The cuzk.engine modules `path` imports (package-relative names)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}  # `from cuzk.engine import work`
    modules = {f"{ROOT}.{p.stem}" for p in ENGINE.glob("*.py") if p.stem != "__init__"}
    return {n for n in names if n in modules}


def graph() -> dict[str, set[str]]:
    return {f"{ROOT}.{p.stem}": imports(p) for p in ENGINE.glob("*.py") if p.stem != "__init__"}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    for start in sorted(g):
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(g.get(node, ())):
                if nxt == start:
                    found.append([*path, start])
                elif nxt not in path and nxt > start:  # each loop once, from its smallest module
                    stack.append((nxt, [*path, nxt]))
    return found


def test_no_engine_module_imports_one_that_imports_it_back() -> None:
    assert cycles(graph()) == []


def test_the_check_finds_a_loop() -> None:
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(g) == [["a", "b", "c", "a"]]
    assert f"{ROOT}.events" in graph()[f"{ROOT}.gpu"]  # the stages reach the core through events.py
    assert f"{ROOT}.gpu" not in graph()[f"{ROOT}.core"]  # and the core knows no stage
