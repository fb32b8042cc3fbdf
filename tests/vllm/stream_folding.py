"""Fold a stream's chunks per choice, so that streams cut into chunks differently compare equal.

vLLM merges the tokens of consecutive engine steps into one chunk when its API server lags
behind the engine, so two identical requests may be cut differently, and a choice may even
finish in its first chunk.
"""

from __future__ import annotations

import copy
from typing import Any


def fold_stream(events: list[Any]) -> dict[str, Any]:
    """Each choice's chunks folded into one: text and lists joined, the last non-null value of
    everything else, by choice index; events without choices as they are, under "events"."""
    folded: dict[str, Any] = {"events": []}
    for event in events:
        choices = event.get("choices") if isinstance(event, dict) else None
        if not choices:
            folded["events"].append(event)
            continue
        for choice in choices:
            _fold(folded.setdefault(str(choice["index"]), {}), {**event, "choices": choice})
    return folded


def _fold(into: dict[str, Any], part: dict[str, Any]) -> None:
    for key, value in part.items():
        held = into.get(key)
        if isinstance(value, dict) and isinstance(held, dict):
            _fold(held, value)
        elif isinstance(value, list) and isinstance(held, list):
            held.extend(value)
        elif key in ("text", "content") and isinstance(value, str) and isinstance(held, str):
            into[key] = held + value
        elif value is not None or key not in into:
            into[key] = copy.deepcopy(value)  # folding must not change the events themselves


def sorted_keys(value: Any) -> Any:
    """The value with every object's keys in sorted order (where folding left them is moot)."""
    if isinstance(value, dict):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(item) for item in value]
    return value
