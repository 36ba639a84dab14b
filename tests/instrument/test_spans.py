"""Timelines and their sinks: the CUZK_TIMING line (an output contract), collection, JSON lines,
span attributes, and recording from several threads."""

from __future__ import annotations

import io
import json
import re
import threading

import pytest

from cuzk import config
from cuzk.instrument import CollectSink, JsonLinesSink, Span, StderrSink, Timeline

LINE = re.compile(
    r"^CUZK_TIMING: span=(\w+) job=j1 partition=(\S+) worker=(\S+) device=(\S+) ms=(\d+\.\d{3})( \w+=\S+)*$"
)


def test_no_sink_by_default() -> None:
    config.reload({})
    assert Timeline("j").sinks == []


def test_cuzk_timing_attaches_the_stderr_line(capsys: pytest.CaptureFixture[str]) -> None:
    config.reload({"CUZK_TIMING": "1"})
    tl = Timeline("j1")
    with tl.span("outer"), tl.span("inner", partition=2):
        pass
    lines = capsys.readouterr().err.splitlines()
    assert [LINE.match(x).group(1) for x in lines] == ["inner", "outer"]  # each as it ends
    assert LINE.match(lines[0]).group(2) == "2" and LINE.match(lines[1]).group(2) == "-"


def test_the_stderr_line_is_written_before_the_outer_span_ends() -> None:
    stream = io.StringIO()
    tl = Timeline("j1", sinks=[StderrSink(stream)])
    with tl.span("outer"):
        with tl.span("inner"):
            pass
        assert stream.getvalue().startswith(
            "CUZK_TIMING: span=inner job=j1 partition=- worker=- device=- ms="
        )
    assert len(stream.getvalue().splitlines()) == 2
    no_job = io.StringIO()
    with Timeline(sinks=[StderrSink(no_job)]).span("x"):
        pass
    assert no_job.getvalue().startswith("CUZK_TIMING: span=x job=- partition=- worker=- device=- ms=")


def test_json_lines_and_collect_sinks() -> None:
    stream, collect = io.StringIO(), CollectSink()
    tl = Timeline("j2", sinks=[JsonLinesSink(stream), collect], attrs={"worker": "gpu0-1", "pid": 7})
    with tl.span("synthesis"), tl.span("witness", partition=1):
        pass
    records = [json.loads(x) for x in stream.getvalue().splitlines()]
    assert [r["name"] for r in records] == ["witness", "synthesis"]
    first = records[0]
    assert set(first) == {"name", "start", "end", "ms", "depth", "job", "attrs"}
    assert first["job"] == "j2" and first["depth"] == 1 and first["end"] >= first["start"]
    assert first["attrs"] == {"worker": "gpu0-1", "pid": 7, "partition": 1}
    drained = collect.drain()
    assert [(job, s.name) for job, s in drained] == [("j2", "witness"), ("j2", "synthesis")]
    assert collect.drain() == []
    assert Span.from_dict(first) == drained[0][1]  # a record crosses a process and comes back whole


def test_totals_and_merge_keep_working() -> None:
    a, b = Timeline("a", sinks=[]), Timeline("b", sinks=[])
    for _ in range(2):
        with a.span("msm"):
            pass
    with b.span("ntt"):
        pass
    a.merge(b)
    a.merge([Span("gpu", 1.0, 1.5)])
    assert list(a.totals()) == ["msm", "ntt", "gpu"]
    assert a.totals()["gpu"] == pytest.approx(0.5)


def test_spans_from_many_threads() -> None:
    n, per = 8, 50
    collect = CollectSink()
    tl = Timeline("t", sinks=[collect])
    barrier = threading.Barrier(n)

    def work(i: int) -> None:
        barrier.wait()
        for _ in range(per):
            with tl.span("outer", worker=i), tl.span("inner", worker=i) as inner:
                assert inner.depth == 1  # nesting is counted per thread

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spans = tl.snapshot()
    assert len(spans) == len(collect.drain()) == 2 * n * per
    assert {s.depth for s in spans if s.name == "outer"} == {0}
    assert sorted(s.attrs["worker"] for s in spans if s.name == "inner") == sorted(list(range(n)) * per)
