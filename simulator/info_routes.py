"""Server endpoints besides generation: models, health, ping, version, load, metrics."""

from __future__ import annotations

import secrets
import time

import orjson
from fastapi import APIRouter, Request
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.responses import Response

from simulator.state import SimulatorState


def _json(data: object, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status, media_type="application/json")


def _state(request: Request) -> SimulatorState:
    state: SimulatorState = request.app.state.sim
    return state


async def list_models(request: Request) -> Response:
    """GET /v1/models, with `max_model_len` as vLLM reports it."""
    config = _state(request).config
    created = int(time.time())
    card = {
        "id": config.model_name,
        "object": "model",
        "created": created,
        "owned_by": "vllm",
        "root": config.model_root,
        "parent": None,
        "max_model_len": config.max_model_len,
        "permission": [
            {
                "id": f"modelperm-{secrets.token_hex(8)}",
                "object": "model_permission",
                "created": created,
                "allow_create_engine": False,
                "allow_sampling": True,
                "allow_logprobs": True,
                "allow_search_indices": False,
                "allow_view": True,
                "allow_fine_tuning": False,
                "organization": "*",
                "group": None,
                "is_blocking": False,
            }
        ],
    }
    return _json({"object": "list", "data": [card]})


async def health(request: Request) -> Response:
    """200 with an empty body; 503 once the engine is dead."""
    dead = _state(request).faults.engine_dead
    return Response(status_code=503 if dead else 200)


async def ping(request: Request) -> Response:
    """Same as /health (SageMaker's name for it)."""
    return await health(request)


async def version(request: Request) -> Response:
    """The vLLM version the simulator stands in for."""
    return _json({"version": _state(request).config.version})


async def load(request: Request) -> Response:
    """Generation requests currently being served."""
    return _json({"server_load": _state(request).stats.in_flight})


async def metrics(request: Request) -> Response:
    """Prometheus exposition of this app's registry."""
    body = _state(request).engine.metrics.render()
    return Response(body, media_type=CONTENT_TYPE_LATEST)


def build_info_router() -> APIRouter:
    """Router with the informational endpoints."""
    router = APIRouter()
    router.add_api_route("/v1/models", list_models, methods=["GET"])
    router.add_api_route("/health", health, methods=["GET"])
    router.add_api_route("/ping", ping, methods=["GET", "POST"])
    router.add_api_route("/version", version, methods=["GET"])
    router.add_api_route("/load", load, methods=["GET"])
    router.add_api_route("/metrics", metrics, methods=["GET"])
    return router
