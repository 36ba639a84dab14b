"""The daemon's TOML config: the reference's sections and keys where they mean something here, validated.

The reference ignores unknown keys and falls back silently on values it cannot
parse (a typo in `total_budget` becomes 50 GiB). Here an unknown key or a bad
value is a UsageError naming the key, found at start-up. Keys the reference
itself deprecated are accepted and reported as ignored, so an operator's
existing file still loads. docs/DAEMON.md lists every key.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuzk import defaults as D
from cuzk.errors import UsageError
from cuzk.units import parse_duration, parse_size

DEFAULT_LISTEN = "unix:///run/cuzk/cuzk.sock"

#: Kinds of the wire (ProofKind names, lower case) -> the registry circuit proved for a request
#: that names only its kind. porep 10, snap 16, PoSt 1 partitions, as the reference.
DEFAULT_CIRCUITS: dict[str, str] = {
    "porep": "porep-small",
    "snap": "snap-small",
    "wpost": "wpost-small",
    "winning": "winning-small",
}
DEFAULT_PARTITIONS: dict[str, int] = {"porep": 10, "snap": 16, "wpost": 1, "winning": 1}


@dataclass(frozen=True)
class DaemonConfig:
    """Everything `cuzk daemon` reads from its file, after validation."""

    listen: str = DEFAULT_LISTEN
    status_listen: str = ""  # host:port of the HTTP status page and /metrics; "" = off
    token: str = ""  # bearer token; required for TCP listeners
    tls_cert: str = ""
    tls_key: str = ""
    max_message_bytes: int = 128 << 20  # the reference's limit (PoRep inputs are ~51 MB there)
    grace_period_s: float = 30.0  # on SIGTERM/SIGINT: finish in-flight work this long, then cancel
    total_budget: int | None = None  # None = auto (available memory minus the margin)
    safety_margin: int = 5 << 30
    eviction_min_idle_s: float = D.EVICTION_MIN_IDLE_S
    devices: tuple[int, ...] = ()
    gpu_workers_per_device: int = D.GPU_WORKERS_PER_DEVICE
    max_batch_size: int = D.MAX_BATCH_SIZE
    max_batch_wait_ms: int = D.MAX_BATCH_WAIT_MS
    urgent_lane: bool | None = None  # None = auto: on with a GPU backend (EngineConfig.urgent_lane)
    synthesis_threads: int = 0  # numba threads per synthesis worker; 0 = cores // workers
    max_parallel_synthesis: int = 0  # synthesis workers; 0 = half the cores
    queue_limit: int = D.QUEUE_LIMIT  # jobs queued or running; beyond it SubmitProof is RESOURCE_EXHAUSTED
    result_retention_s: float = 3600.0
    state_dir: str = ""  # the job journal's folder; "" = <user cache>/daemon/<listen address>
    on_restart: str = "rerun"  # jobs a restart interrupted: "rerun" them or "fail" them
    param_cache: str = ""  # parameter folders (`cuzk setup` output); "" = the user cache
    preload: tuple[str, ...] = ()
    msm_precompute: int = D.MSM_PRECOMPUTE  # G1 base copies per loaded SRS (1 = off, 0 = auto)
    backend: str = "auto"
    log_level: str = "info"
    circuits: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_CIRCUITS))
    partitions: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_PARTITIONS))
    zkeys: Mapping[str, str] = field(default_factory=dict)  # zkey id -> .zkey path
    ignored: tuple[str, ...] = ()  # keys the reference deprecated: accepted, reported, unused
    cluster: ClusterConfig | None = None  # [cluster]: the daemon fronts a fleet on Ray (cuzk.cluster)


@dataclass(frozen=True)
class ClusterConfig:
    """[cluster]: the daemon as the front of a fleet of engines on Ray (docs/CLUSTER.md)."""

    address: str = ""  # "": a local Ray started by the daemon; "auto": the running cluster; host:port
    engines_per_node: int = 1
    num_cpus: float = 1.0  # Ray resources each engine holds on its node
    num_gpus: float = 0.0
    resources: Mapping[str, float] = field(default_factory=dict)  # custom Ray resources per engine
    slots: int = 2  # jobs an engine takes at once before the front holds them
    policy: str = "hot-first"  # or round-robin, least-loaded
    watch_interval_s: float = 2.0  # how often the front looks for nodes that joined


def _cluster(body: Any) -> ClusterConfig:
    """The [cluster] section, validated like the rest (an unknown key or bad value names itself)."""
    if not isinstance(body, Mapping):
        raise UsageError("cluster must be a [cluster] table")

    def number(v: Any, key: str) -> float:
        if isinstance(v, bool) or not isinstance(v, int | float) or v < 0:
            raise UsageError(f"{key}: expected a non-negative number, got {v!r}")
        return float(v)

    def resources(v: Any, key: str) -> dict[str, float]:
        if not isinstance(v, Mapping):
            raise UsageError(f"{key}: expected a table of resource = amount, got {v!r}")
        return {str(k): number(a, f"{key}.{k}") for k, a in v.items()}

    def policy(v: Any, key: str) -> str:
        if v not in ("hot-first", "round-robin", "least-loaded"):
            raise UsageError(f"{key}: expected hot-first, round-robin or least-loaded, got {v!r}")
        return str(v)

    parsers: dict[str, tuple[str, _Parser]] = {
        "address": ("address", _string),
        "engines_per_node": ("engines_per_node", _count(1)),
        "num_cpus": ("num_cpus", number),
        "num_gpus": ("num_gpus", number),
        "resources": ("resources", resources),
        "slots": ("slots", _count(1)),
        "policy": ("policy", policy),
        "watch_interval": ("watch_interval_s", parse_duration),
    }
    values = {}
    for name, value in body.items():
        if name not in parsers:
            raise UsageError(f"unknown key cluster.{name}; known keys here: "
                             + ", ".join(f"cluster.{k}" for k in parsers))  # fmt: skip
        attr, parse = parsers[name]
        values[attr] = parse(value, f"cluster.{name}")
    return ClusterConfig(**values)


def _string(v: Any, key: str) -> str:
    if not isinstance(v, str):
        raise UsageError(f"{key}: expected a string, got {v!r}")
    return v


def _bool(v: Any, key: str) -> bool:
    if not isinstance(v, bool):
        raise UsageError(f"{key}: expected true or false, got {v!r}")
    return v


def _count(minimum: int) -> Callable[[Any, str], int]:
    def parse(v: Any, key: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise UsageError(f"{key}: expected an integer >= {minimum}, got {v!r}")
        return v

    return parse


def _devices(v: Any, key: str) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in v
    ):
        raise UsageError(f"{key}: expected a list of device ordinals such as [0, 1], got {v!r}")
    if len(set(v)) != len(v):
        raise UsageError(f"{key}: device {v} lists an ordinal twice")
    return tuple(v)


def _strings(v: Any, key: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise UsageError(f"{key}: expected a list of strings, got {v!r}")
    return tuple(v)


def _auto_bool(v: Any, key: str) -> bool | None:
    if isinstance(v, str) and v.strip().lower() == "auto":
        return None
    if not isinstance(v, bool):
        raise UsageError(f'{key}: expected true, false or "auto", got {v!r}')
    return v


def _budget(v: Any, key: str) -> int | None:
    return None if isinstance(v, str) and v.strip().lower() == "auto" else parse_size(v, key)


def _level(v: Any, key: str) -> str:
    levels = ("trace", "debug", "info", "warn", "warning", "error")
    if not isinstance(v, str) or v.lower() not in levels:
        raise UsageError(f"{key}: expected one of {', '.join(levels)}, got {v!r}")
    return v.lower()


def _backend(v: Any, key: str) -> str:
    if v not in ("auto", "cpu", "cuda"):
        raise UsageError(f"{key}: expected auto, cpu or cuda, got {v!r}")
    return str(v)


def _listen(v: Any, key: str) -> str:
    text = _string(v, key)
    if text.startswith("unix://"):
        if not text[len("unix://") :]:
            raise UsageError(f"{key}: a unix socket address needs a path (unix:///run/cuzk/cuzk.sock)")
        return text
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:  # 0: any free port
        raise UsageError(f"{key}: {text!r} is neither unix:///path nor host:port")
    return text


def _on_restart(v: Any, key: str) -> str:
    if v not in ("rerun", "fail"):
        raise UsageError(f"{key}: expected rerun or fail, got {v!r}")
    return str(v)


def _status_listen(v: Any, key: str) -> str:
    return "" if v == "" else _listen(v, key)


def _precompute(v: Any, key: str) -> int:
    from cuzk.toggles import TOGGLES

    if isinstance(v, bool) or not isinstance(v, int | str):
        raise UsageError(f"{key}: expected off, auto, full or a number of copies, got {v!r}")
    try:
        return int(TOGGLES["msm.precompute"].parse(str(v)))
    except UsageError as exc:
        raise UsageError(f"{key}: {str(exc).split(': ', 1)[1]}") from None


_Parser = Callable[[Any, str], Any]

#: section.key -> (DaemonConfig field, parser). The reference's keys first, then ours.
KEYS: dict[str, tuple[str, _Parser]] = {
    "daemon.listen": ("listen", _listen),
    "daemon.status_listen": ("status_listen", _status_listen),
    "daemon.token": ("token", lambda v, k: _token(_string(v, k), k)),
    "daemon.token_file": ("token", lambda v, k: _read_token(_string(v, k), k)),
    "daemon.tls_cert": ("tls_cert", _string),
    "daemon.tls_key": ("tls_key", _string),
    "daemon.max_message_bytes": ("max_message_bytes", parse_size),
    "daemon.grace_period": ("grace_period_s", parse_duration),
    "daemon.queue_limit": ("queue_limit", _count(1)),
    "daemon.result_retention": ("result_retention_s", parse_duration),
    "daemon.state_dir": ("state_dir", _string),
    "daemon.on_restart": ("on_restart", _on_restart),
    "daemon.backend": ("backend", _backend),
    "memory.total_budget": ("total_budget", _budget),
    "memory.safety_margin": ("safety_margin", parse_size),
    "memory.eviction_min_idle": ("eviction_min_idle_s", parse_duration),
    "gpus.devices": ("devices", _devices),
    "gpus.gpu_workers_per_device": ("gpu_workers_per_device", _count(1)),
    "scheduler.max_batch_size": ("max_batch_size", _count(1)),
    "scheduler.max_batch_wait_ms": ("max_batch_wait_ms", _count(0)),
    "scheduler.urgent_lane": ("urgent_lane", _auto_bool),
    "synthesis.threads": ("synthesis_threads", _count(0)),
    "pipeline.max_parallel_synthesis": ("max_parallel_synthesis", _count(0)),
    "srs.param_cache": ("param_cache", _string),
    "srs.preload": ("preload", _strings),
    "srs.msm_precompute": ("msm_precompute", _precompute),
    "logging.level": ("log_level", _level),
}

#: Keys the reference reads but does not use (or deprecated): accepted so old files load, reported.
IGNORED_KEYS = frozenset(
    {
        "gpus.gpu_threads",  # the reference's C++ CPU pool; our G2 MSM runs in the finalizer threads
        "memory.pinned_budget",
        "memory.working_memory_budget",
        "scheduler.sort_by_type",
        "synthesis.partition_workers",
        "pipeline.enabled",
        "pipeline.synthesis_lookahead",
        "pipeline.synthesis_concurrency",
        "pipeline.slot_size",
        "pipeline.max_gpu_queue_depth",
        "logging.format",
    }
)

#: Tables whose keys are names chosen by the operator: [circuits] kind = "circuit", [partitions], [zkeys].
_TABLES = ("circuits", "partitions", "zkeys")


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and localhost; anything else (0.0.0.0, a LAN address, a name) is beyond."""
    import ipaddress

    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _token(token: str, key: str) -> str:
    """A bearer token: blank or padded with spaces is a mistake, never a key that admits anyone."""
    if not token.strip():
        raise UsageError(f"{key} is blank; a token must have characters other than spaces")
    if token != token.strip():
        raise UsageError(f"{key} starts or ends with spaces; clients would have to send them too")
    return token


#: The longest unix socket path the kernel takes (sun_path is 108 bytes with its terminating NUL).
MAX_SOCKET_PATH_BYTES = 107


def _read_token(path: str, key: str) -> str:
    try:
        token = Path(path).read_text().strip()
    except OSError as exc:
        raise UsageError(f"{key}: cannot read {path}: {exc.strerror or exc}") from exc
    if not token:
        raise UsageError(f"{key}: {path} is empty")
    return token


def _tables(data: Mapping[str, Any]) -> dict[str, Any]:
    from cuzk.circuits import names

    out: dict[str, Any] = {}
    circuits = dict(DEFAULT_CIRCUITS)
    for kind, name in data.get("circuits", {}).items():
        if kind not in DEFAULT_CIRCUITS:
            raise UsageError(f"circuits.{kind}: unknown kind; kinds are {', '.join(DEFAULT_CIRCUITS)}")
        if name not in names():
            raise UsageError(f"circuits.{kind}: unknown circuit {name!r}; see `cuzk circuits`")
        circuits[kind] = name
    out["circuits"] = circuits
    partitions = dict(DEFAULT_PARTITIONS)
    for kind, n in data.get("partitions", {}).items():
        if kind not in DEFAULT_PARTITIONS:
            raise UsageError(f"partitions.{kind}: unknown kind; kinds are {', '.join(DEFAULT_PARTITIONS)}")
        partitions[kind] = _count(1)(n, f"partitions.{kind}")
    out["partitions"] = partitions
    zkeys = {}
    for zid, path in data.get("zkeys", {}).items():
        zkeys[zid] = _string(path, f"zkeys.{zid}")
        if not Path(zkeys[zid]).is_file():
            raise UsageError(f"zkeys.{zid}: {zkeys[zid]} is not a file")
    out["zkeys"] = zkeys
    return out


def parse_config(data: Mapping[str, Any], *, source: str = "config") -> DaemonConfig:
    """Validate a parsed TOML document; the first unknown key or bad value is a UsageError naming it."""
    values: dict[str, Any] = {}
    ignored: list[str] = []
    for section, body in data.items():
        if not isinstance(body, Mapping):
            raise UsageError(f"{source}: {section} must be a [{section}] table")
        if section in _TABLES or section == "cluster":
            continue
        for name, value in body.items():
            key = f"{section}.{name}"
            if key in IGNORED_KEYS:
                ignored.append(key)
                continue
            if key not in KEYS:
                known = sorted(k for k in KEYS if k.startswith(section + ".")) or sorted(KEYS)
                raise UsageError(f"{source}: unknown key {key}; known keys here: {', '.join(known)}")
            attr, parse = KEYS[key]
            values[attr] = parse(value, key)
    values.update(_tables(data))
    if "cluster" in data:
        values["cluster"] = _cluster(data["cluster"])
    cfg = DaemonConfig(**values, ignored=tuple(ignored))
    if not cfg.listen.startswith("unix://") and not cfg.token:
        raise UsageError(
            f"{source}: daemon.listen {cfg.listen} is TCP; set daemon.token or daemon.token_file "
            "(TCP without a token is refused)"
        )
    if bool(cfg.tls_cert) != bool(cfg.tls_key):
        raise UsageError(f"{source}: daemon.tls_cert and daemon.tls_key go together")
    for key, path in (("daemon.tls_cert", cfg.tls_cert), ("daemon.tls_key", cfg.tls_key)):
        if path:
            try:
                Path(path).read_bytes()
            except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                raise UsageError(f"{source}: {key}: cannot read {path!r}: {why}") from None
    if cfg.listen.startswith("unix://"):
        sock = cfg.listen[len("unix://") :]
        if len(os.fsencode(sock)) > MAX_SOCKET_PATH_BYTES:
            raise UsageError(
                f"{source}: daemon.listen: the socket path is {len(os.fsencode(sock))} bytes long; unix "
                f"sockets take at most {MAX_SOCKET_PATH_BYTES} (choose a shorter folder)"
            )
    if cfg.status_listen and not cfg.token and not is_loopback(cfg.status_listen.rpartition(":")[0]):
        raise UsageError(
            f"{source}: daemon.status_listen {cfg.status_listen} is beyond loopback, where /status "
            "names every job: set daemon.token (the page and /metrics then need it as a bearer token)"
        )
    if cfg.preload:
        unknown = [p for p in cfg.preload if p not in _known_keys(cfg)]
        if unknown:
            raise UsageError(f"srs.preload: unknown circuit(s) {', '.join(unknown)}")
    return cfg


def _known_keys(cfg: DaemonConfig) -> set[str]:
    from cuzk.circuits import names

    return set(names()) | set(cfg.zkeys)


def load_config(path: str | os.PathLike[str] | None, *, listen: str | None = None) -> DaemonConfig:
    """The config at `path` (None: all defaults), with `--listen` overriding daemon.listen."""
    data: dict[str, Any] = {}
    source = str(path) if path is not None else "defaults"
    if path is not None:
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read the config {path}: {exc.strerror or exc}") from exc
        if not raw.strip():
            raise UsageError(
                f"{path} is empty: give the settings to change, or leave out --config for the defaults"
            )
        try:
            data = tomllib.loads(raw.decode())
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise UsageError(f"{path} is not valid TOML: {exc}") from exc
    if listen is not None:
        data.setdefault("daemon", {})
        data["daemon"] = {**data["daemon"], "listen": listen}
    return parse_config(data, source=source)
