"""GatewayASGI: the app uvicorn serves. Proxy calls skip FastAPI's middleware stack.

Every proxied call would otherwise pass half a dozen middleware layers and the router, about a
tenth of the gateway's CPU per call. `ProxyCall` answers every error itself, so the stack adds
nothing there; everything else (read API, dashboard, lifespan) goes to FastAPI.
"""

from __future__ import annotations

from fastapi import FastAPI

from gateway.proxy.asgi_io import Receive, Scope, Send
from gateway.proxy.endpoint import ProxyEndpoint
from gateway.proxy.stored_responses import StoredResponsesEndpoint


class GatewayASGI:
    """Dispatch POSTs to the proxy endpoints directly; hand the rest to the FastAPI app."""

    def __init__(self, api: FastAPI, proxies: dict[str, ProxyEndpoint]) -> None:
        self.api = api
        self.proxies = proxies
        self.stored_responses = StoredResponsesEndpoint()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            endpoint = self.proxies.get(scope["path"])
            if endpoint is not None:
                scope["app"] = self.api  # where the endpoint finds the gateway's state
                await endpoint(scope, receive, send)
                return
        if scope["type"] == "http" and self.stored_responses.serves(scope):
            scope["app"] = self.api
            await self.stored_responses(scope, receive, send)
            return
        await self.api(scope, receive, send)
