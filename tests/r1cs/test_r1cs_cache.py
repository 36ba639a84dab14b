"""The on-disk recording cache: round trip, and damaged or stale files detected and rebuilt."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from cuzk.r1cs import cache


@pytest.fixture
def recorded():
    from cuzk.circuits import get_circuit

    c = get_circuit("wpost-tiny")
    topo, program = c.record()
    return c, topo, program


def _same(a, b) -> None:
    assert a.hash == b.hash
    for m in "ABC":
        assert np.array_equal(getattr(a, m).data, getattr(b, m).data)
    assert [a.constraint_name(i) for i in range(0, a.num_constraints, 97)] == [
        b.constraint_name(i) for i in range(0, b.num_constraints, 97)
    ]


def test_round_trip_and_statuses(tmp_path, recorded):
    c, topo, program = recorded
    path, spec = tmp_path / "x.npz", {"k": 1}
    calls = []

    def record():
        calls.append(1)
        return topo, program

    _, _, s1 = cache.load_or_record(path, spec, record)
    t2, p2, s2 = cache.load_or_record(path, spec, record)
    assert (s1, s2, len(calls)) == ("recorded", "hit", 1)
    _same(t2, topo)
    inst = c.random_instance(3)
    assert np.array_equal(p2.run(inst).aux, program.run(inst).aux)
    _, _, s3 = cache.load_or_record(path, {"k": 2}, record)
    assert s3.startswith("rebuilt: recorded for another circuit spec")


def _rewrite(path, edit) -> None:
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    edit(arrays)
    with open(path, "wb") as f:
        np.savez(f, **arrays)


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        ("truncate", "unreadable"),
        ("flip", "content hash mismatch"),
        ("version", "format version"),
        ("garbage", "unreadable"),
    ],
)
def test_damaged_files_are_rebuilt(tmp_path, recorded, damage, reason, caplog):
    _, topo, program = recorded
    path, spec = tmp_path / "x.npz", {"k": 1}
    cache.save(path, topo, program, spec)
    if damage == "truncate":
        raw = path.read_bytes()
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "garbage":
        path.write_bytes(b"not a zip file at all")
    elif damage == "flip":
        _rewrite(path, lambda a: a["C_data"].__setitem__((0, 0), a["C_data"][0, 0] ^ np.uint64(1)))
    else:

        def bump(a):
            h = json.loads(a["header"].tobytes())
            h["format_version"] = cache.FORMAT_VERSION + 1
            a["header"] = np.frombuffer(json.dumps(h).encode(), dtype=np.uint8)

        _rewrite(path, bump)
    with pytest.raises(cache.CacheMiss, match=reason):
        cache.load(path, spec)
    t, _, status = cache.load_or_record(path, spec, lambda: (topo, program))
    assert status.startswith("rebuilt") and reason in status
    assert "discarding cached recording" in caplog.text
    _same(t, topo)
    assert cache.load(path, spec)[0].hash == topo.hash  # the rebuilt file is good again
    assert zipfile.is_zipfile(path)
