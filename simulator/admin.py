"""Runtime control under /_sim/: scenarios, faults, timing, stats and reset."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict
from starlette.responses import Response

from simulator.config import FaultConfig, Scenario, TimingConfig
from simulator.errors import ApiError
from simulator.state import SimulatorState
from simulator.validation import parse_body


class ScenarioList(BaseModel):
    """Body of POST /_sim/scenarios (a bare list is accepted too)."""

    model_config = ConfigDict(extra="forbid")

    scenarios: list[Scenario]


def _json(data: object) -> Response:
    return Response(orjson.dumps(data), media_type="application/json")


def _state(request: Request) -> SimulatorState:
    state: SimulatorState = request.app.state.sim
    return state


def _scenarios(state: SimulatorState) -> list[dict[str, Any]]:
    return [s.model_dump(mode="json") for s in state.scenarios.source]


async def get_scenarios(request: Request) -> Response:
    """The scenarios in force."""
    return _json({"scenarios": _scenarios(_state(request))})


async def set_scenarios(request: Request) -> Response:
    """Replace all scenarios; `{"scenarios": [...]}` or a bare list."""
    state = _state(request)
    raw = await request.body()
    if raw.lstrip().startswith(b"["):
        raw = b'{"scenarios":' + raw + b"}"
    try:
        body = parse_body(raw, ScenarioList)
    except ApiError as error:
        return error.response()
    state.set_scenarios(body.scenarios)
    return _json({"scenarios": _scenarios(state)})


async def get_faults(request: Request) -> Response:
    """The fault settings in force."""
    return _json(_state(request).faults.model_dump(mode="json"))


async def set_faults(request: Request) -> Response:
    """Replace the fault settings (omitted faults are switched off)."""
    state = _state(request)
    try:
        faults = parse_body(await request.body(), FaultConfig)
    except ApiError as error:
        return error.response()
    state.set_faults(faults)
    return _json(faults.model_dump(mode="json"))


async def get_timing(request: Request) -> Response:
    """The timing model in force."""
    return _json(_state(request).engine.timing.model_dump(mode="json"))


async def set_timing(request: Request) -> Response:
    """Replace the timing model (omitted fields take their defaults)."""
    state = _state(request)
    try:
        timing = parse_body(await request.body(), TimingConfig)
    except ApiError as error:
        return error.response()
    state.set_timing(timing)
    return _json(timing.model_dump(mode="json"))


async def get_stats(request: Request) -> Response:
    """Request counts, cancellations and engine occupancy."""
    state = _state(request)
    engine = state.engine
    data = state.stats.snapshot()
    data["engine"] = {
        "running": len(engine.running),
        "waiting": len(engine.waiting),
        "steps": engine.steps,
        "max_running_seen": engine.max_running_seen,
        "prefix_cache_blocks": len(state.cache),
    }
    return _json(data)


async def get_timeline(request: Request) -> Response:
    """When a response's token writes were sent (wall clock), to check a proxy's metering."""
    found = _state(request).stats.timeline(request.path_params["response_id"])
    if found is None:
        error = ApiError("No timeline for that response id.", status=404, param="response_id")
        return error.response()
    return _json(found)


async def reset(request: Request) -> Response:
    """Zero the stats and empty the prefix cache."""
    state = _state(request)
    state.stats.reset()
    state.cache.clear()
    state.engine.max_running_seen = len(state.engine.running)
    return _json({"reset": True})


def build_admin_router() -> APIRouter:
    """Router with the /_sim/ endpoints."""
    router = APIRouter(prefix="/_sim")
    router.add_api_route("/scenarios", get_scenarios, methods=["GET"])
    router.add_api_route("/scenarios", set_scenarios, methods=["POST"])
    router.add_api_route("/faults", get_faults, methods=["GET"])
    router.add_api_route("/faults", set_faults, methods=["POST"])
    router.add_api_route("/timing", get_timing, methods=["GET"])
    router.add_api_route("/timing", set_timing, methods=["POST"])
    router.add_api_route("/stats", get_stats, methods=["GET"])
    router.add_api_route("/requests/{response_id}", get_timeline, methods=["GET"])
    router.add_api_route("/reset", reset, methods=["POST"])
    return router
