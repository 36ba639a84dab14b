"""The daemon's HTTP side (`daemon.status_listen`): GET /status (JSON), /metrics (Prometheus), / (a page).

/status carries the reference's JSON fields (REFERENCE_API.md 4.1) so its web
UIs keep working; /metrics is Prometheus text exposition; / is a small live
page (status_page.html: one self-contained file, no network assets) that polls
/status and draws memory, the queues, the partitions in flight and a rolling
waterfall of the last jobs. Anything else is 404. The server runs on its own
threads and only reads.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
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


#: the page's slot for the status of the moment it is served (status_page.html reads it first)
FIRST_STATE = b'<script id="first-state" type="application/json">null</script>'


def with_first_state(page: bytes, state: dict[str, Any]) -> bytes:
    """The page with `state` embedded, so its first paint has data ("<" escaped: no "</script>")."""
    data = json.dumps(state).replace("<", "\\u003c").encode()
    return page.replace(FIRST_STATE, FIRST_STATE.replace(b">null<", b">" + data + b"<"), 1)


def _handler(status: StatusSource, metrics: MetricsSource) -> type[BaseHTTPRequestHandler]:
    page = resources.files("cuzk.server").joinpath("status_page.html").read_bytes()

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
                    body, ctype = with_first_state(page, status()), "text/html; charset=utf-8"
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
