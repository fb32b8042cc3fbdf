"""The vLLM operator actions an admin may run through the gateway, and the fields each takes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# vLLM serves LoRA adapters under the names it is given; the gateway keeps them plain.
LORA_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
MAX_LORA_PATH = 1024


@dataclass(frozen=True)
class OperationSpec:
    """One operator action: vLLM's method and path, and the request fields it accepts."""

    method: str
    path: str
    fields: frozenset[str] = frozenset()
    # Sent as vLLM's JSON body (else as its query string).
    json_body: bool = False


OPERATIONS: dict[str, OperationSpec] = {
    "reset_prefix_cache": OperationSpec("POST", "/reset_prefix_cache"),
    "reset_mm_cache": OperationSpec("POST", "/reset_mm_cache"),
    "reset_encoder_cache": OperationSpec("POST", "/reset_encoder_cache"),
    "sleep": OperationSpec("POST", "/sleep", frozenset({"level"})),
    "wake_up": OperationSpec("POST", "/wake_up", frozenset({"tags"})),
    "is_sleeping": OperationSpec("GET", "/is_sleeping"),
    "pause": OperationSpec("POST", "/pause", frozenset({"mode", "clear_cache"})),
    "resume": OperationSpec("POST", "/resume"),
    "is_paused": OperationSpec("GET", "/is_paused"),
    "start_profile": OperationSpec("POST", "/start_profile"),
    "stop_profile": OperationSpec("POST", "/stop_profile"),
    "load_lora_adapter": OperationSpec(
        "POST", "/v1/load_lora_adapter", frozenset({"lora_name", "lora_path"}), json_body=True
    ),
    "unload_lora_adapter": OperationSpec(
        "POST", "/v1/unload_lora_adapter", frozenset({"lora_name"}), json_body=True
    ),
}
REQUIRED = {"load_lora_adapter": ("lora_name", "lora_path"), "unload_lora_adapter": ("lora_name",)}


class OperationRequest(BaseModel):
    """Body of `POST /api/admin/backends/{model}/{operation}` (all optional, none unknown)."""

    model_config = ConfigDict(extra="forbid")

    # Index into the model's configured backends; none: every backend of the model.
    backend: int | None = Field(default=None, ge=0, le=1000)
    level: Literal[1, 2] | None = None
    tags: list[Literal["weights", "kv_cache"]] | None = Field(default=None, max_length=2)
    mode: Literal["abort", "wait", "keep"] | None = None
    clear_cache: bool | None = None
    lora_name: str | None = Field(default=None, max_length=128)
    lora_path: str | None = Field(default=None, max_length=MAX_LORA_PATH)

    @field_validator("lora_name")
    @classmethod
    def _plain_name(cls, value: str | None) -> str | None:
        if value is not None and not LORA_NAME.match(value):
            raise ValueError(
                "letters, digits, '.', '_' and '-' only, starting with one of the first two"
            )
        return value

    @field_validator("lora_path")
    @classmethod
    def _local_path(cls, value: str | None) -> str | None:
        # An absolute directory on the backend's host: vLLM would download anything else
        # (a hub id) from the backend, which the gateway does not choose for it.
        if value is not None and (
            not value.startswith("/") or "\x00" in value or ".." in value.split("/")
        ):
            raise ValueError("an absolute directory on the backend's host, without '..'")
        return value

    def arguments(self) -> dict[str, Any]:
        """The fields set, backend aside."""
        return self.model_dump(exclude_none=True, exclude={"backend"})


def misfits(operation: str, request: OperationRequest) -> str | None:
    """Why the request's fields do not fit the operation, or None."""
    spec = OPERATIONS[operation]
    extra = sorted(set(request.arguments()) - spec.fields)
    if extra:
        return f"`{operation}` takes no {', '.join(f'`{name}`' for name in extra)}."
    missing = [name for name in REQUIRED.get(operation, ()) if getattr(request, name) is None]
    if missing:
        return f"`{operation}` needs {', '.join(f'`{name}`' for name in missing)}."
    return None


def upstream_request(spec: OperationSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """aiohttp arguments for vLLM: its query string or its JSON body."""
    if spec.json_body:
        return {"json": arguments}
    query: list[tuple[str, str]] = []
    for name, value in arguments.items():
        values = value if isinstance(value, list) else [value]
        query += [(name, str(v).lower() if isinstance(v, bool) else str(v)) for v in values]
    return {"params": query}
