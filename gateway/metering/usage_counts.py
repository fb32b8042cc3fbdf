"""A record's token counts as its `calls` row keeps them: the backend's usage, else counted."""

from __future__ import annotations

from typing import Any

from gateway.metering.record import CallRecord


def _token_count(value: Any) -> int | None:
    # The backend wrote these: a count that is no count must not fail the cost arithmetic.
    return value if type(value) is int and 0 <= value < 2**31 else None


def usage_counts(record: CallRecord) -> tuple[int | None, int | None, int | None, str | None]:
    """(prompt, completion, cached tokens, where they came from) of a finished call."""
    usage = record.usage
    if isinstance(usage, dict) and usage:
        details = usage.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        return (
            _token_count(usage.get("prompt_tokens")),
            _token_count(usage.get("completion_tokens")),
            _token_count(cached),
            "backend",
        )
    if record.completion_tokens_seen:
        return None, record.completion_tokens_seen, None, "counted"
    return None, None, None, None
