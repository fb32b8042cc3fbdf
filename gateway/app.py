"""create_app: the gateway ASGI app (proxy, read API, health, metrics)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from sqlalchemy.exc import DataError
from starlette.exceptions import HTTPException
from starlette.routing import Route

from gateway.api import (
    admin_backends,
    admin_data,
    admin_keys,
    admin_teams,
    alerts,
    calls,
    eval_paraphrases,
    eval_runs,
    eval_suites,
    stability,
    usage,
    usage_budgets,
)
from gateway.api.eval_queue import close_eval_queue
from gateway.api.response_headers import ApiResponseHeaders
from gateway.api.service_routes import router as service_router
from gateway.api.vllm_refusals import vllm_refusals_router
from gateway.asgi_entry import GatewayASGI
from gateway.config import GatewayConfig
from gateway.dashboard import dashboard_router
from gateway.errors import GatewayError, error_body
from gateway.lifecycle import build_state, close_state
from gateway.proxy.call_kinds.served import served_kinds
from gateway.proxy.endpoint import ProxyEndpoint
from gateway.worker_pool.exposition_socket import ExpositionServer
from gateway.worker_pool.slot import WorkerSlot
from plumbline.litellm_offline import keep_litellm_offline
from plumbline.settings import Settings


def _json_error(status: int, message: str, param: str | None = None) -> Response:
    return Response(error_body(status, message, param), status, media_type="application/json")


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(GatewayError)
    async def gateway_error(_: Request, error: GatewayError) -> Response:
        response = _json_error(error.status, error.message, error.param)
        response.headers.update({k.decode(): v.decode() for k, v in error.headers})
        return response

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, error: HTTPException) -> Response:
        response = _json_error(error.status_code, str(error.detail))
        response.headers.update(error.headers or {})
        return response

    @app.exception_handler(DataError)
    async def data_error(_: Request, error: DataError) -> Response:
        # Postgres refuses some values outright (a NUL in text, a number out of range): that is
        # the caller's input, so a 400, never a 500.
        return _json_error(
            400,
            "A value in this request cannot be stored or searched for "
            "(such as a NUL character, or a number out of range).",
        )

    @app.exception_handler(OverflowError)
    async def overflow_error(_: Request, error: OverflowError) -> Response:
        # Dates near year 1 or 9999 overflow when a default window is computed from them.
        return _json_error(400, f"A date or number in this request is out of range ({error}).")

    @app.exception_handler(RequestValidationError)
    async def validation_error(_: Request, error: RequestValidationError) -> Response:
        first = error.errors()[0] if error.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return _json_error(400, f"{where}: {first.get('msg', 'invalid value')}", where or None)


def proxy_endpoints() -> dict[str, ProxyEndpoint]:
    """The OpenAI endpoints by path."""
    return {kind.path: ProxyEndpoint(kind) for kind in served_kinds()}


def create_asgi(
    settings: Settings, config: GatewayConfig, slot: WorkerSlot | None = None
) -> GatewayASGI:
    """What uvicorn serves: the FastAPI app, with proxy calls dispatched around its middleware."""
    keep_litellm_offline()  # also when the gateway is served without the CLI
    return GatewayASGI(create_app(settings, config, slot), proxy_endpoints())


def create_app(
    settings: Settings, config: GatewayConfig, slot: WorkerSlot | None = None
) -> FastAPI:
    """Build the gateway app; `slot`: it is one worker of a `--workers N` pool."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = await build_state(settings, config, slot)
        app.state.plumbline = state
        exposition = None
        if slot is not None:
            exposition = ExpositionServer(
                slot.exposition_socket(slot.index), state.metrics.registry
            )
            exposition.start()
        try:
            yield
        finally:
            if exposition is not None:
                exposition.stop()
            close_eval_queue(app)
            await close_state(state)

    app = FastAPI(
        title="Plumbline gateway",
        version="0.1.0",
        lifespan=lifespan,
        openapi_url="/api/openapi.json",
        docs_url="/api/docs",
        redoc_url=None,
    )
    for path, endpoint in proxy_endpoints().items():
        # Reached only for other methods (a 405): POSTs are dispatched by GatewayASGI.
        app.router.routes.append(Route(path, endpoint, methods=["POST"]))
    app.include_router(service_router)
    app.include_router(calls.router)
    app.include_router(usage.router)
    app.include_router(usage_budgets.router)
    app.include_router(eval_suites.router)
    app.include_router(eval_paraphrases.router)
    app.include_router(eval_runs.router)
    app.include_router(alerts.router)
    app.include_router(stability.router)
    app.include_router(admin_keys.router)
    app.include_router(admin_teams.router)
    app.include_router(admin_data.router)
    app.include_router(admin_backends.router)
    app.include_router(vllm_refusals_router())
    app.include_router(dashboard_router())
    _install_error_handlers(app)
    app.add_middleware(ApiResponseHeaders)
    return app
