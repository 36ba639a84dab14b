"""`cuzk client` as users run it (issue 32 items 8, 15, 16; issue 29 items 2, 4, 5).

Flags after the command (`status --json`); options a command cannot honour refused; one clear
line when no daemon runs at the address, or it died mid-await, or it did not answer within
--timeout (exit 5, as the client's --help and docs/DAEMON.md say; TIMEOUT of `await --wait` is
4); ports outside 1-65535 refused; a socket in a folder others can write refused; TLS with a CA
file. Real daemons, real sockets, the client in its own process where the daemon dies.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from daemon_proc import Daemon, metric, verify
from test_tls import TOKEN, _self_signed

from cuzk import config
from cuzk.cli.main import main
from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["client", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_no_daemon_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sock = tmp_path / "none.sock"
    code, _, err = _run(capsys, "--addr", f"unix://{sock}", "status")
    assert code == 5 and err == f"cuzk: error: no daemon is running at unix://{sock} (no socket there; " \
        "start one with `cuzk daemon`)\n"  # fmt: skip
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(sock))  # a socket file nobody listens on (a daemon killed with -9)
    stale.close()
    code, _, err = _run(capsys, "status", "--addr", f"unix://{sock}")
    assert code == 5 and f"no daemon is reachable at unix://{sock}" in err and "UNAVAILABLE" not in err
    code, _, err = _run(capsys, "--addr", "127.0.0.1:99999", "status")
    assert code == 2 and "the port must be a number from 1 to 65535" in err
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    code, _, err = _run(capsys, "status", "--json", "--addr", f"127.0.0.1:{port}", "--timeout", "30")
    assert code == 5 and f"no daemon is reachable at 127.0.0.1:{port}" in err


def test_flags_anywhere_refused_options_and_a_daemon_that_dies(
    tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config.reload()
    d = Daemon(tmp_path, cache=cache)
    try:
        for argv in (("--addr", d.address, "status", "--json"), ("status", "--addr", d.address, "--json"),
                     ("--json", "--addr", d.address, "status")):  # fmt: skip
            code, out, _ = _run(capsys, *argv)
            assert code == 0 and "uptime_seconds" in json.loads(out), argv
        out_file = tmp_path / "s.bin"
        code, _, err = _run(
            capsys, "--addr", d.address, "submit", "--circuit", "winning-tiny", "--out", str(out_file)
        )
        assert code == 2 and "`client submit` only queues the job and has no proof to write" in err
        assert not out_file.exists()
        code, out, _ = _run(capsys, "submit", "--addr", d.address, "--json", "--circuit", "porep-tiny",
                            "--partitions", "40", "--request-id", "long")  # fmt: skip
        assert code == 0 and json.loads(out)["job_id"] == "long"
        code, _, err = _run(capsys, "--addr", d.address, "--timeout", "0.2", "await", "long")
        assert code == 5 and f"the daemon at {d.address} did not answer within --timeout 0.2 s" in err
        env = {**os.environ, "CUZK_CACHE_DIR": str(cache)}
        waiter = subprocess.Popen(
            [sys.executable, "-m", "cuzk.cli.main", "client", "--addr", d.address, "await", "long"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        stub = d.stub()
        while metric(stub, "cuzk_rpc_waiting") < 1:  # the client's await is parked in the daemon
            assert waiter.poll() is None
        d.kill()
        _, err = waiter.communicate(timeout=120)
        assert waiter.returncode == 5, err
        assert err.strip() == f"cuzk: error: the daemon at {d.address} went away during the call"
        d.start()
        d.stub().CancelProof(pb.CancelProofRequest(job_id="long"))
        folder = d.sock.parent
        folder.chmod(0o777)  # now anyone could have swapped the socket: the client refuses to use it
        try:
            code, _, err = _run(capsys, "--addr", d.address, "status")
            assert code == 2 and "is writable by other users" in err
        finally:
            folder.chmod(0o755)
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]


def test_the_client_speaks_tls(tmp_path: Path, cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    key, cert = _self_signed(tmp_path)
    d = Daemon(tmp_path, cache=cache, listen="127.0.0.1:0",
               extra=f'token = "{TOKEN}"\ntls_cert = "{cert}"\ntls_key = "{key}"')  # fmt: skip
    try:
        config.reload()
        proof, public = tmp_path / "p.bin", tmp_path / "pub.json"
        code, _, err = _run(capsys, "--addr", d.address, "--tls-ca", str(cert), "--token", TOKEN, "prove",
                              "--circuit", "winning-tiny", "--seed", "8", "--out", str(proof),
                              "--public-out", str(public))  # fmt: skip
        assert code == 0, err
        r = pb.AwaitProofResponse(proof=proof.read_bytes(), public_inputs_json=f"[{public.read_text()}]",
                                  job_id="tls")  # fmt: skip
        verify("winning-tiny", 8, r)
        code, _, err = _run(capsys, "--addr", d.address, "--token", TOKEN, "--timeout", "20", "status")
        assert code == 5, err  # plaintext to a TLS port: no answer
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
