"""Waterfalls from timelines: lanes, phase colours, the critical path and GPU busy time.

The seed's regression hunt drew its waterfall by reasoning over printf lines;
here it is drawn from the spans themselves. Input is what a JSON-lines timeline
holds, one object per span: ``name``, ``start`` and ``end`` (seconds on one
monotonic clock, comparable across the processes of one host), and optionally
``job``, ``depth`` and ``attrs`` (``worker``, ``device``, ``partition``, ``pid``,
``lane``). Keys may sit at the top level or inside ``attrs``.

Lanes: a span with a ``device`` attribute runs on that device's lane (the
kernel region: what the device lock covers), except ``lock_wait`` and
``gpu_prepare``, which are a worker's waiting and host-side staging and stay on
the worker's lane; every other span goes to its worker's lane (``worker``, else
``pid``, else ``main``). An explicit ``lane`` attribute wins: the engine's
``device_busy`` spans, measured on the device's clock, sit on "device N busy".

GPU busy % is cuzk.instrument.busy's, the one definition every view shares:
merged device intervals (the ``device_busy`` clock where a timeline has it,
else the lock's holds) over the steady window (first to last job completion),
or over the whole run when fewer than two jobs complete.

The critical path is found backwards from the span that ends last: each step
takes, among the spans that end no later than the current one starts, the one
that ends latest (a span of the same job first). It names what bounded the run.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cuzk.errors import FormatError
from cuzk.instrument.busy import DEVICE_BUSY, Busy, device_busy

#: Phase colours, fixed so that one phase looks the same in every waterfall.
PHASE_COLOURS: dict[str, str] = {
    "queue_wait": "#d9d9d9",
    "srs_load": "#8c564b",
    "synthesis": "#1f77b4",
    "witness": "#4f9fd8",
    "matvec": "#9ecae1",
    "lock_wait": "#f0b27a",
    "upload": "#bcbd22",
    "download": "#dbdb8d",
    "gpu": "#2ca02c",
    "ntt_h": "#98df8a",
    "msm_h": "#d62728",
    "upload_witness": "#bcbd22",
    "msm_l": "#ff9896",
    "msm_c": "#ff9896",
    "msm_a": "#9467bd",
    "msm_b_g1": "#c5b0d5",
    "msm_b_g2": "#e377c2",
    "finalize": "#7f7f7f",
    "epilogue": "#17becf",
    "verify": "#393b79",
    "device_busy": "#006d2c",  # the device clock's runs of kernels (engine.gpu)
}
_FALLBACK = ("#637939", "#8ca252", "#b5cf6b", "#843c39", "#ad494a", "#7b4173", "#a55194", "#ce6dbd")
_CONTAINERS = frozenset(
    {"prove", "job"}
)  # whole-job envelopes: drawn under their parts, not as lanes' content


def colour(phase: str) -> str:
    """The phase's colour; unknown phases get a stable colour from their name."""
    if phase in PHASE_COLOURS:
        return PHASE_COLOURS[phase]
    digest = hashlib.sha256(phase.encode()).digest()
    return _FALLBACK[digest[0] % len(_FALLBACK)]


@dataclass(frozen=True)
class Bar:
    """One span placed on a lane, times relative to the run's start (seconds)."""

    name: str
    lane: str
    start: float
    end: float
    job: str = ""
    partition: int | None = None
    depth: int = 0
    attrs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return self.end - self.start

    @property
    def label(self) -> str:
        part = f"/p{self.partition}" if self.partition is not None else ""
        return f"{self.job}{part}" if self.job else (f"p{self.partition}" if part else "")


@dataclass
class Waterfall:
    bars: list[Bar]
    lanes: list[str]  # device lanes first, then worker lanes, each in first-use order
    window: float  # seconds from the first start to the last end
    critical: list[Bar]
    busy: dict[str, float]  # device lane -> busy fraction (cuzk.instrument.busy: the one definition)
    figures: dict[str, Busy] = field(default_factory=dict)  # device -> its busy figure and window

    def phases(self) -> list[str]:
        return list(dict.fromkeys(b.name for b in self.bars))


def read_jsonl(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Span records from a JSON-lines timeline; a bad line is a FormatError naming it."""
    records = []
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise FormatError(f"{path} is not a JSON-lines timeline (not UTF-8 text: {exc.reason})") from exc
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise FormatError(f"{path}:{n}: not JSON: {exc}") from exc
        if not isinstance(rec, dict):
            raise FormatError(f"{path}:{n}: a span must be a JSON object, not {type(rec).__name__}")
        records.append(rec)
    if not records:
        raise FormatError(f"{path}: no spans")
    return records


def _get(rec: Mapping[str, Any], key: str) -> Any:
    if key in rec:
        return rec[key]
    attrs = rec.get("attrs")
    return attrs.get(key) if isinstance(attrs, Mapping) else None


def _number(rec: Mapping[str, Any], key: str, where: str) -> float:
    value = rec.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FormatError(f"{where}: span needs a numeric {key!r}, got {value!r}")
    return float(value)


#: spans with a device attribute that are host work beside the device, drawn on the worker's lane
_WORKER_SIDE = frozenset({"lock_wait", "gpu_prepare"})


def lane_of(rec: Mapping[str, Any]) -> str:
    """The lane a span belongs on (see the module docstring)."""
    lane = _get(rec, "lane")
    if lane:
        return str(lane)
    device = _get(rec, "device")
    if device is not None and rec.get("name") not in _WORKER_SIDE:
        return f"device {device}"
    for key in ("worker", "pid"):
        value = _get(rec, key)
        if value is not None and value != "":
            return f"{key} {value}"
    return "main"


def critical_path(bars: Sequence[Bar]) -> list[Bar]:
    """Backwards from the last span to end: each step the latest-ending span that precedes it.

    Waits (``*_wait`` spans) are skipped: what bounds a wait is the work it waited
    for, e.g. another job's kernels holding the device. Ties go to the same job,
    then to the outer span.
    """
    work = [  # the device clock's spans repeat the kernels' time, on their own lane
        b
        for b in bars
        if b.name not in _CONTAINERS and b.name != DEVICE_BUSY and not b.name.endswith("_wait")
    ]
    if not work:
        return []
    eps = 1e-6
    current = max(work, key=lambda b: (b.end, -b.depth))
    path = [current]
    while True:
        before = [b for b in work if b.end <= current.start + eps and b is not current]
        if not before:
            break
        job = current.job
        current = max(before, key=lambda b: (round(b.end, 6), b.job == job, -b.depth))
        path.append(current)
    return path[::-1]


def build(records: Sequence[Mapping[str, Any]], *, source: str = "timeline") -> Waterfall:
    """Place spans on lanes, relative to the run's first start; compute busy % and the critical path."""
    if not records:
        raise FormatError(f"{source}: no spans")
    t0 = min(_number(r, "start", source) for r in records)
    bars = []
    for i, rec in enumerate(records):
        where = f"{source}: span {i}"
        start, end = _number(rec, "start", where), _number(rec, "end", where)
        if end < start:
            raise FormatError(f"{where}: ends ({end}) before it starts ({start})")
        part = _get(rec, "partition")
        attrs = rec.get("attrs") if isinstance(rec.get("attrs"), Mapping) else {}
        bars.append(
            Bar(
                name=str(rec.get("name", "?")),
                lane=lane_of(rec),
                start=start - t0,
                end=end - t0,
                job=str(_get(rec, "job") or ""),
                partition=int(part) if isinstance(part, int | float) and not isinstance(part, bool) else None,
                depth=int(rec.get("depth") or 0),
                attrs=dict(attrs or {}),
            )
        )
    window = max(b.end for b in bars)
    first_use = list(dict.fromkeys(b.lane for b in bars))
    lanes = sorted(first_use, key=lambda lane: (not lane.startswith("device"), first_use.index(lane)))
    figures = device_busy(bars)
    busy = {(f"device {d} busy" if b.clocked else f"device {d}"): b.fraction for d, b in figures.items()}
    return Waterfall(
        bars=bars, lanes=lanes, window=window, critical=critical_path(bars), busy=busy, figures=figures
    )


def bar_text(wf: Waterfall, b: Bar) -> str:
    """A bar's label: job/partition when the run has several jobs, else its phase (a single proof's
    bars all belong to the job "prove": labelled by job, every bar read "prove")."""
    jobs = {x.job for x in wf.bars if x.job}
    return b.label if len(jobs) > 1 and b.label else b.name


def bar_labels(wf: Waterfall, px_per_s: float, char_px: float) -> list[tuple[Bar, str]]:
    """The top-level bars whose label fits inside them, none overlapping another on its lane.

    Short partitions on a device lane are narrower than their names; a label drawn there ran
    into its neighbours' (issue 29), so a label is drawn only where its width fits the bar."""
    out: list[tuple[Bar, str]] = []
    right_edge: dict[str, float] = {}
    for b in sorted((b for b in wf.bars if b.depth == 0), key=lambda b: b.start):
        text = bar_text(wf, b)
        width = b.seconds * px_per_s
        need = len(text) * char_px + 8
        if not text or need > width:
            continue
        left = (b.start + b.seconds / 2) * px_per_s - need / 2
        if left < right_edge.get(b.lane, float("-inf")):
            continue
        right_edge[b.lane] = left + need
        out.append((b, text))
    return out


#: PNG layout, inches: figure width, lane height, the axis's left/right margins, and the room
#: under the axis for tick labels and its title before the legend starts
_PNG_W, _LANE_IN, _LEFT_IN, _RIGHT_IN, _UNDER_AXIS_IN, _LEGEND_ROW_IN, _DPI = (
    12.0,
    0.45,
    2.2,
    0.3,
    0.55,
    0.22,
    110,
)


def render_png(wf: Waterfall, out: str | os.PathLike[str], *, title: str = "") -> None:
    """The waterfall as a PNG (matplotlib, headless Agg backend)."""
    import matplotlib.pyplot as plt

    fig = png_figure(wf, title=title)
    fig.savefig(out, format="png")
    plt.close(fig)


def png_figure(wf: Waterfall, *, title: str = "") -> Any:
    """The PNG's matplotlib figure: the axis placed in inches, the legend under its title."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=colour(p), label=p) for p in wf.phases()]
    handles.append(Patch(facecolor="white", edgecolor="black", label="critical path"))
    ncol = 8
    rows = -(-len(handles) // ncol)
    axis_h = max(_LANE_IN * len(wf.lanes), 0.6)
    top_in, bottom_in = 0.45, _UNDER_AXIS_IN + rows * _LEGEND_ROW_IN + 0.15
    height = axis_h + top_in + bottom_in
    fig = plt.figure(figsize=(_PNG_W, height), dpi=_DPI)
    # the axis placed in inches: one lane or twenty, the legend sits below the axis's title, never on it
    ax = fig.add_axes(
        (_LEFT_IN / _PNG_W, bottom_in / height, 1 - (_LEFT_IN + _RIGHT_IN) / _PNG_W, axis_h / height)
    )
    critical = {id(b) for b in wf.critical}
    row = {lane: i for i, lane in enumerate(wf.lanes)}
    for b in sorted(wf.bars, key=lambda b: b.depth):
        inset = min(0.12 * b.depth, 0.3)
        y = row[b.lane] - 0.4 + inset
        ax.broken_barh(
            [(b.start, max(b.seconds, wf.window * 1e-4))],
            (y, 0.8 - 2 * inset),
            facecolors=colour(b.name),
            edgecolors="black" if id(b) in critical else "none",
            linewidth=1.6 if id(b) in critical else 0,
        )
    span = wf.window * 1.01 if wf.window > 0 else 1.0
    px_per_s = (_PNG_W - _LEFT_IN - _RIGHT_IN) * _DPI / span
    for b, text in bar_labels(wf, px_per_s, char_px=7 * 0.62 * _DPI / 72):
        ax.text(b.start + b.seconds / 2, row[b.lane], text, ha="center", va="center", fontsize=7)
    ax.set_yticks(range(len(wf.lanes)))
    ax.set_yticklabels(
        [f"{lane} ({wf.busy[lane] * 100:.0f}% busy)" if lane in wf.busy else lane for lane in wf.lanes]
    )
    ax.set_ylim(len(wf.lanes) - 0.5, -0.5)
    ax.set_xlabel("seconds")
    ax.set_xlim(0, span)
    fig.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 0.1 / height),
        ncol=ncol,
        fontsize=7,
        frameon=False,
    )
    ax.set_title(title or "timeline", loc="left", fontsize=10)
    return fig


def render_html(wf: Waterfall, out: str | os.PathLike[str], *, title: str = "") -> None:
    """The waterfall as one self-contained HTML file (inline SVG and script, no network)."""
    Path(out).write_text(html_document(wf, title=title))


def html_document(wf: Waterfall, *, title: str = "") -> str:
    width, lane_h, left, top = 1100, 26, 190, 30
    scale = (width - left - 20) / (wf.window or 1.0)
    critical = {id(b) for b in wf.critical}
    row = {lane: i for i, lane in enumerate(wf.lanes)}
    rects, names = [], []  # names: the labels that fit their bars (job/partition, or the phase)
    for b, text in bar_labels(wf, scale, char_px=6.2):
        x, y = left + b.start * scale, top + row[b.lane] * lane_h + 2
        names.append(
            f'<text class="label" x="{x + b.seconds * scale / 2:.2f}" y="{y + lane_h / 2 + 1:.2f}" '
            f'font-size="10" text-anchor="middle">{html.escape(text)}</text>'
        )
    for b in sorted(wf.bars, key=lambda b: b.depth):
        inset = min(3 * b.depth, 8)
        x, y = left + b.start * scale, top + row[b.lane] * lane_h + 2 + inset
        tip = f"{b.name} {b.seconds * 1e3:.1f} ms {b.label}".strip()
        stroke = ' stroke="black" stroke-width="1.5"' if id(b) in critical else ""
        rects.append(
            f'<rect class="bar" data-phase="{html.escape(b.name)}" x="{x:.2f}" y="{y:.2f}" '
            f'width="{max(b.seconds * scale, 0.5):.2f}" height="{lane_h - 4 - 2 * inset}" '
            f'fill="{colour(b.name)}"{stroke}><title>{html.escape(tip)}</title></rect>'
        )
    labels = [
        f'<text class="lane" x="4" y="{top + i * lane_h + lane_h / 2 + 4}" font-size="12">{html.escape(lane)}'
        + (f" ({wf.busy[lane] * 100:.0f}% busy)" if lane in wf.busy else "")
        + "</text>"
        for i, lane in enumerate(wf.lanes)
    ]
    height = top + len(wf.lanes) * lane_h + 30
    axis = f'<text x="{left}" y="{height - 8}" font-size="11">0 s</text>' + (
        f'<text x="{width - 80}" y="{height - 8}" font-size="11">{wf.window:.3f} s</text>'
    )
    legend = "".join(
        f'<span class="key"><i style="background:{colour(p)}"></i>{html.escape(p)}</span>'
        for p in wf.phases()
    )
    path = " &rarr; ".join(html.escape(f"{b.name}{' ' + b.label if b.label else ''}") for b in wf.critical)
    busy = ", ".join(f"{html.escape(k)}: {v * 100:.1f}%" for k, v in wf.busy.items()) or "no device spans"
    doc_title = html.escape(title or "cuzk timeline")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{doc_title}</title>
<style>
body {{ font-family: sans-serif; margin: 16px; }}
.key {{ margin-right: 12px; font-size: 12px; white-space: nowrap; }}
.key i {{ display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: middle; }}
#info {{ font-size: 12px; min-height: 1.4em; }}
</style></head><body>
<h3>{doc_title}</h3>
<p>window {wf.window:.3f} s; GPU busy: {busy}</p>
<svg id="waterfall" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">
{"".join(labels)}
{"".join(rects)}
{"".join(names)}
{axis}
</svg>
<div id="info"></div>
<div>{legend}</div>
<p style="font-size:12px">critical path: {path}</p>
<script>
document.querySelectorAll("#waterfall .bar").forEach(function (r) {{
  r.addEventListener("mouseover", function () {{
    document.getElementById("info").textContent = r.querySelector("title").textContent;
  }});
}});
</script>
</body></html>
"""


def render(
    records: Sequence[Mapping[str, Any]], out: str | os.PathLike[str], *, title: str = ""
) -> Waterfall:
    """Build the waterfall and write it as PNG or HTML, chosen by the output's suffix."""
    suffix = Path(out).suffix.lower()
    if suffix not in (".png", ".html", ".htm"):
        raise FormatError(f"{out}: the output must end in .png or .html")
    wf = build(records, source=str(title or "timeline"))
    if suffix == ".png":
        render_png(wf, out, title=title)
    else:
        render_html(wf, out, title=title)
    return wf
