"""The [cluster] section of the daemon's config, and that the single-host daemon never imports Ray."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cuzk.errors import UsageError
from cuzk.server.config import ClusterConfig, parse_config


def test_cluster_section_parses_with_its_defaults() -> None:
    cfg = parse_config({"cluster": {}})
    assert cfg.cluster == ClusterConfig()
    cfg = parse_config(
        {"cluster": {"address": "auto", "engines_per_node": 2, "num_gpus": 1, "resources": {"h200": 1},
                     "slots": 3, "policy": "least-loaded", "watch_interval": "5s"}}
    )  # fmt: skip
    assert cfg.cluster == ClusterConfig("auto", 2, 1.0, 1.0, {"h200": 1.0}, 3, "least-loaded", 5.0)
    assert parse_config({}).cluster is None  # no section: the single-host daemon


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"adress": "auto"}, "unknown key cluster.adress"),
        ({"policy": "random"}, "cluster.policy: expected hot-first"),
        ({"engines_per_node": 0}, "cluster.engines_per_node: expected an integer >= 1"),
        ({"resources": {"gpu": -1}}, "cluster.resources.gpu: expected a non-negative number"),
        ({"num_cpus": "one"}, "cluster.num_cpus"),
    ],
)
def test_bad_cluster_keys_are_refused_by_name(body: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_config({"cluster": body})


def test_fleet_config_carries_the_engine_settings_and_on_restart() -> None:
    pytest.importorskip("ray")
    from cuzk.cluster.daemon import fleet_config

    cfg = parse_config({"daemon": {"backend": "cpu", "on_restart": "fail"}, "pipeline": {"max_parallel_synthesis": 1},
                        "cluster": {"resources": {"cuzk": 1}}})  # fmt: skip
    fc = fleet_config(cfg)
    assert fc.on_lost == "fail" and fc.resources == {"cuzk": 1.0}
    assert fc.engine["backend"] == "cpu" and fc.engine["synthesis_workers"] == 1
    assert "hooks" not in fc.engine and "clock" not in fc.engine


def test_the_single_host_daemon_does_not_import_ray() -> None:
    code = (
        "import sys; import cuzk.server.daemon, cuzk.server.service, cuzk.cluster.policy, cuzk.cluster.simulate; "
        "print('ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
