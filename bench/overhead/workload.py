"""The request mix and the simulator timings the overhead scenario sends and sets."""

from __future__ import annotations

from typing import Any

from bench.harness.load import Request

# Zero model time: what is left of a non-streaming call's latency is the servers' own.
ZERO_TIME = {
    "prefill_ms_per_token": 0.0,
    "decode_ms_per_token": 0.0,
    "decode_ms_per_extra_seq": 0.0,
    "max_num_seqs": 4096,
}
# Streams need a decode cadence, or every token arrives at once and ITL means nothing.
STREAM_TIME = {**ZERO_TIME, "decode_ms_per_token": 5.0}
# The capacity search: every call, streamed or not, spends 200 x 2 ms in the "model".
MIX_TIME = {**ZERO_TIME, "decode_ms_per_token": 2.0}

QUESTION = [{"role": "user", "content": "Summarise the termination clause of the contract."}]
PLAIN_BODY: dict[str, Any] = {
    "model": "tiny",
    "messages": QUESTION,
    "max_tokens": 200,
    "ignore_eos": True,
    "logprobs": True,
    "top_logprobs": 5,
    # Seeded, so the simulator reuses the generated answer and stays out of the way.
    "seed": 7,
}
STREAM_BODY = {**PLAIN_BODY, "stream": True}
# The memory curve: many short calls (16 tokens, still with top-5 logprobs).
SHORT_BODY = {**PLAIN_BODY, "max_tokens": 16}


def plain() -> Request:
    """200-token non-streaming call with top-5 logprobs."""
    return Request.of(PLAIN_BODY)


def stream() -> Request:
    """The same call, streamed."""
    return Request.of(STREAM_BODY)


def short() -> Request:
    """A 16-token non-streaming call with top-5 logprobs."""
    return Request.of(SHORT_BODY)
