"""One identity per proving key (cuzk.engine.keys), used by requests, batching, the SRS manager,
status, metrics, preload, evict and the daemon alike.

Each test here failed before the keys module: the engine keyed a zkey by its absolute path while
evict and the metrics took the path as written; preload of a zkey raised UnknownCircuitError
(so a daemon with a zkey id in srs.preload did not start); and daemon preload/PreloadSRS/EvictSRS
named circuits without srs.param_cache, so they loaded or evicted entries requests never used.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from engine_helpers import WAIT

from cuzk.backends import get_backend
from cuzk.engine import Engine, EngineConfig, JobStatus, ProofRequest
from cuzk.engine.keys import KeyId, SrsKey, zkey_ref
from cuzk.errors import UnknownCircuitError
from cuzk.groth16 import verify
from cuzk.interop.setup import setup_zkey
from cuzk.interop.wtns import write_wtns
from cuzk.interop.zkey import read_zkey, write_zkey

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "interop"))
from circom_toy import toy, witness_array

CIRCUIT = "winning-tiny"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("keys")
    r1cs, w = toy()
    write_zkey(d / "toy.zkey", setup_zkey(r1cs, get_backend("cpu")))
    write_wtns(d / "toy.wtns", witness_array(w))
    return {"zkey": d / "toy.zkey", "wtns": d / "toy.wtns"}


@pytest.fixture()
def engine() -> Iterator[Engine]:
    with Engine(EngineConfig(backend="cpu", memory_budget="256MiB")) as e:
        yield e


def srs_keys(engine: Engine) -> list[tuple]:
    return sorted(tuple(e.key) for e in engine.status().srs if e.tier == "hot")


def test_a_zkey_is_one_key_however_its_path_is_written(
    engine: Engine, files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from cuzk.server.metrics import EngineMetrics

    monkeypatch.chdir(files["zkey"].parent)
    request = ProofRequest(zkey="toy.zkey", witnesses=["toy.wtns"])
    r = engine.submit(request).result(WAIT)
    assert r.status is JobStatus.COMPLETED, r.error
    vk = read_zkey(files["zkey"]).verifying_key()
    assert verify(vk, r.public_inputs[0], r.proofs[0])
    ref = zkey_ref(files["zkey"])
    assert srs_keys(engine) == [(ref, 0, None)]
    metrics = EngineMetrics(engine.status)
    metrics.observe_result(r, request)
    assert f'cuzk_jobs_total{{circuit="{ref}",status="completed"}} 1.0' in metrics.text()
    assert engine.preload("./toy.zkey")[0][0]  # already loaded: the same key
    assert srs_keys(engine) == [(ref, 0, None)]  # no second entry for another spelling
    was_loaded, freed = engine.evict(str(files["zkey"]))[0]
    assert was_loaded and freed > 0 and srs_keys(engine) == []


def test_preload_takes_a_zkey_path_and_refuses_unknown_names(engine: Engine, files: dict[str, Path]) -> None:
    already, _seconds = engine.preload(str(files["zkey"]))[0]
    assert not already and srs_keys(engine) == [(zkey_ref(files["zkey"]), 0, None)]
    with pytest.raises(UnknownCircuitError, match=r"or give the path of a \.zkey file"):
        engine.preload("no-such-circuit")


def test_the_engines_parameter_folder_is_the_one_requests_preload_and_evict_use(tmp_path: Path) -> None:
    from cuzk.cli.main import main

    folder = str(tmp_path / "params")  # a `cuzk setup` folder, as srs.param_cache names one
    assert main(["setup", "--circuit", CIRCUIT, "--out", folder, "--backend", "cpu"]) == 0
    cfg = EngineConfig(backend="cpu", memory_budget="256MiB", params_dir=folder)
    with Engine(cfg) as engine:
        assert not engine.preload(CIRCUIT)[0][0]
        # the daemon's service names the folder on each request; preload names it through the config
        r = engine.submit(ProofRequest(circuit=CIRCUIT, seed=3, params_dir=folder)).result(WAIT)
        assert r.status is JobStatus.COMPLETED, r.error
        assert srs_keys(engine) == [(CIRCUIT, 0, folder)]  # one entry: the request found it loaded
        assert "srs_load" in r.timeline.totals() and r.timeline.totals()["srs_load"] < 1.0
        was_loaded, freed = engine.evict(CIRCUIT)[0]
        assert was_loaded and freed > 0 and srs_keys(engine) == []


def test_the_daemon_gives_the_engine_its_parameter_folder(tmp_path: Path) -> None:
    from cuzk.server.config import parse_config
    from cuzk.server.daemon import engine_config

    cfg = parse_config({"srs": {"param_cache": str(tmp_path)}})
    assert engine_config(cfg).params_dir == str(tmp_path)
    assert engine_config(parse_config({})).params_dir is None


def test_synthesis_threads_reach_the_workers_and_gpu_threads_is_reported_unused() -> None:
    from cuzk.server.config import parse_config
    from cuzk.server.daemon import engine_config

    cfg = parse_config({"synthesis": {"threads": 3}, "gpus": {"gpu_threads": 32}})
    assert cfg.ignored == ("gpus.gpu_threads",)  # the daemon logs it as accepted with no effect
    ecfg = engine_config(cfg)
    assert ecfg.synthesis_threads == 3
    with Engine(dataclasses.replace(ecfg, backend="cpu", synthesis_workers=1, memory_budget="256MiB")) as e:
        assert e.pool.threads == 3  # each worker's numba thread count


def test_a_daemon_preloads_evicts_and_reloads_a_zkey_id(tmp_path: Path, files: dict[str, Path]) -> None:
    from cuzk.server.config import parse_config
    from cuzk.server.daemon import Daemon
    from cuzk.server.v1 import proving_pb2 as pb
    from cuzk.server.v1 import proving_pb2_grpc as pb_grpc

    sock = tmp_path / "d.sock"
    cfg = parse_config({
        "daemon": {"listen": f"unix://{sock}", "backend": "cpu", "state_dir": str(tmp_path / "state")},
        "memory": {"total_budget": "1GiB"},
        "srs": {"preload": ["toy"]},
        "zkeys": {"toy": str(files["zkey"])},
    })  # fmt: skip
    d = Daemon(cfg)
    try:
        d.start()  # raised UnknownCircuitError before: srs.preload named a zkey id
        ref = zkey_ref(files["zkey"])
        assert srs_keys(d.engine) == [(ref, 0, None)]
        with grpc.insecure_channel(f"unix:{sock}") as channel:
            stub = pb_grpc.ProvingEngineStub(channel)
            assert stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id="toy")).already_loaded
            assert stub.EvictSRS(pb.EvictSrsRequest(circuit_id="toy")).was_loaded
            assert srs_keys(d.engine) == []
            with pytest.raises(grpc.RpcError):  # a client never names a file of its choosing
                stub.PreloadSRS(pb.PreloadSrsRequest(circuit_id=str(files["zkey"])))
    finally:
        d.stop()


def test_key_ids() -> None:
    assert KeyId.named(CIRCUIT).srs(1) == SrsKey(CIRCUIT, 1, None)
    assert KeyId.named(CIRCUIT, params_dir="/p").batch_key("") == f"{CIRCUIT}|/p|"
    a = KeyId.of(ProofRequest(zkey="x/../toy.zkey", witnesses=["w"]))
    b = KeyId.of(ProofRequest(zkey="toy.zkey", witnesses=["w"]))
    assert a == b and a.is_zkey and a.params_dir is None
    assert KeyId.of(ProofRequest(circuit=CIRCUIT, seed=1), default_params_dir="/d").params_dir == "/d"
    assert (
        KeyId.of(ProofRequest(circuit=CIRCUIT, seed=1, params_dir="/r"), default_params_dir="/d").params_dir
        == "/r"
    )
