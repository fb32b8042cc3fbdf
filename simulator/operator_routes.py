"""vLLM's operator routes (VLLM_SERVER_DEV_MODE, runtime LoRA): caches, sleep, pause, adapters.

The answers are vLLM 0.32's (tests/fixtures/vllm_routes/dev/); the engine state they change is
what the simulator can show: sleeping, paused, the adapters `/v1/models` lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict
from starlette.responses import Response

from simulator.errors import ApiError
from simulator.state import SimulatorState
from simulator.validation import parse_body


class LoraLoad(BaseModel):
    """Body of /v1/load_lora_adapter."""

    model_config = ConfigDict(extra="allow")

    lora_name: str
    lora_path: str
    load_inplace: bool = False


class LoraUnload(BaseModel):
    """Body of /v1/unload_lora_adapter."""

    model_config = ConfigDict(extra="allow")

    lora_name: str


def _json(data: Any) -> Response:
    return Response(orjson.dumps(data), media_type="application/json")


def _state(request: Request) -> SimulatorState:
    state: SimulatorState = request.app.state.sim
    return state


async def reset_cache(request: Request) -> Response:
    """The prefix, multimodal and encoder caches: emptied (the prefix cache really is)."""
    if request.url.path == "/reset_prefix_cache":
        _state(request).cache.clear()
    return _json({"success": True})


async def sleep(request: Request) -> Response:
    """Put the engine to sleep at `level`."""
    level = int(request.query_params.get("level", "1"))
    _state(request).sleeping = True
    return _json({"status": "sleeping", "level": level})


async def wake_up(request: Request) -> Response:
    """Wake the engine (all of it: the simulator has no per-tag memory)."""
    _state(request).sleeping = False
    tags = request.query_params.getlist("tags") or None
    return _json({"status": "awake", "tags": tags})


async def is_sleeping(request: Request) -> Response:
    """Whether the engine sleeps."""
    return _json({"is_sleeping": _state(request).sleeping})


async def pause(request: Request) -> Response:
    """Pause generation."""
    _state(request).paused = True
    return _json({"status": "paused"})


async def resume(request: Request) -> Response:
    """Resume generation."""
    _state(request).paused = False
    return _json({"status": "resumed"})


async def is_paused(request: Request) -> Response:
    """Whether generation is paused."""
    return _json({"is_paused": _state(request).paused})


async def load_lora(request: Request) -> Response:
    """Serve a LoRA adapter under `lora_name` (any directory is taken for one)."""
    state = _state(request)
    try:
        body = parse_body(await request.body(), LoraLoad)
        if body.lora_name in state.lora_adapters and not body.load_inplace:
            raise ApiError(
                f"The lora adapter '{body.lora_name}' has already been loaded. If you want to "
                "load the adapter in place, set 'load_inplace' to True.",
                err_type="InvalidUserInput",
            )
        if not Path(body.lora_path).is_dir():
            raise ApiError(
                f"Loading lora {body.lora_name} failed: No adapter found for {body.lora_path}",
                status=404,
            )
    except ApiError as error:
        return error.response()
    state.lora_adapters[body.lora_name] = body.lora_path
    return Response(f"Success: LoRA adapter '{body.lora_name}' added successfully.")


async def unload_lora(request: Request) -> Response:
    """Stop serving a LoRA adapter."""
    state = _state(request)
    try:
        body = parse_body(await request.body(), LoraUnload)
        if state.lora_adapters.pop(body.lora_name, None) is None:
            raise ApiError(f"The lora adapter '{body.lora_name}' cannot be found.", status=404)
    except ApiError as error:
        return error.response()
    return Response(f"Success: LoRA adapter '{body.lora_name}' removed successfully.")


def build_operator_router() -> APIRouter:
    """Router with the operator routes (profiling needs --profiler-config: not served)."""
    router = APIRouter()
    for path in ("/reset_prefix_cache", "/reset_mm_cache", "/reset_encoder_cache"):
        router.add_api_route(path, reset_cache, methods=["POST"])
    router.add_api_route("/sleep", sleep, methods=["POST"])
    router.add_api_route("/wake_up", wake_up, methods=["POST"])
    router.add_api_route("/is_sleeping", is_sleeping, methods=["GET"])
    router.add_api_route("/pause", pause, methods=["POST"])
    router.add_api_route("/resume", resume, methods=["POST"])
    router.add_api_route("/is_paused", is_paused, methods=["GET"])
    router.add_api_route("/v1/load_lora_adapter", load_lora, methods=["POST"])
    router.add_api_route("/v1/unload_lora_adapter", unload_lora, methods=["POST"])
    return router
