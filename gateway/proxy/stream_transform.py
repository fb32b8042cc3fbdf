"""StreamTransform: meter each SSE event of a stream and restore it to what the client asked for.

Events pass through byte for byte unless the gateway changed the request: then logprobs the
client did not ask for are set back to null, and the usage chunk it did not ask for is dropped.
Without usage, vLLM puts `system_fingerprint` on every chunk that finishes a choice; the gateway
does the same with the backend's fingerprint, learnt from earlier responses. Until it is known,
chunks from the first finishing one on are held back until the usage chunk reveals it.
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

    def __init__(
        self, record: CallRecord, plan: MeasurementPlan, fingerprint: str | None = None
    ) -> None:
        self.record = record
        self.plan = plan
        self.fingerprint = fingerprint
        self.done = False
        self.failed = False
        self._holding = False
        self._held: list[tuple[dict[str, Any], bytes | None, bool]] = []

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
        fingerprint = obj.get("system_fingerprint")
        if isinstance(fingerprint, str):
            self.fingerprint = fingerprint
        if not self.plan.strip_usage:
            return [*self._release(), event]
        return self._release()

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
        if self.plan.strip_usage and finished:
            if self.fingerprint is None:
                self._holding = True
            else:
                obj["system_fingerprint"] = self.fingerprint
                modified = True
        if self._holding:
            self._held.append((obj, None if modified else event, finished))
            return []
        return [encode_event(obj) if modified else event]

    def _release(self) -> list[bytes]:
        out = []
        for obj, raw, finished in self._held:
            if finished and self.fingerprint is not None:
                obj["system_fingerprint"] = self.fingerprint
                raw = None
            out.append(raw if raw is not None else encode_event(obj))
        self._held.clear()
        self._holding = False
        return out

    def flush(self) -> list[bytes]:
        """Whatever is still held when the stream ends."""
        return self._release()
