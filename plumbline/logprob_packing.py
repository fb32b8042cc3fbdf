"""The stored form of a call's logprobs (v2): a sampled payload and a separate top-k payload.

Both are a small header and per-choice parts, each compressed on its own. A chat choice laid
out as vLLM writes it is stored as columns (plumbline.logprob_columns); anything else, and
completion logprobs, as JSON split into its sampled fields and its `top_logprobs`, so the
top-k can always be dropped alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
import zstandard

from plumbline import logprob_columns

SAMPLED_MAGIC = b"LPC2"
TOPK_MAGIC = b"LPK2"
CHAT, COLUMNS, JSON, SPLIT = "chat", "c", "j", "s"
LEVEL = 3  # the frames are small: level 3 costs little more than 1 and saves a few percent
MAX_FRAME = 1 << 30


@dataclass(slots=True)
class Packed:
    """Both payloads (top-k None when no choice has alternatives) and the summary's values."""

    payload: bytes
    topk: bytes | None
    sampled: np.ndarray | None  # every choice's sampled logprobs, when all were columns
    top: np.ndarray | None  # (positions, k) alternatives, when every position has k


def _frame(magic: bytes, parts: list[tuple[int, str, bytes]], topk: bool = False) -> bytes:
    listed = [[index, kind, len(data)] for index, kind, data in parts]
    header = orjson.dumps({"parts": listed, "topk": topk})
    return magic + len(header).to_bytes(4, "little") + header + b"".join(d for _, _, d in parts)


def _header(magic: bytes, frame: bytes) -> tuple[dict[str, Any], bytes]:
    if frame[:4] != magic:
        raise ValueError("not a Plumbline logprob payload")
    size = int.from_bytes(frame[4:8], "little")
    try:
        header: dict[str, Any] = orjson.loads(frame[8 : 8 + size])
    except orjson.JSONDecodeError:
        raise ValueError("not a Plumbline logprob payload: its header is corrupt") from None
    return header, frame[8 + size :]


def _unframe(magic: bytes, frame: bytes) -> dict[int, tuple[str, bytes]]:
    header, body = _header(magic, frame)
    at, parts = 0, {}
    for index, kind, length in header["parts"]:
        parts[int(index)] = (kind, body[at : at + length])
        at += length
    return parts


def _zjson(value: Any) -> bytes:
    return zstandard.ZstdCompressor(level=LEVEL).compress(orjson.dumps(value))


def _unzjson(data: bytes) -> Any:
    try:
        return orjson.loads(
            zstandard.ZstdDecompressor().decompress(data, max_output_size=MAX_FRAME)
        )
    except (zstandard.ZstdError, orjson.JSONDecodeError):
        raise ValueError("not a Plumbline logprob payload: a part is corrupt") from None


def _split_json(fmt: str, value: Any) -> tuple[bytes, bytes | None]:
    """Compressed JSON of a choice's sampled fields and of its alternatives (None: kept whole)."""
    if fmt != CHAT and isinstance(value, dict) and list(value)[-1:] == ["top_logprobs"]:
        sampled = {k: v for k, v in value.items() if k != "top_logprobs"}
        return _zjson(sampled), _zjson(value["top_logprobs"])
    return _zjson(value), None


def pack(fmt: str, choices: dict[int, Any]) -> Packed:
    """The stored form of per-choice logprobs (chat entry lists or completion objects)."""
    sampled: list[tuple[int, str, bytes]] = []
    topk: list[tuple[int, str, bytes]] = []
    values: list[np.ndarray] = []
    matrices: list[np.ndarray | None] = []
    for index in sorted(choices):
        value = choices[index]
        try:
            if fmt != CHAT or type(value) is not list:
                raise logprob_columns.Irregular(fmt)
            columns = logprob_columns.pack_chat(value)
        except logprob_columns.Irregular:
            whole, alternatives = _split_json(fmt, value)
            sampled.append((index, JSON if alternatives is None else SPLIT, whole))
            if alternatives is not None:
                topk.append((index, JSON, alternatives))
            matrices.append(None)
            continue
        sampled.append((index, COLUMNS, columns.sampled))
        if columns.topk is not None:
            topk.append((index, COLUMNS, columns.topk))
        values.append(columns.sampled_logprobs)
        matrices.append(columns.top_logprobs)
    every = len(values) == len(sampled) and bool(values)
    widths = {m.shape[1] if m is not None else -1 for m in matrices}
    return Packed(
        _frame(SAMPLED_MAGIC, sampled, topk=bool(topk)),
        _frame(TOPK_MAGIC, topk) if topk else None,
        np.concatenate(values) if every else None,
        np.concatenate(matrices) if every and len(widths) == 1 and -1 not in widths else None,  # type: ignore[arg-type]
    )


def had_topk(payload: bytes) -> bool:
    """Whether a sampled payload's calls had alternatives (stored in the top-k payload)."""
    return bool(_header(SAMPLED_MAGIC, payload)[0]["topk"])


def unpack(payload: bytes, topk: bytes | None) -> dict[int, Any]:
    """Choice index -> logprobs (alternatives `[]` where the top-k was dropped)."""
    alternatives = _unframe(TOPK_MAGIC, topk) if topk is not None else {}
    out: dict[int, Any] = {}
    for index, (kind, data) in _unframe(SAMPLED_MAGIC, payload).items():
        top_kind, top = alternatives.get(index, (None, None))
        if kind == COLUMNS:
            out[index] = logprob_columns.unpack_chat(data, top if top_kind == COLUMNS else None)
            continue
        value = _unzjson(data)
        if kind == SPLIT:
            value["top_logprobs"] = _unzjson(top) if top is not None else []
        out[index] = value
    return out
