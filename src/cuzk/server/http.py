"""The daemon's HTTP side (`daemon.status_listen`): GET /status (JSON), /metrics (Prometheus), / (a page).

/status carries the reference's JSON fields (REFERENCE_API.md 4.1) so its web
UIs keep working; /metrics is Prometheus text exposition; / is a small live
page, one self-contained file (no network assets), that polls /status and
draws the queues, the partitions in flight and a rolling waterfall of the last
jobs. Anything else is 404. The server runs on its own threads and only reads.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

StatusSource = Callable[[], dict[str, Any]]
MetricsSource = Callable[[], str]


class StatusServer:
    """A threading HTTP server bound to host:port; `port` is the bound one (0 picks a free port)."""

    def __init__(self, address: str, status: StatusSource, metrics: MetricsSource) -> None:
        host, _, port = address.rpartition(":")
        handler = _handler(status, metrics)
        self._httpd = ThreadingHTTPServer((host or "127.0.0.1", int(port)), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="cuzk-http", daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _handler(status: StatusSource, metrics: MetricsSource) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "cuzk"

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            try:
                if path in ("/status", "/status/"):
                    body, ctype = json.dumps(status()).encode(), "application/json"
                elif path == "/metrics":
                    body, ctype = metrics().encode(), "text/plain; version=0.0.4; charset=utf-8"
                elif path in ("/", "/index.html"):
                    body, ctype = PAGE.encode(), "text/html; charset=utf-8"
                else:
                    self._send(404, b"404 Not Found", "text/plain")
                    return
            except Exception as exc:  # a status page must answer, not die: report and go on
                self._send(
                    500, json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode(), "application/json"
                )
                return
            self._send(200, body, ctype)

        def _send(self, code: int, body: bytes, ctype: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # quiet: polled every 500 ms
            return

    return Handler


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>cuzk daemon</title>
<style>
body { font-family: sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; } h2 { font-size: 14px; margin: 14px 0 4px; }
table { border-collapse: collapse; font-size: 12px; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
.bar { display: inline-block; height: 10px; background: #1f77b4; }
#err { color: #b00; font-size: 12px; }
</style></head><body>
<h1>cuzk daemon</h1>
<div id="summary">loading...</div><div id="err"></div>
<h2>Queues and memory</h2><div id="queues"></div>
<h2>GPU workers</h2><div id="gpus"></div>
<h2>Partitions in flight</h2><div id="pipelines"></div>
<h2>Recent jobs</h2><svg id="waterfall" width="900" height="40"></svg>
<script>
"use strict";
var colours = {pending: "#d9d9d9", synthesizing: "#1f77b4", synth_done: "#9ecae1", gpu: "#d62728",
               done: "#2ca02c", failed: "#000000"};
function el(tag, text) { var e = document.createElement(tag); if (text !== undefined) e.textContent = text; return e; }
function table(rows, cols) {
  var t = el("table"), h = el("tr");
  cols.forEach(function (c) { h.appendChild(el("th", c)); }); t.appendChild(h);
  rows.forEach(function (r) { var tr = el("tr"); cols.forEach(function (c) {
    var v = r[c]; tr.appendChild(el("td", v === null || v === undefined ? "" : String(v))); }); t.appendChild(tr); });
  return t;
}
function gib(b) { return (b / 1073741824).toFixed(2) + " GiB"; }
function draw(s) {
  var c = s.counters || {};
  document.getElementById("summary").textContent = "up " + Math.round(s.uptime_secs) + " s; completed " +
    c.total_completed + ", failed " + c.total_failed + ", queued " + c.queue_depth + "; memory " +
    gib(s.memory.used_bytes) + " of " + gib(s.memory.total_bytes);
  var q = document.getElementById("queues"); q.replaceChildren(table(s.queues || [], ["proof_kind", "pending", "in_progress"]));
  var g = document.getElementById("gpus");
  g.replaceChildren(table(s.gpu_workers || [], ["worker_id", "gpu_ordinal", "state", "current_job", "current_partition", "busy_secs"]));
  var p = document.getElementById("pipelines"); p.replaceChildren();
  (s.pipelines || []).forEach(function (job) {
    var row = el("div", job.job_id + " (" + job.proof_kind + "): " + job.partitions_done + "/" + job.total_partitions + " ");
    (job.partitions || []).forEach(function (part) {
      var b = el("span"); b.className = "bar"; b.style.width = "14px"; b.style.marginRight = "2px";
      b.style.background = colours[part.state] || "#999"; b.title = "partition " + part.index + ": " + part.state;
      row.appendChild(b);
    });
    p.appendChild(row);
  });
  var svg = document.getElementById("waterfall"), jobs = s.recent_jobs || [];
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  svg.setAttribute("height", String(20 + 18 * jobs.length));
  var t0 = Infinity, t1 = -Infinity;
  jobs.forEach(function (j) { (j.spans || []).forEach(function (sp) { t0 = Math.min(t0, sp.start); t1 = Math.max(t1, sp.end); }); });
  var scale = t1 > t0 ? 760 / (t1 - t0) : 1;
  jobs.forEach(function (j, i) {
    var label = document.createElementNS("http://www.w3.org/2000/svg", "text");
    label.setAttribute("x", "0"); label.setAttribute("y", String(14 + 18 * i)); label.setAttribute("font-size", "11");
    label.textContent = j.job_id.slice(0, 18); svg.appendChild(label);
    (j.spans || []).forEach(function (sp) {
      var r = document.createElementNS("http://www.w3.org/2000/svg", "rect");
      r.setAttribute("x", String(130 + (sp.start - t0) * scale)); r.setAttribute("y", String(4 + 18 * i));
      r.setAttribute("width", String(Math.max(1, (sp.end - sp.start) * scale))); r.setAttribute("height", "12");
      r.setAttribute("fill", sp.colour || "#1f77b4");
      var tip = document.createElementNS("http://www.w3.org/2000/svg", "title");
      tip.textContent = sp.name + " " + ((sp.end - sp.start) * 1000).toFixed(1) + " ms"; r.appendChild(tip);
      svg.appendChild(r);
    });
  });
}
function poll() {
  fetch("/status").then(function (r) { return r.json(); }).then(function (s) {
    document.getElementById("err").textContent = ""; draw(s);
  }).catch(function (e) { document.getElementById("err").textContent = "status unavailable: " + e; })
    .finally(function () { setTimeout(poll, 500); });
}
poll();
</script>
</body></html>
"""
