"""`usage` objects in their three shapes: full body, running (continuous) and final chunk."""

from __future__ import annotations

from typing import Any


def usage_body(
    prompt_tokens: int,
    completion_tokens: int,
    cached_tokens: int | None,
    created_cache_tokens: int | None,
) -> dict[str, Any]:
    """Usage with every key; `cached_tokens` None means prompt token details are off."""
    details = None
    if cached_tokens is not None:
        details = {
            "cached_tokens": cached_tokens,
            "created_cache_tokens": created_cache_tokens,
            "multimodal_tokens": None,
        }
    return {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "completion_tokens": completion_tokens,
        "prompt_tokens_details": details,
        "completion_tokens_details": None,
    }


def running_usage(prompt_tokens: int, completion_tokens: int, chat: bool = True) -> dict[str, Any]:
    """What `continuous_usage_stats` puts on every chunk (completions leave out the details)."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "completion_tokens": completion_tokens,
    }
    if chat:
        usage["completion_tokens_details"] = None
    return usage


def without_nulls(value: Any) -> Any:
    """Drop null keys at every depth, as the final usage chunk does."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    return value
