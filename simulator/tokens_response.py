"""`/inference/v1/generate` bodies and SSE chunks (token ids out), key for key as vLLM 0.32."""

from __future__ import annotations

from typing import Any

import orjson

from simulator.choices import Choice, ResponseJob
from simulator.sse import DONE
from simulator.tokenizer import Tokenizer


def _versions(count: int) -> list[dict[str, Any]]:
    # One weight version served every token (no weight update ran meanwhile).
    return [{"version": "default", "start": 0, "end": count}]


class TokensFormatter:
    """Formats one generate request's stream chunks and final body."""

    def __init__(self, job: ResponseJob, tokenizer: Tokenizer) -> None:
        self.job = job

    def head(self) -> bytes:
        """Streams start directly with tokens."""
        return b""

    def _choice(self, choice: Choice, start: int, end: int, finished: bool) -> dict[str, Any]:
        output = choice.output
        return {
            "index": choice.index,
            "finish_reason": output.finish_reason if finished else None,
            "stop_reason": output.stop_reason if finished else None,
            "token_ids": output.token_ids[start:end],
            "routed_experts": None,
            "sampling_mask": None,
            "weight_versions": _versions(len(output.token_ids)) if finished else None,
            "logprobs": None,
        }

    def tokens(self, choice: Choice, start: int, end: int) -> bytes:
        """One chunk carrying tokens [start, end) of a choice; the last one finishes it."""
        finished = end >= len(choice.output.token_ids)
        data = {
            "request_id": self.job.options.response_id,
            "usage": None,
            "output_mode": "tokens",
            "choices": [self._choice(choice, start, end, finished)],
        }
        return b"data: " + orjson.dumps(data) + b"\n\n"

    def closing(self) -> bytes:
        """The usage chunk when asked for (cached tokens only), then [DONE]."""
        if not self.job.options.include_usage:
            return DONE
        usage = self.job.usage(created_cache_tokens=None)
        details = usage.get("prompt_tokens_details")
        slim = {key: usage[key] for key in ("prompt_tokens", "total_tokens", "completion_tokens")}
        if isinstance(details, dict):
            slim["prompt_tokens_details"] = {"cached_tokens": details.get("cached_tokens")}
        data = {
            "request_id": self.job.options.response_id,
            "usage": slim,
            "output_mode": "tokens",
            "choices": [],
        }
        return b"data: " + orjson.dumps(data) + b"\n\n" + DONE

    def body(self) -> bytes:
        """The non-streaming response, every key present."""
        options = self.job.options
        choices = [
            self._choice(choice, 0, len(choice.output.token_ids), True)
            for choice in self.job.choices
        ]
        data = {
            "request_id": options.response_id,
            "model": options.model,
            "created": options.created,
            "usage": self.job.usage(created_cache_tokens=None),
            "prompt_logprobs": None,
            "prompt_token_id_logprobs": None,
            "prompt_token_ids": None,
            "mm_placeholders": None,
            "metrics": None,
            "kv_transfer_params": None,
            "ec_transfer_params": None,
            "output_mode": "tokens",
            "choices": choices,
        }
        return orjson.dumps(data)
