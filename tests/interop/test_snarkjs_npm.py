"""End to end with the real tools: circom2 compiles, snarkjs sets up and verifies, cuzk proves.

Installs pinned snarkjs, circom2 and circomlib from npm into a cached folder
(CUZK_NPM_CACHE, else the cuzk cache dir) on first use; skipped when node/npm
are missing. The powers-of-tau (2^8, one contribution) is cached there too, so
after the first run this module takes well under a minute.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from cuzk.algebra import constants as C
from cuzk.cli.main import main
from tools.toolchain import Toolchain, unavailable_reason

pytestmark = pytest.mark.npm

PTAU_POWER = 8

#: Poseidon from circomlib plus a product with the public input: 241 constraints with --O2,
#: 2 public signals (the output, then the public input), so a 2^8 domain.
CIRCUIT = """
pragma circom 2.0.0;
include "circomlib/circuits/poseidon.circom";

template Main() {
    signal input a;
    signal input b;
    signal input pubx;
    signal output h;
    component p = Poseidon(2);
    p.inputs[0] <== a;
    p.inputs[1] <== b;
    signal t;
    t <== pubx * a;
    h <== p.out + t;
}

component main {public [pubx]} = Main();
"""


@dataclass
class Circuit:
    tools: Toolchain
    dir: Path
    r1cs: Path
    wasm: Path
    wtns: Path
    zkey: Path  # made by snarkjs from a contributed ptau, plus one zkey contribution
    vk: Path  # snarkjs zkey export verificationkey

    def snarkjs_verify(self, vk: Path, public: Path, proof: Path) -> tuple[bool, str]:
        rc, out = self.tools.snarkjs_status("groth16", "verify", vk, public, proof)
        return rc == 0 and "OK!" in out, out


@pytest.fixture(scope="module")
def circuit(tmp_path_factory: pytest.TempPathFactory) -> Circuit:
    reason = unavailable_reason()
    if reason:
        pytest.skip(f"circom/snarkjs interop test needs Node.js: {reason}")
    tools = Toolchain.ensure()
    d = tmp_path_factory.mktemp("circom")
    (d / "main.circom").write_text(CIRCUIT)
    r1cs = tools.circom(d / "main.circom", d, "--O2")
    wasm = d / "main_js" / "main.wasm"
    wtns = tools.witness(wasm, {"a": "3", "b": "5", "pubx": "7"}, d / "main.wtns")
    ptau = tools.ptau(PTAU_POWER)
    tools.snarkjs("groth16", "setup", r1cs, ptau, d / "main_0.zkey")
    tools.snarkjs(
        "zkey", "contribute", d / "main_0.zkey", d / "main.zkey", "--name=cuzk-test", "-e=cuzk test"
    )
    tools.snarkjs("zkey", "export", "verificationkey", d / "main.zkey", d / "vk.json")
    return Circuit(tools, d, r1cs, wasm, wtns, d / "main.zkey", d / "vk.json")


def _cuzk(*args: str | Path) -> int:
    return main(["groth16", *map(str, args)])


def _shape(text: str) -> str:
    """The JSON text with every decimal string replaced: layout and key order only."""
    return re.sub(r'"\d+"', '"N"', text)


def _tamper_public(src: Path, dst: Path, index: int = -1) -> Path:
    pub = json.loads(src.read_text())
    pub[index] = str((int(pub[index]) + 1) % C.R)
    dst.write_text(json.dumps(pub))
    return dst


def _tamper_proof(src: Path, dst: Path) -> Path:
    """Negate C: still a valid group element, so only the pairing check can catch it."""
    obj = json.loads(src.read_text())
    obj["pi_c"][1] = str(C.Q - int(obj["pi_c"][1]))
    dst.write_text(json.dumps(obj))
    return dst


def test_snarkjs_verifies_cuzk_proofs(circuit: Circuit) -> None:
    d = circuit.dir
    assert (
        _cuzk("prove", "--backend", "cpu", circuit.zkey, circuit.wtns, d / "proof.json", d / "public.json")
        == 0
    )
    ok, out = circuit.snarkjs_verify(circuit.vk, d / "public.json", d / "proof.json")
    assert ok, out
    assert _cuzk("verify", circuit.vk, d / "public.json", d / "proof.json") == 0

    circuit.tools.snarkjs(
        "groth16", "prove", circuit.zkey, circuit.wtns, d / "sj_proof.json", d / "sj_public.json"
    )
    assert (d / "public.json").read_bytes() == (d / "sj_public.json").read_bytes()
    assert _shape((d / "proof.json").read_text()) == _shape((d / "sj_proof.json").read_text())


def test_tampered_proofs_and_wrong_inputs_fail_in_both(circuit: Circuit) -> None:
    d = circuit.dir
    _cuzk("prove", circuit.zkey, circuit.wtns, d / "p.json", d / "q.json")
    bad_public = _tamper_public(d / "q.json", d / "q_bad.json")
    bad_proof = _tamper_proof(d / "p.json", d / "p_bad.json")
    for public, proof in ((bad_public, d / "p.json"), (d / "q.json", bad_proof)):
        ok, out = circuit.snarkjs_verify(circuit.vk, public, proof)
        assert not ok and "Invalid proof" in out, out
        assert _cuzk("verify", circuit.vk, public, proof) == 1


def test_our_verifier_agrees_on_snarkjs_proofs(circuit: Circuit) -> None:
    d = circuit.dir
    circuit.tools.snarkjs("groth16", "prove", circuit.zkey, circuit.wtns, d / "s.json", d / "t.json")
    assert _cuzk("verify", circuit.vk, d / "t.json", d / "s.json") == 0
    assert _cuzk("verify", circuit.vk, _tamper_public(d / "t.json", d / "t_bad.json"), d / "s.json") == 1
    assert _cuzk("verify", circuit.vk, d / "t.json", _tamper_proof(d / "s.json", d / "s_bad.json")) == 1


def test_export_vk_matches_snarkjs_byte_for_byte(circuit: Circuit) -> None:
    out = circuit.dir / "vk_cuzk.json"
    assert _cuzk("export-vk", circuit.zkey, out) == 0
    assert out.read_bytes() == circuit.vk.read_bytes()


def test_cuzk_setup_key_works_in_snarkjs(circuit: Circuit) -> None:
    d = circuit.dir
    assert _cuzk("setup", circuit.r1cs, d / "dev.zkey") == 0
    assert _cuzk("export-vk", d / "dev.zkey", d / "dev_vk.json") == 0
    circuit.tools.snarkjs("zkey", "export", "verificationkey", d / "dev.zkey", d / "dev_vk_sj.json")
    assert (d / "dev_vk.json").read_bytes() == (d / "dev_vk_sj.json").read_bytes()
    circuit.tools.snarkjs("groth16", "prove", d / "dev.zkey", circuit.wtns, d / "dp.json", d / "dq.json")
    ok, out = circuit.snarkjs_verify(d / "dev_vk.json", d / "dq.json", d / "dp.json")
    assert ok, out
    assert _cuzk("prove", d / "dev.zkey", circuit.wtns, d / "cp.json", d / "cq.json") == 0
    ok, out = circuit.snarkjs_verify(d / "dev_vk.json", d / "cq.json", d / "cp.json")
    assert ok, out
    ok, _ = circuit.snarkjs_verify(
        d / "dev_vk.json", _tamper_public(d / "cq.json", d / "cq_bad.json"), d / "cp.json"
    )
    assert not ok


def test_key_without_contribution_warns(circuit: Circuit, capsys: pytest.CaptureFixture[str]) -> None:
    """tau = 1 leaves the public inputs unbound: snarkjs then accepts a wrong input; cuzk says so."""
    d = circuit.dir
    ptau = circuit.tools.ptau(PTAU_POWER, contribute=False)
    circuit.tools.snarkjs("groth16", "setup", circuit.r1cs, ptau, d / "weak.zkey")
    circuit.tools.snarkjs("zkey", "export", "verificationkey", d / "weak.zkey", d / "weak_vk.json")
    capsys.readouterr()
    assert _cuzk("prove", d / "weak.zkey", circuit.wtns, d / "wp.json", d / "wq.json") == 0
    assert "bound by nothing" in capsys.readouterr().err
    ic = json.loads((d / "weak_vk.json").read_text())["IC"]
    unbound = [i for i in range(1, len(ic)) if ic[i] == ["0", "1", "0"]]
    assert unbound, "a key from an uncontributed ptau should leave some public signal unbound"
    wrong = _tamper_public(d / "wq.json", d / "wq_bad.json", unbound[0] - 1)
    ok, _ = circuit.snarkjs_verify(d / "weak_vk.json", wrong, d / "wp.json")
    assert ok  # the hazard the warning is about
    assert _cuzk("verify", d / "weak_vk.json", wrong, d / "wp.json") == 0
    assert "bound by nothing" in capsys.readouterr().err


def test_snarkjs_verifies_exported_native_proofs(circuit: Circuit, native: dict[str, Path]) -> None:
    out = circuit.dir / "native"
    assert main(["export", "snarkjs", str(native["vk"]), str(out), "--proof", str(native["proof"]),
                 "--public", str(native["public"])]) == 0  # fmt: skip
    for i in range(2):
        ok, text = circuit.snarkjs_verify(
            out / "verification_key.json", out / f"public_{i}.json", out / f"proof_{i}.json"
        )
        assert ok, text
    ok, _ = circuit.snarkjs_verify(out / "verification_key.json", out / "public_0.json", out / "proof_1.json")
    assert not ok
