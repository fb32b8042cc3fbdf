"""Compact, exact encoding of the logprobs a backend sent: a string table plus packed arrays.

vLLM computes logprobs in float32, so they are stored as float32 when every value survives the
round trip, and as float64 otherwise; either way decoding gives back exactly what was sent.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterable
from typing import Any

import orjson

CHAT = "chat"
COMPLETION = "completion"
_MAGIC = b"LP1"
_NULL_TOP = 0xFFFF


class _Strings:
    """Interns strings to small integers in order of first use."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def id(self, value: str) -> int:
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.index)
        return found


def _float_array(values: list[float]) -> array[float]:
    narrow = array("f", values)
    return narrow if list(narrow) == values else array("d", values)


def _pack_floats(out: bytearray, values: list[float]) -> None:
    packed = _float_array(values)
    out += struct.pack("<BI", packed.itemsize, len(packed))
    out += packed.tobytes()


def _unpack_floats(buf: memoryview, pos: int) -> tuple[list[float], int]:
    width, count = struct.unpack_from("<BI", buf, pos)
    pos += 5
    values = array("f" if width == 4 else "d")
    values.frombytes(buf[pos : pos + width * count])
    return values.tolist(), pos + width * count


def _pack_ints(out: bytearray, values: list[int]) -> None:
    packed = array("I", values)
    out += struct.pack("<I", len(packed))
    out += packed.tobytes()


def _unpack_ints(buf: memoryview, pos: int) -> tuple[list[int], int]:
    (count,) = struct.unpack_from("<I", buf, pos)
    pos += 4
    values = array("I")
    values.frombytes(buf[pos : pos + 4 * count])
    return values.tolist(), pos + 4 * count


def merge_choices(fmt: str, chunks: Iterable[tuple[int, Any]]) -> dict[int, Any]:
    """Join per-chunk logprobs into one logprobs object per choice index."""
    merged: dict[int, Any] = {}
    for index, part in chunks:
        if fmt == CHAT:
            merged.setdefault(index, []).extend(part)
        else:
            current = merged.setdefault(
                index, {"text_offset": [], "token_logprobs": [], "tokens": [], "top_logprobs": []}
            )
            for key in current:
                current[key].extend(part.get(key) or [])
    return merged


def _chat_rows(
    entries: list[dict[str, Any]], strings: _Strings
) -> tuple[list[Any], dict[str, Any]]:
    tokens, logprobs, counts, top_tokens, top_logprobs = [], [], [], [], []
    overrides: dict[str, Any] = {}
    for pos, entry in enumerate(entries):
        token = entry["token"]
        tokens.append(strings.id(token))
        logprobs.append(entry["logprob"])
        if entry.get("bytes") != list(token.encode()):
            overrides[str(pos)] = entry.get("bytes")
        top = entry.get("top_logprobs")
        if top is None:
            counts.append(_NULL_TOP)
            continue
        counts.append(len(top))
        for j, alt in enumerate(top):
            top_tokens.append(strings.id(alt["token"]))
            top_logprobs.append(alt["logprob"])
            if alt.get("bytes") != list(alt["token"].encode()):
                overrides[f"{pos}:{j}"] = alt.get("bytes")
    return [tokens, logprobs, counts, top_tokens, top_logprobs], overrides


def _is_plain_chat(entries: Any) -> bool:
    keys = {"token", "logprob", "bytes", "top_logprobs"}
    return isinstance(entries, list) and all(
        isinstance(e, dict) and set(e) == keys and isinstance(e["logprob"], float) for e in entries
    )


def encode(fmt: str, per_choice: dict[int, Any]) -> bytes:
    """Encode merged logprobs; unusual shapes fall back to exact JSON."""
    if fmt != CHAT or not all(_is_plain_chat(v) for v in per_choice.values()):
        return b"J" + orjson.dumps({str(k): v for k, v in per_choice.items()})
    strings = _Strings()
    body = bytearray()
    meta: dict[str, Any] = {}
    for index, entries in per_choice.items():
        (tokens, logprobs, counts, top_tokens, top_logprobs), overrides = _chat_rows(
            entries, strings
        )
        body += struct.pack("<H", index)
        _pack_ints(body, tokens)
        _pack_floats(body, logprobs)
        _pack_ints(body, counts)
        _pack_ints(body, top_tokens)
        _pack_floats(body, top_logprobs)
        if overrides:
            meta[str(index)] = overrides
    header = orjson.dumps({"s": list(strings.index), "o": meta, "c": len(per_choice)})
    return _MAGIC + struct.pack("<I", len(header)) + header + bytes(body)


def _bytes_of(overrides: dict[str, Any], key: str, token: str) -> Any:
    return overrides[key] if key in overrides else list(token.encode())


def _decode_chat_choice(
    buf: memoryview, pos: int, strings: list[str], overrides: dict[str, Any]
) -> tuple[list[dict[str, Any]], int]:
    tokens, pos = _unpack_ints(buf, pos)
    logprobs, pos = _unpack_floats(buf, pos)
    counts, pos = _unpack_ints(buf, pos)
    top_tokens, pos = _unpack_ints(buf, pos)
    top_logprobs, pos = _unpack_floats(buf, pos)
    entries: list[dict[str, Any]] = []
    cursor = 0
    for p, (token_id, logprob, count) in enumerate(zip(tokens, logprobs, counts, strict=True)):
        token = strings[token_id]
        top: list[dict[str, Any]] | None = None
        if count != _NULL_TOP:
            top = []
            for j in range(count):
                alt = strings[top_tokens[cursor]]
                top.append(
                    {
                        "token": alt,
                        "logprob": top_logprobs[cursor],
                        "bytes": _bytes_of(overrides, f"{p}:{j}", alt),
                    }
                )
                cursor += 1
        entries.append(
            {
                "token": token,
                "logprob": logprob,
                "bytes": _bytes_of(overrides, str(p), token),
                "top_logprobs": top,
            }
        )
    return entries, pos


def decode(payload: bytes) -> dict[int, Any]:
    """Invert `encode`: choice index -> logprobs exactly as the backend sent them."""
    if payload[:1] == b"J":
        return {int(k): v for k, v in orjson.loads(payload[1:]).items()}
    if payload[:3] != _MAGIC:
        raise ValueError("not a Plumbline logprob payload")
    buf = memoryview(payload)
    (header_len,) = struct.unpack_from("<I", buf, 3)
    header = orjson.loads(bytes(buf[7 : 7 + header_len]))
    pos = 7 + header_len
    result: dict[int, Any] = {}
    for _ in range(header["c"]):
        (index,) = struct.unpack_from("<H", buf, pos)
        entries, pos = _decode_chat_choice(
            buf, pos + 2, header["s"], header["o"].get(str(index), {})
        )
        result[index] = entries
    return result


def token_count(fmt: str, per_choice: dict[int, Any]) -> int:
    """How many sampled (or echoed) positions the logprobs cover."""
    if fmt == CHAT:
        return sum(len(v) for v in per_choice.values())
    return sum(len(v.get("tokens") or []) for v in per_choice.values())
