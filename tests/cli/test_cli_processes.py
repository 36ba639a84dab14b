"""Real `cuzk` processes sharing a cache or a parameters folder: concurrent cold-cache provers
and a setup interrupted by SIGINT while it writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuzk.circuits import get_circuit
from cuzk.cli.main import main

CIRCUIT = "porep-tiny"
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _env(cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "CUZK_CACHE_DIR": str(cache),
        "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "COLUMNS": "120",
    }


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A cache with the topology recorded but no parameters: only key generation is cold."""
    root = tmp_path / "cache"
    monkeypatch.setenv("CUZK_CACHE_DIR", str(root))
    circuit = get_circuit(CIRCUIT)
    circuit.forget()
    circuit.topology()
    return root


@pytest.mark.slow
def test_two_cold_cache_provers_both_prove_against_the_cached_key(cache, tmp_path):
    cmd = [sys.executable, "-m", "cuzk.cli.main", "prove", "--circuit", CIRCUIT, "--backend", "cpu"]
    procs = [
        subprocess.Popen(
            [
                *cmd,
                "--seed",
                str(j),
                "--out",
                str(tmp_path / f"{j}.bin"),
                "--public-out",
                str(tmp_path / f"{j}.json"),
            ],
            env=_env(cache),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for j in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert sum("generating parameters" in err for _, err in outs) == 1  # one key made, under the lock
    (vk,) = cache.glob(f"params/{CIRCUIT}-*/{CIRCUIT}.vk")
    for j in range(2):
        assert str(vk) in outs[j][0]  # `cuzk prove` says where its key is
        args = ["verify", "--vk", str(vk), "--proof", str(tmp_path / f"{j}.bin")]
        assert main([*args, "--public", str(tmp_path / f"{j}.json")]) == 0
        assert main([*args, "--public", str(tmp_path / f"{1 - j}.json")]) == 1  # a wrong statement fails


INTERRUPT_MID_WRITE = """
import os, signal, sys
from cuzk.groth16 import params_io
real, calls = params_io._encode, []
def encode(points):
    calls.append(1)
    if len(calls) == 14:  # .params written, .vk half written: a real Ctrl-C mid-set
        os.kill(os.getpid(), signal.SIGINT)
    return real(points)
params_io._encode = encode
from cuzk.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_a_setup_interrupted_while_writing_leaves_the_old_set_provable(cache, tmp_path):
    out = tmp_path / "params"
    assert main(["setup", "--circuit", CIRCUIT, "--out", str(out), "--backend", "cpu"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    argv = ["setup", "--circuit", CIRCUIT, "--out", str(out), "--backend", "cpu"]
    proc = subprocess.run(
        [sys.executable, "-c", INTERRUPT_MID_WRITE, *argv], env=_env(cache), capture_output=True, text=True
    )
    assert proc.returncode == 130, proc.stderr
    assert "cuzk: interrupted" in proc.stderr and "Traceback" not in proc.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no new file, no temporary
    proof, public = tmp_path / "p.bin", tmp_path / "p.json"
    prove = ["prove", "--circuit", CIRCUIT, "--params", str(out), "--backend", "cpu"]
    assert main([*prove, "--out", str(proof), "--public-out", str(public)]) == 0
    assert (
        main(["verify", "--vk", str(out / f"{CIRCUIT}.vk"), "--proof", str(proof), "--public", str(public)])
        == 0
    )
