"""The coverage-guided fuzzer (fuzz/guided.py, atheris): a short run per decoder family, and a
planted bug that it must find. libFuzzer owns its process, so each run is a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris")

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
PLANTED = """
import sys
from pathlib import Path
sys.path.insert(0, {fuzz!r})
import guided
from targets import Target
from cuzk.errors import FormatError

def decode(data: bytes) -> None:
    if len(data) > 3 and data[0] == 0x42:
        raise KeyError("planted")  # a bug: outside the error tree
    if data[:1] == b"x":
        raise FormatError("x is not allowed")

guided.fuzz(Target("planted", (b"abcd", b"xyz"), decode), runs=200000, out=Path(sys.argv[1]))
"""


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("name", ["grpc-submitproof", "wtns", "g1-compressed", "public-json"])
def test_a_short_guided_run_finds_nothing(name: str, tmp_path: Path) -> None:
    r = _run(
        [sys.executable, str(FUZZ / "guided.py"), name, "--runs", "400", "--out", str(tmp_path)], tmp_path
    )
    assert r.returncode == 0, r.stderr[-3000:]
    row = json.loads(next(ln for ln in r.stdout.splitlines() if ln.startswith("{")))
    assert row["inputs"] == 400 and row["refused"] >= 100 and row["decoded"] >= 1
    assert not list(tmp_path.glob(f"{name}-crash-*"))


def test_a_planted_bug_is_found_and_its_input_kept(tmp_path: Path) -> None:
    script = tmp_path / "planted.py"
    script.write_text(PLANTED.format(fuzz=str(FUZZ)))
    r = _run([sys.executable, str(script), str(tmp_path / "out")], tmp_path)
    assert r.returncode != 0 and "KeyError: 'planted'" in r.stdout + r.stderr, r.stderr[-3000:]
    (crash,) = (tmp_path / "out").glob("planted-crash-*")
    data = crash.read_bytes()
    assert len(data) > 3 and data[0] == 0x42  # the very input that raised


def test_an_unknown_target_is_named_with_the_valid_ones(tmp_path: Path) -> None:
    r = _run([sys.executable, str(FUZZ / "guided.py"), "nope"], tmp_path)
    assert r.returncode == 2 and "unknown target 'nope'" in r.stderr and "grpc-prove" in r.stderr


def test_the_uninstrumented_modules_are_those_numba_compiles() -> None:
    code = "import json, guided; print(json.dumps(guided.NUMBA_MODULES))"  # atheris: its own process
    r = _run([sys.executable, "-c", code], cwd=FUZZ)
    assert r.returncode == 0, r.stderr
    mods = set(json.loads(r.stdout.splitlines()[-1]))
    assert {"cuzk.algebra._jit_fields", "cuzk.backends.cpu.msm", "cuzk.interop.r1cs"} <= mods
    assert not mods & {"cuzk.errors", "cuzk.algebra._intrinsics", "cuzk.interop.zkey"}  # no njit there
