"""Pure ASGI layer sending generation POSTs straight to their handlers (the hot path).

The routes stay registered with FastAPI too (OpenAPI, other methods); this only skips the
framework's per-request layers for the two endpoints that carry the load.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

Handler = Callable[[Request], Awaitable[Response]]


class GenerationShortcut:
    """Dispatch `POST <path>` for the given paths directly; everything else passes through."""

    def __init__(self, app: ASGIApp, routes: Mapping[str, Handler]) -> None:
        self.app = app
        self.routes = dict(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI entry point."""
        if scope["type"] == "http" and scope["method"] == "POST":
            handler = self.routes.get(scope["path"])
            if handler is not None:
                response = await handler(Request(scope, receive))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
