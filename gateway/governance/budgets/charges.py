"""What a call reserves from its budgets at admission, and what it is charged once recorded."""

from __future__ import annotations

import math

from gateway.config import ModelConfig
from gateway.metering.record import CallRecord
from gateway.metering.usage_counts import usage_counts

# Float products a hair above a whole micro-unit are not rounded up to the next one.
ROUNDING_SLACK = 1e-6


def _whole(micros: float) -> int:
    return max(0, math.ceil(micros - ROUNDING_SLACK))


def reservation(
    model: ModelConfig, body_bytes: int, completion_tokens: int, bytes_per_token: float
) -> int:
    """Micro-units held at admission: the prompt (estimated from the body) and max_tokens."""
    price = model.price
    prompt_tokens = math.ceil(body_bytes / bytes_per_token)
    # Prices are per million tokens: per token, a price is that many micro-units.
    return _whole(
        prompt_tokens * price.input_per_million + completion_tokens * price.output_per_million
    )


def recorded_cost(record: CallRecord) -> int:
    """The recorded cost (input, output, audio: as its `calls` row has it) in micro-units."""
    prompt, completion, _, _ = usage_counts(record)
    micros = (prompt or 0) * record.price_in + (completion or 0) * record.price_out
    if record.audio_seconds is not None:
        micros += record.audio_seconds / 60 * record.price_audio_minute * 1_000_000
    return _whole(micros)
