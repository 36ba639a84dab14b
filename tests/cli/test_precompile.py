"""Compiling a command's kernels ahead, on two processes (cuzk.algebra.precompile; issue 29's first run)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from cuzk.algebra import precompile as pc
from cuzk.algebra._kernel_manifest import KERNELS
from cuzk.cli.main import build_parser, kernel_lists


def test_every_recorded_kernel_resolves_and_its_signature_reads_back() -> None:
    """A renamed kernel or a type the reader does not know would silently compile late again."""
    assert set(KERNELS) == {"setup", "prove", "verify"}
    for name, entries in KERNELS.items():
        assert entries, name
        for module, qualname, text in entries:
            assert pc.dispatcher(module, qualname) is not None, (module, qualname)
            sig = pc.signature(text)
            assert sig is not None and str(sig) == text, text


def test_the_lists_a_command_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cuzk import backends, config

    monkeypatch.setenv("CUZK_CACHE_DIR", str(tmp_path / "cache"))
    config.reload()
    monkeypatch.setattr(backends, "cuda_unavailable_reason", lambda: "no GPU here")
    parse = build_parser().parse_args

    def lists(*argv: str) -> list[str]:
        return kernel_lists(parse(list(argv)))

    assert lists("verify", "--vk", __file__, "--proof", __file__, "--public", __file__) == ["verify"]
    assert lists("prove", "--circuit", "porep-tiny") == ["setup", "prove"]  # no parameters cached yet
    made = tmp_path / "cache" / "params" / "porep-tiny-0123456789abcdef"
    made.mkdir(parents=True)
    (made / "porep-tiny.json").write_text("{}")
    assert lists("prove", "--circuit", "porep-tiny") == ["prove"]  # parameters there: no generation
    assert lists("prove", "--circuit", "porep-tiny", "--params", str(tmp_path)) == ["prove"]
    assert lists("prove", "--circuit", "porep-tiny", "--backend", "cuda") == []  # other kernels
    assert lists("setup", "--circuit", "porep-tiny", "--out", str(tmp_path / "p")) == ["setup"]
    assert lists("circuits") == []
    assert kernel_lists(argparse.Namespace()) == []


KERNELS_SRC = """
from numba import njit


@njit(cache=True)
def twice(x):
    return x * 2


@njit(cache=True)
def tagged(F, x):
    return x + 1
"""


def test_cold_kernels_compile_on_two_processes_and_land_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One entry compiles here, the Fq2 one in the helper process; both are cached afterwards,
    and a second call finds nothing to do."""
    mod = "ux_precompile_probe"
    (tmp_path / f"{mod}.py").write_text(KERNELS_SRC)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + ":" + ":".join(sys.path))
    entries = ((mod, "twice", "(int64,)"), (mod, "tagged", "(FieldTag(fq2), int64)"))
    monkeypatch.setitem(KERNELS, "probe", entries)
    assert [pc.is_cached(e) for e in entries] == [False, False]
    assert pc.split(entries) == ([entries[0]], [entries[1]])
    lines: list[str] = []
    done = pc.precompile(["probe"], say=lines.append)
    assert (done.kernels, done.processes) == (2, 2)
    assert "compiling 2 CPU kernels (probe), once, on 2 processes" in lines[0]
    assert [pc.is_cached(e) for e in entries] == [True, True]
    assert pc.precompile(["probe"]).kernels == 0
