"""StreamTransform: meter each SSE event of a stream and restore it to what the client asked for.

Events pass through byte for byte unless the gateway changed the request: then logprobs the
client did not ask for are set back to null, and the usage chunk it did not ask for is dropped,
its `system_fingerprint` moved to the last chunk as vLLM does when usage is off.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.metering.logprob_codec import CHAT
from gateway.metering.record import CallRecord
from gateway.proxy.choice_logprobs import count_tokens, record_upstream_error, take_logprobs
from gateway.proxy.request_plan import MeasurementPlan
from gateway.proxy.upstream_errors import UpstreamProtocolError

DONE = b"[DONE]"


def encode_event(obj: Any) -> bytes:
    """One SSE `data:` event."""
    return b"data: " + orjson.dumps(obj) + b"\n\n"


class StreamTransform:
    """Feed it whole SSE events; it returns the bytes to send to the client."""

    def __init__(self, record: CallRecord, plan: MeasurementPlan) -> None:
        self.record = record
        self.plan = plan
        self.done = False
        self.failed = False
        # Chunks that finish a choice are held until we know whether the usage chunk follows.
        self._held: list[tuple[dict[str, Any], bytes | None]] = []

    def feed(self, event: bytes, t: float) -> list[bytes]:
        """Process one event that arrived at gateway time `t`."""
        if not event.startswith(b"data: "):
            return [*self._release(), event]
        data = event[6:].strip()
        if data == DONE:
            self.done = True
            return [*self._release(), event]
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError as bad:
            raise UpstreamProtocolError(f"backend sent a malformed stream event: {bad}") from None
        if not isinstance(obj, dict):
            raise UpstreamProtocolError("backend sent a stream event that is not a JSON object")
        if "error" in obj:
            error = obj["error"]
            status = error.get("code") if isinstance(error, dict) else None
            record_upstream_error(self.record, status if type(status) is int else 500, error)
            self.failed = True
            return [*self._release(), event]
        choices = obj.get("choices")
        if choices == [] and "usage" in obj:
            return self._usage_chunk(obj, event)
        return self._choice_chunk(obj, event, choices, t)

    def _usage_chunk(self, obj: dict[str, Any], event: bytes) -> list[bytes]:
        self.record.usage = obj.get("usage")
        self.record.engine_metrics = obj.get("metrics")
        if not self.plan.strip_usage:
            return [*self._release(), event]
        return self._release(obj.get("system_fingerprint"))

    def _choice_chunk(
        self, obj: dict[str, Any], event: bytes, choices: Any, t: float
    ) -> list[bytes]:
        modified = finished = has_token = False
        for choice in choices if isinstance(choices, list) else ():
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta")
            if self.plan.fmt != CHAT or not (isinstance(delta, dict) and "role" in delta):
                has_token = True
                self.record.completion_tokens_seen += count_tokens(choice, self.plan)
            modified |= take_logprobs(choice, self.plan, self.record)
            reason = choice.get("finish_reason")
            if reason is not None:
                finished = True
                self.record.finish_reason = str(reason)
        if isinstance(obj.get("usage"), dict):
            self.record.usage = obj["usage"]
        if has_token:
            self.record.token_chunk_times.append(t)
        out = self._release()
        if self.plan.strip_usage and finished:
            self._held.append((obj, event if not modified else None))
            return out
        out.append(encode_event(obj) if modified else event)
        return out

    def _release(self, fingerprint: Any = None) -> list[bytes]:
        if not self._held:
            return []
        if fingerprint is not None:
            last, _ = self._held[-1]
            last["system_fingerprint"] = fingerprint
            self._held[-1] = (last, None)
        out = [raw if raw is not None else encode_event(obj) for obj, raw in self._held]
        self._held.clear()
        return out

    def flush(self) -> list[bytes]:
        """Whatever is still held when the stream ends."""
        return self._release()
