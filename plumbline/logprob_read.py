"""Read a stored `call_logprobs` row of any form: v1 (JSON), v2 (columns), v3 (vocabulary ids).

v3 rows name their tokens by vocabulary id: `read_rows` resolves the ids of a whole batch of
rows in one query; `decode` takes the keys (`keys_for` looks them up for one row).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from plumbline import logprob_codec, logprob_packing, logprob_v3, logprob_v3_entries
from plumbline.repositories import logprob_vocab


def is_v3(payload: bytes) -> bool:
    """Whether a row is in the v3 form (its tokens are vocabulary ids)."""
    return payload[:4] == logprob_v3.SAMPLED_MAGIC


def decode(
    payload: bytes, topk: bytes | None = None, keys: Mapping[int, bytes] | None = None
) -> dict[int, Any]:
    """Choice index -> logprobs: v1 exactly as sent; v2 and v3 with alternatives within 0.001.

    A v3 row needs `keys`, its vocabulary ids' keys (`keys_for`, or `read_rows` for many).
    """
    if payload[:4] == logprob_packing.SAMPLED_MAGIC:
        return logprob_packing.unpack(payload, topk)
    if is_v3(payload):
        if keys is None:
            raise ValueError("a v3 logprob row is read with its vocabulary keys (keys_for)")
        return dict(logprob_v3_entries.entries(logprob_v3.unpack(payload, topk), keys))
    return logprob_codec.decode(payload)


def keys_for(db: Connection | Session, payload: bytes, topk: bytes | None) -> dict[int, bytes]:
    """The vocabulary keys a row refers to (none for v1 and v2 rows): one query."""
    if not is_v3(payload):
        return {}
    return logprob_vocab.keys_of(db, logprob_v3.unpack(payload, topk).token_ids())


def read_rows(
    db: Connection | Session, rows: Sequence[tuple[bytes, bytes | None]]
) -> list[dict[int, Any]]:
    """Each (payload, topk) row decoded; the ids of all v3 rows resolved in one query."""
    unpacked = {i: logprob_v3.unpack(p, t) for i, (p, t) in enumerate(rows) if is_v3(p)}
    ids: set[int] = set()
    for v3_row in unpacked.values():
        ids |= v3_row.token_ids()
    keys = logprob_vocab.keys_of(db, ids) if ids else {}
    out: list[dict[int, Any]] = []
    for index, (payload, topk) in enumerate(rows):
        found = unpacked.get(index)
        if found is None:
            out.append(decode(payload, topk))
        else:
            out.append(dict(logprob_v3_entries.entries(found, keys)))
    return out


def topk_expired(payload: bytes, topk: bytes | None) -> bool:
    """Whether a v2 or v3 row's alternatives were dropped (a v1 row keeps them in its payload)."""
    if topk is not None:
        return False
    if payload[:4] == logprob_packing.SAMPLED_MAGIC:
        return logprob_packing.had_topk(payload)
    return is_v3(payload) and logprob_v3.had_topk(payload)
