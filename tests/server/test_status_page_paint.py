"""The status page's first paint and its labels (issue 29), without a daemon.

`GET /` embeds the status of the moment, so the page draws data before its first poll (2 of 11
headless screenshots showed "waiting for /status ..."). The page's own helpers are checked in node
where it is installed, and the whole page in headless Chromium where that is.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest

from cuzk.server.http import StatusServer
from tools.headless import chromium, elements, open_page

UUID = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"  # 36 characters: cut at 22 it ended in "-" before


def state() -> dict[str, Any]:
    """A /status document as status_json writes it, CPU backend, one finished job that waited for the GPU."""
    spans = [
        {"name": "queue_wait", "start": 10.0, "end": 10.1, "colour": "#d9d9d9"},
        {"name": "synthesis", "start": 10.1, "end": 10.5, "colour": "#1f77b4"},
        # 10.5-10.9: in the GPU queue, no span: the page draws the wait
        {"name": "device_lock", "start": 10.9, "end": 11.6, "colour": "#9467bd"},
        {"name": "finalize", "start": 11.6, "end": 11.8, "colour": "#7f7f7f"},
    ]
    return {
        "backend": "cpu",
        "uptime_secs": 12.0,
        "memory": {
            "total_bytes": 1 << 30,
            "used_bytes": 1 << 20,
            "available_bytes": 1 << 29,
            "peak_bytes": 1 << 21,
        },
        "synthesis": {"max_concurrent": 0, "active": 0, "workers": 2},
        "pipelines": [],
        "gpu_workers": [
            {
                "worker_id": 0,
                "gpu_ordinal": 0,
                "state": "idle",
                "current_job": None,
                "current_partition": None,
            }
        ],
        "allocations": {"srs": [], "pce": []},
        "counters": {"total_completed": 3, "total_failed": 0, "queue_depth": 0},
        "buffers": {
            "synth_in_flight": 0,
            "provers_in_flight": 0,
            "shells_in_flight": 0,
            "pending_handles": 0,
        },
        "queues": [],
        "gpu_busy": {"0": 0.5},
        "recent_jobs": [{"job_id": UUID, "status": "completed", "spans": spans}],
    }


@pytest.fixture
def server() -> Iterator[tuple[str, list[int]]]:
    """A status server whose /status answers once (for the page's embedded state), then fails."""
    calls: list[int] = []

    def status() -> dict[str, Any]:
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("the daemon went away")
        return state()

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="status-page-test", daemon=True)
    thread.start()
    srv = StatusServer("127.0.0.1:0", status, lambda: "")
    asyncio.run_coroutine_threadsafe(srv.start(), loop).result(timeout=30)
    try:
        yield f"http://127.0.0.1:{srv.port}", calls
    finally:
        asyncio.run_coroutine_threadsafe(srv.stop(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.close()


def test_the_page_is_served_with_the_status_of_the_moment(server: tuple[str, list[int]]) -> None:
    base, calls = server
    with urllib.request.urlopen(base + "/", timeout=30) as r:
        page = r.read().decode()
    embedded = re.search(r'<script id="first-state" type="application/json">(.*?)</script>', page, re.S)
    assert embedded and json.loads(embedded.group(1)) == state() and len(calls) == 1
    assert "waiting for /status" not in page


def _helpers() -> str:
    page = resources.files("cuzk.server").joinpath("status_page.html").read_text()
    script = page.split('<script>\n"use strict";', 1)[1]
    names = ("shortId", "holes", "ticks", "tickText")
    parts = [re.search(rf"\nfunction {n}\(.*?\n}}\n", script, re.S) for n in names]
    consts = re.findall(r"^var (?:WAITS|CPU_WAITS|WAIT_COLOUR|GPU_SIDE) = .*?;$", script, re.M)
    assert all(parts) and len(consts) == 4
    return "\n".join(consts) + "".join(p.group(0) for p in parts if p)


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on PATH")
def test_the_pages_helpers_in_node() -> None:
    """Ids are cut without a trailing hyphen; a hole before the device lock is the GPU queue's wait;
    the axis has each label once, 80 px or more apart."""
    uuid, spans = json.dumps(UUID), json.dumps(state()["recent_jobs"][0]["spans"])
    probe = _helpers() + "\n".join(
        [
            "var out = {};",
            f"out.short = shortId({uuid}, 20);",  # the cut lands on a hyphen
            'out.kept = shortId("job-3", 22);',
            f"out.holes = holes({spans});",
            "out.ticks = [0.0123, 1.7, 12, 345].map(function (span) {",
            "  var t = ticks(span, 880);",
            "  return {n: t.length, gap: (t[1] - t[0]) * 880 / span,",
            "          labels: t.map(function (x) { return tickText(x, span); })};",
            "});",
            "console.log(JSON.stringify(out));",
        ]
    )
    res = json.loads(subprocess.run(["node", "-e", probe], check=True, capture_output=True, text=True).stdout)
    assert res["short"] == "1b4e28ba-2fa1-11d2\u2026" and res["kept"] == "job-3"
    assert [(h["name"], h["start"], h["end"]) for h in res["holes"]] == [
        ("waiting for a GPU worker", 10.5, 10.9)
    ]
    for axis in res["ticks"]:
        assert axis["n"] >= 2 and axis["gap"] >= 80
        assert len(set(axis["labels"])) == len(axis["labels"])  # no label twice


@pytest.mark.skipif(chromium() is None, reason="no chromium on PATH (Debian: apt-get install chromium)")
def test_the_first_paint_has_data_and_honest_labels(server: tuple[str, list[int]]) -> None:
    """/status fails after the page is served: what the page shows is its embedded first state."""
    base, _ = server
    page = open_page(base + "/", budget_ms=1500)
    dom = page.dom
    assert "completed 3, failed 0" in elements(dom, within="summary")[0].text
    assert elements(dom, tag="body")[0].attrs.get("data-first") == "embedded"
    assert elements(dom, within="workers-title")[0].text.startswith("CPU workers")
    headers = [th.text for th in elements(dom, within="gpus", tag="th")]
    assert "busy (lifetime average)" in headers and "GPU" not in " ".join(headers)
    (label,) = elements(dom, within="waterfall", tag="text", cls="label")
    assert "\u2026" in label.text and "-\u2026" not in label.text
    waits = [r for r in elements(dom, within="waterfall", tag="rect") if "wait" in r.attrs.get("class", "")]
    assert [w.attrs["data-phase"] for w in waits] == ["waiting for a CPU worker"]  # the CPU backend's words
    ticks = [t.text for t in elements(dom, within="waterfall", tag="text", cls="tick")]
    assert len(ticks) >= 2 and len(set(ticks)) == len(ticks)
