"""Logprob formats, the backend's JSON per choice, and the v1 storage form (JSON, zstd).

v1 rows hold the backend's JSON, zstd-compressed (`LPZ1`); v2 rows a sampled payload and a
separate top-k payload (plumbline.logprob_packing). plumbline.logprob_read reads both. This
module stays free of numpy: the proxy imports its format names.
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


def parsed_choices(fmt: str, chunks: Iterable[tuple[int, bytes]]) -> dict[int, Any]:
    """Choice index -> logprobs as sent: chat entry lists or merged completion objects."""
    if fmt == CHAT:
        return {i: orjson.loads(doc) for i, doc in sorted(chat_items(chunks).items())}
    return dict(sorted(completion_objects(chunks).items()))


def per_choice_json(fmt: str, chunks: Iterable[tuple[int, bytes]]) -> bytes:
    """One JSON object `{"<index>": logprobs}` for all choices of a call (the v1 document)."""
    if fmt == CHAT:
        arrays = chat_items(chunks)
        parts = [b'"' + str(i).encode() + b'":' + arrays[i] for i in sorted(arrays)]
        return b"{" + b",".join(parts) + b"}"
    return orjson.dumps({str(k): v for k, v in sorted(completion_objects(chunks).items())})


def encode(document: bytes) -> bytes:
    """The v1 form of a per-choice logprobs document (rows written before v2 hold this)."""
    return _MAGIC + zstandard.ZstdCompressor(level=1).compress(document)


def decode(payload: bytes) -> dict[int, Any]:
    """Choice index -> logprobs of a v1 payload, exactly as sent (both forms: logprob_read)."""
    if payload[:4] != _MAGIC:
        raise ValueError("not a Plumbline logprob payload")
    document = zstandard.ZstdDecompressor().decompress(payload[4:])
    try:
        parsed = orjson.loads(document)
    except orjson.JSONDecodeError:
        # v1 keeps a backend's bytes as sent: bytes that are no JSON (invalid UTF-8, say) read
        # as no logprobs, so the call itself stays readable.
        return {}
    return {int(k): v for k, v in parsed.items()}
