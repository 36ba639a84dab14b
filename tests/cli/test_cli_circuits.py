"""`cuzk circuits` and `cuzk bench synth` end to end through the CLI entry point."""

from __future__ import annotations

import json

import pytest

from cuzk import config
from cuzk.cli.main import main


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cuzk-cache"))
    config.reload()


def test_circuits_json(capsys):
    assert main(["circuits", "porep-tiny", "winning-tiny", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["name"] for r in rows] == ["porep-tiny", "winning-tiny"]
    assert all(r["constraints"] > 1000 and 0 < r["b_aux_density"] <= 1 and r["nnz_a"] > 1 for r in rows)


def test_circuits_table_estimates(capsys):
    assert main(["circuits", "--estimate"]) == 0
    out = capsys.readouterr().out
    assert "porep-13m" in out and "estimate" in out and "not Filecoin-consensus-compatible" in out


def test_bench_synth(capsys):
    assert main(["bench", "synth", "--circuit", "wpost-tiny", "--iterations", "2", "--profile"]) == 0
    out = capsys.readouterr().out
    for step in ("witness", "matvec_a", "matvec_b", "matvec_c", "density", "constraints/s", "peak memory"):
        assert step in out
    assert "cumulative" in out  # the cProfile summary


def test_bad_input(capsys):
    assert main(["bench", "synth", "--circuit", "nope"]) == 2
    assert "known circuits" in capsys.readouterr().err
    assert main(["circuits", "porep-nope"]) == 2
    with pytest.raises(SystemExit) as exc:
        main(["bench", "synth", "--circuit", "porep-tiny", "--iterations", "0"])
    assert exc.value.code == 2
    assert "must be at least 1" in capsys.readouterr().err
