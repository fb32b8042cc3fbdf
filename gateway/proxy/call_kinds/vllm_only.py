"""The litellm refusal shared by the call kinds only a vLLM backend serves."""

from __future__ import annotations

from typing import Any

from gateway.errors import GatewayError


def refuse_litellm(path: str, payload: dict[str, Any]) -> None:
    """A 404: through litellm this gateway serves chat, completions and embeddings only."""
    model = payload.get("model")
    raise GatewayError(
        404,
        f"The model `{str(model)[:200]}` is served through litellm, which this gateway uses "
        f"for chat, completions and embeddings only: `{path}` needs a vLLM backend.",
        "model",
    )
