"""Find and cut the output logprobs of Responses JSON as bytes, without parsing them.

vLLM writes each token's entry as `{"token":..,["bytes":[..],]"logprob":..,"top_logprobs":
[{"token":..,["bytes":[..],]"logprob":..},..]}`. The pattern below matches exactly that
grammar from a real `"logprobs":[{` key (a bare `"` only delimits JSON strings, so the key
cannot occur inside token text); when any such key is not matched whole, callers parse.
"""

from __future__ import annotations

import re
from typing import Any

_STRING = rb'"(?:[^"\\]|\\.)*"'
_NUMBER = rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_BYTES = rb'(?:"bytes":(?:\[[0-9,]*\]|null),)?'
_ALTERNATIVE = rb'\{"token":' + _STRING + rb"," + _BYTES + rb'"logprob":' + _NUMBER + rb"\}"
_ALTERNATIVES = rb"\[(?:" + _ALTERNATIVE + rb"(?:," + _ALTERNATIVE + rb")*)?\]"
_ENTRY = (
    rb'\{"token":'
    + _STRING
    + rb","
    + _BYTES
    + rb'"logprob":'
    + _NUMBER
    + rb',"top_logprobs":'
    + _ALTERNATIVES
    + rb"\}"
)
ARRAY = re.compile(rb'"logprobs":\[(' + _ENTRY + rb"(?:," + _ENTRY + rb")*)\]")
OPEN = b'"logprobs":[{'
EMPTY = b'"logprobs":[]'
NULL = b'"logprobs":null'
TOKEN = b'"top_logprobs":['


def arrays(data: bytes) -> list[re.Match[bytes]] | None:
    """Every non-empty `logprobs` array in `data`, or None if one is not in vLLM's layout."""
    if OPEN not in data:
        return []
    found = list(ARRAY.finditer(data))
    return found if len(found) == data.count(OPEN) else None


def replaced(data: bytes, found: list[re.Match[bytes]], by: bytes) -> bytes:
    """`data` with each found array replaced by `by`."""
    parts: list[bytes] = []
    previous = 0
    for match in found:
        parts.append(data[previous : match.start()])
        parts.append(by)
        previous = match.end()
    parts.append(data[previous:])
    return b"".join(parts)


def positions(items: bytes) -> int:
    """How many token positions the raw items of one array hold."""
    return items.count(TOKEN)


def echo_nulled(data: bytes, k: int) -> bytes | None:
    """The response object's `top_logprobs` echo of k set to null; None if not found once."""
    marker = b'"top_logprobs":' + str(k).encode() + b',"truncation":'
    if data.count(marker) != 1:
        return None
    return data.replace(marker, b'"top_logprobs":null,"truncation":')


def strip_parsed(value: Any, empty: bool) -> None:
    """Set every non-empty `logprobs` list in a parsed event to [] (`empty`) or None."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "logprobs" and isinstance(item, list) and item:
                value[key] = [] if empty else None
            else:
                strip_parsed(item, empty)
    elif isinstance(value, list):
        for item in value:
            strip_parsed(item, empty)
