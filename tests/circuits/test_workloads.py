"""Workload circuits: valid instances satisfy, corrupted ones do not, and recorded synthesis
equals direct synthesis bit for bit (matrices, witness, constraint names)."""

from __future__ import annotations

import numpy as np
import pytest

from cuzk import config
from cuzk.algebra.fields import FR
from cuzk.backends import get_backend
from cuzk.circuits import get_circuit, list_circuits, names
from cuzk.errors import UnknownCircuitError, UnsatisfiedError

CPU = get_backend("cpu")

CI = [n for n in names() if n.endswith(("-tiny", "-small"))]
LARGE = [n for n in names() if n.endswith(("-medium", "-13m"))]


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cuzk-cache"))
    config.reload()


def _same(direct, topo, wit) -> None:
    assert direct.topology.hash == topo.hash
    for m in "ABC":
        a, b = getattr(direct.topology, m), getattr(topo, m)
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
        assert np.array_equal(a.data, b.data)
    assert np.array_equal(direct.witness.inputs, wit.inputs) and np.array_equal(direct.witness.aux, wit.aux)
    step = max(1, topo.num_constraints // 500)
    for i in range(0, topo.num_constraints, step):
        assert direct.topology.constraint_name(i) == topo.constraint_name(i)


@pytest.mark.parametrize("name", CI)
def test_circuit(name):
    c = get_circuit(name)
    topo = c.topology()
    inst = c.random_instance(seed=7)
    wit = c.witness(inst)
    topo.check(wit, CPU)
    assert c.public_inputs(inst) == FR.to_ints(wit.inputs[1:])
    _same(c.direct(inst), topo, wit)
    with pytest.raises(UnsatisfiedError) as err:
        topo.check(c.witness(c.corrupt(inst, seed=1)), CPU)
    assert err.value.constraint == topo.constraint_name(err.value.index)
    # a second instance through the same recording
    other = c.random_instance(seed=8)
    topo.check(c.witness(other), CPU)
    assert c.public_inputs(other) != c.public_inputs(inst)


@pytest.mark.parametrize("name", CI)
def test_corruptions_are_always_rejected(name):
    c = get_circuit(name)
    topo, inst = c.topology(), c.random_instance(seed=3)
    full_rounds = c.params.get("sha_rounds", 64) == 64  # 2-round SHA-256 ignores some message bits
    for s in range(4):
        for private in (False, True) if full_rounds else (False,):
            with pytest.raises(UnsatisfiedError):
                topo.check(c.witness(c.corrupt(inst, seed=s, private=private)), CPU)


def test_instances_are_seeded():
    c = get_circuit("porep-tiny")
    a, b, d = c.random_instance(5), c.random_instance(5), c.random_instance(6)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["public"], d["public"])


def test_sizes_match_their_scales():
    for c in list_circuits():
        if c.scale == "32g":
            continue  # tests/circuits/test_real_size.py: the stated real counts
        n = c.estimate_constraints()
        want = {
            "tiny": (2**10, 2**13),
            "small": (2**15, 2**17),
            "medium": (2**19, 2**21),
            "13m": (12e6, 14e6),
        }
        lo, hi = want[c.scale]
        assert lo <= n <= hi, (c.name, n)
    for name in CI:
        c = get_circuit(name)
        assert abs(c.topology().num_constraints - c.estimate_constraints()) < 0.2 * c.estimate_constraints()


def test_unknown_circuit_lists_the_known_ones():
    with pytest.raises(UnknownCircuitError, match="porep-tiny") as err:
        get_circuit("porep-huge")
    assert "porep-huge" in str(err.value)


def test_disk_cache_is_used_and_instances_checked():
    c = get_circuit("snap-tiny")
    c.forget()
    c.topology()
    c.forget()
    c.topology()
    assert c.cache_status == "hit"
    from cuzk.errors import CircuitError

    with pytest.raises(CircuitError, match="instance of porep-tiny"):
        c.witness(get_circuit("porep-tiny").random_instance(0))


def test_porep_density_is_close_to_the_reference():
    s = get_circuit("porep-small").topology().stats()
    assert 2.0 < s["nnz_a"] < 2.8 and 0.9 < s["nnz_b"] < 1.4 and 1.9 < s["nnz_c"] < 2.6
    assert 0.2 < s["b_aux_density"] < 0.3 and s["a_aux_density"] > 0.99


@pytest.mark.large
@pytest.mark.parametrize("name", LARGE)
def test_large_circuit(name):
    c = get_circuit(name)
    topo = c.topology()
    inst = c.random_instance(seed=1)
    topo.check(c.witness(inst), CPU)
    with pytest.raises(UnsatisfiedError):
        topo.check(c.witness(c.corrupt(inst)), CPU)
