"""Routes: vLLM's paths that the gateway does not forward, each answered with a clear 404."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request
from fastapi.responses import Response

from gateway.api.deps import PublicRoute
from gateway.api.vllm_route_table import OPERATOR, REFUSED, VLLM_ROUTES, refusal_message
from gateway.errors import error_body

ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


def _answer(message: str) -> Callable[[Request], Awaitable[Response]]:
    async def refuse(_: Request) -> Response:
        return Response(error_body(404, message), 404, media_type="application/json")

    return refuse


def vllm_refusals_router() -> APIRouter:
    """A 404 route, whatever the method or key, for each refused or operator path of vLLM."""
    # The same 404 for every caller: no key is asked for, so none is refused.
    router = APIRouter(include_in_schema=False, dependencies=[PublicRoute])
    for path, decision in VLLM_ROUTES.items():
        if decision.decision in (REFUSED, OPERATOR):
            router.add_api_route(
                path, _answer(refusal_message(path, decision)), methods=ALL_METHODS
            )
    return router


__all__ = ["vllm_refusals_router"]
