"""A pooling simulator behind a gateway whose model `tiny` is a pooling model, and helpers."""

from __future__ import annotations

import re
from typing import Any

import httpx
import orjson

from tests.support.gateway_process import gateway_config

MAX_BODY = 1 << 20
MAX_ITEMS = 16
# Fields that differ between any two answers (ids, clocks).
VOLATILE = frozenset({"id", "created"})


def pooling_gateway_config(backend_url: str, database: str) -> dict[str, Any]:
    """`tiny` a pooling model on `backend_url`; `gen`, a generate model, on the same backend."""
    config = gateway_config(
        backend_url,
        recording={"flush_interval_ms": 20, "in_process": database.startswith("sqlite")},
        limits={"max_body_bytes": MAX_BODY, "max_pooling_items": MAX_ITEMS},
    )
    pooling = {**config["models"][0], "runner": "pooling"}
    pooling["allowed_media_domains"] = ["media.example"]
    generate = {"name": "gen", "backends": [{"url": backend_url}]}
    config["models"] = [pooling, generate]
    return config


def masked(value: Any) -> Any:
    """`value` with its ids, clocks and body key counts hidden, for comparing two answers."""
    if isinstance(value, dict):
        return {k: (None if k in VOLATILE else masked(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    if isinstance(value, str):
        # vLLM's validation messages count the body's keys, and the gateway adds a cache salt.
        return re.sub(r"<dict of \d+ items>", "<dict>", value)
    return value


def post(base: str, path: str, body: Any, key: str | None = None) -> httpx.Response:
    """POST a JSON body (or raw bytes) with the key, if any."""
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    return httpx.post(f"{base}{path}", content=content, headers=headers, timeout=60)
