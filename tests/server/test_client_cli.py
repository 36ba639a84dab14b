"""`cuzk client` end to end against a daemon subprocess (CPU backend): every sub-command, text and --json,
and the exit codes (0 done, 3 cancelled or failed, 4 timeout, 2 bad use). The proof `client prove`
writes is checked by `cuzk verify` with the daemon's vk, and a tampered copy is rejected.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from daemon_proc import Daemon
from test_daemon_e2e import LONG_JOB

from cuzk import config
from cuzk.cli.main import main

pytestmark = pytest.mark.slow


def _vk(name: str) -> Path:
    from cuzk.circuits import get_circuit
    from cuzk.groth16.api import params_dir_for

    c = get_circuit(name)
    return params_dir_for(c.name, c.topology().hash) / f"{c.name}.vk"


def test_every_client_command(tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config.reload()
    d = Daemon(tmp_path, cache=cache)

    def client(*argv: str) -> tuple[int, str]:
        capsys.readouterr()
        code = main(["client", "--addr", d.address, *argv])
        return code, capsys.readouterr().out

    try:
        proof, public = tmp_path / "p.bin", tmp_path / "pub.json"
        code, out = client("prove", "--circuit", "winning-tiny", "--seed", "3", "--out", str(proof),
                           "--public-out", str(public))  # fmt: skip
        assert code == 0 and ": COMPLETED" in out and "192 proof bytes; queue " in out, out
        vk = str(_vk("winning-tiny"))
        assert main(["verify", "--vk", vk, "--proof", str(proof), "--public", str(public)]) == 0
        bad = bytearray(proof.read_bytes())
        bad[100] ^= 1
        (tmp_path / "bad.bin").write_bytes(bytes(bad))
        assert (
            main(["verify", "--vk", vk, "--proof", str(tmp_path / "bad.bin"), "--public", str(public)]) != 0
        )

        code, out = client("--json", "submit", "--circuit", "porep-tiny", "--partitions", str(LONG_JOB),
                           "--request-id", "long-1")  # fmt: skip
        assert code == 0 and json.loads(out)["job_id"] == "long-1"
        code, out = client("await", "long-1", "--wait", "0.05")
        assert code == 4 and "long-1: TIMEOUT" in out
        code, out = client("cancel", "long-1")
        assert code == 0 and out.startswith("long-1: cancelled")
        code, out = client("--json", "await", "long-1")
        assert code == 3 and json.loads(out)["status"] == "CANCELLED"

        code, out = client("preload", "snap-tiny")
        assert code == 0 and "snap-tiny: loaded in " in out
        assert client("preload", "snap-tiny") == (0, "snap-tiny: already loaded\n")
        code, out = client("--json", "status")
        (srs,) = [s for s in json.loads(out)["loaded_srs"] if s["circuit_id"] == "snap-tiny"]
        code, out = client("evict", "snap-tiny")
        assert code == 0 and out == f"snap-tiny: evicted, {srs['size_bytes']} bytes freed\n"
        code, out = client("--json", "evict", "snap-tiny")
        assert code == 0 and json.loads(out) == {"was_loaded": False, "freed_bytes": 0}
        code, out = client("metrics")
        assert code == 0 and "# TYPE cuzk_proofs_completed_total" in out
        code, out = client("status")
        assert code == 0 and "proofs completed 1, failed 0" in out  # the cancelled job is not a failure

        capsys.readouterr()
        assert main(["client", "--addr", d.address, "await", "never-submitted"]) == 2
        assert "NOT_FOUND" in capsys.readouterr().err
        assert main(["client", "--addr", "nonsense", "status"]) == 2
        assert "neither unix:///path nor host:port" in capsys.readouterr().err
    finally:
        code, err = d.stop()
    assert code == 0, err[-3000:]
