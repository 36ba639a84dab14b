"""`cuzk groth16 ...` in-process: files written, exit codes 0 valid / 1 invalid / 2 bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from circom_toy import witness_array

from cuzk.algebra import constants as C
from cuzk.cli.main import main
from cuzk.interop import snarkjs_json as J
from cuzk.interop.wtns import write_wtns


@pytest.fixture(scope="module")
def proved(toy_files, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli")
    files = {
        "zkey": d / "c.zkey",
        "vk": d / "vk.json",
        "proof": d / "proof.json",
        "public": d / "public.json",
    }
    assert main(["groth16", "setup", str(toy_files.r1cs_path), str(files["zkey"])]) == 0
    args = [str(files["zkey"]), str(toy_files.wtns_path), str(files["proof"]), str(files["public"])]
    assert main(["groth16", "prove", "--backend", "cpu", *args]) == 0
    assert main(["groth16", "export-vk", str(files["zkey"]), str(files["vk"])]) == 0
    return files


def _verify(vk: Path, public: Path, proof: Path) -> int:
    return main(["groth16", "verify", str(vk), str(public), str(proof)])


def test_prove_writes_snarkjs_files(proved, toy_files, capsys) -> None:
    assert json.loads(proved["public"].read_text()) == [str(v) for v in toy_files.witness[1:3]]
    assert _verify(proved["vk"], proved["public"], proved["proof"]) == 0
    assert capsys.readouterr().out == "OK!\n"


def test_wrong_public_input_is_invalid(proved, tmp_path: Path) -> None:
    pub = json.loads(proved["public"].read_text())
    pub[1] = str(int(pub[1]) + 1)
    bad = tmp_path / "public.json"
    bad.write_text(json.dumps(pub))
    assert _verify(proved["vk"], bad, proved["proof"]) == 1


@pytest.mark.parametrize("how", ["swap", "off_curve"])
def test_tampered_proof_is_invalid(how: str, proved, tmp_path: Path) -> None:
    obj = json.loads(proved["proof"].read_text())
    if how == "swap":
        obj["pi_a"], obj["pi_c"] = obj["pi_c"], obj["pi_a"]
    else:
        obj["pi_c"][0] = str((int(obj["pi_c"][0]) + 1) % C.Q)
    bad = tmp_path / "proof.json"
    bad.write_text(json.dumps(obj))
    assert _verify(proved["vk"], proved["public"], bad) == 1


def test_bad_input_exits_2(proved, tmp_path: Path, capsys) -> None:
    (tmp_path / "junk.json").write_text("[1, 2")
    assert _verify(proved["vk"], proved["public"], tmp_path / "junk.json") == 2
    (tmp_path / "short.json").write_text('["1"]')
    assert _verify(proved["vk"], tmp_path / "short.json", proved["proof"]) == 2
    assert "expects 2 public inputs" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["groth16", "verify", str(proved["vk"])])
    assert exc.value.code == 2
    assert main(["groth16", "prove", str(proved["vk"]), "w.wtns", "p.json", "q.json"]) == 2  # not a zkey


def test_unsatisfying_witness_fails_to_prove(proved, toy_files, tmp_path: Path, capsys) -> None:
    w = list(toy_files.witness)
    w[5] = (w[5] + 1) % C.R
    write_wtns(tmp_path / "bad.wtns", witness_array(w))
    out = [str(tmp_path / "p.json"), str(tmp_path / "q.json")]
    assert main(["groth16", "prove", str(proved["zkey"]), str(tmp_path / "bad.wtns"), *out]) == 3
    assert "does not satisfy" in capsys.readouterr().err
    assert not (tmp_path / "p.json").exists()
    # --no-check (snarkjs's behaviour) writes the proof unverified; the verifier then refuses it
    assert (
        main(["groth16", "prove", "--no-check", str(proved["zkey"]), str(tmp_path / "bad.wtns"), *out]) == 0
    )
    assert _verify(proved["vk"], tmp_path / "q.json", tmp_path / "p.json") == 1


def test_unbound_inputs_warn_on_verify(proved, tmp_path: Path, capsys) -> None:
    obj = json.loads(proved["vk"].read_text())
    obj["IC"][1] = ["0", "1", "0"]
    vk = tmp_path / "vk.json"
    vk.write_text(J.dumps(obj))
    assert _verify(vk, proved["public"], proved["proof"]) == 1
    err = capsys.readouterr().err
    assert "WARNING" in err and "bound by nothing" in err


def test_unwritable_outputs_are_refused_before_any_work(proved, toy_files, tmp_path: Path, capsys) -> None:
    missing = tmp_path / "no-such-folder"
    args = [str(proved["zkey"]), str(toy_files.wtns_path), str(missing / "p.json"), str(tmp_path / "q.json")]
    assert main(["groth16", "prove", "--backend", "cpu", *args]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "q.json").exists()
    assert main(["groth16", "setup", str(toy_files.r1cs_path), str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
