"""A `cuzk daemon` subprocess for tests: start, stub, metrics, SIGTERM or kill -9, restart; proof checks.

The daemon's stderr (its log) goes to a file, not a pipe: a chatty daemon cannot fill a pipe
and block, a killed one leaves its log to read. Every wait is on an RPC answer, a line the
daemon prints or a process exit, never on a sleep.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import grpc

from cuzk.server.v1 import proving_pb2 as pb
from cuzk.server.v1 import proving_pb2_grpc as pb_grpc

#: Proofs that daemons returned to these tests, by verdict (the session summary prints them).
PROOFS: Counter[str] = Counter()


class Daemon:
    """One daemon process on `tmp/cuzk.sock` (or `listen`), config in `tmp/cuzk.toml`.

    `extra` goes into [daemon]; `sections` is appended as more TOML (tables other than
    [daemon], [pipeline] and [memory]); `budget` is memory.total_budget.
    """

    def __init__(
        self,
        tmp: Path,
        *,
        cache: Path,
        extra: str = "",
        listen: str | None = None,
        grace: str = "60s",
        budget: str = "4GiB",
        sections: str = "",
    ) -> None:
        self.tmp = tmp
        self.sock = tmp / "cuzk.sock"
        self.listen = listen or f"unix://{self.sock}"
        self.config = tmp / "cuzk.toml"
        self.config.write_text(
            f'[daemon]\nlisten = "{self.listen}"\nbackend = "cpu"\ngrace_period = "{grace}"\n'
            f'{extra}\n[pipeline]\nmax_parallel_synthesis = 1\n[memory]\ntotal_budget = "{budget}"\n'
            f"{sections}\n"
        )
        self.cache = cache
        self.log = tmp / "daemon.log"
        self.runs = 0
        self.start()

    def start(self) -> None:
        """Start (or start again, on the same config and state) and wait for "listening on"."""
        env = {**os.environ, "CUZK_CACHE_DIR": str(self.cache), "PYTHONUNBUFFERED": "1"}
        self.runs += 1
        with open(self.log, "a") as err:
            err.write(f"--- run {self.runs} ---\n")
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cuzk.cli.main", "daemon", "--config", str(self.config)],
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=env,
            )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # blocks until the daemon says where it listens (or dies)
        if "listening on" not in line:
            self.proc.wait(timeout=60)
            raise AssertionError(f"daemon did not start: {line!r} {self.log.read_text()[-3000:]}")
        self.banner = line  # "cuzk daemon listening on ADDR[; status on http://HOST:PORT/]"
        self.address = line.rsplit("listening on ", 1)[1].split(";")[0].strip()
        self.signalled = False

    def target(self) -> str:
        return (
            "unix:" + self.address[len("unix://") :] if self.address.startswith("unix://") else self.address
        )

    def stub(self, credentials: grpc.ChannelCredentials | None = None) -> pb_grpc.ProvingEngineStub:
        if credentials is not None:
            return pb_grpc.ProvingEngineStub(grpc.secure_channel(self.target(), credentials))
        return pb_grpc.ProvingEngineStub(grpc.insecure_channel(self.target()))

    def terminate(self) -> None:
        """SIGTERM, once: the daemon drains and exits by itself."""
        if not self.signalled and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.signalled = True

    def kill(self) -> None:
        """kill -9: no drain, no clean-up; the socket file stays behind."""
        self.proc.kill()
        self.proc.communicate(timeout=60)
        assert self.proc.returncode == -signal.SIGKILL

    def stop(self) -> tuple[int, str]:
        """SIGTERM and wait: (exit code, the log so far)."""
        self.terminate()
        self.proc.communicate(timeout=300)
        return self.proc.returncode, self.log.read_text()

    def await_log(self, text: str) -> None:
        """Until the daemon's log (this run's part) holds `text`; fails if the daemon exits first.

        The tick is a wait on the process's exit, so an exit is seen at once."""
        marker = f"--- run {self.runs} ---\n"
        while True:
            if text in self.log.read_text().rsplit(marker, 1)[-1]:
                return
            try:
                self.proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
            if text not in self.log.read_text().rsplit(marker, 1)[-1]:
                raise AssertionError(f"the daemon exited before logging {text!r}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def children(self) -> list[tuple[int, str]]:
        """(pid, command line) of the daemon's child processes (synthesis workers, resource tracker)."""
        out = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == self.proc.pid:
                out.append((int(entry.name), cmdline))
        return out


def metric(stub: pb_grpc.ProvingEngineStub, name: str) -> float:
    """One unlabelled sample of GetMetrics' text (e.g. cuzk_rpc_waiting)."""
    text = stub.GetMetrics(pb.GetMetricsRequest()).prometheus_text
    return float(next(ln for ln in text.splitlines() if ln.startswith(name + " ")).split()[1])


def running(stub: pb_grpc.ProvingEngineStub) -> int:
    """Jobs the daemon reports in progress now (GetStatus queues)."""
    return sum(q.in_progress for q in stub.GetStatus(pb.GetStatusRequest()).queues)


def verify(circuit_name: str, seed: int, resp: pb.AwaitProofResponse) -> int:
    """The proofs verify against the cached vk and their public inputs are the instance's; a wrong
    public input is rejected. Returns the number of proofs checked."""
    from cuzk.backends import get_backend
    from cuzk.circuits import get_circuit
    from cuzk.groth16 import proofs_from_bytes
    from cuzk.groth16 import verify as groth16_verify
    from cuzk.groth16.api import load_or_create_parameters

    circuit = get_circuit(circuit_name)
    topo = circuit.topology()
    _, params = load_or_create_parameters(circuit.name, topo, topo.hash, get_backend("cpu"))
    publics = json.loads(resp.public_inputs_json)
    proofs = proofs_from_bytes(resp.proof)
    assert len(proofs) == len(publics)
    for j, (proof, pub) in enumerate(zip(proofs, publics, strict=True)):
        good = [int(x) for x in pub] == circuit.public_inputs(
            circuit.random_instance(seed=seed + j)
        ) and groth16_verify(params.vk, [int(x) for x in pub], proof)
        PROOFS["valid" if good else "invalid"] += 1
        assert good, f"proof {j} of {resp.job_id} is invalid"
        bad = [int(x) for x in pub]
        bad[0] = (bad[0] + 1) % 2**64
        assert not groth16_verify(params.vk, bad, proof)  # a wrong public input is rejected
    return len(proofs)
