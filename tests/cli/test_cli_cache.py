"""`cuzk circuits` lists without recording, `cuzk cache info | clear`, kernel-compile notices,
`prove --vk-out`, and tables in a narrow terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cuzk.circuits import get_circuit
from cuzk.cli.main import main

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("CUZK_CACHE_DIR", str(root))
    return root


def test_circuits_records_nothing_and_says_where_the_cache_is(cache, capsys):
    for c in ("porep-tiny", "porep-13m"):
        get_circuit(c).forget()
    assert main(["circuits"]) == 0
    out = capsys.readouterr().out
    assert "not recorded yet" in out and "porep-13m" in out
    assert f"cache: {cache}" in out
    assert not list(cache.rglob("*.npz"))  # nothing recorded
    assert main(["circuits", "porep-tiny", "--json"]) == 0  # naming one records it, saying so
    captured = capsys.readouterr()
    assert "recording the topology of porep-tiny" in captured.err
    assert json.loads(captured.out)["constraints"] > 1000
    get_circuit("porep-tiny").forget()
    assert main(["circuits", "--json"]) == 0  # now listed from the cache, the rest estimated
    rows = {r["name"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert rows["porep-tiny"]["estimate"] is False and rows["porep-13m"]["source"] == "not recorded yet"


def test_cache_info_and_clear(cache, capsys, monkeypatch):
    (cache / "params" / "x").mkdir(parents=True)
    (cache / "params" / "x" / "k.params").write_bytes(b"\0" * 3000)
    (cache / "r1cs").mkdir()
    (cache / "r1cs" / "t.npz").write_bytes(b"\0" * 10)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(cache) in out and "params" in out and "2.9 KiB" in out and "10 B" in out
    with open(os.devnull) as not_a_terminal:
        monkeypatch.setattr(sys, "stdin", not_a_terminal)
        assert main(["cache", "clear"]) == 2
    assert "without --yes" in capsys.readouterr().err
    assert (cache / "params").exists()
    assert main(["cache", "clear", "nope", "--yes"]) == 2
    assert main(["cache", "clear", "params", "--yes"]) == 0
    assert not (cache / "params").exists() and (cache / "r1cs").exists()
    assert main(["cache", "clear", "--yes"]) == 0
    assert not (cache / "r1cs").exists()


def test_kernel_compilation_is_announced_and_timed():
    import numba

    from cuzk.cli.output import KernelCompileWatch

    lines: list[str] = []

    @numba.njit(cache=False)
    def fresh(x):  # never compiled before: numba must compile it now
        return x * 2 + 1

    with KernelCompileWatch(lines.append) as watch:
        assert fresh(20) == 41
        assert fresh(21) == 43  # already compiled: no second event
    assert lines[0].startswith("compiling CPU kernels, once")
    assert watch.kernels == 1 and watch.seconds > 0


def test_prove_writes_its_vk_and_says_how_to_verify(cache, tmp_path, capsys):
    params = tmp_path / "params"
    assert main(["setup", "--circuit", "porep-tiny", "--out", str(params), "--backend", "cpu"]) == 0
    out = {n: tmp_path / n for n in ("p.bin", "p.json", "p.vk")}
    argv = [
        "prove",
        "--circuit",
        "porep-tiny",
        "--params",
        str(params),
        "--backend",
        "cpu",
        "--out",
        str(out["p.bin"]),
    ]
    assert main([*argv, "--public-out", str(out["p.json"]), "--vk-out", str(out["p.vk"])]) == 0
    said = capsys.readouterr().out
    assert out["p.vk"].read_bytes() == (params / "porep-tiny.vk").read_bytes()
    command = next(line for line in said.splitlines() if line.startswith("check it: "))
    assert main(command.removeprefix("check it: cuzk ").split()) == 0


@pytest.mark.parametrize("argv", [["circuits", "--estimate"], ["cache", "info"]])
def test_tables_do_not_wrap_in_a_narrow_terminal(cache, argv):
    env = {**os.environ, "COLUMNS": "40", "PYTHONPATH": SRC, "CUZK_CACHE_DIR": str(cache)}
    proc = subprocess.run(
        [sys.executable, "-m", "cuzk.cli.main", *argv], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    if argv[0] == "circuits":
        row = next(line for line in lines if "porep-13m" in line)
        assert "~13," in row and "estimate" in row  # name, estimate and source on one line
    else:
        assert any("total" in line and "0 B" in line for line in lines)  # label and size on one line
