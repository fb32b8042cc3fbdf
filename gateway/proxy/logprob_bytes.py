"""Find and cut the `logprobs` objects out of a backend's JSON without parsing them.

vLLM writes each choice as `...,"logprobs":{...},"finish_reason":...`. A bare `"` only ever
delimits a JSON string, so `"logprobs":{` and `},"finish_reason":` cannot occur inside token
text: slicing between them is exact. Layouts that do not fit return None, and callers parse.
"""

from __future__ import annotations

KEY = b'"logprobs":'
START = KEY + b"{"
END = b'},"finish_reason":'
NULL = KEY + b"null"
CHAT_PREFIX = b'{"content":['
CHAT_SUFFIX = b"]}"


def spans(data: bytes) -> list[tuple[int, int]] | None:
    """(start of the key, end of the object) of every non-null `logprobs`, in document order."""
    found: list[tuple[int, int]] = []
    position = 0
    while (start := data.find(START, position)) >= 0:
        end = data.find(END, start)
        if end < 0 or data.find(START, start + 1, end) >= 0:
            return None
        found.append((start, end + 1))
        position = end + 1
    return found


def without(data: bytes, found: list[tuple[int, int]]) -> bytes:
    """`data` with each span replaced by `"logprobs":null`, as if none had been asked for."""
    parts: list[bytes] = []
    previous = 0
    for start, end in found:
        parts.append(data[previous:start])
        parts.append(NULL)
        previous = end
    parts.append(data[previous:])
    return b"".join(parts)


def value(data: bytes, span: tuple[int, int]) -> bytes:
    """The JSON object of one span."""
    return data[span[0] + len(KEY) : span[1]]


def chat_items(obj: bytes) -> bytes | None:
    """The items inside `{"content":[...]}` (empty bytes for none); None for another shape."""
    if obj.startswith(CHAT_PREFIX) and obj.endswith(CHAT_SUFFIX):
        return obj[len(CHAT_PREFIX) : -len(CHAT_SUFFIX)]
    return None


def span_chat_items(data: bytes, span: tuple[int, int]) -> bytes | None:
    """`chat_items` of the object at `span` of `data`, without copying the object first."""
    start, end = span[0] + len(KEY), span[1]
    if data.startswith(CHAT_PREFIX, start, end) and data.endswith(CHAT_SUFFIX, start, end):
        return data[start + len(CHAT_PREFIX) : end - len(CHAT_SUFFIX)]
    return None


def positions(items: bytes) -> int:
    """How many token positions the items of a chat `content` array hold."""
    return items.count(b'"top_logprobs":')
