"""MessagesMeter: meter an Anthropic Messages body or its named event stream, bytes unchanged.

vLLM's Messages stream is named events (`event: X` + `data:`): `message_start` (input tokens),
`content_block_start`, `content_block_delta` (one per engine output: the token times),
`content_block_stop`, `message_delta` (stop reason and the final usage), `message_stop`; a stream
that fails ends with an `error` event instead. Nothing is added upstream, so nothing is changed.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.metering.metered import Failure, Metered, identity_text
from gateway.proxy.call_kinds.base import ResponseMeter
from gateway.proxy.call_kinds.response_identity import event_field
from gateway.proxy.request_plan import MeasurementPlan
from gateway.proxy.upstream_errors import UpstreamProtocolError

# Anthropic's stop reasons in the chat terms the records keep.
FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
}
# A thinking block's closing signature is no token of the answer.
SIGNATURE_DELTA = b'"type":"signature_delta"'


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


def messages_usage(usage: Any) -> dict[str, Any] | None:
    """An Anthropic usage object in the chat terms the recorder reads.

    vLLM reports cache hits apart: its `input_tokens` is the prompt less the cache reads and
    writes, so the prompt is their sum, and the cache reads are the cached tokens.
    """
    if not isinstance(usage, dict):
        return None
    read = usage.get("cache_read_input_tokens")
    prompt = usage.get("input_tokens")
    if type(prompt) is int:
        prompt += _count(read) + _count(usage.get("cache_creation_input_tokens"))
    completion = usage.get("output_tokens")
    total = prompt + completion if type(prompt) is int and type(completion) is int else None
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": total,
        "prompt_tokens_details": {"cached_tokens": read if type(read) is int else None},
    }


def finish_reason(stop_reason: Any) -> str | None:
    """The chat-style finish reason of an Anthropic `stop_reason`."""
    if stop_reason is None:
        return None
    return FINISH_REASONS.get(str(stop_reason), str(stop_reason)[:64])


def parse_object(data: bytes, what: str) -> dict[str, Any]:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise UpstreamProtocolError(f"backend sent a {what} that is not JSON") from None
    if not isinstance(obj, dict):
        raise UpstreamProtocolError(f"backend sent a {what} that is not a JSON object")
    return obj


def upstream_failure(status: int, obj: dict[str, Any]) -> Failure:
    """The failure an error body says, in either shape vLLM answers Messages errors with."""
    # Anthropic's `{"type": "error", "error": {...}}` and OpenAI's `{"error": {...}}` alike.
    return Failure.upstream(status, obj.get("error", obj))


class MessagesMeter(ResponseMeter):
    """Meter of one Messages answer (a message object, or its event stream)."""

    def __init__(self, plan: MeasurementPlan, fingerprint: str | None = None) -> None:
        self.plan = plan
        self.fingerprint = fingerprint
        self.done = False
        self.usage: dict[str, Any] | None = None
        self.finish_reason: str | None = None
        self.token_chunk_times: list[float] = []
        self.completion_tokens_seen = 0
        self.failure: Failure | None = None
        self.response_id: str | None = None
        self.response_model: str | None = None

    def result(self) -> Metered:
        """What was measured so far; vLLM's Messages API sends no per-request metrics."""
        return Metered(
            self.usage,
            None,
            self.finish_reason,
            self.token_chunk_times,
            self.completion_tokens_seen,
            [],
            self.failure,
            response_id=self.response_id,
            response_model=self.response_model,
        )

    def _identify(self, message: Any) -> None:
        if isinstance(message, dict):
            self.response_id = identity_text(message.get("id"))
            self.response_model = identity_text(message.get("model"))

    def body(self, body: bytes, status: int) -> bytes:
        """Record usage and the stop reason; the body goes to the client as it came."""
        obj = parse_object(body, "message")
        if status >= 400 or obj.get("type") == "error":
            self.failure = upstream_failure(status if status >= 400 else 500, obj)
            return body
        self._identify(obj)
        self.usage = messages_usage(obj.get("usage"))
        self.finish_reason = finish_reason(obj.get("stop_reason"))
        return body

    def feed(self, event: bytes, t: float) -> list[bytes]:
        """Meter one event that arrived at gateway time `t`; it is sent unchanged."""
        if not event.startswith(b"event: "):
            return [event]
        end = event.find(b"\n")
        name = event[7:end].rstrip(b"\r")
        data = event[end + 1 :]
        if not data.startswith(b"data: "):
            return [event]
        if name == b"content_block_delta":
            if SIGNATURE_DELTA not in data:
                self.token_chunk_times.append(t)
                self.completion_tokens_seen += 1
        elif name == b"message_start":
            # Once per stream, and small: the message's id and model, before any content.
            self._identify(event_field(data[6:], "message"))
        elif name == b"message_delta":
            obj = parse_object(data[6:], "message_delta event")
            self.usage = messages_usage(obj.get("usage"))
            delta = obj.get("delta")
            if isinstance(delta, dict):
                self.finish_reason = finish_reason(delta.get("stop_reason"))
        elif name == b"message_stop":
            self.done = True
        elif name == b"error":
            # vLLM ends a failed stream with this event and no message_stop.
            self.failure = upstream_failure(500, parse_object(data[6:], "error event"))
            self.done = True
        return [event]

    def flush(self) -> list[bytes]:
        """Nothing is held back."""
        return []
