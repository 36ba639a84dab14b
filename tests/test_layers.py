"""The layer order of src/cuzk, enforced over the AST of every module.

A module may import its own layer and the layers below it, never one above, and
nothing private of a backend from outside that backend: the modules under
cuzk.backends.cpu and cuzk.backends.cuda, and any name or module starting with
"_" in cuzk.backends. Imports inside functions and under TYPE_CHECKING count too;
the only exceptions are in ALLOWED below, each with its reason. A new top-level
module or package must be given a layer here before the suite passes.

Also: importing cuzk.groth16 loads no CPU-backend module and compiles or loads no
numba kernel (checked in a fresh interpreter).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "cuzk"

#: Lowest first; a module may import from its own layer and every layer before it.
LAYERS: list[set[str]] = [
    {"", "errors", "paths", "config", "toggles", "instrument", "units", "defaults"},  # "": the package root
    {"algebra"},
    {"backends"},
    {"r1cs"},
    {"gadgets"},
    {"circuits"},
    {"groth16"},
    {"interop"},
    {"engine"},
    {"server"},
    {"cluster"},  # the fleet front: a daemon over engines on Ray (docs/CLUSTER.md)
    {"cli"},
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
BACKENDS = ("cuzk.backends.cpu", "cuzk.backends.cuda")

#: (importing module, imported module) pairs that break a rule on purpose.
ALLOWED = {
    # The backend factory constructs the implementations; it imports them lazily so that
    # importing cuzk.backends stays cheap and never imports CuPy or the numba kernels.
    ("cuzk.backends", "cuzk.backends.cpu"),
    ("cuzk.backends", "cuzk.backends.cuda"),
}


def _module_name(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package(name: str, src: Path) -> bool:
    return (src / Path(*name.split(".")) / "__init__.py").is_file()


def _is_module(name: str, src: Path) -> bool:
    return (src / Path(*name.split("."))).with_suffix(".py").is_file() or _is_package(name, src)


def _imports(path: Path, src: Path) -> list[tuple[int, str, str | None]]:
    """(line, imported module, imported name or None) for every cuzk import in the file."""
    module = _module_name(path, src)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if _is_module(sub, src):
                    out.append((node.lineno, sub, None))
                else:
                    out.append((node.lineno, target, alias.name))
    return [(line, target, name) for line, target, name in out if target.split(".")[0] == "cuzk"]


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _private_owner(target: str, name: str | None, src: Path) -> str | None:
    """The package a private backend module or name belongs to, or None if it is public."""
    if not _inside(target, "cuzk.backends"):
        return None
    for backend in BACKENDS:
        if _inside(target, backend):
            return backend
    parts = target.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_"):
            return ".".join(parts[:i])
    if name is not None and name.startswith("_"):  # a private name: private to its package
        return target if _is_package(target, src) else target.rpartition(".")[0]
    return None


def violations(src: Path) -> list[str]:
    """Every broken rule in the cuzk package under src, one line each."""
    found = []
    for path in sorted((src / "cuzk").rglob("*.py")):
        module = _module_name(path, src)
        layer = _layer(module)
        if layer not in RANK:
            found.append(f"{module}: layer {layer!r} is not in tests/test_layers.py LAYERS; give it one")
            continue
        for line, target, name in _imports(path, src):
            if (module, target) in ALLOWED:
                continue
            where = f"{path.relative_to(src)}:{line}: {module} imports {target}" + (
                f".{name}" if name else ""
            )
            tlayer = _layer(target)
            if tlayer not in RANK:
                found.append(f"{where}: layer {tlayer!r} has no rank")
            elif RANK[tlayer] > RANK[layer]:
                found.append(f"{where}: {tlayer} is above {layer or 'cuzk'}")
            owner = _private_owner(target, name, src)
            if owner is not None and not _inside(module, owner):
                found.append(f"{where}: private to {owner}")
    return found


def test_no_module_imports_above_its_layer_or_a_backends_private_parts() -> None:
    assert len(list(PACKAGE.rglob("*.py"))) > 50, f"too few modules found under {PACKAGE}"
    found = violations(SRC)
    assert not found, "layer order broken:\n" + "\n".join(found)


def test_the_checker_sees_what_it_must(tmp_path: Path) -> None:
    """The rules fire on examples of each kind of violation (so the test above can fail)."""
    pkg = tmp_path / "cuzk"
    for folder in ("algebra", "backends/cpu", "backends/cuda", "groth16", "r1cs"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "backends/cuda/_runtime.py").write_text("")
    (pkg / "backends/base.py").write_text("")
    (pkg / "algebra/fields.py").write_text(
        "def f():\n    from cuzk.groth16 import prove\n"  # lazy, and upward
    )
    (pkg / "groth16/qap.py").write_text(
        "from cuzk.backends.cpu import ntt\nfrom cuzk.backends.base import _helper\nfrom ..algebra import fields\n"
    )
    (pkg / "backends/cuda/backend.py").write_text(
        "from cuzk.backends.cuda import _runtime\nimport cuzk.r1cs\n"
    )
    (pkg / "r1cs/topology.py").write_text("from cuzk.backends.cuda._runtime import Runtime\n")
    (pkg / "telemetry.py").write_text("")
    found = "\n".join(violations(tmp_path))
    assert "cuzk.algebra.fields imports cuzk.groth16.prove: groth16 is above algebra" in found
    assert "cuzk.groth16.qap imports cuzk.backends.cpu.ntt: private to cuzk.backends.cpu" in found
    assert "cuzk.groth16.qap imports cuzk.backends.base._helper: private to cuzk.backends" in found
    assert "cuzk.backends.cuda.backend imports cuzk.r1cs: r1cs is above backends" in found
    assert (
        "cuzk.r1cs.topology imports cuzk.backends.cuda._runtime.Runtime: private to cuzk.backends.cuda"
        in found
    )
    assert "qap imports cuzk.algebra" not in found  # a relative import of a lower layer is fine
    assert "cuda.backend imports cuzk.backends.cuda._runtime" not in found  # inside its own backend
    assert "cuzk.telemetry: layer 'telemetry' is not in tests/test_layers.py LAYERS" in found


def test_importing_groth16_loads_no_cpu_backend_and_no_kernel() -> None:
    """`import cuzk.groth16` in a fresh interpreter: no cuzk.backends.cpu module (in
    sys.modules or in -X importtime's report), and no numba kernel compiled or loaded."""
    probe = """
import json, sys
import cuzk.groth16
from numba.core.dispatcher import Dispatcher
compiled = sorted(
    f"{name}.{attr}"
    for name, mod in list(sys.modules.items()) if name.startswith("cuzk")
    for attr, obj in vars(mod).items() if isinstance(obj, Dispatcher) and obj.overloads
)
print(json.dumps({"modules": sorted(m for m in sys.modules if m.startswith("cuzk")), "compiled": compiled}))
"""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**_env(), "PYTHONPATH": str(SRC)},
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "cuzk.groth16" in report["modules"]
    assert [m for m in report["modules"] if _inside(m, "cuzk.backends.cpu")] == []
    assert [m for m in report["modules"] if _inside(m, "cuzk.backends.cuda")] == []
    timed = [
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    ]
    assert "cuzk.groth16" in timed
    assert [m for m in timed if _inside(m, "cuzk.backends.cpu")] == []
    assert report["compiled"] == []


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
