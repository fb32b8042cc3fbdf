"""A stored request body in the GenAI conventions' structure: system instructions, input messages.

Built from the body as stored (redacted), for chat completions, completions, Responses and
Messages requests (`gen-ai-input-messages.json`, `gen-ai-system-instructions.json` of 1.41.0).
Text, tool calls and tool results are kept; media is named by its URL when it is a web address,
else only by its part type: inline data never goes to a collector.
"""

from __future__ import annotations

from typing import Any

import orjson

Part = dict[str, Any]
Message = dict[str, Any]
# Only the latest messages are read: a span's 16 KiB attribute holds fewer than 700 (each is at
# least 24 characters), so reading 60,000 one-character ones would cost much and add nothing.
LATEST_MESSAGES = 1024


def listed(value: Any) -> list[Any]:
    """A list the body holds, or none: any other value a client sent is no list of messages."""
    return value if isinstance(value, list) else []


def _latest(value: Any) -> list[Any]:
    """The latest `LATEST_MESSAGES` of a body's list of messages (a string is one)."""
    return [value] if isinstance(value, str) else listed(value)[-LATEST_MESSAGES:]


def key_of(value: Any) -> Any:
    """A choice's or block's index as a dict key (a hostile one is no hashable number)."""
    return value if type(value) in (int, str) else 0


def text_part(text: str) -> Part:
    """A text part."""
    return {"type": "text", "content": text}


def tool_arguments(arguments: Any) -> Any:
    """Tool call arguments as the conventions show them: the JSON object a string holds."""
    if isinstance(arguments, str):
        try:
            parsed = orjson.loads(arguments)
            # Deeper than orjson writes back (a client's string may nest 1000 levels): the text.
            orjson.dumps(parsed)
        except (orjson.JSONDecodeError, orjson.JSONEncodeError):
            return arguments
        return parsed
    return arguments


def _media(kind: str, url: Any, modality: str) -> Part:
    if isinstance(url, dict):
        url = url.get("url")
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        return {"type": "uri", "modality": modality, "uri": url}
    return {"type": kind}


def _openai_part(part: Any) -> Part | None:
    """A chat or Responses content part (`text`, `input_text`, `image_url`, `input_image`...)."""
    if isinstance(part, str):
        return text_part(part)
    if not isinstance(part, dict) or not isinstance(part.get("type"), str):
        return None
    kind = part["type"]
    if isinstance(part.get("text"), str):
        return text_part(part["text"])
    if kind in ("image_url", "input_image"):
        return _media(kind, part.get("image_url"), "image")
    if kind == "video_url":
        return _media(kind, part.get("video_url"), "video")
    if kind in ("input_audio", "audio_url"):
        return _media(kind, part.get("audio_url"), "audio")
    return {"type": kind}


def _parts(content: Any) -> list[Part]:
    if isinstance(content, str):
        return [text_part(content)]
    if isinstance(content, list):
        return [p for p in map(_openai_part, content) if p is not None]
    return []


def _tool_response(content: Any) -> str | list[Part]:
    """A chat tool message's or Responses function output: its text, or its parts as parts."""
    return content if isinstance(content, str) else _parts(content)


def _tool_call(call: Any) -> Part | None:
    if not isinstance(call, dict):
        return None
    nested = call.get("function")
    function: dict[str, Any] = nested if isinstance(nested, dict) else call
    return {
        "type": "tool_call",
        "id": call.get("id") or call.get("call_id"),
        "name": function.get("name"),
        "arguments": tool_arguments(function.get("arguments")),
    }


def _chat_message(message: Any) -> Message | None:
    if not isinstance(message, dict):
        return None
    role = str(message.get("role") or "user")
    if role == "tool":
        response = {"type": "tool_call_response", "id": message.get("tool_call_id")}
        content = _tool_response(message.get("content"))
        return {"role": role, "parts": [response | {"response": content}]}
    parts = _parts(message.get("content"))
    parts += [p for p in map(_tool_call, listed(message.get("tool_calls"))) if p is not None]
    return {"role": role, "parts": parts}


def _chat(request: dict[str, Any]) -> tuple[None, list[Message]]:
    found = [m for m in map(_chat_message, _latest(request.get("messages"))) if m is not None]
    return None, found


def _completions(request: dict[str, Any]) -> tuple[None, list[Message]]:
    prompts = _latest(request.get("prompt"))
    # A list of prompts is several generations; token-id prompts have no text.
    return None, [{"role": "user", "parts": [text_part(p)]} for p in prompts if isinstance(p, str)]


def _responses_item(item: Any) -> Message | None:
    if isinstance(item, str):
        return {"role": "user", "parts": [text_part(item)]}
    if not isinstance(item, dict):
        return None
    kind = item.get("type")
    if kind == "function_call":
        return {"role": "assistant", "parts": [_tool_call(item)]}
    if kind == "function_call_output":
        part = {"type": "tool_call_response", "id": item.get("call_id")}
        return {"role": "tool", "parts": [part | {"response": _tool_response(item.get("output"))}]}
    if "role" in item:
        return {"role": str(item["role"]), "parts": _parts(item.get("content"))}
    return None


def _responses(request: dict[str, Any]) -> tuple[list[Part] | None, list[Message]]:
    instructions = request.get("instructions")
    system = [text_part(instructions)] if isinstance(instructions, str) else None
    items = _latest(request.get("input"))
    return system, [m for m in map(_responses_item, items) if m is not None]


def anthropic_block(block: Any, in_result: bool = False) -> Part | None:
    """An Anthropic content block as a part: text, tool use and result, thinking, media."""
    if isinstance(block, str):
        return text_part(block)
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return None
    kind = block["type"]
    if kind == "text" and isinstance(block.get("text"), str):
        return text_part(block["text"])
    if kind == "tool_use":
        return {
            "type": "tool_call",
            "id": block.get("id"),
            "name": block.get("name"),
            "arguments": block.get("input"),
        }
    if kind == "tool_result":
        part = {"type": "tool_call_response", "id": block.get("tool_use_id")}
        if in_result:
            # A result holds no results: not opened, so 500 nested ones are no deep recursion.
            return part
        content = block.get("content")
        if isinstance(content, str):
            return part | {"response": content}
        listed_blocks = (anthropic_block(b, in_result=True) for b in listed(content))
        return part | {"response": [p for p in listed_blocks if p is not None]}
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        return {"type": "reasoning", "content": block["thinking"]}
    if kind == "image":
        source = block.get("source")
        url = source.get("url") if isinstance(source, dict) else None
        return _media(kind, url, "image")
    return {"type": kind}


def anthropic_parts(content: Any) -> list[Part]:
    """Anthropic content (a string, or a list of blocks) as parts."""
    if isinstance(content, str):
        return [text_part(content)]
    if isinstance(content, list):
        return [p for p in map(anthropic_block, content) if p is not None]
    return []


def _messages(request: dict[str, Any]) -> tuple[list[Part] | None, list[Message]]:
    system = request.get("system")
    instructions = anthropic_parts(system) if system is not None else None
    found = []
    for message in _latest(request.get("messages")):
        if isinstance(message, dict):
            role = str(message.get("role") or "user")
            found.append({"role": role, "parts": anthropic_parts(message.get("content"))})
    return instructions or None, found


READERS = {
    "/v1/chat/completions": _chat,
    "/v1/completions": _completions,
    "/v1/responses": _responses,
    "/v1/messages": _messages,
}


def input_messages(endpoint: str, stored: str) -> tuple[list[Part] | None, list[Message] | None]:
    """The system instructions and input messages of a stored request (None: not of this form)."""
    reader = READERS.get(endpoint)
    if reader is None:
        return None, None
    try:
        request = orjson.loads(stored)
    except orjson.JSONDecodeError:
        return None, None
    if not isinstance(request, dict):
        return None, None
    system, messages = reader(request)
    return system, messages or None
