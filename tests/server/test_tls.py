"""Access over TCP with TLS: a self-signed certificate made here (openssl), the bearer token from a
file, a proof through the encrypted channel; a wrong or missing token and a plaintext client are
refused; the token never appears in the daemon's log, even at debug level.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import grpc
import pytest
from daemon_proc import Daemon, verify

from cuzk.server.v1 import proving_pb2 as pb

pytestmark = pytest.mark.slow

TOKEN = "tls-token-7f3a9c1e5b"


def _self_signed(folder: Path) -> tuple[Path, Path]:
    """A P-256 key and a one-day certificate for localhost and 127.0.0.1."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("neither the cryptography package nor the openssl command is installed")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return key, cert


def test_tls_with_a_token(tmp_path: Path, cache: Path) -> None:
    key, cert = _self_signed(tmp_path)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    d = Daemon(
        tmp_path,
        cache=cache,
        listen="127.0.0.1:0",
        extra=f'token_file = "{token_file}"\ntls_cert = "{cert}"\ntls_key = "{key}"',
        sections='[logging]\nlevel = "debug"',
    )
    try:
        tls = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())

        def with_token(token: str) -> grpc.ChannelCredentials:
            return grpc.composite_channel_credentials(tls, grpc.access_token_call_credentials(token))

        stub = d.stub(with_token(TOKEN))
        r = stub.Prove(pb.ProveRequest(submit=pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=4)))
        assert r.result.status == pb.AwaitProofResponse.COMPLETED, r.result.error_message
        assert verify("winning-tiny", 4, r.result) == 1
        for creds in (tls, with_token("wrong-" + TOKEN)):  # TLS without a token, and a wrong one
            with pytest.raises(grpc.RpcError) as info:
                d.stub(creds).GetStatus(pb.GetStatusRequest(), timeout=30)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert "bearer token" in info.value.details()
        with pytest.raises(grpc.RpcError) as info:  # plaintext to a TLS port: no handshake, no service
            d.stub().GetStatus(pb.GetStatusRequest(), timeout=10)
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        assert d.alive()
    finally:
        code, log = d.stop()
    assert code == 0, log[-3000:]
    assert "DEBUG" in log  # the log really is at debug level
    assert TOKEN not in log  # the token is never logged
