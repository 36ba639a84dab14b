"""The daemon hears SIGTERM whichever thread the kernel hands it to.

A process-directed signal goes to any thread that does not block it; CPython's C handler then
only flags the main thread. A daemon whose main thread waited without a timeout slept through a
SIGTERM that landed on a gRPC or engine thread (seen in CI: the drain never began). Here the
signal is sent to a non-main thread on purpose; a watchdog sends a second one to the main thread
only if the first was not heard, and the test fails if it had to.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import grpc

from cuzk.server import daemon
from cuzk.server.config import parse_config
from cuzk.server.v1 import proving_pb2 as pb
from cuzk.server.v1 import proving_pb2_grpc as pb_grpc


def test_sigterm_on_another_thread_stops_the_daemon(tmp_path: Path, cache: Path) -> None:
    sock = tmp_path / "d.sock"
    cfg = parse_config(
        {"daemon": {"listen": f"unix://{sock}", "backend": "cpu", "state_dir": str(tmp_path / "s")}}
    )
    serving, rescued = threading.Event(), threading.Event()
    main_ident = threading.get_ident()

    def signal_from_here() -> None:
        stub = pb_grpc.ProvingEngineStub(grpc.insecure_channel(f"unix:{sock}"))
        stub.GetStatus(pb.GetStatusRequest(), wait_for_ready=True, timeout=120)  # the daemon serves
        serving.set()
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)  # to this thread, not the main one

    def watchdog() -> None:
        if serving.wait(180) and not done.wait(60):
            rescued.set()
            signal.pthread_kill(main_ident, signal.SIGTERM)  # let the test end, and fail

    done = threading.Event()
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    helpers = [threading.Thread(target=f, daemon=True) for f in (signal_from_here, watchdog)]
    for t in helpers:
        t.start()
    try:
        assert daemon.run(cfg) == 0
    finally:
        done.set()
        for s, handler in before.items():  # run() leaves both ignored: right for a CLI that exits now
            signal.signal(s, handler)
    assert serving.is_set()
    assert not rescued.is_set(), "the daemon did not hear a SIGTERM delivered to another thread"
    assert not sock.exists()
