"""The URLs of Anthropic content-block sources, which vLLM loads as media.

vLLM's Messages API turns an image block whose `source` is `{"type": "url", "url": ...}` into
an `image_url` part and fetches it from the GPU host (`anthropic/serving.py`
`_convert_image_source_to_url`), in a message's blocks and inside a `tool_result`'s content;
any other source becomes a `data:` URL. Every block with a URL source is found, whatever its
type (a `document` block too), so the model's `allowed_media_domains` hold for them as for chat.
"""

from __future__ import annotations

from typing import Any


def _source_url(block: Any, place: str) -> list[tuple[str, str]]:
    source = block.get("source") if isinstance(block, dict) else None
    if not isinstance(source, dict) or source.get("type") != "url":
        return []
    url = source.get("url", "")
    # A URL that is not a string is refused like any URL outside the allowed hosts.
    return [(f"{place}.source.url", url if isinstance(url, str) else repr(url)[:100])]


def _blocks(content: Any, place: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if not isinstance(content, list):
        return found
    for c, block in enumerate(content):
        where = f"{place}[{c}]"
        found += _source_url(block, where)
        inner = block.get("content") if isinstance(block, dict) else None
        if isinstance(inner, list):
            # A tool_result's content: its image items are fetched alike.
            for i, item in enumerate(inner):
                found += _source_url(item, f"{where}.content[{i}]")
    return found


def source_urls(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """Every URL source in the request's `messages` and `system` blocks, with its place."""
    found = _blocks(payload.get("system"), "system")
    messages = payload.get("messages")
    if isinstance(messages, list):
        for m, message in enumerate(messages):
            content = message.get("content") if isinstance(message, dict) else None
            found += _blocks(content, f"messages[{m}].content")
    return found
