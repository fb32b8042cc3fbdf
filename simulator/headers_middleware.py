"""Pure ASGI middleware adding vLLM's response headers (`vary: Origin`, `x-request-id`)."""

from __future__ import annotations

import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_VARY = (b"vary", b"Origin")


class ResponseHeadersMiddleware:
    """Echo the client's X-Request-Id (or a fresh uuid hex) without buffering streams."""

    def __init__(self, app: ASGIApp, request_id_headers: bool = True) -> None:
        self.app = app
        self.request_id_headers = request_id_headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI entry point."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id: bytes | None = None
        if self.request_id_headers:
            for name, value in scope["headers"]:
                if name == b"x-request-id":
                    request_id = value
                    break
            else:
                request_id = uuid.uuid4().hex.encode()

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                headers.append(_VARY)
                if request_id is not None:
                    headers.append((b"x-request-id", request_id))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
