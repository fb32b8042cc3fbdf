"""CompletionsMeter: a completion's logprobs (one object per choice, kept whole) and tokens."""

from __future__ import annotations

from typing import Any

import orjson

from gateway.proxy import logprob_bytes
from gateway.proxy.call_kinds.choices_meter import ChoicesMeter


class CompletionsMeter(ChoicesMeter):
    """Keeps each choice's `logprobs` object as sent; every choice of a chunk is a token."""

    def _capture_raw(self, index: int, raw: bytes, *, count: bool = True) -> int | None:
        self.logprob_chunks.append((index, raw))
        return 1

    def _take_parsed(self, choice: dict[str, Any]) -> bool:
        logprobs = choice.get("logprobs")
        if not isinstance(logprobs, dict):
            return False
        if self.plan.capture_logprobs:
            self.logprob_chunks.append((choice.get("index", 0), orjson.dumps(logprobs)))
        if self.plan.strip_logprobs:
            choice["logprobs"] = None
            return True
        # (A completions plan never trims: its top-k lists cannot be narrowed exactly.)
        return False

    def _meter(
        self, choices: list[dict[str, Any]], found: list[tuple[int, int]], data: bytes, t: float
    ) -> bool:
        finished = False
        for position, choice in enumerate(choices):
            tokens = 1
            if found and self.plan.capture_logprobs:
                raw = logprob_bytes.value(data, found[position])
                tokens = self._capture_raw(choice.get("index", 0), raw) or 1
            self.completion_tokens_seen += tokens
            reason = choice.get("finish_reason")
            if reason is not None:
                finished = True
                self.finish_reason = str(reason)
        if choices:
            self.token_chunk_times.append(t)
        return finished
