"""`cuzk setup`, `cuzk prove`, `cuzk verify` end to end, with their exit codes."""

from __future__ import annotations

import json

import pytest

from cuzk.circuits import get_circuit
from cuzk.cli.main import main

CIRCUIT = "porep-tiny"


@pytest.fixture(scope="module")
def params_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("params")
    assert main(["setup", "--circuit", CIRCUIT, "--out", str(out), "--backend", "cpu"]) == 0
    return out


def test_setup_writes_the_three_files(params_dir):
    names = sorted(p.name for p in params_dir.iterdir())
    assert names == [f"{CIRCUIT}.json", f"{CIRCUIT}.params", f"{CIRCUIT}.vk"]
    manifest = json.loads((params_dir / f"{CIRCUIT}.json").read_text())
    assert manifest["topology_hash"] == get_circuit(CIRCUIT).topology().hash


def test_prove_then_verify(params_dir, tmp_path):
    proof, public = tmp_path / "proof.bin", tmp_path / "public.json"
    args = ["prove", "--circuit", CIRCUIT, "--params", str(params_dir), "--seed", "5", "--backend", "cpu"]
    assert main([*args, "--out", str(proof), "--public-out", str(public)]) == 0
    assert len(proof.read_bytes()) == 192
    values = json.loads(public.read_text())
    assert all(isinstance(v, str) and v.isdigit() for v in values)
    vk = str(params_dir / f"{CIRCUIT}.vk")
    assert main(["verify", "--vk", vk, "--proof", str(proof), "--public", str(public)]) == 0
    values[0] = str(int(values[0]) + 1)
    public.write_text(json.dumps(values))
    assert main(["verify", "--vk", vk, "--proof", str(proof), "--public", str(public)]) == 1
    proof.write_bytes(proof.read_bytes()[:100])
    assert main(["verify", "--vk", vk, "--proof", str(proof), "--public", str(public)]) == 2


def test_batch_proofs_concatenate(params_dir, tmp_path):
    proof, public = tmp_path / "proof.bin", tmp_path / "public.json"
    args = ["prove", "--circuit", CIRCUIT, "--params", str(params_dir), "--batch", "2", "--backend", "cpu"]
    assert main([*args, "--out", str(proof), "--public-out", str(public)]) == 0
    assert len(proof.read_bytes()) == 384
    vk = str(params_dir / f"{CIRCUIT}.vk")
    assert main(["verify", "--vk", vk, "--proof", str(proof), "--public", str(public)]) == 0


def test_bad_witness_writes_no_proof(params_dir, tmp_path, monkeypatch):
    circuit = get_circuit(CIRCUIT)
    real = type(circuit).random_instance
    monkeypatch.setattr(type(circuit), "random_instance", lambda self, seed=0: self.corrupt(real(self, seed)))
    proof = tmp_path / "proof.bin"
    rc = main(
        ["prove", "--circuit", CIRCUIT, "--params", str(params_dir), "--out", str(proof), "--backend", "cpu"]
    )
    assert rc == 3
    assert not proof.exists()


def test_errors_are_clear_exit_codes(tmp_path, capsys):
    assert main(["prove", "--circuit", "no-such-circuit"]) == 2
    assert "no-such-circuit" in capsys.readouterr().err
    assert main(["verify", "--vk", str(tmp_path / "missing.vk"), "--proof", "x", "--public", "y"]) == 2
    with pytest.raises(SystemExit) as exc:
        main(["prove"])
    assert exc.value.code == 2
    from cuzk.backends import cuda_unavailable_reason

    if cuda_unavailable_reason() is not None:
        assert main(["prove", "--circuit", CIRCUIT, "--backend", "cuda"]) == 2
        assert "backend 'cuda' was requested" in capsys.readouterr().err


def test_unwritable_outputs_are_refused_before_proving(params_dir, tmp_path, capsys):
    args = ["prove", "--circuit", CIRCUIT, "--params", str(params_dir), "--backend", "cpu"]
    assert main([*args, "--out", str(tmp_path / "missing" / "p.bin")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main([*args, "--out", str(tmp_path), "--public-out", str(tmp_path / "q.json")]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert not (tmp_path / "q.json").exists()


def test_timeline_idle_answers_for_a_single_proof(params_dir, tmp_path, capsys):
    """The README's "Finding a regression" block as written: `cuzk prove --timeline run.jsonl`, then
    `cuzk timeline idle run.jsonl` (issue 29: it exited 2, "no 'device_lock' spans")."""
    run = tmp_path / "run.jsonl"
    args = ["prove", "--circuit", CIRCUIT, "--params", str(params_dir), "--backend", "cpu"]
    assert main([*args, "--timeline", str(run)]) == 0
    capsys.readouterr()
    assert main(["timeline", "idle", str(run), "--json", str(tmp_path / "idle.json")]) == 0
    out = capsys.readouterr().out
    assert "one proof, phases in turn (no engine lock)" in out and "  synthesis: " in out
    (report,) = json.loads((tmp_path / "idle.json").read_text())
    names = {h["phase"] for h in report["host"]}
    assert "synthesis" in names and not names & {"ntt_h", "msm_h", "topology", "load_params"}
    assert 0 < report["device_s"] < report["window_s"] and 0 < report["busy"] < 1
