"""The daemon's HTTP side end to end: /status, /metrics, 404, and the live page `GET /` in headless Chromium.

A real `cuzk daemon` subprocess (CPU backend) proves two jobs (verified here) and runs a long third
one; the page, opened in Chromium, must have polled /status more than once and drawn the queues,
the partitions of the job in flight and a waterfall row per finished job, with no script error and
no request but /status. The screenshot goes to CUZK_STATUS_SCREENSHOT when that is set (that is
how docs/daemon-status.png is made), else to the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from daemon_proc import Daemon, verify
from test_daemon_e2e import LONG_JOB

from cuzk import config
from cuzk.server.v1 import proving_pb2 as pb
from tools.headless import chromium, elements, open_page

pytestmark = pytest.mark.slow


def _get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read()


def _status(base: str) -> dict:
    code, ctype, body = _get(base + "/status")
    assert code == 200 and ctype == "application/json"
    return json.loads(body)


@pytest.mark.skipif(chromium() is None, reason="no chromium on PATH (Debian: apt-get install chromium)")
def test_status_page_draws_queues_partitions_and_waterfall(tmp_path: Path, cache: Path) -> None:
    config.reload()
    d = Daemon(tmp_path, cache=cache, extra='status_listen = "127.0.0.1:0"')
    try:
        base = d.banner.split("status on ", 1)[1].strip().rstrip("/")
        stub = d.stub()
        for circuit, seed, parts in (("winning-tiny", 1, 1), ("porep-tiny", 3, 2)):
            req = pb.SubmitProofRequest(circuit=circuit, instance_seed=seed, partitions=parts)
            r = stub.Prove(pb.ProveRequest(submit=req)).result
            assert r.status == pb.AwaitProofResponse.COMPLETED, r.error_message
            verify(circuit, seed, r)
        long = stub.SubmitProof(
            pb.SubmitProofRequest(circuit="porep-tiny", partitions=LONG_JOB, request_id="long-1")
        ).job_id
        st = _status(base)
        while not any(  # until the long job is drawn with a partition past "pending"
            p["job_id"] == long and any(x["state"] != "pending" for x in p["partitions"])
            for p in st["pipelines"]
        ):
            st = _status(base)
        for key in ("uptime_secs", "memory", "synthesis", "pipelines", "gpu_workers", "allocations",
                    "counters", "buffers"):  # fmt: skip
            assert key in st, key  # the reference's fields (REFERENCE_API.md 4.1)
        assert st["counters"]["total_completed"] == 2
        assert {q["proof_kind"]: (q["pending"], q["in_progress"]) for q in st["queues"]} == {
            "porep-c2": (0, 1)
        }

        code, ctype, page_html = _get(base + "/")
        assert code == 200 and ctype.startswith("text/html")
        refs = [e.attrs.get("src") or e.attrs.get("href") for e in elements(page_html.decode())]
        assert [r for r in refs if r and not r.startswith("data:")] == []  # no network assets
        code, _, metrics = _get(base + "/metrics")
        assert code == 200 and b"# TYPE cuzk_proofs_completed_total" in metrics
        assert _get(base + "/no-such-page")[0] == 404

        shot = Path(os.environ.get("CUZK_STATUS_SCREENSHOT") or tmp_path / "status.png")
        page = open_page(base + "/", budget_ms=3000, screenshot=shot)
        assert page.console == [], page.console  # no script error
        assert page.requests and set(page.requests) == {
            base + "/status"
        }  # it polls, and fetches nothing else
        dom = page.dom
        body = elements(dom, tag="body")[0]
        assert int(body.attrs["data-polls"]) >= 2, body.attrs  # live: drawn again from a later poll
        assert "completed 2, failed 0" in elements(dom, within="summary")[0].text
        rows = [[td.text for td in tr.children] for tr in elements(dom, within="queues", tag="tr")[1:]]
        assert rows == [["porep-c2", "0", "1"]]
        srs = {tr.children[0].text for tr in elements(dom, within="srs", tag="tr")[1:]}
        assert srs == {"porep-tiny", "winning-tiny"}
        (job,) = [e for e in elements(dom, within="pipelines", cls="job") if e.attrs.get("data-job") == long]
        states = [c.attrs["data-state"] for c in job.children if "partition" in c.attrs.get("class", "")]
        assert len(states) == LONG_JOB and set(states) - {"pending"}
        finished = elements(dom, within="waterfall", tag="g", cls="job")
        assert [g.attrs["data-status"] for g in finished] == ["completed", "completed"]
        for g in finished:
            phases = {c.attrs["data-phase"] for c in g.children if c.tag == "rect"}
            assert {"queue_wait", "synthesis"} <= phases, phases
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        from PIL import Image

        with Image.open(shot) as im:
            assert im.size == (1280, 900)

        stub.CancelProof(pb.CancelProofRequest(job_id=long))
        assert stub.AwaitProof(pb.AwaitProofRequest(job_id=long)).status == pb.AwaitProofResponse.CANCELLED
    finally:
        code, err = d.stop()
    assert code == 0, err[-3000:]
