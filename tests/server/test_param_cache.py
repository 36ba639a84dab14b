"""The parameter cache under a daemon (issue 32 items 4 and 12).

Item 4: a cached set that was made and is gone (its manifest deleted, or its whole folder) is
an error naming the path, not a silent new key whose proofs fail against the vk the user has;
`cuzk setup --out` (asking for generation) makes a new one. Item 12: loading a complete set
takes no lock file, so a read-only cache works.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from daemon_proc import Daemon, verify

from cuzk import config
from cuzk.cli.main import main
from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow

CIRCUIT = "winning-tiny"


def _prove(d: Daemon, seed: int) -> pb.AwaitProofResponse:
    req = pb.SubmitProofRequest(circuit=CIRCUIT, instance_seed=seed)
    return d.stub().Prove(pb.ProveRequest(submit=req), timeout=600).result


def _folder() -> Path:
    from cuzk.circuits import get_circuit
    from cuzk.groth16.api import params_dir_for

    return params_dir_for(CIRCUIT, get_circuit(CIRCUIT).topology().hash)


def test_a_vanished_parameter_set_is_an_error_not_a_new_key(tmp_path: Path, cache: Path) -> None:
    d = Daemon(tmp_path, cache=cache)
    first = _prove(d, 1)
    assert first.status == pb.AwaitProofResponse.COMPLETED
    verify(CIRCUIT, 1, first)
    folder = _folder()
    vk_before = (folder / f"{CIRCUIT}.vk").read_bytes()
    code, log = d.stop()
    assert code == 0, log[-3000:]

    for damage in ("manifest", "folder"):
        if damage == "manifest":
            (folder / f"{CIRCUIT}.json").unlink()
        else:
            shutil.rmtree(folder)
        d.start()
        r = _prove(d, 2)
        code, log = d.stop()
        assert code == 0, log[-3000:]
        assert r.status == pb.AwaitProofResponse.FAILED, damage
        assert f"the parameters of {CIRCUIT} in {folder} are gone" in r.error_message
        assert "cuzk setup" in r.error_message
        assert not (folder / f"{CIRCUIT}.json").exists()  # no new key was made

    assert main(["setup", "--circuit", CIRCUIT, "--out", str(folder), "--backend", "cpu"]) == 0  # asked for
    config.reload()
    d.start()
    try:
        again = _prove(d, 3)
        assert again.status == pb.AwaitProofResponse.COMPLETED, again.error_message
        verify(CIRCUIT, 3, again)  # against the new key
        assert (folder / f"{CIRCUIT}.vk").read_bytes() != vk_before
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]


def test_a_complete_set_loads_without_a_lock_file(cache: Path) -> None:
    from cuzk.backends import get_backend
    from cuzk.circuits import get_circuit
    from cuzk.groth16.api import load_or_create_parameters

    topo = get_circuit(CIRCUIT).topology()
    folder, _ = load_or_create_parameters(CIRCUIT, topo, topo.hash, get_backend("cpu"))  # made once
    lock = folder.with_name(f".{folder.name}.lock")
    lock.unlink()
    loaded, params = load_or_create_parameters(CIRCUIT, topo, topo.hash, get_backend("cpu"))
    assert loaded == folder and params.vk is not None
    assert not lock.exists()  # a read-only cache (EROFS on creating this file) would have failed
