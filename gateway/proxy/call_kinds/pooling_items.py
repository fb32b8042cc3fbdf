"""How many items a pooling call asks for, and where its body names media, read as vLLM does.

An item is what vLLM runs through the model once: an input or conversation of an embeddings,
pooling or classify call, a pair of a score call, a document of a rerank call. A body vLLM
would refuse counts as None here (vLLM answers it with its own 400).
"""

from __future__ import annotations

from typing import Any

# Score's left and right sides, in each spelling vLLM 0.32 accepts (scoring/protocol.py).
SCORE_LEFT = ("text_1", "data_1", "queries")
SCORE_RIGHT = ("text_2", "data_2", "documents", "items")


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("role"), str)


def _is_conversation(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_is_message(m) for m in value)


def prompt_items(payload: dict[str, Any]) -> tuple[str, int | None]:
    """The field holding an embeddings/pooling/classify call's prompts, and how many there are."""
    if "messages" in payload:
        messages = payload["messages"]
        if _is_conversation(messages):
            return "messages", 1
        if isinstance(messages, list) and all(_is_conversation(m) for m in messages):
            return "messages", len(messages)
        return "messages", None
    prompt = payload.get("input")
    if isinstance(prompt, str) or _is_conversation(prompt):
        return "input", 1
    if not isinstance(prompt, list):
        return "input", None
    if all(type(token) is int for token in prompt):
        return "input", 1 if prompt else 0  # one prompt of token ids
    return "input", len(prompt)


def _side(value: Any) -> int | None:
    if isinstance(value, str | dict):
        return 1
    return len(value) if isinstance(value, list) else None


def score_items(payload: dict[str, Any]) -> tuple[str, int | None]:
    """The field of a score call's longer side, and its pairs (one left text scores every right)."""
    left = next((name for name in SCORE_LEFT if name in payload), None)
    right = next((name for name in SCORE_RIGHT if name in payload), None)
    if left is None or right is None:
        return right or left or "text_2", None
    counts = _side(payload[left]), _side(payload[right])
    if counts[0] is None or counts[1] is None:
        return right, None
    return (left, counts[0]) if counts[0] > counts[1] else (right, counts[1])


def rerank_items(payload: dict[str, Any]) -> tuple[str, int | None]:
    """A rerank call's documents."""
    return "documents", _side(payload.get("documents"))


def conversations(payload: dict[str, Any], field: str) -> list[tuple[str, Any]]:
    """Each conversation in `field` (one, or a batch of them), named by its place."""
    value = payload.get(field)
    if not isinstance(value, list) or not value:
        return []
    if all(isinstance(item, list) for item in value):
        return [(f"{field}[{i}]", item) for i, item in enumerate(value)]
    return [(field, value)]


def score_contents(payload: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every `{"content": [...]}` input of a score or rerank call, as a list of one message."""
    found: list[tuple[str, Any]] = []
    for field in (*SCORE_LEFT, *SCORE_RIGHT, "query"):
        value = payload.get(field)
        if isinstance(value, dict):
            found.append((field, [value]))
        elif isinstance(value, list):
            found.append((field, value))
    return found
