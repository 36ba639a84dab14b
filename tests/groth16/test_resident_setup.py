"""The real-size set-up paths at toy size: parameters generated straight into residency, and a
.params set loaded straight into residency (chunked reads, decoded and checked where the backend
computes, sha256 from the same reads). The same code runs on the CPU backend and, on the host
emulator, on the CUDA backend's kernels; every proof is verified and a tampered one rejected."""

from __future__ import annotations

import numpy as np
import pytest
from toy import random_circuit, witness

from cuzk.algebra import encoding
from cuzk.backends.cuda._emulator import host_compiler
from cuzk.errors import ParamsError, UnsatisfiedError
from cuzk.groth16 import api, prove, verify
from cuzk.groth16 import params_io as io
from cuzk.groth16.proof import Proof
from cuzk.groth16.setup import generate_queries
from cuzk.groth16.srs import make_resident, resident_from_rows


@pytest.fixture(scope="module")
def emu():
    if host_compiler() is None:
        pytest.skip("the CUDA emulator needs a C++ compiler")
    from cuzk.backends.cuda import CudaBackend
    from cuzk.backends.cuda._emulator import EmulatorRuntime

    return CudaBackend(runtime=EmulatorRuntime())


def _prove_and_check(key, w, public):
    res = prove(key, [w])
    (proof,) = res.proofs
    assert verify(key.vk, public, proof)
    assert not verify(key.vk, [public[0] + 1, *public[1:]], proof)
    assert not verify(key.vk, public, Proof(a=proof.c, b=proof.b, c=proof.a))


def _publics(w):
    return [encoding.FR.to_ints(w.inputs[1:])[i] for i in range(w.inputs.shape[0] - 1)]


@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_generated_into_residency_proves(where, cpu, request):
    be = cpu if where == "cpu" else request.getfixturevalue("emu")
    cs, w = random_circuit(40, num_public=2, seed=3)
    gen = generate_queries(cs, be)
    key = resident_from_rows(gen.vk, gen.rows, cs, be, g2_backend=cpu)
    _prove_and_check(key, w, _publics(w))
    with pytest.raises(UnsatisfiedError):
        prove(key, [witness(_publics(w), [*encoding.FR.to_ints(w.aux)[:-1], 1])])


def test_the_g2_query_made_for_the_host_comes_out_in_passes_and_proves(emu, cpu, tmp_path, monkeypatch):
    """msm.g2_on=cpu: b_g2 is made on the device a pass at a time into host rows, so the device
    never holds the whole G2 query (wpost-32g's 23.7 GB did not fit beside its G1 queries on an
    80 GB card); the key proves, and the set saved from those rows loads back byte for byte."""
    from cuzk.groth16 import setup

    monkeypatch.setattr(setup, "HOST_QUERY_CHUNK", 3)
    passes = []
    real = setup._fixed_base
    monkeypatch.setattr(
        setup, "_fixed_base", lambda be, base, s, g: passes.append((g, s.shape[0])) or real(be, base, s, g)
    )
    cs, w = random_circuit(30, num_public=2, seed=6)
    gen = generate_queries(cs, emu, g2_on_host=True)
    b = gen.rows["b_g2"]
    assert isinstance(b, np.ndarray)
    assert [n for g, n in passes if g == "g2"] == [min(3, b.shape[0] - lo) for lo in range(0, b.shape[0], 3)]
    key = resident_from_rows(gen.vk, gen.rows, cs, emu, g2_backend=cpu)
    _prove_and_check(key, w, _publics(w))
    io.save_rows(gen.vk, gen.rows, emu, tmp_path, "toy", {"topology_hash": "t"})
    _, rows = io.load_rows(tmp_path / "toy.params", emu, checked=True)
    assert np.array_equal(emu.to_host(rows["b_g2"]), b)


def test_a_streamed_g2_query_is_made_on_the_host_in_passes_and_proves(emu, tmp_path, monkeypatch):
    """msm.g2_on=stream: generated into residency for the device backend's streamed twin, b_g2
    comes out as host rows a pass at a time (as for the CPU) and its MSM streams them through
    the device (cuda.host_rows); loaded back from the cached files it proves the same way."""
    from cuzk.backends.cuda.host_rows import HostRowBases
    from cuzk.groth16 import setup

    monkeypatch.setattr(setup, "HOST_QUERY_CHUNK", 4)
    monkeypatch.setattr(api, "params_dir_for", lambda name, h: tmp_path / f"{name}-{h}")
    passes = []
    real = setup._fixed_base_to_host
    monkeypatch.setattr(setup, "_fixed_base_to_host", lambda *a: passes.append(a[3]) or real(*a))
    cs, w = random_circuit(30, num_public=2, seed=8)
    twin = emu.streamed()
    for source in ("generated", "file"):
        _, key = api.resident_parameters("toy", cs, "abc", emu, g2_backend=twin, generate=True)
        assert isinstance(key.b_g2, HostRowBases) and isinstance(key.b_g2.rows, np.ndarray)
        assert key.g2_backend is twin and key.backend is emu
        _prove_and_check(key, w, _publics(w))
        with pytest.raises(UnsatisfiedError):
            prove(key, [witness(_publics(w), [*encoding.FR.to_ints(w.aux)[:-1], 1])])
        assert passes == ["g2"], source  # made once, on the host; then read from the files
    assert (tmp_path / "toy-abc" / "toy.params").exists()


def test_a_g2_query_loaded_for_the_host_never_sits_whole_on_the_card(emu, cpu, tmp_path, monkeypatch):
    """A .params set whose G2 query is kept in host memory (msm.g2_on cpu or stream) is decoded
    a chunk at a time through one staging buffer on the card, so the card never holds the whole
    query (wpost-32g's 23.7 GB beside its 45.6 GB of G1 queries on an 80 GB GPU); the rows are
    the file's and a key made from them proves. An unknown query name is refused."""
    cs, w = random_circuit(40, num_public=2, seed=9)
    gen = generate_queries(cs, cpu)
    io.save_rows(gen.vk, gen.rows, cpu, tmp_path, "toy", {"topology_hash": "t"})
    path = tmp_path / "toy.params"
    chunk, n_g2 = 3, gen.rows["b_g2"].shape[0]
    assert n_g2 > 2 * chunk
    asked: list[tuple[str, int]] = []
    real = emu.empty_rows
    monkeypatch.setattr(emu, "empty_rows", lambda n, g: asked.append((g, n)) or real(n, g))
    vk, rows = io.load_rows(path, emu, checked=True, chunk_points=chunk, host=("b_g2",))
    assert [n for g, n in asked if g == "g2" and n] == [chunk]  # one staging chunk, never the query
    assert isinstance(rows["b_g2"], np.ndarray) and np.array_equal(rows["b_g2"], gen.rows["b_g2"])
    for q in ("h", "l", "a", "b_g1"):
        assert np.array_equal(emu.to_host(rows[q]), gen.rows[q])
    key = resident_from_rows(vk, rows, cs, emu, g2_backend=cpu)
    _prove_and_check(key, w, _publics(w))
    asked.clear()
    io.load_rows(path, emu, checked=True, chunk_points=chunk)  # on the card: the whole query at once
    assert ("g2", n_g2) in asked
    with pytest.raises(ValueError, match="no such queries"):
        io.load_rows(path, emu, checked=True, host=("c",))


@pytest.mark.parametrize("where", ["cpu", "emulator"])
def test_saved_rows_load_back_byte_for_byte(where, cpu, request, tmp_path):
    be = cpu if where == "cpu" else request.getfixturevalue("emu")
    cs, w = random_circuit(30, num_public=2, seed=5)
    gen = generate_queries(cs, be)
    manifest = io.save_rows(gen.vk, gen.rows, be, tmp_path, "toy", {"topology_hash": "t"})
    host = gen.host()
    io.write_params(host, tmp_path / "host.params")  # the host writer's bytes are the same
    assert (tmp_path / "toy.params").read_bytes() == (tmp_path / "host.params").read_bytes()
    sha = io.read_manifest(tmp_path, "toy")["files"]["toy.params"]["sha256"]
    assert manifest.exists()
    stats = io.LoadStats()
    vk, rows = io.load_rows(
        tmp_path / "toy.params", be, checked=True, sha256=sha, stats=stats, chunk_points=7, readers=3
    )
    assert stats.bytes_read == (tmp_path / "toy.params").stat().st_size
    for name in ("h", "l", "a", "b_g1", "b_g2"):
        assert np.array_equal(be.to_host(rows[name]), be.to_host(gen.rows[name]))
    assert np.array_equal(vk.ic, gen.vk.ic)
    key = resident_from_rows(vk, rows, cs, be, g2_backend=cpu)
    _prove_and_check(key, w, _publics(w))
    # the old path (host Parameters) proves with the same set
    _prove_and_check(
        make_resident(io.ParamsFile(tmp_path / "toy.params").parameters(), cs, cpu), w, _publics(w)
    )


def test_a_changed_byte_is_refused_by_its_digest_or_its_check(cpu, tmp_path):
    cs, _ = random_circuit(20, num_public=1, seed=2)
    gen = generate_queries(cs, cpu)
    io.save_rows(gen.vk, gen.rows, cpu, tmp_path, "toy", {})
    path = tmp_path / "toy.params"
    sha = io.sha256_file(path)
    data = bytearray(path.read_bytes())
    sec = io.ParamsFile(path)._layout.sections["l"]
    data[sec.offset + 5 * 96 + 60] ^= 1  # point 5 of l: off the curve
    path.write_bytes(bytes(data))
    with pytest.raises(ParamsError, match=r"l: .*point 5: .*curve equation"):
        io.load_rows(path, cpu, checked=False, chunk_points=4)
    data[sec.offset + 5 * 96 + 60] ^= 1
    data[-1] ^= 1  # the last byte of b_g2's last point
    path.write_bytes(bytes(data))
    data[-1] ^= 1
    data += b"tail"  # bellperson ignores bytes after b_g2; the digest covers them
    path.write_bytes(bytes(data))
    with pytest.raises(ParamsError, match="sha256 differs"):
        io.load_rows(path, cpu, checked=False, sha256=sha)


def test_subgroup_checked_only_when_asked(cpu, tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "algebra"))
    from pyecc_oracle import random_curve_points

    from cuzk.algebra import G1

    cs, _ = random_circuit(20, num_public=1, seed=4)
    gen = generate_queries(cs, cpu)
    gen.rows["a"][2] = G1.from_ints(random_curve_points(G1, 1, np.random.default_rng(0)))[0].reshape(-1)
    io.save_rows(gen.vk, gen.rows, cpu, tmp_path, "toy", {})
    with pytest.raises(ParamsError, match=r"a: .*point 2 is on the curve but not in the prime-order"):
        io.load_rows(tmp_path / "toy.params", cpu, checked=True)
    _, rows = io.load_rows(tmp_path / "toy.params", cpu, checked=False)  # the trust setting
    assert np.array_equal(rows["a"], gen.rows["a"])


def test_resident_parameters_generates_caches_and_loads(cpu, tmp_path, monkeypatch):
    cs, w = random_circuit(30, num_public=2, seed=9)
    monkeypatch.setattr(api, "params_dir_for", lambda name, h: tmp_path / f"{name}-{h}")
    where, key = api.resident_parameters("toy", cs, "abc", cpu)
    assert where == tmp_path / "toy-abc" and (where / "toy.params").exists()
    _prove_and_check(key, w, _publics(w))
    again, key2 = api.resident_parameters("toy", cs, "abc", cpu, checked=True)
    assert again == where and np.array_equal(key2.vk.ic, key.vk.ic)
    _prove_and_check(key2, w, _publics(w))
    monkeypatch.setattr(api, "CACHE_LIMIT_BYTES", 0)
    none, key3 = api.resident_parameters("toy", cs, "other", cpu)
    assert none is None and not (tmp_path / "toy-other").exists()
    _prove_and_check(key3, w, _publics(w))
    with pytest.raises(ParamsError, match="was made for topology"):
        api.resident_parameters("toy", random_circuit(31, 2, 1)[0], "zzz", cpu, directory=where)
    with pytest.raises(ParamsError, match="do not fit this circuit"):
        api.resident_parameters("toy", random_circuit(31, 2, 1)[0], "abc", cpu, directory=where)


def _small_porep():
    from cuzk.circuits.stacked import StackedPorep

    params = {"challenges": 3, "layers": 2, "data_depth": 4, "drg_parents": 1, "exp_parents": 1,
              "parent_slots": 3, "tree_depth": 2, "sha_rounds": 2}  # fmt: skip
    return StackedPorep(name="porep-r3", description="test", scale="r", params=params)


@pytest.mark.parametrize("where", ["cpu", pytest.param("emulator", marks=pytest.mark.large)])
def test_replicated_topology_is_set_up_a_copy_at_a_time(where, cpu, request, tmp_path, monkeypatch):
    """The real-size circuits' path: the QAP at tau per copy equals the full matrices' product,
    the densities come from the layout, and neither set-up nor proving builds A, B or C."""
    from cuzk import config
    from cuzk.algebra.fields import FR
    from cuzk.groth16.qap import Densities
    from cuzk.groth16.setup import qap_at

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
    config.reload()
    be = cpu if where == "cpu" else request.getfixturevalue("emu")
    circuit = _small_porep()
    topo = circuit.topology()
    assert topo.layout.copies == 3 and "A" not in topo.__dict__
    lag = FR.random(topo.num_constraints, np.random.default_rng(1))
    per_copy = [be.to_host(qap_at(topo, k, be, be.to_device(lag))) for k in range(3)]
    dens = Densities.of(topo)
    key = resident_from_rows(*_gen(topo, be), topo, be, g2_backend=cpu)
    wit = circuit.witness(circuit.random_instance(2))
    res = prove(key, [wit])
    assert not {"A", "B", "C"} & set(topo.__dict__)  # nothing above built a full matrix
    (proof,) = res.proofs
    pub = res.public_inputs[0]
    assert verify(key.vk, pub, proof)
    assert not verify(key.vk, pub, Proof(a=proof.c, b=proof.b, c=proof.a))
    for k, m in enumerate((topo.A, topo.B, topo.C)):  # now build them, to compare
        assert np.array_equal(per_copy[k], be.to_host(be.spmv_transposed(m, be.to_device(lag))))
    full = Densities(a_aux=topo.A.columns_used()[topo.num_inputs :], b_input=topo.B.columns_used()[: topo.num_inputs],
                     b_aux=topo.B.columns_used()[topo.num_inputs :])  # fmt: skip
    for f in ("a_aux", "b_input", "b_aux"):
        assert np.array_equal(getattr(dens, f), getattr(full, f))
    config.reload()


@pytest.mark.parametrize("group", [1, 2, 3])
def test_the_qap_of_a_replicated_topology_is_the_same_in_groups_of_copies(group, cpu, tmp_path, monkeypatch):
    """qap_at runs the block over a group of copies per launch (wpost-32g has 2,349 copies):
    groups of one, two (one group short) and all three copies give the full matrices' product."""
    from cuzk import config
    from cuzk.algebra.fields import FR
    from cuzk.groth16 import setup

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
    config.reload()
    topo = _small_porep().topology()
    n_local = max(int(np.unique(np.asarray(u.indices)).shape[0]) for u in topo.unit)
    monkeypatch.setattr(setup, "QAP_GROUP_ROWS", group * n_local)
    lag = FR.random(topo.num_constraints, np.random.default_rng(4))
    got = [setup.qap_at(topo, k, cpu, lag) for k in range(3)]
    for k, m in enumerate((topo.A, topo.B, topo.C)):
        assert np.array_equal(got[k], cpu.spmv_transposed(m, lag))
    config.reload()


def _gen(topo, be):
    gen = generate_queries(topo, be)
    return gen.vk, gen.rows


def test_setup_and_proving_run_their_xp_work_in_the_device_region(emu, cpu, monkeypatch):
    """Set-up, the matvec check and the prover's start enter the backend's device region, where
    a CUDA backend's CuPy calls allocate from its own pool (outside it they went to CuPy's
    default pool, which no budget or memory check saw: ~27 GiB in a wpost-32g proof)."""
    from contextlib import contextmanager

    depth, entered = [0], []
    region = emu.activate

    @contextmanager
    def counting():
        depth[0] += 1
        entered.append(depth[0])
        try:
            with region():
                yield
        finally:
            depth[0] -= 1

    monkeypatch.setattr(emu, "activate", counting)
    cs, w = random_circuit(40, num_public=2, seed=7)
    gen = generate_queries(cs, emu)
    assert entered, "set-up ran outside the device region"
    key = resident_from_rows(gen.vk, gen.rows, cs, emu, g2_backend=cpu)
    entered.clear()
    _prove_and_check(key, w, _publics(w))
    assert len(entered) >= 2  # the satisfaction check and start


@pytest.mark.gpu
def test_setup_and_proof_leave_cupy_default_pool_untouched(cpu):
    import cupy

    from cuzk.backends.cuda import CudaBackend

    be = CudaBackend()
    default = cupy.get_default_memory_pool()
    before = default.total_bytes()
    cs, w = random_circuit(200, num_public=2, seed=9)
    gen = generate_queries(cs, be)
    key = resident_from_rows(gen.vk, gen.rows, cs, be, g2_backend=cpu)
    _prove_and_check(key, w, _publics(w))
    assert default.total_bytes() == before
    assert be.memory_info()["pool_held"] > 0


def test_the_satisfaction_check_reads_its_verdict_through_to_host(emu, monkeypatch):
    """The check after the matvec runs inside every hold, beside the other worker's staging: its
    verdict comes to the host through `to_host`, whose read waits by event first on CUDA
    (Runtime.settle), not through an implicit synchronous copy."""
    from cuzk.algebra.fields import FR
    from cuzk.groth16 import prover

    reads = []
    real = type(emu).to_host
    monkeypatch.setattr(type(emu), "to_host", lambda self, a: reads.append(a) or real(self, a))
    rng = np.random.default_rng(9)
    a, b = (emu.to_device(FR.random(6, rng)) for _ in range(2))
    prover._checked(None, emu, a, b, emu.fr_mul(a, b), "")
    assert len(reads) == 1
