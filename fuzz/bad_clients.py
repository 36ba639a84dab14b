"""Hostile clients against a running daemon: `python fuzz/bad_clients.py [--addr unix:///path] [-n 1000]`.

Without --addr it starts its own daemon (CPU backend, a 1 MiB message limit, in a temporary
folder) and stops it at the end. N requests, each one of the hostile kinds below, in turn:
garbage bytes on the socket, a half HTTP/2 call that is never finished (kept open to the end),
undecodable request bytes, an oversized message, wrong wire types, absurd sizes and counts,
unknown enum values, unknown circuits and methods, bad ids, and AwaitProof calls that the
client abandons mid-call. Each must get the status listed for its kind (raw socket garbage
has no gRPC status: the daemon must close that connection); then the daemon must still be
alive, its blocked-await count back to 0, and a well-formed job must prove and verify.
The table printed at the end is what docs/RELIABILITY.md records.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import struct
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT / "src", ROOT / "tests" / "server"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import grpc  # noqa: E402

from cuzk.server.v1 import proving_pb2 as pb  # noqa: E402
from cuzk.server.v1 import proving_pb2_grpc as pb_grpc  # noqa: E402

SERVICE = "/cuzk.v1.ProvingEngine/"
MESSAGE_LIMIT = 1 << 20  # the spawned daemon's daemon.max_message_bytes
INVALID, NOT_FOUND, TOO_BIG = (
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
)


class Attack:
    """One hostile request kind: `send` returns the outcome (a status code name or a socket outcome)."""

    def __init__(self, name: str, expect: set[str], send: Callable[[random.Random], str]) -> None:
        self.name, self.expect, self.send = name, expect, send


class Client:
    def __init__(self, target: str, unix_path: str | None) -> None:
        self.target, self.unix_path = target, unix_path
        self.channel = grpc.insecure_channel(target, options=[("grpc.max_send_message_length", 64 << 20)])
        self.stub = pb_grpc.ProvingEngineStub(self.channel)
        self.slow: list[socket.socket] = []  # half calls kept open until the end

    def raw(self, method: str, body: bytes) -> str:
        call = self.channel.unary_unary(SERVICE + method)  # bytes in, bytes out: no client-side checks
        return self._code(lambda: call(body, timeout=30))

    def rpc(self, method: str, msg: object) -> str:
        return self._code(lambda: getattr(self.stub, method)(msg, timeout=30))

    @staticmethod
    def _code(fn: Callable[[], object]) -> str:
        try:
            fn()
        except grpc.RpcError as exc:
            if not exc.details():
                return f"{exc.code().name} (no message)"
            return exc.code().name
        return "OK"

    def connect(self) -> socket.socket:
        if self.unix_path:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(self.unix_path)
        else:
            host, _, port = self.target.rpartition(":")
            s = socket.create_connection((host, int(port)))
        s.settimeout(30)
        return s

    def garbage(self, rng: random.Random) -> str:
        """Random bytes (sometimes after a valid HTTP/2 preface), then end of input: the daemon must
        close the connection."""
        s = self.connect()
        try:
            lead = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" if rng.random() < 0.5 else b""
            s.sendall(lead + rng.randbytes(rng.choice((1, 16, 512, 4096))))
            s.shutdown(socket.SHUT_WR)  # done sending: a frame left half-sent can wait no longer
            try:
                while s.recv(65536):  # whatever it answers (a GOAWAY), until it closes
                    pass
            except ConnectionResetError:
                pass
            return "closed"
        finally:
            s.close()

    def half_call(self, rng: random.Random) -> str:
        """HTTP/2 preface, SETTINGS, the HEADERS of a SubmitProof and a DATA frame promising more than
        it sends, never ended: kept open while the other attacks run."""
        s = self.connect()
        headers = b"".join(
            b"\x00" + bytes([len(k)]) + k + bytes([len(v)]) + v  # HPACK literal, not indexed, no Huffman
            for k, v in (
                (b":method", b"POST"),
                (b":scheme", b"http"),
                (b":path", (SERVICE + "SubmitProof").encode()),
                (b":authority", b"localhost"),
                (b"content-type", b"application/grpc"),
                (b"te", b"trailers"),
            )
        )
        body = b"\x00" + struct.pack(">I", 1000) + rng.randbytes(10)  # says 1000 bytes, sends 10
        s.sendall(
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
            + _frame(0x4, 0, 0, b"")  # SETTINGS
            + _frame(0x1, 0x4, 1, headers)  # HEADERS, END_HEADERS, not END_STREAM
            + _frame(0x0, 0, 1, body)  # DATA, not END_STREAM
        )
        self.slow.append(s)
        return "held open"

    def abandon_await(self, job_id: str) -> str:
        """AwaitProof on a long job, then the client cancels the call once the daemon is waiting."""
        while waiting(self.stub) > 0:  # the last abandoned call has freed its thread
            pass
        fut = self.stub.AwaitProof.future(pb.AwaitProofRequest(job_id=job_id))
        while waiting(self.stub) < 1 and not fut.done():  # the daemon holds this call now
            pass
        fut.cancel()
        return "cancelled by client" if fut.cancelled() else "finished first"


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def waiting(stub: pb_grpc.ProvingEngineStub) -> int:
    text = stub.GetMetrics(pb.GetMetricsRequest(), timeout=30).prometheus_text
    return int(next(ln for ln in text.splitlines() if ln.startswith("cuzk_rpc_waiting ")).split()[1])


def attacks(c: Client, long_job: str) -> list[Attack]:
    S = pb.SubmitProofRequest

    def wrong_types(rng: random.Random) -> str:
        # field 40 (circuit, a string) sent as a varint, field 42 (partitions) as bytes: parsed as unknown
        # fields, so the request names nothing and is refused for that
        body = b"\xc0\x02" + bytes([rng.randrange(1, 127)]) + b"\xd2\x02\x03abc"
        return c.raw("SubmitProof", body)

    def absurd(rng: random.Random) -> str:
        return c.rpc(
            "SubmitProof",
            rng.choice(
                (
                    S(circuit="porep-tiny", partitions=10**9),
                    S(circuit="porep-tiny", partitions=2**32 - 1),
                    S(circuit="porep-tiny", instances_json="[" + ",".join(["{}"] * 5000) + "]"),
                    S(circuit="porep-tiny", instances_json="[" * 50000 + "]" * 50000),
                    S(proof_kind=pb.POREP_SEAL_COMMIT, vanilla_proofs=[b"x"] * 10000),
                    S(circuit="winning-tiny", request_id="r" * 10000),
                )
            ),
        )

    return [
        Attack("garbage bytes on the socket", {"closed"}, c.garbage),
        Attack("half a call, never finished", {"held open"}, c.half_call),
        Attack(
            "request bytes that do not parse",
            {INVALID.name},
            lambda rng: c.raw(
                rng.choice(("SubmitProof", "AwaitProof", "Prove")), b"\xff" + rng.randbytes(64)
            ),
        ),
        Attack(
            "a message over the size limit",
            {TOO_BIG.name},
            lambda rng: c.rpc(
                "SubmitProof", S(circuit="porep-tiny", instances_json="x" * (MESSAGE_LIMIT + 1))
            ),
        ),
        Attack("wrong wire types", {INVALID.name}, wrong_types),
        Attack("absurd sizes and counts", {INVALID.name}, absurd),
        Attack(
            "unknown enum values",
            {INVALID.name},
            lambda rng: c.rpc(
                "SubmitProof", S(proof_kind=rng.randrange(5, 2**31), priority=rng.randrange(5, 99))
            ),
        ),
        Attack(
            "unknown circuits, zkeys and methods",
            {INVALID.name, "UNIMPLEMENTED"},
            lambda rng: rng.choice(
                (
                    lambda: c.rpc("SubmitProof", S(circuit=f"porep-{rng.randrange(10**6)}")),
                    lambda: c.rpc("SubmitProof", S(zkey_id="nope", witnesses=[b"x"])),
                    lambda: c.rpc("PreloadSRS", pb.PreloadSrsRequest(circuit_id="nope")),
                    lambda: c.rpc("EvictSRS", pb.EvictSrsRequest(circuit_id="")),
                    lambda: c.raw("NoSuchMethod", b""),
                )
            )(),
        ),
        Attack(
            "bad and unknown job ids",
            {INVALID.name, NOT_FOUND.name},
            lambda rng: (
                lambda job_id: rng.choice(
                    (
                        lambda: c.rpc("AwaitProof", pb.AwaitProofRequest(job_id=job_id, timeout_ms=10)),
                        lambda: c.rpc("CancelProof", pb.CancelProofRequest(job_id=job_id)),
                    )
                )()
            )(rng.choice(("", "\x00\x01", "x" * 300, f"never-{rng.random()}"))),
        ),
        Attack(
            "a client that leaves mid-call", {"cancelled by client"}, lambda rng: c.abandon_await(long_job)
        ),
    ]


def hammer(target: str, unix_path: str | None, n: int, seed: int) -> dict:
    """N hostile requests against the daemon at `target`; returns the table's row data."""
    c = Client(target, unix_path)
    rng = random.Random(seed)
    long_job = c.stub.SubmitProof(
        pb.SubmitProofRequest(circuit="porep-tiny", partitions=1000, request_id=f"long-{seed}")
    ).job_id  # runs throughout, so abandoned awaits have something to wait for; cancelled at the end
    kinds = attacks(c, long_job)
    tally: dict[str, Counter[str]] = {a.name: Counter() for a in kinds}
    wrong: list[str] = []
    t0 = time.perf_counter()
    for i in range(n):
        a = kinds[i % len(kinds)]
        outcome = a.send(rng)
        tally[a.name][outcome] += 1
        if outcome not in a.expect:
            wrong.append(f"{a.name}: {outcome}")
    c.stub.CancelProof(pb.CancelProofRequest(job_id=long_job), timeout=30)
    cancelled = c.stub.AwaitProof(pb.AwaitProofRequest(job_id=long_job), timeout=60)
    while waiting(c.stub) > 0:  # every abandoned await has freed its thread
        pass
    ok = c.stub.Prove(
        pb.ProveRequest(submit=pb.SubmitProofRequest(circuit="winning-tiny", instance_seed=seed)), timeout=600
    ).result
    for s in c.slow:
        s.close()
    return {
        "requests": n,
        "seconds": round(time.perf_counter() - t0, 1),
        "by_kind": {k: dict(v) for k, v in tally.items()},
        "unexpected": wrong,
        "long_job": pb.AwaitProofResponse.Status.Name(cancelled.status),
        "after": ok,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--addr", help="a running daemon (unix:///path or host:port); default: start one")
    p.add_argument("-n", type=int, default=1000, help="hostile requests (default 1000)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    from daemon_proc import Daemon, verify

    daemon = None
    if args.addr:
        target = "unix:" + args.addr[len("unix://") :] if args.addr.startswith("unix://") else args.addr
        unix_path = args.addr[len("unix://") :] if args.addr.startswith("unix://") else None
    else:
        tmp = Path(tempfile.mkdtemp(prefix="cuzk-bad-clients-"))
        cache = Path(os.environ.get("CUZK_CACHE_DIR") or tmp / "cache")
        daemon = Daemon(tmp, cache=cache, extra=f'max_message_bytes = "{MESSAGE_LIMIT}"')
        target, unix_path = daemon.target(), str(daemon.sock)
    try:
        row = hammer(target, unix_path, args.n, args.seed)
    finally:
        code = daemon.stop()[0] if daemon is not None else 0
    after = row.pop("after")
    if daemon is not None:  # verify() reads the parameters the daemon made
        from cuzk import config

        os.environ["CUZK_CACHE_DIR"] = str(daemon.cache)
        config.reload()
    proofs = (
        verify("winning-tiny", args.seed, after) if after.status == pb.AwaitProofResponse.COMPLETED else 0
    )
    row.update(after_job=pb.AwaitProofResponse.Status.Name(after.status), proofs_verified=proofs, exit=code)
    print(json.dumps(row, indent=1))
    good = not row["unexpected"] and proofs == 1 and code == 0 and row["long_job"] == "CANCELLED"
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
