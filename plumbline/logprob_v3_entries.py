"""A v3 row's arrays and its vocabulary keys as the chat entries a v1 row reads as."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from plumbline.logprob_v3 import Unpacked

SEPARATOR = b"\x00"  # between a key's token string and its `bytes` (never raw in JSON)


def _tokens(ids: list[int], keys: Mapping[int, bytes]) -> dict[int, tuple[str, Any]]:
    """Each id's token string and `bytes` value, as a JSON reader returns them."""
    if not ids:
        return {}
    try:
        split = [keys[i].split(SEPARATOR, 1) for i in ids]
        strings = orjson.loads(b'["' + b'","'.join(s for s, _ in split) + b'"]')
        values = orjson.loads(b"[" + b",".join(b for _, b in split) + b"]")
    except (KeyError, ValueError, orjson.JSONDecodeError):
        raise ValueError("a v3 logprob row refers to a vocabulary id with no usable key") from None
    return dict(zip(ids, zip(strings, values, strict=True), strict=True))


def _alternatives(found: Unpacked, tokens: dict[int, tuple[str, Any]]) -> list[list[Any]]:
    if found.alt_ids is None or found.alt_logprobs is None:
        return [[] for _ in range(found.ids.size)]
    out = []
    for ids, values in zip(found.alt_ids.tolist(), found.alt_logprobs.tolist(), strict=True):
        row = []
        for i, value in zip(ids, values, strict=True):
            token, raw = tokens[i]
            row.append({"token": token, "logprob": value, "bytes": _copy(raw)})
        out.append(row)
    return out


def _copy(raw: Any) -> Any:
    return list(raw) if isinstance(raw, list) else raw


def entries(found: Unpacked, keys: Mapping[int, bytes]) -> dict[int, list[dict[str, Any]]]:
    """Choice index -> chat entries; alternatives `[]` where the top-k was dropped."""
    tokens = _tokens(sorted(found.token_ids()), keys)
    tops = _alternatives(found, tokens)
    rows = []
    for i, value, top in zip(found.ids.tolist(), found.logprobs.tolist(), tops, strict=True):
        token, raw = tokens[i]
        rows.append({"token": token, "logprob": value, "bytes": _copy(raw), "top_logprobs": top})
    out, at = {}, 0
    for index, count in found.choices:
        out[index] = rows[at : at + count]
        at += count
    return out
