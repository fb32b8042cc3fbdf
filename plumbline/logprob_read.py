"""Read a stored `call_logprobs` row of either form: v1 (JSON, zstd) or v2 (columns)."""

from __future__ import annotations

from typing import Any

from plumbline import logprob_codec, logprob_packing


def decode(payload: bytes, topk: bytes | None = None) -> dict[int, Any]:
    """Choice index -> logprobs: v1 exactly as sent; v2 with alternatives within 0.001 nats."""
    if payload[:4] == logprob_packing.SAMPLED_MAGIC:
        return logprob_packing.unpack(payload, topk)
    return logprob_codec.decode(payload)


def topk_expired(payload: bytes, topk: bytes | None) -> bool:
    """Whether a v2 row's alternatives were dropped (a v1 row keeps them in its payload)."""
    if topk is not None or payload[:4] != logprob_packing.SAMPLED_MAGIC:
        return False
    return logprob_packing.had_topk(payload)
