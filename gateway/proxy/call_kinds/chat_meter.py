"""ChatMeter: a chat response's logprobs (`{"content": [...]}` per choice) and tokens."""

from __future__ import annotations

from typing import Any

import orjson

from gateway.proxy import logprob_bytes
from gateway.proxy.call_kinds.choices_meter import ChoicesMeter


def _trimmed(logprobs: dict[str, Any], k: int) -> dict[str, Any]:
    content = logprobs.get("content") or []
    return {
        **logprobs,
        "content": [{**e, "top_logprobs": (e.get("top_logprobs") or [])[:k]} for e in content],
    }


class ChatMeter(ChoicesMeter):
    """Keeps the items of each choice's `content` list; a role-only delta is not a token."""

    def _capture_raw(self, index: int, raw: bytes, *, count: bool = True) -> int | None:
        items = logprob_bytes.chat_items(raw)
        if items is None:
            return None
        self.logprob_chunks.append((index, items))
        # `count=False` returns 0: counting a whole body's positions is a scan of it that the
        # log sink repeats anyway, off the hot path.
        return logprob_bytes.positions(items) if count else 0

    def _take_parsed(self, choice: dict[str, Any]) -> bool:
        logprobs = choice.get("logprobs")
        if not isinstance(logprobs, dict):
            return False
        plan = self.plan
        if plan.capture_logprobs:
            content = logprobs.get("content") or []
            if content:
                self.logprob_chunks.append((choice.get("index", 0), orjson.dumps(content)[1:-1]))
        if plan.strip_logprobs:
            choice["logprobs"] = None
            return True
        if plan.client_top_k is not None:
            choice["logprobs"] = _trimmed(logprobs, plan.client_top_k)
            return True
        return False

    def _meter(
        self, choices: list[dict[str, Any]], found: list[tuple[int, int]], data: bytes, t: float
    ) -> bool:
        finished = has_token = False
        for position, choice in enumerate(choices):
            delta = choice.get("delta")
            if not (isinstance(delta, dict) and "role" in delta):
                has_token = True
                tokens = 1
                if found and self.plan.capture_logprobs:
                    raw = logprob_bytes.value(data, found[position])
                    tokens = self._capture_raw(choice.get("index", 0), raw) or 1
                self.completion_tokens_seen += tokens
            reason = choice.get("finish_reason")
            if reason is not None:
                finished = True
                self.finish_reason = str(reason)
        if has_token:
            self.token_chunk_times.append(t)
        return finished
