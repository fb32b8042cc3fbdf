"""Routes: /health, /metrics and the merged /v1/models."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from gateway.api.deps import InferenceCallerDep, PublicRoute, StateDep
from gateway.errors import error_body
from gateway.worker_pool.pool_metrics import pool_exposition

router = APIRouter()


@router.get("/health", tags=["service"], dependencies=[PublicRoute])
def health(state: StateDep) -> dict[str, Any]:
    """Liveness plus whether calls are being written or spooled."""
    backends = state.backends.all()
    return {
        "status": "ok",
        "database": "up" if state.sink.stats.database_up else "spooling",
        "backends_healthy": sum(1 for b in backends if b.healthy),
        "backends_total": len(backends),
    }


@router.get("/metrics", tags=["service"], dependencies=[PublicRoute])
def metrics(state: StateDep) -> Response:
    """Prometheus exposition of the gateway's metrics (404 when the environment turned it off)."""
    if not state.prometheus_metrics:
        message = (
            "Prometheus metrics are off: OTEL_METRICS_EXPORTER does not list prometheus "
            "(add it, e.g. OTEL_METRICS_EXPORTER=otlp,prometheus, to serve /metrics)"
        )
        return Response(error_body(404, message), status_code=404, media_type="application/json")
    if state.worker is not None:
        body = pool_exposition(state.worker, state.metrics.registry)
    else:
        body = generate_latest(state.metrics.registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)


@router.get("/v1/models", tags=["openai"])
def models(state: StateDep, caller: InferenceCallerDep) -> dict[str, Any]:
    """The models the caller may call, with what their backends report (such as max_model_len)."""
    data = []
    allowed = set(caller.models.visible(state.config.model_names))
    for model in state.config.models:
        if model.name not in allowed:
            continue  # another team's model: not even its name is shown
        entry: dict[str, Any] = {
            "id": model.name,
            "object": "model",
            "created": int(time.time()),
            "owned_by": "plumbline",
        }
        for backend in state.backends.serving(model.name):
            served = backend.served_models.get(model.served_name)
            if served:
                entry["max_model_len"] = served.get("max_model_len")
                entry["root"] = served.get("root")
                break
        data.append(entry)
    return {"object": "list", "data": data}
