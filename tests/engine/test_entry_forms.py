"""The README's engine examples run as users run them, with no `if __name__ == "__main__":` guard.

Synthesis workers start on cuzk's own entry point (cuzk.engine.synth_worker), so
they never re-run the caller's `__main__`: a script, `python - < file`,
`python -c`, a notebook-like exec of a cell, and a pytest test all work. Each
form is a real interpreter running the README's own code blocks.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
TIMEOUT = 900.0  # seconds: a hang fails the test


def engine_examples(first_only: bool = False) -> str:
    """The README's Python blocks that run the pipelined Engine, as one program (or the first
    alone: each block starts an engine and its workers, seconds on the CI machine)."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    chosen = [b for b in blocks if "with Engine(EngineConfig(" in b]
    assert len(chosen) >= 2, "the README's engine examples moved: update this test"
    assert all("__main__" not in b for b in chosen), "the README's examples must not need a guard"
    return "\n".join(chosen[:1] if first_only else chosen) + '\nprint("EXAMPLE-DONE")\n'


def run(args: list[str], tmp_path: Path, *, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, *args], cwd=tmp_path, env=env, input=stdin, capture_output=True, text=True,
        timeout=TIMEOUT,
    )  # fmt: skip


def check(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert proc.stdout.rstrip().endswith("EXAMPLE-DONE"), proc.stdout
    assert "Traceback" not in proc.stderr and "bootstrapping" not in proc.stderr, proc.stderr[-4000:]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first engine example (the other forms differ only in how __main__ is made)."""
    path = tmp_path_factory.mktemp("example") / "example.py"
    path.write_text(engine_examples(first_only=True))
    return path


def test_as_a_script(tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(engine_examples())
    check(run([str(script)], tmp_path))


def test_from_stdin(example: Path) -> None:
    check(run(["-"], example.parent, stdin=example.read_text()))


def test_with_dash_c(example: Path) -> None:
    check(run(["-c", example.read_text()], example.parent))


def test_as_a_notebook_cell(example: Path) -> None:
    """A notebook kernel runs cells with exec in a __main__ that has no file and no spec."""
    cell = (
        "import sys, types\n"
        "main = types.ModuleType('__main__')\n"
        "sys.modules['__main__'] = main\n"
        f"exec(compile({example.read_text()!r}, '<cell>', 'exec'), main.__dict__)\n"
    )
    check(run(["-c", cell], example.parent))


def test_under_pytest(example: Path) -> None:
    body = "\n".join("    " + line for line in example.read_text().splitlines())
    test = example.parent / "test_readme_example.py"
    test.write_text(f"def test_example():\n{body}\n")
    proc = run(["-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", str(test)], example.parent)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "EXAMPLE-DONE" in proc.stdout and "1 passed" in proc.stdout, proc.stdout[-4000:]
