"""A local Ray cluster on loopback for the fleet tests: a head that runs nothing and three nodes,
each its own raylet process with one CPU and one `cuzk` resource (so one engine per node)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

NODES = 3


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    from cuzk import config

    cache = tmp_path_factory.mktemp("cache")
    old = os.environ.get("CUZK_CACHE_DIR")
    os.environ["CUZK_CACHE_DIR"] = str(cache)  # the node processes inherit it; verify() reads it too
    config.reload()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    for _ in range(NODES):
        cluster.add_node(num_cpus=1, resources={"cuzk": 1})
    cluster.wait_for_nodes()
    try:
        yield cluster
    finally:
        cluster.shutdown()
        if old is None:
            os.environ.pop("CUZK_CACHE_DIR", None)
        else:
            os.environ["CUZK_CACHE_DIR"] = old
        config.reload()
