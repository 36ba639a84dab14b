"""Operator mistakes, signals, exposure and the status port (issue 32 items 9, 11, 13, 14, 16).

Real daemon processes and sockets. Each refusal is exit 2 with its cause on one line (not 70, "a
bug in cuzk"); `--check` catches what it can without starting. Liveness is checked with
deadlines (socket timeouts, RPC deadlines), never with timing assertions.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from daemon_proc import Daemon

from cuzk.server.auth import bearer
from cuzk.server.http import IDLE_TIMEOUT_S, MAX_CONNECTIONS
from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow


def _daemon(config: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CUZK_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "cuzk.cli.main", "daemon", "--config", str(config), *extra],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip


def _refused(tmp_path: Path, cache: Path, toml: str, message: str, *, check: bool = True) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(toml)
    for extra in (("--check",) if check else ()), ():
        out = _daemon(config, cache, *extra)
        assert out.returncode == 2, (extra, out.returncode, out.stderr[-2000:])
        lines = [ln for ln in out.stderr.splitlines() if ln.startswith("cuzk: ")]
        assert len(lines) == 1 and message in lines[0], out.stderr[-2000:]
        assert "a bug in cuzk" not in out.stderr


def test_operator_mistakes_exit_2_with_the_cause(tmp_path: Path, cache: Path) -> None:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        _refused(tmp_path, cache, f'[daemon]\nlisten = "127.0.0.1:{port}"\ntoken = "t0k"\nbackend = "cpu"\n'
                 f'state_dir = "{tmp_path / "s1"}"',
                 f"cannot listen on 127.0.0.1:{port}: the address is in use", check=False)  # fmt: skip
    finally:
        busy.close()
    long = tmp_path / ("x" * 120) / "cuzk.sock"
    _refused(tmp_path, cache, f'[daemon]\nlisten = "unix://{long}"\n', "unix sockets take at most 107")
    _refused(tmp_path, cache, f'[daemon]\nlisten = "127.0.0.1:0"\ntoken = "t0k"\ntls_cert = "{tmp_path}/no.pem"\n'
             f'tls_key = "{tmp_path}/no.key"\n', f"daemon.tls_cert: cannot read '{tmp_path}/no.pem'")  # fmt: skip
    _refused(tmp_path, cache, '[daemon]\ntoken = " "\n', "daemon.token is blank")
    _refused(tmp_path, cache, '[daemon]\nstatus_listen = "0.0.0.0:0"\n', "is beyond loopback")
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)  # writable by everyone, not sticky: anyone could swap the socket
    _refused(tmp_path, cache, f'[daemon]\nlisten = "unix://{open_folder}/cuzk.sock"\nbackend = "cpu"\n'
             f'state_dir = "{tmp_path / "s2"}"', "writable by other users", check=False)  # fmt: skip


def test_sighup_and_sigusr_do_not_kill_the_daemon(tmp_path: Path, cache: Path) -> None:
    d = Daemon(tmp_path, cache=cache)
    try:
        for sig in (signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
            d.proc.send_signal(sig)
            d.await_log(f"{sig.name}: ")
            assert d.stub().GetStatus(pb.GetStatusRequest(), timeout=30).uptime_seconds >= 0
        assert d.alive() and d.sock.exists()
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
    assert "SIGHUP: nothing to reload" in log and "SIGUSR1: 0 job(s) in flight" in log


def _get(url: str, token: str = "") -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_status_beyond_loopback_needs_the_token_and_plaintext_tcp_warns(tmp_path: Path, cache: Path) -> None:
    d = Daemon(
        tmp_path, cache=cache, listen="0.0.0.0:0", extra='token = "s3cret"\nstatus_listen = "0.0.0.0:0"'
    )
    try:
        port = int(d.banner.rsplit(":", 1)[1].split("/")[0])
        base = f"http://127.0.0.1:{port}"
        for path in ("/status", "/metrics", "/"):
            assert _get(base + path)[0] == 401
            assert _get(base + path, "wrong")[0] == 401
            code, headers, _ = _get(base + path, "s3cret")
            assert code == 200
            assert not any(k.lower() == "access-control-allow-origin" for k in headers)  # no wildcard CORS
        stub = d.stub()
        assert (
            stub.GetStatus(pb.GetStatusRequest(), metadata=bearer("s3cret"), timeout=30).uptime_seconds >= 0
        )
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
    assert "listening on 0.0.0.0:0 without TLS" in log


def test_the_status_port_bounds_and_times_out_connections(tmp_path: Path, cache: Path) -> None:
    d = Daemon(tmp_path, cache=cache, extra='status_listen = "127.0.0.1:0"')
    try:
        port = int(d.banner.rsplit(":", 1)[1].split("/")[0])
        base = f"http://127.0.0.1:{port}"
        silent = []
        for _ in range(MAX_CONNECTIONS):  # half-open: connect, send nothing
            s = socket.create_connection(("127.0.0.1", port), timeout=60)
            silent.append(s)
        extra = socket.create_connection(("127.0.0.1", port), timeout=60)
        assert extra.recv(1) == b""  # past the cap: closed at once, not held
        extra.close()
        for s in silent:  # each is closed by the daemon once idle too long (deadline: the socket timeout)
            s.settimeout(IDLE_TIMEOUT_S * 6)
            assert s.recv(1) == b""
            s.close()
        code, _, body = _get(base + "/status")  # the port answers again once the idle ones are gone
        assert code == 200 and "uptime_secs" in json.loads(body)
        for _ in range(200):  # clients that vanish mid-request (RST): not an error of the daemon's
            s = socket.create_connection(("127.0.0.1", port), timeout=60)
            s.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n\r\n")
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        assert _get(base + "/status")[0] == 200
        assert _get(base + "/nope")[0] == 404
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
    assert "Traceback" not in log and "BrokenPipe" not in log and "ERROR" not in log
