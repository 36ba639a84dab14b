"""The fleet front on a local 3-node Ray cluster (real raylet processes), CPU engines, -tiny circuits.

Hot routing, fleet-wide priority, status across nodes, a node killed mid-job (every job terminal
once, the lost one re-run elsewhere), a node that joins later taking work; every proof verified.
Waits are on conditions with deadlines (the fleet's own conditions, or polls of its status).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fleet_helpers import ENGINE, verify_proofs

from cuzk.engine import JobStatus, Priority, ProofRequest

pytestmark = pytest.mark.slow


def until(cond: Callable[[], Any], timeout: float = 120.0, what: str = "condition") -> Any:
    """Poll `cond` until it is truthy; fail after `timeout` seconds (a deadline, not a sleep)."""
    deadline = time.monotonic() + timeout
    event = threading.Event()
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        event.wait(0.05)


@pytest.fixture
def fleet(ray_cluster: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    from cuzk.cluster.front import Fleet, FleetConfig

    slots = getattr(request, "param", 2)
    f = Fleet(FleetConfig(address=ray_cluster.address, engine=ENGINE, resources={"cuzk": 1}, slots=slots,
                          watch_s=0.5))  # fmt: skip
    assert f.wait_engines(3, timeout=300)
    finished: Counter[str] = Counter()
    f.add_listener(lambda result, _req: finished.update([result.job_id]))
    f.finished = finished  # type: ignore[attr-defined]
    try:
        yield f
    finally:
        f.shutdown(wait=False)


def engine_ids(fleet: Any) -> list[str]:
    return sorted(eid for eid, e in fleet.engines().items() if e["alive"])


def check(result: Any, circuit: str, seed: int) -> None:
    assert result.status is JobStatus.COMPLETED, result.error
    verify_proofs(circuit, seed, result.proof_bytes(), result.public_inputs)


def test_jobs_go_where_the_srs_is_hot_and_status_shows_every_node(fleet: Any) -> None:
    a, b, c = engine_ids(fleet)
    fleet.preload("winning-tiny", nodes=[a])
    fleet.preload("wpost-tiny", nodes=[b])
    for seed in (1, 2, 3):  # one after another: the hot engine always has a free slot
        h = fleet.submit(ProofRequest(circuit="winning-tiny", seed=seed))
        check(h.result(timeout=300), "winning-tiny", seed)
        assert h.node == a
    h = fleet.submit(ProofRequest(circuit="wpost-tiny", seed=5))
    check(h.result(timeout=300), "wpost-tiny", 5)
    assert h.node == b
    st = fleet.fleet_status()
    rows = {n["engine"]: n for n in st["fleet"]}
    assert set(rows) == {a, b, c} and all(n["alive"] and n["devices"] == 1 for n in rows.values())
    assert "winning-tiny" in rows[a]["hot"] and "wpost-tiny" in rows[b]["hot"]
    assert "winning-tiny" not in rows[c]["hot"]
    assert len(st["devices"]) == 3 and {d["node"] for d in st["devices"].values()} == {a, b, c}
    assert {e["node"] for e in st["srs"]} >= {a, b}
    assert st["counters"]["completed"] == 4
    assert all(s.attrs["node"] == b for s in h.result().timeline.spans)  # timelines carry the node
    freed = fleet.evict("winning-tiny")
    assert freed[(a, 0)][0] is True and freed[(c, 0)][0] is False
    assert "winning-tiny" not in {n["engine"]: n for n in fleet.fleet_status()["fleet"]}[a]["hot"]
    assert set(fleet.finished.values()) == {1}


@pytest.mark.parametrize("fleet", [1], indirect=True)  # one job per engine: the rest wait in the front
def test_critical_job_jumps_the_fleet_queue_and_takes_a_partition_boundary(fleet: Any) -> None:
    order: list[str] = []
    fleet.add_listener(lambda result, _req: order.append(result.job_id))
    fleet.preload("porep-tiny")
    long = [fleet.submit(ProofRequest(circuit="porep-tiny", seed=10 * i, partitions=12, request_id=f"long{i}"))
            for i in range(3)]  # fmt: skip
    waiting = [fleet.submit(ProofRequest(circuit="porep-tiny", seed=100 + i, request_id=f"wait{i}"))
               for i in range(3)]  # fmt: skip
    assert all(h.node is not None for h in long)  # one on each engine
    assert all(h.status is JobStatus.QUEUED and h.node is None for h in waiting)  # no free slot
    crit = fleet.submit(
        ProofRequest(circuit="porep-tiny", seed=500, priority=Priority.CRITICAL, request_id="crit")
    )
    assert crit.node is not None and crit.status is JobStatus.RUNNING  # placed at once, past the queue
    check(crit.result(timeout=300), "porep-tiny", 500)
    same_node = next(h for h in long if h.node == crit.node)
    for h in long:
        check(h.result(timeout=300), "porep-tiny", int(h.job_id[4:]) * 10)
    for i, h in enumerate(waiting):
        check(h.result(timeout=300), "porep-tiny", 100 + i)
    assert order.index("crit") < order.index(same_node.job_id)  # it ran inside the long job
    assert all(order.index("crit") < order.index(h.job_id) for h in waiting)
    assert set(fleet.finished.values()) == {1} and len(fleet.finished) == 7


def test_no_node_with_the_resources_the_job_waits_and_shutdown_cancels_it(ray_cluster: Any) -> None:
    from cuzk.cluster.front import Fleet, FleetConfig

    f = Fleet(FleetConfig(address=ray_cluster.address, engine=ENGINE, resources={"h200": 1}))
    try:
        assert f.engines() == {}
        h = f.submit(ProofRequest(circuit="winning-tiny", seed=1))
        assert h.status is JobStatus.QUEUED and h.node is None
    finally:
        f.shutdown(wait=False)
    r = h.result(timeout=0)
    assert r.status is JobStatus.CANCELLED


def start_front(cfg: Path, log: Path) -> tuple[subprocess.Popen[str], str, str]:
    """`cuzk daemon --config cfg` as a process; (process, grpc target, status URL) once it listens."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(log, "a") as err:
        proc = subprocess.Popen([sys.executable, "-m", "cuzk.cli.main", "daemon", "--config", str(cfg)],
                                stdout=subprocess.PIPE, stderr=err, text=True, env=env)  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until it listens (or dies)
    assert "listening on" in line, f"{line!r} {log.read_text()[-3000:]}"
    address = line.rsplit("listening on ", 1)[1].split(";")[0].strip()
    url = line.rsplit("status on ", 1)[1].strip()
    return proc, "unix:" + address[len("unix://") :], url


def test_the_daemon_fronts_the_fleet_over_grpc_and_its_journal_survives_a_restart(
    ray_cluster: Any, tmp_path: Path
) -> None:
    import grpc

    from cuzk.server.v1 import proving_pb2 as pb
    from cuzk.server.v1 import proving_pb2_grpc as pb_grpc

    cfg = tmp_path / "cuzk.toml"
    cfg.write_text(
        f'[daemon]\nlisten = "unix://{tmp_path}/cuzk.sock"\nstatus_listen = "127.0.0.1:0"\nbackend = "cpu"\n'
        f'state_dir = "{tmp_path}/state"\n[pipeline]\nmax_parallel_synthesis = 1\n[gpus]\n'
        f'gpu_workers_per_device = 1\n[memory]\ntotal_budget = "2GiB"\n[cluster]\n'
        f'address = "{ray_cluster.address}"\nresources = {{ cuzk = 1 }}\nwatch_interval = "1s"\n'
    )
    log = tmp_path / "front.log"
    proc, target, url = start_front(cfg, log)
    try:
        stub = pb_grpc.ProvingEngineStub(grpc.insecure_channel(target))
        until(lambda: len(stub.GetStatus(pb.GetStatusRequest()).gpus) == 3, what="three engines in GetStatus")
        resp = stub.Prove(
            pb.ProveRequest(submit=pb.SubmitProofRequest(circuit="porep-tiny", instance_seed=3))
        )
        r = resp.result
        assert r.status == pb.AwaitProofResponse.COMPLETED, r.error_message
        verify_proofs("porep-tiny", 3, r.proof, json.loads(r.public_inputs_json))
        st = stub.GetStatus(pb.GetStatusRequest())
        assert len({g.name.split(":")[0] for g in st.gpus}) == 3  # one device per node, named by node
        assert any(s.circuit_id == "porep-tiny" for s in st.loaded_srs)
        page = json.loads(urllib.request.urlopen(url + "status", timeout=30).read())
        assert len(page["fleet"]) == 3 and any("porep-tiny" in n["hot"] for n in page["fleet"])
        metrics = urllib.request.urlopen(url + "metrics", timeout=30).read().decode()
        assert metrics.count("cuzk_fleet_engine_up{") == 3
        out = subprocess.run([sys.executable, "-m", "cuzk.cli.main", "client", "--addr", target.replace(
            "unix:", "unix://"), "status"], capture_output=True, text=True, timeout=120)  # fmt: skip
        assert out.returncode == 0, out.stderr

        # kill -9 the front mid-job: its engines go with it (Ray ends an owner's actors); the
        # restarted front finds the job in the journal and runs it again under its id
        stub.SubmitProof(pb.SubmitProofRequest(circuit="porep-tiny", instance_seed=40, partitions=16,
                                               request_id="journaled"))  # fmt: skip
        until(lambda: any(q.in_progress for q in stub.GetStatus(pb.GetStatusRequest()).queues),
              what="the journaled job running")  # fmt: skip
        proc.kill()
        proc.communicate(timeout=60)
        proc, target, url = start_front(cfg, log)
        stub = pb_grpc.ProvingEngineStub(grpc.insecure_channel(target))
        r = stub.AwaitProof(pb.AwaitProofRequest(job_id="journaled", timeout_ms=600_000))
        assert r.status == pb.AwaitProofResponse.COMPLETED, r.error_message
        verify_proofs("porep-tiny", 40, r.proof, json.loads(r.public_inputs_json))
        assert "re-run" in log.read_text()
    finally:
        proc.terminate()
        proc.communicate(timeout=300)
    assert proc.returncode == 0, log.read_text()[-3000:]


def test_a_node_killed_mid_job_its_job_reruns_elsewhere_and_a_new_node_takes_work(
    fleet: Any, ray_cluster: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet.preload("porep-tiny")
    long = fleet.submit(ProofRequest(circuit="porep-tiny", seed=1000, partitions=24, request_id="long"))
    others = [
        fleet.submit(ProofRequest(circuit="porep-tiny", seed=2000 + 10 * i, partitions=2)) for i in range(3)
    ]

    def running_on_engine() -> str | None:  # the engine itself reports the job in flight
        st = fleet.fleet_status()
        return next((j["node"] for j in st["jobs_in_flight"] if j["job_id"] == "long"), None)

    victim = until(running_on_engine, what="the long job running on its engine")
    ray_node = fleet.engines()[victim]["ray_node"]
    node = next(n for n in ray_cluster.list_all_nodes() if n.node_id == ray_node)
    killed = time.monotonic()
    ray_cluster.remove_node(node, allow_graceful=False)  # SIGKILL: raylet, engine actor, its workers
    until(lambda: long.node not in (None, victim), what="the long job re-dispatched")
    redispatch_s = time.monotonic() - killed
    result = long.result(timeout=600)
    check(result, "porep-tiny", 1000)
    assert len(result.proofs) == 24 and len(result.proof_bytes()) == 24 * 192
    assert long._job.nodes[0] == victim and long._job.nodes[-1] != victim
    for i, h in enumerate(others):
        check(h.result(timeout=600), "porep-tiny", 2000 + 10 * i)
    assert not fleet.engines()[victim]["alive"]
    st = fleet.fleet_status()
    assert st["counters"]["redispatched"] >= 1
    assert {n["engine"]: n["alive"] for n in st["fleet"]}[victim] is False

    # a node that joins later gets an engine and takes work
    ray_cluster.add_node(num_cpus=1, resources={"cuzk": 1})
    assert fleet.wait_engines(3, timeout=300)
    (new,) = set(engine_ids(fleet)) - set(long._job.nodes) - {h.node for h in others}
    fleet.preload("winning-tiny", nodes=[new])
    h = fleet.submit(ProofRequest(circuit="winning-tiny", seed=9))
    check(h.result(timeout=300), "winning-tiny", 9)
    assert h.node == new
    # every accepted job reached exactly one terminal status
    assert set(fleet.finished.values()) == {1} and len(fleet.finished) == 5
    with capsys.disabled():
        print(f"\n[fleet] re-dispatched {redispatch_s:.2f} s after the node was killed")
