"""Cost and compute estimates of a call from its token counts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CallCost:
    """Input and output cost, and the compute the call needed."""

    input_cost: float | None
    output_cost: float | None
    flops_estimate: float | None
    decode_floor_ms: float | None


def call_cost(
    prompt_tokens: int | None,
    completion_tokens: int | None,
    *,
    price_in: float,
    price_out: float,
    parameters: float | None,
    weight_bytes: float | None,
    memory_bandwidth: float | None,
) -> CallCost:
    """Price tokens per million; FLOPs as 2 x parameters per token; decode floor from bandwidth."""
    input_cost = prompt_tokens * price_in / 1e6 if prompt_tokens is not None else None
    output_cost = completion_tokens * price_out / 1e6 if completion_tokens is not None else None
    flops = None
    if parameters and prompt_tokens is not None and completion_tokens is not None:
        flops = 2.0 * parameters * (prompt_tokens + completion_tokens)
    floor = None
    if weight_bytes and memory_bandwidth and completion_tokens is not None:
        # Each decode step reads every weight once: the batch-1 physical lower bound.
        floor = weight_bytes / memory_bandwidth * completion_tokens * 1000
    return CallCost(input_cost, output_cost, flops, floor)
