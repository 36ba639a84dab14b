"""The daemon's HTTP side (`daemon.status_listen`): GET /status (JSON), /metrics (Prometheus), / (a page).

/status carries the reference's JSON fields (REFERENCE_API.md 4.1) so its web
UIs keep working; /metrics is Prometheus text exposition; / is a small live
page (status_page.html: one self-contained file, no network assets) that polls
/status and draws memory, the queues, the partitions in flight and a rolling
waterfall of the last jobs. Anything else is 404. Only reads.

Served by aiohttp on the daemon's event loop (issue 32 item 13): a connection
costs a socket and a small object, not a thread; connections are capped
(MAX_CONNECTIONS: past it a new one is closed at once); one that sends no request
within IDLE_TIMEOUT_S, or stays idle that long after an answer, is closed; a client
that goes away is not logged as an error. The status is rendered on a worker
thread (the engine's status takes locks), never for a request already gone.

Beyond loopback every path needs the daemon's bearer token (issue 32 item 14):
the status names jobs, and job ids name sectors. No CORS header is sent: the page
is served from the same origin as the JSON it polls.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import Any

from aiohttp import web

from cuzk.errors import UsageError
from cuzk.server.config import is_loopback

StatusSource = Callable[[], dict[str, Any]]
MetricsSource = Callable[[], str]

log = logging.getLogger("cuzk.daemon")

MAX_CONNECTIONS = 256
IDLE_TIMEOUT_S = 10.0


class _Refuse(asyncio.Protocol):
    """Closes a connection at once: the cap on open connections is reached."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


class StatusServer:
    """aiohttp on host:port, on the running event loop; `port` is the bound one (0 picks a free port)."""

    def __init__(
        self, address: str, status: StatusSource, metrics: MetricsSource, *, token: str = ""
    ) -> None:
        host, _, port = address.rpartition(":")
        self.host = host or "127.0.0.1"
        self._port = int(port)
        if not is_loopback(self.host) and not token:
            raise UsageError(f"status_listen {address} is beyond loopback; it needs daemon.token")
        self._token = f"Bearer {token}".encode() if token and not is_loopback(self.host) else b""
        self._status, self._metrics = status, metrics
        self._page = resources.files("cuzk.server").joinpath("status_page.html").read_bytes()
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="cuzk-http")
        self._runner: web.AppRunner | None = None
        self._listener: asyncio.base_events.Server | None = None

    @property
    def port(self) -> int:
        return self._port

    async def start(self) -> None:
        app = web.Application(middlewares=[self._auth])
        app.router.add_get("/status", self._get_status)
        app.router.add_get("/status/", self._get_status)
        app.router.add_get("/metrics", self._get_metrics)
        app.router.add_get("/", self._get_page)
        app.router.add_get("/index.html", self._get_page)
        self._runner = web.AppRunner(
            app, handle_signals=False, access_log=None, keepalive_timeout=IDLE_TIMEOUT_S
        )
        await self._runner.setup()
        server = self._runner.server
        assert server is not None

        def factory() -> asyncio.Protocol:
            if len(server.connections) >= MAX_CONNECTIONS:
                return _Refuse()
            return server()

        loop = asyncio.get_running_loop()
        try:
            self._listener = await loop.create_server(factory, self.host, self._port, backlog=128)
        except OSError as exc:
            raise UsageError(f"status_listen {self.host}:{self._port}: {exc.strerror or exc}") from exc
        self._port = int(self._listener.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()
        if self._runner is not None:
            await self._runner.cleanup()
        self._pool.shutdown(wait=False, cancel_futures=True)

    @web.middleware
    async def _auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if self._token:
            got = request.headers.get("Authorization", "").encode()
            if not hmac.compare_digest(got, self._token):
                return web.Response(status=401, text="missing or wrong bearer token\n",
                                    headers={"WWW-Authenticate": "Bearer"})  # fmt: skip
        return await handler(request)

    async def _render(self, request: web.Request, fn: Callable[[], Any]) -> Any:
        if request.transport is None or request.transport.is_closing():
            raise web.HTTPRequestTimeout()  # gone already: nothing is rendered for it
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn)

    async def _get_status(self, request: web.Request) -> web.Response:
        try:
            body = json.dumps(await self._render(request, self._status))
        except web.HTTPException:
            raise
        except Exception as exc:  # a status page must answer, not die: report and go on
            return web.json_response({"error": f"{type(exc).__name__}: {exc}"}, status=500)
        return web.Response(body=body.encode(), content_type="application/json")

    async def _get_metrics(self, request: web.Request) -> web.Response:
        text = await self._render(request, self._metrics)
        return web.Response(
            body=text.encode(), headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"}
        )

    async def _get_page(self, request: web.Request) -> web.Response:
        try:
            body = with_first_state(self._page, await self._render(request, self._status))
        except web.HTTPException:
            raise
        except Exception:  # the page still loads and polls /status, which reports the error
            log.exception("status for the page's first paint")
            body = self._page
        return web.Response(body=body, content_type="text/html", charset="utf-8")


#: the page's slot for the status of the moment it is served (status_page.html reads it first)
FIRST_STATE = b'<script id="first-state" type="application/json">null</script>'


def with_first_state(page: bytes, state: dict[str, Any]) -> bytes:
    """The page with `state` embedded, so its first paint has data ("<" escaped: no "</script>")."""
    data = json.dumps(state).replace("<", "\\u003c").encode()
    return page.replace(FIRST_STATE, FIRST_STATE.replace(b">null<", b">" + data + b"<"), 1)
