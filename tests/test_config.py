"""Settings: read once from the environment, validated, and the only place src/ reads it."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from cuzk import config
from cuzk.errors import UsageError

SRC = Path(__file__).resolve().parents[1] / "src" / "cuzk"


def test_defaults_from_an_empty_environment() -> None:
    c = config.Config.from_env({})
    assert c.timing.stderr is False and c.backend.name == "auto"
    assert c.cuda == config.CudaConfig() and c.npm.cache is None
    assert c.cache.root.name == "cuzk"  # the user cache dir


def test_every_variable_is_read() -> None:
    c = config.Config.from_env(
        {
            "CUZK_CACHE_DIR": "/tmp/x",
            "CUZK_TIMING": "1",
            "CUZK_BACKEND": " CPU ",
            "CUZK_MSM_CHUNKS": "4",
            "CUZK_PROFILE_KERNELS": "yes",
            "CUZK_PINNED_STAGING": "On",
            "CUZK_DEVICE_MEMORY_BUDGET": "80G",
            "CUZK_NPM_CACHE": "/tmp/npm",
            "CUZK_ADDR": "unix:///run/cuzk.sock",
            "CUZK_TOKEN": "s3cret",
        }
    )
    assert c.client == config.ClientConfig("unix:///run/cuzk.sock", "s3cret") and "s3cret" not in repr(c)
    assert c.cache.root == Path("/tmp/x") and c.timing.stderr and c.backend.name == "cpu"
    assert c.cuda == config.CudaConfig(
        msm_chunks=4, profile_kernels=True, pinned_staging=True, device_memory_budget="80G"
    )
    assert c.npm.cache == Path("/tmp/npm")


@pytest.mark.parametrize("off", ["", "0", "false", "NO", "off"])
def test_flags_off(off: str) -> None:
    assert config.Config.from_env({"CUZK_TIMING": off}).timing.stderr is False


def test_pinned_staging_is_on_unless_turned_off() -> None:
    assert config.Config.from_env({}).cuda.pinned_staging is True
    assert config.Config.from_env({"CUZK_PINNED_STAGING": ""}).cuda.pinned_staging is True
    assert config.Config.from_env({"CUZK_PINNED_STAGING": "off"}).cuda.pinned_staging is False


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CUZK_MSM_CHUNKS", "0"),
        ("CUZK_MSM_CHUNKS", "two"),
        ("CUZK_MSM_CHUNKS", "-3"),
        ("CUZK_TIMING", "maybe"),
    ],
)
def test_bad_values_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(UsageError, match=name):
        config.Config.from_env({name: value})


def test_get_is_cached_and_reload_rereads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path))
    first = config.reload()
    assert config.get() is first and first.cache.root == tmp_path
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "other"))
    assert config.get() is first  # read once: a later change needs reload()
    assert config.reload().cache.root == tmp_path / "other"
    assert config.reload({"CUZK_BACKEND": "cpu"}).backend.name == "cpu"  # an explicit mapping
    assert config.get().backend.name == "cpu"


def test_a_bad_reload_keeps_the_settings_in_force() -> None:
    good = config.reload({"CUZK_MSM_CHUNKS": "2"})
    with pytest.raises(UsageError, match="CUZK_MSM_CHUNKS"):
        config.reload({"CUZK_MSM_CHUNKS": "x"})
    assert config.get() is good


def test_threads_share_one_config() -> None:
    config.reload({})
    barrier = threading.Barrier(8)
    seen: list[config.Config] = []

    def worker() -> None:
        barrier.wait()
        seen.append(config.get())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(c) for c in seen}) == 1


def test_the_backend_and_cache_read_their_settings(tmp_path: Path) -> None:
    from cuzk import paths
    from cuzk.backends import get_backend
    from cuzk.errors import BackendUnavailableError
    from cuzk.r1cs import cache

    config.reload({"CUZK_CACHE_DIR": str(tmp_path), "CUZK_BACKEND": "nope"})
    assert paths.cache_dir("params") == tmp_path / "params" and (tmp_path / "params").is_dir()
    assert cache.cache_dir() == tmp_path / "r1cs"
    with pytest.raises(BackendUnavailableError, match="nope"):
        get_backend()
    assert get_backend("cpu").name == "cpu"  # an explicit name wins


def test_only_config_reads_the_environment() -> None:
    pattern = re.compile(r"os\.environ|os\.getenv|getenv\(")
    readers = sorted(
        str(p.relative_to(SRC))
        for p in SRC.rglob("*.py")
        if pattern.search(p.read_text()) and p.name != "config.py"
    )
    # CXX: the C++ compiler the host emulator builds with, the build tools' convention
    assert readers == ["backends/cuda/_emulator.py"]
    assert re.findall(r"os\.environ\.get\(\"(\w+)\"", (SRC / "backends/cuda/_emulator.py").read_text()) == [
        "CXX"
    ]
