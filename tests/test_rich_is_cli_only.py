"""`rich` is a CLI concern: no library layer imports it, so the library needs no terminal toolkit."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "cuzk"


def _imports_rich(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        if any(n == "rich" or n.startswith("rich.") for n in names):
            return True
    return False


def test_rich_is_imported_only_by_the_cli() -> None:
    users = {p.relative_to(SRC).parts[0] for p in SRC.rglob("*.py") if _imports_rich(p)}
    assert users == {"cli"}
