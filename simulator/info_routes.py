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
    state = _state(request)
    config = state.config
    created = int(time.time())
    cards = [_card(config.model_name, config.model_root, None, config.max_model_len, created)]
    cards += [
        _card(name, root, config.model_name, None, created)
        for name, root in state.lora_adapters.items()
    ]
    return _json({"object": "list", "data": cards})


def _card(
    name: str, root: str, parent: str | None, max_model_len: int | None, created: int
) -> dict[str, object]:
    # A LoRA adapter is listed with its base model as parent and no max_model_len.
    return {
        "id": name,
        "object": "model",
        "created": created,
        "owned_by": "vllm",
        "root": root,
        "parent": parent,
        "max_model_len": max_model_len,
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
