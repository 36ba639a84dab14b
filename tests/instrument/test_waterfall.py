"""Waterfalls: lanes, merged busy time, the critical path, and PNG / HTML that really render."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from cuzk.cli.main import main
from cuzk.errors import FormatError
from cuzk.instrument.waterfall import build, colour, read_jsonl, render
from tools.headless import chromium, elements, open_page


def _span(name, start, end, *, job="", depth=0, **attrs):
    return {"name": name, "start": start, "end": end, "job": job, "depth": depth, "attrs": attrs}


def two_job_pipeline() -> list[dict]:
    """Two jobs: job b's synthesis overlaps job a's GPU work; b's GPU work ends the run."""
    return [
        _span("synthesis", 10.0, 12.0, job="a", worker=0, partition=0),
        _span("witness", 10.0, 11.5, job="a", depth=1, worker=0, partition=0),
        _span("matvec", 11.5, 12.0, job="a", depth=1, worker=0, partition=0),
        _span("synthesis", 10.5, 13.0, job="b", worker=1, partition=0),
        _span("msm_h", 12.0, 13.5, job="a", device=0, partition=0),
        _span("lock_wait", 13.0, 13.5, job="b", worker=1, device=0, partition=0),
        _span("msm_h", 13.5, 15.0, job="b", device=0, partition=0),
        _span("msm_a", 14.0, 14.5, job="b", device=0, partition=0),  # overlaps b's msm_h: counted once
        _span("epilogue", 15.0, 15.5, job="b", worker=1, partition=0),
    ]


def test_lanes_busy_and_critical_path() -> None:
    wf = build(two_job_pipeline())
    assert wf.lanes == [
        "device 0",
        "worker 0",
        "worker 1",
    ]  # device lanes first; lock_wait stays on its worker
    assert wf.window == pytest.approx(5.5)
    # busy over the steady window, a's completion (3.5) to b's (5.5): b's msm_h 3.5-5.0, the
    # overlapping msm_a counted once (cuzk.instrument.busy, the one definition)
    assert wf.busy == {"device 0": pytest.approx(1.5 / 2.0)}
    assert wf.figures["0"].steady and not wf.figures["0"].clocked
    names = [(b.name, b.job) for b in wf.critical]
    assert names[-1] == ("epilogue", "b")
    # b's lock wait is not the cause: a's kernels holding the device are
    assert names == [("synthesis", "a"), ("msm_h", "a"), ("msm_h", "b"), ("epilogue", "b")]


def test_busy_comes_from_the_device_clock_where_the_timeline_has_it() -> None:
    """device_busy spans (the device's own clock) are the busy %, not the lock-side phases around
    them; staging before the lock (gpu_prepare) is the worker's, not the device's."""
    spans = [
        *two_job_pipeline(),
        _span("gpu_prepare", 11.0, 12.0, job="a", worker=2, device=0, partition=0),
        _span("device_busy", 12.2, 13.0, job="a", device=0, lane="device 0 busy"),
        _span("device_busy", 13.6, 14.6, job="b", device=0, lane="device 0 busy"),
    ]
    wf = build(spans)
    assert wf.lanes[:2] == ["device 0", "device 0 busy"]
    assert "worker 2" in wf.lanes  # gpu_prepare
    assert wf.busy == {"device 0 busy": pytest.approx(1.0 / 2.0)}  # 13.6-14.6 inside 13.5-15.5
    assert all(b.name != "device_busy" for b in wf.critical)  # the clock repeats kernels, bounds nothing


def test_bad_timelines_are_format_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "x", "start": 1, "end": 2}\nnot json\n')
    with pytest.raises(FormatError, match=r"bad.jsonl:2: not JSON"):
        read_jsonl(bad)
    bad.write_text("[1, 2]\n")
    with pytest.raises(FormatError, match="JSON object"):
        read_jsonl(bad)
    with pytest.raises(FormatError, match="numeric 'start'"):
        build([{"name": "x", "end": 1.0}])
    with pytest.raises(FormatError, match="before it starts"):
        build([_span("x", 2.0, 1.0)])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(FormatError, match="no spans"):
        read_jsonl(empty)


def _hex(c: str) -> tuple[int, int, int]:
    return int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)


def test_png_decodes_with_the_phase_colours(tmp_path: Path) -> None:
    from PIL import Image

    out = tmp_path / "w.png"
    render(two_job_pipeline(), out, title="two jobs")
    img = np.asarray(Image.open(out).convert("RGB")).reshape(-1, 3)
    present = {tuple(int(v) for v in px) for px in np.unique(img, axis=0)}
    for phase in ("synthesis", "msm_h", "epilogue", "lock_wait"):
        assert _hex(colour(phase)) in present, phase
    assert _hex(colour("verify")) not in present  # a phase that is not in the timeline is not drawn


def test_html_is_one_self_contained_file(tmp_path: Path) -> None:
    out = tmp_path / "w.html"
    render(two_job_pipeline(), out)
    text = out.read_text()
    refs = [e.attrs for e in elements(text) if "src" in e.attrs or "href" in e.attrs]
    assert refs == []  # no scripts, styles or images fetched from anywhere
    phases = {e.attrs.get("data-phase") for e in elements(text, tag="rect")}
    assert {"synthesis", "msm_h", "epilogue", "lock_wait"} <= phases
    assert "device 0 (75% busy)" in text


@pytest.mark.skipif(chromium() is None, reason="no chromium on PATH (Debian: apt-get install chromium)")
def test_html_opens_in_headless_chromium(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`cuzk timeline render -o out.html` as a browser sees it: no errors, no requests, lanes and labels."""
    tl = tmp_path / "run.jsonl"
    tl.write_text("".join(json.dumps(s) + "\n" for s in two_job_pipeline()))
    out = tmp_path / "w.html"
    assert main(["timeline", "render", str(tl), "-o", str(out)]) == 0
    capsys.readouterr()
    page = open_page(out.as_uri(), budget_ms=1000)
    assert page.console == [] and page.requests == []  # no script error; one self-contained file
    lanes = [e.text for e in elements(page.dom, within="waterfall", cls="lane")]
    assert lanes == ["device 0 (75% busy)", "worker 0", "worker 1"]
    labels = {e.text for e in elements(page.dom, within="waterfall", cls="label")}
    assert labels == {"a/p0", "b/p0"}  # job and partition labels
    rects = elements(page.dom, within="waterfall", tag="rect", cls="bar")
    assert len(rects) == len(two_job_pipeline())
    assert sum("stroke" in e.attrs for e in rects) == 4  # the critical path: four bars outlined


@pytest.mark.skipif(chromium() is None, reason="no chromium on PATH (Debian: apt-get install chromium)")
def test_the_headless_check_sees_errors_and_requests(tmp_path: Path) -> None:
    """The control of the check above: a page with an uncaught error and a remote image is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png"><p id="p">before</p><script>'
        'document.getElementById("p").textContent = "after"; no_such_function();</script></body></html>'
    )
    page = open_page(bad.as_uri(), budget_ms=500)
    assert '<p id="p">after</p>' in page.dom
    assert any("Uncaught ReferenceError" in m for m in page.console), page.console
    assert page.requests == ["http://127.0.0.1:9/x.png"]


def test_cli_render(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tl = tmp_path / "run.jsonl"
    tl.write_text("".join(json.dumps(s) + "\n" for s in two_job_pipeline()))
    assert main(["timeline", "render", str(tl), "-o", str(tmp_path / "w.png")]) == 0
    out = capsys.readouterr().out
    assert (
        "GPU busy 75.0% (device lane: no lock, no clock; first to last job completion)" in out
        and "critical path:" in out
    )
    assert (tmp_path / "w.png").stat().st_size > 1000
    assert main(["timeline", "render", str(tl), "-o", str(tmp_path / "w.svg")]) == 2
    assert main(["timeline", "render", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "x.png")]) == 2


def single_proof() -> list[dict]:
    """A `cuzk prove` timeline: one job ("prove"), every phase on one lane."""
    names = ["topology", "load_params", "synthesis", "ntt_h", "msm_h", "msm_b_g2", "epilogue", "verify"]
    return [_span(n, float(i), i + 1.0, job="prove") for i, n in enumerate(names)]


def test_a_single_lane_render_keeps_the_legend_off_the_axis() -> None:
    """Issue 29: on one lane the legend sat over the axis's tick labels and title."""
    import matplotlib.pyplot as plt

    from cuzk.instrument.waterfall import png_figure

    for records in (single_proof(), two_job_pipeline()):
        fig = png_figure(build(records), title="t")
        renderer = fig.canvas.get_renderer()
        axis = fig.axes[0].get_tightbbox(renderer)  # bars, tick labels, "seconds"
        (legend,) = fig.legends
        box = legend.get_window_extent(renderer)
        assert box.y1 < axis.y0 and box.y0 >= 0  # under the axis, inside the figure
        plt.close(fig)


def test_bars_are_labelled_by_phase_in_a_single_proof_and_by_job_in_a_batch() -> None:
    from cuzk.instrument.waterfall import bar_labels

    wf = build(single_proof())
    texts = [t for _, t in bar_labels(wf, px_per_s=100, char_px=6)]
    assert texts == [
        "topology",
        "load_params",
        "synthesis",
        "ntt_h",
        "msm_h",
        "msm_b_g2",
        "epilogue",
        "verify",
    ]
    wf = build(two_job_pipeline())
    assert {t for _, t in bar_labels(wf, px_per_s=100, char_px=6)} == {"a/p0", "b/p0"}


def test_labels_on_short_partitions_fit_their_bars_and_never_overlap() -> None:
    from cuzk.instrument.waterfall import bar_labels

    # forty partitions of 10-50 ms on one device lane, each labelled "job-N/pK" (8-9 characters)
    recs, t = [], 0.0
    for j in range(40):
        d = 0.01 + 0.04 * (j % 5) / 4
        recs.append(_span("device_lock", t, t + d, job=f"job-{j // 2}", device=0, partition=j % 2))
        t += d
    wf = build(recs)
    px, char = 2000.0, 6.0  # 20-100 px bars, 56-62 px labels
    drawn = bar_labels(wf, px_per_s=px, char_px=char)
    assert 0 < len(drawn) < 40  # the long ones are labelled, the short ones are not
    extents = []
    for b, text in drawn:
        need = len(text) * char
        assert need <= b.seconds * px  # inside its bar
        mid = (b.start + b.seconds / 2) * px
        extents.append((mid - need / 2, mid + need / 2))
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(extents))
