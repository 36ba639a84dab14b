"""The daemon's TOML: the reference's keys load, and every unknown key or bad value is an error naming it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from cuzk.errors import UsageError
from cuzk.server.config import DEFAULT_LISTEN, load_config, parse_config, parse_duration, parse_size

REFERENCE_EXAMPLE = """
[daemon]
listen = "unix:///tmp/cuzk-test.sock"
status_listen = "127.0.0.1:9821"

[memory]
total_budget = "64GiB"
safety_margin = "5GiB"
eviction_min_idle = "5m"
pinned_budget = "10GiB"          # deprecated by the reference: accepted, reported, unused

[gpus]
devices = [0]
gpu_threads = 32
gpu_workers_per_device = 2

[scheduler]
max_batch_size = 2
max_batch_wait_ms = 500
sort_by_type = true

[synthesis]
threads = 0

[pipeline]
enabled = true
max_parallel_synthesis = 4

[srs]
param_cache = "/data/zk/params"

[logging]
level = "debug"
"""


def test_the_reference_keys_load(tmp_path: Path) -> None:
    path = tmp_path / "cuzk.toml"
    path.write_text(REFERENCE_EXAMPLE)
    cfg = load_config(path)
    assert cfg.listen == "unix:///tmp/cuzk-test.sock" and cfg.status_listen == "127.0.0.1:9821"
    assert cfg.total_budget == 64 << 30 and cfg.safety_margin == 5 << 30 and cfg.eviction_min_idle_s == 300
    assert cfg.devices == (0,) and cfg.gpu_workers_per_device == 2
    assert (cfg.max_batch_size, cfg.max_batch_wait_ms, cfg.max_parallel_synthesis) == (2, 500, 4)
    assert cfg.param_cache == "/data/zk/params" and cfg.log_level == "debug"
    assert set(cfg.ignored) == {
        "memory.pinned_budget", "scheduler.sort_by_type", "pipeline.enabled", "gpus.gpu_threads"
    }  # fmt: skip


def test_defaults_and_listen_override() -> None:
    cfg = load_config(None)
    assert cfg.listen == DEFAULT_LISTEN and cfg.total_budget is None and cfg.queue_limit > 0
    assert load_config(None, listen="unix:///tmp/x.sock").listen == "unix:///tmp/x.sock"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"daemon": {"listn": "x"}}, r"unknown key daemon\.listn; known keys here: daemon\.backend"),
        ({"gpu": {"devices": [0]}}, r"unknown key gpu\.devices"),
        ({"memory": {"total_budget": "lots"}}, r"memory\.total_budget: 'lots' is not a size"),
        ({"memory": {"eviction_min_idle": "soon"}}, r"memory\.eviction_min_idle: 'soon' is not a duration"),
        ({"gpus": {"devices": [0, 0]}}, r"gpus\.devices: .* lists an ordinal twice"),
        ({"gpus": {"devices": "0"}}, r"gpus\.devices: expected a list"),
        ({"gpus": {"gpu_workers_per_device": 0}}, r"gpus\.gpu_workers_per_device: expected an integer >= 1"),
        ({"scheduler": {"max_batch_size": True}}, r"scheduler\.max_batch_size: expected an integer"),
        ({"logging": {"level": "loud"}}, r"logging\.level: expected one of"),
        ({"daemon": {"listen": "0.0.0.0:9820"}}, r"is TCP; set daemon\.token"),
        ({"daemon": {"listen": "nowhere"}}, r"daemon\.listen: 'nowhere' is neither"),
        ({"daemon": {"listen": "unix://"}}, r"needs a path"),
        ({"daemon": {"tls_cert": "c.pem"}}, r"tls_cert and daemon\.tls_key go together"),
        ({"circuits": {"porep": "porep-huge"}}, r"circuits\.porep: unknown circuit 'porep-huge'"),
        ({"circuits": {"seal": "porep-tiny"}}, r"circuits\.seal: unknown kind"),
        ({"partitions": {"porep": 0}}, r"partitions\.porep: expected an integer >= 1"),
        ({"srs": {"preload": ["porep-nope"]}}, r"srs\.preload: unknown circuit"),
        ({"daemon": "x"}, r"daemon must be a \[daemon\] table"),
    ],
)
def test_bad_keys_and_values_name_the_key(data: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_config(data)


def test_tcp_with_a_token_file(tmp_path: Path) -> None:
    tok = tmp_path / "token"
    tok.write_text("s3cret\n")
    cfg = parse_config({"daemon": {"listen": "127.0.0.1:9820", "token_file": str(tok)}})
    assert cfg.token == "s3cret"
    tok.write_text("")
    with pytest.raises(UsageError, match="is empty"):
        parse_config({"daemon": {"listen": "127.0.0.1:9820", "token_file": str(tok)}})


def test_files_that_do_not_load(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read the config"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[daemon\nlisten = 1")
    with pytest.raises(UsageError, match="not valid TOML"):
        load_config(bad)


def test_sizes_and_durations() -> None:
    assert parse_size("14GiB", "k") == 14 << 30 and parse_size("512MiB", "k") == 512 << 20
    assert (
        parse_size("5GB", "k") == 5 * 10**9 and parse_size(1234, "k") == 1234 and parse_size("77", "k") == 77
    )
    assert (
        parse_duration("5m", "k") == 300 and parse_duration("30s", "k") == 30 and parse_duration(2, "k") == 2
    )
    for bad in ("-1", "1.5GiB", "GiB", "", None, True):
        with pytest.raises(UsageError):
            parse_size(bad, "k")
    with pytest.raises(UsageError, match="k: '250ms' is not a duration"):
        parse_duration("250ms", "k")


def test_state_dir_and_on_restart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cuzk import config
    from cuzk.server.daemon import _lock_state_dir, state_dir

    cfg = parse_config({"daemon": {"state_dir": str(tmp_path / "s"), "on_restart": "fail"}})
    assert (cfg.state_dir, cfg.on_restart) == (str(tmp_path / "s"), "fail")
    assert parse_config({}).on_restart == "rerun"
    with pytest.raises(UsageError, match=r"daemon\.on_restart: expected rerun or fail"):
        parse_config({"daemon": {"on_restart": "retry"}})
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
    config.reload()
    try:  # the default: one folder per listen address under the user cache
        assert state_dir(parse_config({"daemon": {"listen": "unix:///run/cuzk/a.sock"}})) == (
            tmp_path / "cache" / "daemon" / "run-cuzk-a.sock"
        )
    finally:
        monkeypatch.undo()
        config.reload()
    held = _lock_state_dir(tmp_path / "s")
    try:
        with pytest.raises(UsageError, match="in use by another daemon"):
            _lock_state_dir(tmp_path / "s")
    finally:
        held.close()
    _lock_state_dir(tmp_path / "s").close()  # free again once the holder is gone


def test_a_daemon_that_cannot_start_leaves_signal_handling_as_it_was(tmp_path: Path) -> None:
    """In-process callers (the CLI's bad-argument table) must not be left ignoring Ctrl-C."""
    import signal

    from cuzk.server.daemon import run

    blocker = tmp_path / "not-a-socket"
    blocker.write_text("x")
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    with pytest.raises(UsageError, match="is not a socket"):
        run(load_config(None, listen=f"unix://{blocker}"))
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


@pytest.mark.parametrize(
    ("value", "copies"), [('"off"', 1), ('"full"', 64), ('"auto"', 0), ("4", 4), ('"2"', 2), ("1", 1)]
)
def test_msm_precompute_key(value: str, copies: int) -> None:
    from cuzk.server.daemon import engine_config

    cfg = parse_config(tomllib.loads(f"[srs]\nmsm_precompute = {value}\n"))
    assert cfg.msm_precompute == copies
    assert engine_config(cfg).msm_precompute == copies


@pytest.mark.parametrize("value", ["0", "true", '"some"', "-3", "[4]"])
def test_msm_precompute_rejects_bad_values(value: str) -> None:
    with pytest.raises(UsageError, match=r"srs\.msm_precompute: expected off, auto, full or a number"):
        parse_config(tomllib.loads(f"[srs]\nmsm_precompute = {value}\n"))


@pytest.mark.parametrize(("value", "lane"), [('"auto"', None), ("true", True), ("false", False)])
def test_urgent_lane_key(value: str, lane: bool | None) -> None:
    from cuzk.server.daemon import engine_config

    cfg = parse_config(tomllib.loads(f"[scheduler]\nurgent_lane = {value}\n"))
    assert cfg.urgent_lane is lane
    assert engine_config(cfg).urgent_lane is lane
    assert load_config(None).urgent_lane is None  # the default: on with a GPU backend


@pytest.mark.parametrize("value", ['"yes"', "1", "[true]"])
def test_urgent_lane_rejects_bad_values(value: str) -> None:
    with pytest.raises(UsageError, match=r"scheduler\.urgent_lane: expected true, false or \"auto\""):
        parse_config(tomllib.loads(f"[scheduler]\nurgent_lane = {value}\n"))
