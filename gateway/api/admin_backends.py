"""Route: run a vLLM operator action on a model's backends (admin keys only, audited)."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import orjson
from fastapi import APIRouter, Path

from gateway.api.backend_operation_specs import (
    OPERATIONS,
    OperationRequest,
    misfits,
    upstream_request,
)
from gateway.api.deps import AdminDep, StateDep
from gateway.auth.audit import record_action
from gateway.config import BackendConfig
from gateway.errors import GatewayError

router = APIRouter(prefix="/api/admin/backends", tags=["admin"])
# Sleeping or loading an adapter can take a while; the answer is small.
OPERATION_TIMEOUT_S = 60.0
MAX_ANSWER_BYTES = 64 * 1024


async def _run_on(
    http: aiohttp.ClientSession, backend: BackendConfig, operation: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    spec = OPERATIONS[operation]
    headers = {"Authorization": f"Bearer {backend.api_key}"} if backend.api_key else {}
    try:
        async with http.request(
            spec.method,
            backend.url + spec.path,
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=OPERATION_TIMEOUT_S),
            allow_redirects=False,
            **upstream_request(spec, arguments),
        ) as resp:
            raw = await resp.content.read(MAX_ANSWER_BYTES)
            status = resp.status
    except (aiohttp.ClientError, TimeoutError) as error:
        return {"status": None, "error": f"backend unreachable ({type(error).__name__})"}
    try:
        answer: Any = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        answer = raw.decode(errors="replace")
    return {"status": status, "answer": answer}


# `path`: model names may hold slashes (`meta-llama/Llama-3.1-8B`); the action is the last segment.
@router.post("/{model:path}/{operation}")
async def run_operation(
    caller: AdminDep,
    state: StateDep,
    model: str = Path(max_length=200),
    operation: str = Path(max_length=64),
    body: OperationRequest | None = None,
) -> dict[str, Any]:
    """Send one operator action to the model's backends (all, or the one at `backend`)."""
    request = body or OperationRequest()
    if operation not in OPERATIONS:
        names = ", ".join(sorted(OPERATIONS))
        raise GatewayError(404, f"No operator action `{operation[:64]}`; one of: {names}.")
    configured = state.config.model(model)
    if configured is None or configured.provider != "vllm":
        raise GatewayError(404, f"No vLLM model named `{model[:200]}` in the gateway's config.")
    misfit = misfits(operation, request)
    if misfit is not None:
        raise GatewayError(400, misfit)
    backends = list(enumerate(configured.backends))
    if request.backend is not None:
        if request.backend >= len(backends):
            raise GatewayError(
                400, f"`backend` is an index below {len(backends)} for `{model}`.", "backend"
            )
        backends = [backends[request.backend]]
    arguments = request.arguments()
    # Audited before anything is sent, so no action reaches a backend unrecorded.
    with state.sessions() as session, session.begin():
        record_action(
            session,
            caller.actor,
            f"backend.{operation}",
            target=model,
            details={"backends": [index for index, _ in backends], "arguments": arguments},
        )
    answers = await asyncio.gather(
        *(_run_on(state.http, backend, operation, arguments) for _, backend in backends)
    )
    return {
        "model": model,
        "operation": operation,
        "backends": [
            {"backend": index, **answer}
            for (index, _), answer in zip(backends, answers, strict=True)
        ],
    }
