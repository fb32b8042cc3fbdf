"""Storage encoding of a call's logprobs: the backend's own JSON, per choice, zstd-compressed.

The hot path never parses logprobs: it slices the JSON the backend sent. Storing those bytes
keeps them exactly as sent, and zstd at level 1 makes them small (about 65 bytes per token with
top-5 alternatives) for a fraction of the CPU a parse-and-repack encoding costs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson
import zstandard

CHAT = "chat"
COMPLETION = "completion"
_MAGIC = b"LPZ1"


def chat_items(chunks: Iterable[tuple[int, bytes]]) -> dict[int, bytes]:
    """Join the raw items of each choice's `logprobs.content` arrays into one array per choice."""
    joined: dict[int, list[bytes]] = {}
    for index, items in chunks:
        if items:
            joined.setdefault(index, []).append(items)
    return {index: b"[" + b",".join(parts) + b"]" for index, parts in joined.items()}


def completion_objects(chunks: Iterable[tuple[int, bytes]]) -> dict[int, dict[str, list[Any]]]:
    """Merge the per-chunk completion logprobs objects of each choice into one."""
    merged: dict[int, dict[str, list[Any]]] = {}
    for index, raw in chunks:
        part = orjson.loads(raw)
        current = merged.setdefault(
            index, {"text_offset": [], "token_logprobs": [], "tokens": [], "top_logprobs": []}
        )
        for key, values in current.items():
            values.extend(part.get(key) or [])
    return merged


def per_choice_json(fmt: str, chunks: Iterable[tuple[int, bytes]]) -> bytes:
    """One JSON object `{"<index>": logprobs}` for all choices of a call."""
    if fmt == CHAT:
        arrays = chat_items(chunks)
        parts = [b'"' + str(i).encode() + b'":' + arrays[i] for i in sorted(arrays)]
        return b"{" + b",".join(parts) + b"}"
    return orjson.dumps({str(k): v for k, v in sorted(completion_objects(chunks).items())})


def encode(document: bytes) -> bytes:
    """Compress a per-choice logprobs document."""
    return _MAGIC + zstandard.ZstdCompressor(level=1).compress(document)


def decode(payload: bytes) -> dict[int, Any]:
    """Choice index -> logprobs exactly as the backend sent them."""
    if payload[:4] != _MAGIC:
        raise ValueError("not a Plumbline logprob payload")
    document = zstandard.ZstdDecompressor().decompress(payload[4:])
    return {int(k): v for k, v in orjson.loads(document).items()}
