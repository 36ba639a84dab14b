"""`cuzk daemon`: the engine behind a gRPC socket, with a status page, until SIGTERM or SIGINT.

Listening: a unix socket by default (mode 0600: only its owner may submit work;
a stale socket of a dead daemon is removed, a live one is refused), TCP only
with a bearer token (TLS where configured). Stopping: SIGTERM and SIGINT stop
intake (new submits get UNAVAILABLE), let in-flight work finish within the
grace period, cancel what is left, so every job gets its terminal status;
then the socket is removed and the process exits 0.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import logging
import os
import re
import signal
import socket
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from cuzk.errors import UsageError
from cuzk.server.aio_loop import LoopThread
from cuzk.server.config import DaemonConfig, is_loopback
from cuzk.server.journal import Journal

log = logging.getLogger("cuzk.daemon")


def engine_config(cfg: DaemonConfig) -> Any:
    """The EngineConfig a daemon config stands for."""
    from cuzk.engine import EngineConfig

    workers = cfg.max_parallel_synthesis or max(1, (os.cpu_count() or 2) // 2)
    return EngineConfig(
        backend=cfg.backend,
        devices=cfg.devices or (0,),
        gpu_workers_per_device=cfg.gpu_workers_per_device,
        synthesis_workers=workers,
        synthesis_threads=cfg.synthesis_threads,
        max_batch_size=cfg.max_batch_size,
        max_batch_wait_ms=cfg.max_batch_wait_ms,
        urgent_lane=cfg.urgent_lane,
        memory_budget=cfg.total_budget if cfg.total_budget is not None else "auto",
        memory_margin=cfg.safety_margin,
        result_retention_s=cfg.result_retention_s,
        min_srs_idle_s=cfg.eviction_min_idle_s,
        queue_limit=cfg.queue_limit,
        msm_precompute=cfg.msm_precompute,
        params_dir=cfg.param_cache or None,  # requests, preload and evict name the same SRS entries
    )


def _unix_path(listen: str) -> Path | None:
    return Path(listen[len("unix://") :]) if listen.startswith("unix://") else None


def _check_socket_folder(folder: Path) -> None:
    """Refuse a socket folder others may write (they could swap the socket for an impostor's), as
    ssh-agent and Docker do; a sticky one (like /tmp) is fine: nobody may replace another's file."""
    mode = folder.stat().st_mode
    if mode & (stat.S_IWGRP | stat.S_IWOTH) and not mode & stat.S_ISVTX:
        raise UsageError(
            f"{folder} (the socket's folder) is writable by other users, who could replace the socket; "
            f"use a folder only you can write (chmod go-w {folder})"
        )


def _clear_stale_socket(path: Path) -> None:
    """Remove a socket file nobody listens on; refuse to start over a live daemon or a non-socket."""
    if not path.exists() and not path.is_symlink():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _check_socket_folder(path.parent)
        return
    _check_socket_folder(path.parent)
    if not stat.S_ISSOCK(path.lstat().st_mode):
        raise UsageError(f"{path} exists and is not a socket; refusing to replace it")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        path.unlink()  # stale: its daemon is gone
        log.info("removed stale socket %s", path)
        return
    finally:
        probe.close()
    raise UsageError(f"{path}: another daemon is listening there")


def state_dir(cfg: DaemonConfig) -> Path:
    """daemon.state_dir, else <user cache>/daemon/<the listen address as a folder name>.

    Not beside the socket: sockets live on /run, a tmpfs that a reboot empties, and the journal
    must outlive the host going down. One folder per listen address, so two daemons of one user
    keep apart (and each takes the folder's lock).
    """
    if cfg.state_dir:
        return Path(cfg.state_dir)
    from cuzk.paths import cache_root

    name = re.sub(r"[^A-Za-z0-9._-]+", "-", cfg.listen.removeprefix("unix://")).strip("-.") or "default"
    return cache_root() / "daemon" / name


def _lock_state_dir(path: Path) -> Any:
    """An exclusive lock on the state folder for the daemon's life (the kernel drops it on kill -9)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        fh = open(path / "lock", "a+b")  # noqa: SIM115 -- held open until the daemon stops
    except OSError as exc:
        raise UsageError(f"daemon.state_dir {path}: {exc.strerror or exc}") from exc
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise UsageError(
            f"daemon.state_dir {path} is in use by another daemon; give each daemon its own"
        ) from None
    return fh


@dataclass
class Daemon:
    """A running daemon (start() returns at once; stop() drains and cleans up)."""

    cfg: DaemonConfig

    def __post_init__(self) -> None:
        self.server: grpc.aio.Server | None = None
        self.loop: LoopThread | None = None
        self.engine: Any = None
        self.http: Any = None
        self.servicer: Any = None
        self.journal: Any = None
        self._state_lock: Any = None
        self.address = ""
        self.status_port = 0
        self._socket: Path | None = None  # the socket this daemon bound (and only it removes on stop)
        self._stopped = threading.Event()

    def start(self) -> None:
        from cuzk.server.metrics import EngineMetrics
        from cuzk.server.service import ProvingEngineServicer

        cfg = self.cfg
        path = _unix_path(cfg.listen)
        if path is not None:
            _clear_stale_socket(path)
        state = state_dir(cfg)
        self._state_lock = _lock_state_dir(state)
        self.journal = Journal(state / "jobs.sqlite")
        pruned = self.journal.prune(cfg.result_retention_s)
        self.engine = self.make_engine()
        metrics = EngineMetrics(self.engine.status)
        self.engine.add_listener(metrics.observe_result)
        self.servicer = ProvingEngineServicer(self.engine, cfg, metrics=metrics, journal=self.journal)
        recovered = self.servicer.recover(cfg.on_restart)  # before the socket opens: no id is unknown
        log.info(
            "job journal %s: %d open job(s) of the last run re-run, %d failed (on_restart = %s); "
            "%d result(s) past retention pruned",
            self.journal.path,
            recovered["rerun"],
            recovered["failed"],
            cfg.on_restart,
            pruned,
        )
        limit = cfg.max_message_bytes
        self.loop = LoopThread()
        self.server = self.loop.run(self._serve(limit))
        if cfg.status_listen:
            from cuzk.server.http import StatusServer

            self.http = StatusServer(
                cfg.status_listen,
                self.status_document,
                metrics.text,
                token=cfg.token,
            )
            self.loop.run(self.http.start())
            self.status_port = self.http.port
        for name in cfg.preload:  # a circuit, or a zkey id of [zkeys]
            for device, (already, seconds) in self.engine.preload(cfg.zkeys.get(name, name)).items():
                log.info(
                    "preloaded %s on device %s in %.2f s%s",
                    name,
                    device,
                    seconds,
                    " (already)" if already else "",
                )
        for key in cfg.ignored:
            log.warning("config key %s is accepted for compatibility but has no effect", key)

    async def _serve(self, limit: int) -> Any:
        """The gRPC server (grpc.aio, on the loop thread): bound and started."""
        from cuzk.server.auth import TokenInterceptor
        from cuzk.server.service import DecodeInterceptor
        from cuzk.server.v1 import proving_pb2_grpc as pb_grpc

        cfg = self.cfg
        server = grpc.aio.server(
            interceptors=[*([TokenInterceptor(cfg.token)] if cfg.token else []), DecodeInterceptor()],
            options=[("grpc.max_receive_message_length", limit), ("grpc.max_send_message_length", limit)],
        )
        pb_grpc.add_ProvingEngineServicer_to_server(self.servicer, server)
        path = _unix_path(cfg.listen)
        if path is not None:
            old = os.umask(0o177)  # the socket is born 0600: no window where others may connect
            try:
                server.add_insecure_port(f"unix:{path}")
            finally:
                os.umask(old)
            self._socket = path
            os.chmod(path, 0o600)
            self.address = f"unix://{path}"
        else:
            host = cfg.listen.rpartition(":")[0]
            try:
                if cfg.tls_cert:
                    creds = grpc.ssl_server_credentials(
                        [(Path(cfg.tls_key).read_bytes(), Path(cfg.tls_cert).read_bytes())]
                    )
                    port = server.add_secure_port(cfg.listen, creds)
                else:
                    port = server.add_insecure_port(cfg.listen)
            except RuntimeError as exc:  # grpc: "Failed to bind to address ..."
                raise UsageError(
                    f"cannot listen on {cfg.listen}: the address is in use or not available"
                ) from exc
            except OSError as exc:
                raise UsageError(f"cannot read the TLS files: {exc.strerror or exc}") from exc
            if port == 0:
                raise UsageError(f"cannot listen on {cfg.listen}: the address is in use or not available")
            if not cfg.tls_cert and not is_loopback(host):
                log.warning(
                    "listening on %s without TLS: the bearer token and every proof cross the network in "
                    "plain text (set daemon.tls_cert and daemon.tls_key)",
                    cfg.listen,
                )
            self.address = f"{host}:{port}"
        await server.start()
        return server

    def make_engine(self) -> Any:
        """The engine this daemon serves (the fleet front serves a Fleet: cuzk.cluster.front)."""
        from cuzk.engine import Engine, EngineHooks

        journal = self.journal  # the GPU workers mark where a job's partitions are on a device
        assert journal is not None
        hooks = EngineHooks(before_gpu=journal.mark_on_device, after_gpu=journal.unmark_on_device)
        return Engine(dataclasses.replace(engine_config(self.cfg), hooks=hooks))

    def status_document(self) -> dict[str, Any]:
        """GET /status."""
        from cuzk.server.status import status_json

        return status_json(self.engine, started=self.servicer.started)

    def stop(self) -> None:
        """Stop intake, finish in-flight work within the grace period, cancel the rest, clean up."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self.servicer is not None:
            self.servicer.draining.set()
        if self.engine is not None:
            finished = self.engine.wait_idle(timeout=self.cfg.grace_period_s)
            if not finished:
                log.warning(
                    "grace period of %.0f s over: cancelling the jobs still in flight",
                    self.cfg.grace_period_s,
                )
            self.engine.shutdown(wait=finished)
            if self.journal is not None:
                self.journal.clear_marks()  # a clean stop charges no job a run
        if self.loop is not None:
            if self.http is not None:
                self.loop.run(self.http.stop())
            if self.server is not None:
                self.loop.run(self.server.stop(grace=2))
            self.loop.close()
        if self.servicer is not None:
            self.servicer.close()
        if self.journal is not None:
            self.journal.close()
        if self._state_lock is not None:
            self._state_lock.close()
        if self._socket is not None:  # not a live daemon's socket that this one was refused over
            with contextlib.suppress(FileNotFoundError):
                self._socket.unlink()


def run(cfg: DaemonConfig, daemon_class: type[Daemon] = Daemon) -> int:
    """Serve until SIGTERM or SIGINT; exit code 0 after a clean drain (a fleet front: FleetDaemon)."""
    logging.basicConfig(
        level=getattr(logging, cfg.log_level.upper().replace("TRACE", "DEBUG"), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    stop = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("%s: stopping intake and draining", signal.Signals(signum).name)
        stop.set()

    daemon = daemon_class(cfg)

    def on_other(signum: int, _frame: Any) -> None:
        """SIGHUP and SIGUSR1/2 used to kill the daemon at once (their default action). Logs go to
        stderr, which nothing reopens, and the config is read once: there is nothing to reload, so
        they are logged (SIGUSR1 with a one-line status) and the daemon goes on."""
        name = signal.Signals(signum).name
        if signum == signal.SIGUSR1 and daemon.engine is not None:
            st = daemon.engine.status()
            log.info(
                "%s: %d job(s) in flight; counters %s",
                name,
                sum(q.queued + q.running for q in st.jobs_by_kind.values()),
                dict(st.counters),
            )
        else:
            log.info("%s: nothing to reload (the config is read at start; logs go to stderr); going on", name)

    others = (signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2)
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    previous.update({sig: signal.signal(sig, on_other) for sig in others})
    try:
        daemon.start()
    except BaseException:  # never served: clean up and leave the caller's signal handling as it was
        daemon.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        raise
    try:
        extra = (
            f"; status on http://{cfg.status_listen.rpartition(':')[0]}:{daemon.status_port}/"
            if daemon.http
            else ""
        )
        print(f"cuzk daemon listening on {daemon.address}{extra}", flush=True)
        # Waits with a timeout: a signal the kernel hands to another thread (a gRPC or engine
        # thread) only flags the main thread, which runs the handler when it next runs Python, and
        # an untimed wait never returns to Python (the daemon slept through SIGTERM in CI).
        while not stop.wait(0.25):
            pass
    finally:
        daemon.stop()
        for sig in previous:  # drained: a repeated signal must not turn exit 0 into a kill
            signal.signal(sig, signal.SIG_IGN)
    print("cuzk daemon stopped", flush=True)
    return 0
