"""`cuzk client ...`: talk to a running daemon (prove, submit, await, cancel, status, preload, evict, metrics).

Output is for a person by default and JSON with `--json`. `--addr` takes
unix:///path or host:port (default: CUZK_ADDR, else the daemon's default socket);
`--token` (or CUZK_TOKEN) is sent as a bearer token.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path
from typing import Any

from cuzk import config
from cuzk.cli.output import input_file, nonnegative_int, output_file, seconds
from cuzk.errors import CuzkError, EngineError, ServiceUnavailableError, UsageError

KIND_NAMES = {
    "porep": "POREP_SEAL_COMMIT",
    "snap": "SNAP_DEALS_UPDATE",
    "wpost": "WINDOW_POST_PARTITION",
    "winning": "WINNING_POST",
}


def _common_options() -> argparse.ArgumentParser:
    """Options of every client command, accepted before the command or after it (`status --json`).

    Their defaults are SUPPRESS so a sub-command's parser never overwrites a value given before it.
    """
    c = argparse.ArgumentParser(add_help=False)
    c.add_argument(
        "--addr",
        default=argparse.SUPPRESS,
        help="unix:///path/cuzk.sock or host:port (default: CUZK_ADDR, else the default socket)",
    )
    c.add_argument("--token", default=argparse.SUPPRESS, help="bearer token (default: CUZK_TOKEN)")
    c.add_argument(
        "--tls-ca",
        type=input_file,
        default=argparse.SUPPRESS,
        help="talk TLS to a host:port daemon, trusting this CA certificate (PEM) for its certificate",
    )
    c.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON instead of text"
    )
    c.add_argument(
        "--timeout", type=seconds, default=argparse.SUPPRESS, help="RPC deadline in seconds (default: none)"
    )
    return c


def register(sub: argparse._SubParsersAction) -> None:
    common = _common_options()
    p = sub.add_parser(
        "client",
        parents=[common],
        help="talk to a running `cuzk daemon` over gRPC",
        description=EXIT_CODES_TEXT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cmds = p.add_subparsers(dest="client_command", metavar="COMMAND", required=True)
    for name, help_ in (("prove", "submit and wait: Prove"), ("submit", "enqueue: SubmitProof")):
        c = cmds.add_parser(name, help=help_, parents=[common])
        c.add_argument("--circuit", help="a registry circuit (see `cuzk circuits`)")
        c.add_argument(
            "--kind", choices=sorted(KIND_NAMES), help="a proof kind (the daemon's default circuit)"
        )
        c.add_argument(
            "--seed", type=nonnegative_int, default=0, help="instance seed (partition j proves seed + j)"
        )
        c.add_argument(
            "--partitions",
            type=nonnegative_int,
            default=0,
            help="instances in the job (0: the kind's default)",
        )
        c.add_argument("--priority", choices=("low", "normal", "high", "critical"), help="default: by kind")
        c.add_argument("--request-id", default="", help="caller key; the same id returns the same job")
        hidden = name == "submit"  # accepted only to be refused with the reason (submit has no proof)
        c.add_argument(
            "--out", type=output_file, help=argparse.SUPPRESS if hidden else "write the proof bytes here"
        )
        c.add_argument(
            "--public-out",
            type=output_file,
            help=argparse.SUPPRESS if hidden else "write the public inputs (JSON) here",
        )
    c = cmds.add_parser("await", help="wait for a job: AwaitProof", parents=[common])
    c.add_argument("job_id", help="the job id SubmitProof returned (the request id, when one was given)")
    c.add_argument(
        "--wait", type=seconds, default=0.0, help="give up after this many seconds (TIMEOUT; 0: no limit)"
    )
    c.add_argument("--out", type=output_file, help="write the proof bytes here")
    c.add_argument("--public-out", type=output_file, help="write the public inputs (JSON) here")
    c = cmds.add_parser("cancel", help="cancel a job: CancelProof", parents=[common])
    c.add_argument("job_id", help="the job id SubmitProof returned (the request id, when one was given)")
    cmds.add_parser("status", help="engine status: GetStatus", parents=[common])
    for name in ("preload", "evict"):
        c = cmds.add_parser(
            name,
            help=f"{name} a circuit's parameters: {'PreloadSRS' if name == 'preload' else 'EvictSRS'}",
            parents=[common],
        )
        c.add_argument("circuit_id", help="a circuit name (see `cuzk circuits`) or a configured zkey id")
    cmds.add_parser("metrics", help="Prometheus text: GetMetrics", parents=[common])
    p.set_defaults(func=cmd_client)


def default_addr() -> str:
    from cuzk.server.config import DEFAULT_LISTEN

    return config.get().client.addr or DEFAULT_LISTEN


def channel_target(addr: str) -> str:
    """A gRPC target from unix:///path or host:port (a port of 1 to 65535)."""
    if addr.startswith("unix://"):
        return "unix:" + addr[len("unix://") :]
    host, sep, port = addr.rpartition(":")
    if not sep or not host:
        raise UsageError(f"--addr {addr!r} is neither unix:///path nor host:port")
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise UsageError(f"--addr {addr!r}: the port must be a number from 1 to 65535")
    return addr


#: What the client's exit codes mean (its --help shows this; docs/DAEMON.md has the same table).
EXIT_CODES_TEXT = """exit codes: 0 done; 2 usage or a request the daemon refused as bad (INVALID_ARGUMENT,
NOT_FOUND, ALREADY_EXISTS, UNAUTHENTICATED); 3 the job FAILED or was CANCELLED, or the daemon
failed the call (INTERNAL); 4 `await --wait` ran out (TIMEOUT); 5 the daemon is not running, not
reachable, went away during the call, did not answer within --timeout, or is too busy now
(UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED): try again later."""

#: gRPC status codes by the client's exit code class (anything else is a failure: exit 3)
_BAD_REQUEST = {"INVALID_ARGUMENT", "NOT_FOUND", "ALREADY_EXISTS", "UNAUTHENTICATED", "PERMISSION_DENIED",
                "UNIMPLEMENTED", "OUT_OF_RANGE"}  # fmt: skip
_NOT_NOW = {"UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED"}


class Client:
    """A small synchronous client: one channel (TLS with a CA file), the bearer token on every call."""

    def __init__(
        self, addr: str, token: str = "", timeout: float | None = None, *, tls_ca: str | None = None
    ) -> None:
        import grpc

        from cuzk.server.auth import bearer
        from cuzk.server.v1 import proving_pb2_grpc as pb_grpc

        self.addr = addr
        target = channel_target(addr)
        ca = _read_ca(tls_ca, addr) if tls_ca is not None else None  # bad arguments first, then the daemon
        if addr.startswith("unix://"):
            check_socket(Path(addr[len("unix://") :]))
        limit = 256 << 20  # what Curio's client sets
        options = [("grpc.max_receive_message_length", limit), ("grpc.max_send_message_length", limit)]
        if ca is not None:
            creds = grpc.ssl_channel_credentials(root_certificates=ca)
            self._channel = grpc.secure_channel(target, creds, options=options)
        else:
            self._channel = grpc.insecure_channel(target, options=options)
        self.stub = pb_grpc.ProvingEngineStub(self._channel)
        self.metadata = bearer(token)
        self.timeout = timeout

    def call(self, rpc: str, request: Any) -> Any:
        import grpc

        try:
            return getattr(self.stub, rpc)(request, metadata=self.metadata, timeout=self.timeout)
        except grpc.RpcError as exc:
            raise client_error(exc, self.addr, self.timeout) from None

    def close(self) -> None:
        self._channel.close()


def _read_ca(tls_ca: str, addr: str) -> bytes:
    """The CA certificate file's PEM bytes (a file that is not one is refused before any call)."""
    if addr.startswith("unix://"):
        raise UsageError("--tls-ca is for a host:port daemon; a unix socket needs no TLS")
    try:
        data = Path(tls_ca).read_bytes()
    except OSError as exc:
        raise UsageError(f"--tls-ca {tls_ca}: {exc.strerror or exc}") from exc
    if b"-----BEGIN CERTIFICATE-----" not in data:
        raise UsageError(f"--tls-ca {tls_ca}: not a PEM certificate (no BEGIN CERTIFICATE line)")
    return data


def check_socket(path: Path) -> None:
    """Refuse a daemon socket that someone else could have put there (issue 32 item 16).

    As ssh-agent and Docker do: the socket must belong to this user (or root), and its folder must
    not be writable by others unless it is sticky (like /tmp, where nobody may replace our file)."""
    import os
    import stat

    try:
        st = path.lstat()
        folder = path.parent.stat()
    except FileNotFoundError:
        raise DaemonUnreachableError(
            f"no daemon is running at unix://{path} (no socket there; start one with `cuzk daemon`)"
        ) from None
    except OSError as exc:
        raise DaemonUnreachableError(f"the daemon socket {path} cannot be read: {exc.strerror}") from None
    uid = os.getuid()
    if st.st_uid not in (uid, 0):
        raise UsageError(f"{path} belongs to user {st.st_uid}, not to you: refusing to talk to it")
    if folder.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not folder.st_mode & stat.S_ISVTX:
        raise UsageError(
            f"{path.parent} is writable by other users, who could replace the daemon's socket: refusing "
            f"to talk to it (chmod go-w {path.parent})"
        )


class ClientError(UsageError):
    """The daemon refused the request as bad (INVALID_ARGUMENT, NOT_FOUND, ...): exit 2."""

    def __init__(self, message: str, code: str = "UNKNOWN") -> None:
        super().__init__(message)
        self.code = code


class DaemonUnreachableError(ServiceUnavailableError):
    """The daemon is not running, not reachable, gone mid-call, too slow or too busy: exit 5."""


class DaemonFailedError(EngineError):
    """The daemon failed the call itself (INTERNAL, UNKNOWN, ...): exit 3."""


def client_error(exc: Any, addr: str, timeout: float | None) -> CuzkError:
    """One clear line for a failed call: what happened at ADDR, not gRPC's internal text."""
    code = exc.code().name if hasattr(exc, "code") else "UNKNOWN"
    details = exc.details() if hasattr(exc, "details") else str(exc)
    if code == "UNAVAILABLE" and details and "failed to connect" in details:
        return DaemonUnreachableError(f"no daemon is reachable at {addr} (nothing accepts connections there)")
    if code == "UNAVAILABLE" and details and ("Socket closed" in details or "Connection reset" in details):
        return DaemonUnreachableError(f"the daemon at {addr} went away during the call")
    if code == "DEADLINE_EXCEEDED" and timeout is not None:
        return DaemonUnreachableError(f"the daemon at {addr} did not answer within --timeout {timeout:g} s")
    if code in _NOT_NOW:
        return DaemonUnreachableError(f"{code}: {details}")
    if code in _BAD_REQUEST:
        return ClientError(f"{code}: {details}", code)
    return DaemonFailedError(f"{code}: {details}")


def submit_message(args: argparse.Namespace) -> Any:
    from cuzk.server.v1 import proving_pb2 as pb

    if not args.circuit and not args.kind:
        raise UsageError("name a --circuit or a --kind")
    if args.circuit:
        from cuzk.circuits import get_circuit

        get_circuit(args.circuit)  # an unknown name is exit 2 here, before any daemon is asked
    msg = pb.SubmitProofRequest(
        request_id=args.request_id,
        circuit=args.circuit or "",
        instance_seed=args.seed,
        partitions=args.partitions,
    )
    if args.kind:
        msg.proof_kind = pb.ProofKind.Value(KIND_NAMES[args.kind])
    if args.priority:
        msg.priority = pb.Priority.Value(args.priority.upper())
    return msg


def _result_dict(r: Any) -> dict[str, Any]:
    from cuzk.server.v1 import proving_pb2 as pb

    return {
        "job_id": r.job_id,
        "status": pb.AwaitProofResponse.Status.Name(r.status),
        "proof_bytes": len(r.proof),
        "error": r.error_message,
        "public_inputs": json.loads(r.public_inputs_json) if r.public_inputs_json else [],
        "queue_wait_ms": r.queue_wait_ms,
        "srs_load_ms": r.srs_load_ms,
        "synthesis_ms": r.synthesis_ms,
        "gpu_compute_ms": r.gpu_compute_ms,
        "total_ms": r.total_ms,
    }


def _write_result(r: Any, args: argparse.Namespace) -> None:
    from cuzk.paths import write_atomic

    if getattr(args, "out", None) and r.proof:
        write_atomic(args.out, r.proof)
    if getattr(args, "public_out", None) and r.public_inputs_json:
        data = json.loads(r.public_inputs_json)
        write_atomic(args.public_out, json.dumps(data[0] if len(data) == 1 else data) + "\n")


def cmd_client(args: argparse.Namespace) -> int:
    from google.protobuf.json_format import MessageToDict

    from cuzk.cli.output import check_output_paths
    from cuzk.server.v1 import proving_pb2 as pb

    if args.client_command == "submit" and (args.out or args.public_out):
        raise UsageError(
            "`client submit` only queues the job and has no proof to write: --out and --public-out go "
            "with `client prove`, or with `client await JOB_ID` once it is queued"
        )
    check_output_paths(getattr(args, "out", None), getattr(args, "public_out", None))
    args.json = getattr(args, "json", False)
    if args.client_command in ("prove", "submit"):
        args.message = submit_message(args)  # checked before the daemon is asked anything
    client = Client(
        getattr(args, "addr", None) or default_addr(),
        getattr(args, "token", None) or config.get().client.token,
        getattr(args, "timeout", None),
        tls_ca=getattr(args, "tls_ca", None),
    )
    try:
        cmd = args.client_command
        if cmd in ("prove", "await"):
            show = sys.stderr.isatty() and not args.json
            if cmd == "prove":
                msg = args.message
                if show and not msg.request_id:  # an id known here, to find the job's progress by
                    msg.request_id = f"client-{uuid.uuid4()}"
                job_id, rpc, request = msg.request_id, "Prove", pb.ProveRequest(submit=msg)
            else:
                job_id, rpc = args.job_id, "AwaitProof"
                request = pb.AwaitProofRequest(job_id=args.job_id, timeout_ms=int(args.wait * 1e3))
            out = with_progress(client, job_id, rpc, request) if show else client.call(rpc, request)
            r = out.result if cmd == "prove" else out
            _write_result(r, args)
            d = _result_dict(r)
            if args.json:
                print(json.dumps(d))
            else:
                print(f"{d['job_id']}: {d['status']}" + (f" ({d['error']})" if d["error"] else ""))
                if d["status"] == "COMPLETED":
                    print(
                        f"  {d['proof_bytes']} proof bytes; queue {d['queue_wait_ms']} ms, srs {d['srs_load_ms']} ms, "
                        f"synthesis {d['synthesis_ms']} ms, gpu {d['gpu_compute_ms']} ms, total {d['total_ms']} ms"
                    )
            return {"COMPLETED": 0, "TIMEOUT": 4}.get(d["status"], 3)
        if cmd == "submit":
            s = client.call("SubmitProof", args.message)
            print(json.dumps({"job_id": s.job_id, "queue_position": s.queue_position}) if args.json else
                  f"{s.job_id} queued at position {s.queue_position}")  # fmt: skip
            return 0
        if cmd == "cancel":
            c = client.call("CancelProof", pb.CancelProofRequest(job_id=args.job_id))
            print(json.dumps({"was_running": c.was_running}) if args.json else
                  f"{args.job_id}: cancelled{' (it was running)' if c.was_running else ''}")  # fmt: skip
            return 0
        if cmd == "status":
            st = client.call("GetStatus", pb.GetStatusRequest())
            d = MessageToDict(st, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
            print(json.dumps(d) if args.json else _status_text(d))
            return 0
        if cmd == "preload":
            r2 = client.call("PreloadSRS", pb.PreloadSrsRequest(circuit_id=args.circuit_id))
            print(json.dumps({"already_loaded": r2.already_loaded, "load_time_ms": r2.load_time_ms}) if args.json else
                  f"{args.circuit_id}: " + ("already loaded" if r2.already_loaded else f"loaded in {r2.load_time_ms} ms"))  # fmt: skip
            return 0
        if cmd == "evict":
            r3 = client.call("EvictSRS", pb.EvictSrsRequest(circuit_id=args.circuit_id))
            print(json.dumps({"was_loaded": r3.was_loaded, "freed_bytes": r3.freed_bytes}) if args.json else
                  f"{args.circuit_id}: " + (f"evicted, {r3.freed_bytes} bytes freed" if r3.was_loaded else "was not loaded"))  # fmt: skip
            return 0
        if cmd == "metrics":
            sys.stdout.write(client.call("GetMetrics", pb.GetMetricsRequest()).prometheus_text)
            return 0
        raise UsageError(f"unknown client command {cmd}")
    finally:
        client.close()


def with_progress(client: Client, job_id: str, rpc: str, request: Any) -> Any:
    """`client.call(rpc, request)` with a bar of the job's partitions done on stderr (a terminal only),
    drawn from GetStatus twice a second while the call waits."""
    from concurrent.futures import ThreadPoolExecutor

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from cuzk.cli.output import err_console
    from cuzk.server.v1 import proving_pb2 as pb

    columns = (TextColumn(f"{job_id} {{task.fields[state]}}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("partitions"), TimeElapsedColumn())  # fmt: skip
    with ThreadPoolExecutor(1) as pool, Progress(*columns, console=err_console(), transient=True) as bar:
        task = bar.add_task("job", total=None, state="queued")
        call = pool.submit(client.call, rpc, request)
        while not call.done():
            try:
                st = client.stub.GetStatus(pb.GetStatusRequest(), metadata=client.metadata, timeout=5)
            except Exception:  # the progress is a courtesy; the call itself reports what went wrong
                st = None
            for job in st.jobs if st is not None else ():
                if job.job_id == job_id:
                    state = "proving" if job.running else "queued"
                    bar.update(task, total=job.partitions_total, completed=job.partitions_done, state=state)
            try:
                return call.result(timeout=0.5)
            except TimeoutError:
                continue
        return call.result()


def _status_text(d: dict[str, Any]) -> str:
    lines = [
        f"uptime {d['uptime_seconds']} s; proofs completed {d['total_proofs_completed']}, "
        f"failed {d['total_proofs_failed']}; memory {int(d['memory_reserved_bytes']) >> 20} MiB reserved of "
        f"{int(d['memory_budget_bytes']) >> 20} MiB (peak {int(d['memory_peak_bytes']) >> 20} MiB)"
    ]
    for g in d.get("gpus", []):
        job = f"proving {g['current_job_id']} ({g['current_proof_kind']})" if g["current_job_id"] else "idle"
        lines.append(
            f"gpu {g['ordinal']} {g['name']}: {job}; {g['busy_workers']} of {g['workers']} workers busy; "
            f"vram free {int(g['vram_free_bytes']) >> 20} MiB"
        )
    for s in d.get("loaded_srs", []):
        lines.append(
            f"srs {s['circuit_id']}: {s['tier']}, {int(s['size_bytes']) >> 20} MiB, {s['ref_count']} in use"
        )
    for q in d.get("queues", []):
        lines.append(f"queue {q['proof_kind']}: {q['pending']} pending, {q['in_progress']} in progress")
    for j in d.get("jobs", []):
        state = "proving" if j["running"] else "queued"
        lines.append(
            f"job {j['job_id']} ({j['proof_kind']}): {state}, {j['partitions_done']} of "
            f"{j['partitions_total']} partitions done"
        )
    return "\n".join(lines)
