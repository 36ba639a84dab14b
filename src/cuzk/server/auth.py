"""Bearer-token access for the gRPC service: every call carries `authorization: Bearer <token>`.

The reference has no authentication at all, so anyone who reaches its TCP port
can submit work. Here a TCP listener always requires a token (the config
refuses one without), compared in constant time; the token is never logged.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from cuzk.errors import UsageError

METADATA_KEY = "authorization"


def bearer(token: str) -> list[tuple[str, str]]:
    """Call metadata that carries the token."""
    return [(METADATA_KEY, f"Bearer {token}")] if token else []


class TokenInterceptor(grpc.aio.ServerInterceptor):
    """Refuses every call whose metadata lacks the configured bearer token (UNAUTHENTICATED)."""

    def __init__(self, token: str) -> None:
        if not token.strip():
            raise UsageError("an empty or blank token would admit everyone")
        self._expected = f"Bearer {token}".encode()

        async def deny(_request: Any, context: grpc.aio.ServicerContext) -> Any:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")

        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        for key, value in handler_call_details.invocation_metadata or ():
            if key == METADATA_KEY:
                got = value.encode() if isinstance(value, str) else bytes(value)
                if hmac.compare_digest(got, self._expected):
                    return await continuation(handler_call_details)
        return self._deny
