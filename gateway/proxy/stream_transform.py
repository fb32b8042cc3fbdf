"""StreamTransform: meter each SSE event of a stream and restore it to what the client asked for.

Events pass through byte for byte unless the gateway changed the request: then logprobs the
client did not ask for are set back to null (cut out as bytes, never parsed), and the usage
chunk it did not ask for is dropped. Without usage, vLLM puts `system_fingerprint` on every
chunk that finishes a choice; the gateway does the same with the backend's fingerprint, learnt
from earlier responses. Until it is known, chunks from the first finishing one on are held back
until the usage chunk reveals it.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.metering.record import CallRecord
from gateway.proxy import logprob_bytes
from gateway.proxy.choice_logprobs import capture_raw, record_upstream_error, take_parsed
from gateway.proxy.request_plan import MeasurementPlan
from gateway.proxy.upstream_errors import UpstreamProtocolError
from plumbline.logprob_codec import CHAT

DONE = b"[DONE]"


def encode_event(obj: Any) -> bytes:
    """One SSE `data:` event."""
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def _with_fingerprint(data: bytes, fingerprint: str) -> bytes:
    # A chunk is a JSON object: the key goes last, as vLLM writes it.
    return data[:-1] + b',"system_fingerprint":' + orjson.dumps(fingerprint) + b"}"


def _parse(data: bytes) -> dict[str, Any]:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as bad:
        raise UpstreamProtocolError(f"backend sent a malformed stream event: {bad}") from None
    if not isinstance(obj, dict):
        raise UpstreamProtocolError("backend sent a stream event that is not a JSON object")
    return obj


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
        # (chunk JSON as it will be sent, whether it finishes a choice)
        self._held: list[tuple[bytes, bool]] = []

    def feed(self, event: bytes, t: float) -> list[bytes]:
        """Process one event that arrived at gateway time `t`."""
        if not event.startswith(b"data: "):
            return [*self._release(), event]
        data = event[6:].strip()
        if data == DONE:
            self.done = True
            return [*self._release(), event]
        if data.startswith(b'{"error"'):
            return self._error(_parse(data), event)
        if b'"choices":[]' in data:
            obj = _parse(data)
            if "usage" in obj:
                return self._usage_chunk(obj, event)
        return self._choice_chunk(data, event, t)

    def _error(self, obj: dict[str, Any], event: bytes) -> list[bytes]:
        error = obj["error"]
        status = error.get("code") if isinstance(error, dict) else None
        record_upstream_error(self.record, status if type(status) is int else 500, error)
        self.failed = True
        return [*self._release(), event]

    def _usage_chunk(self, obj: dict[str, Any], event: bytes) -> list[bytes]:
        self.record.usage = obj.get("usage")
        self.record.engine_metrics = obj.get("metrics")
        fingerprint = obj.get("system_fingerprint")
        if isinstance(fingerprint, str):
            self.fingerprint = fingerprint
        if not self.plan.strip_usage:
            return [*self._release(), event]
        return self._release()

    def _choice_chunk(self, data: bytes, event: bytes, t: float) -> list[bytes]:
        plan = self.plan
        found = logprob_bytes.spans(data) if plan.client_top_k is None else None
        out = logprob_bytes.without(data, found) if found else data
        obj = _parse(out)
        if "error" in obj:
            return self._error(obj, event)
        if obj.get("choices") == [] and "usage" in obj:
            return self._usage_chunk(obj, event)
        choices = [c for c in obj.get("choices") or () if isinstance(c, dict)]
        changed = bool(found) and plan.strip_logprobs
        if not changed:
            out = data
        if found is None or (found and len(found) != len(choices)):
            obj = _parse(data)
            choices = [c for c in obj.get("choices") or () if isinstance(c, dict)]
            changed = any([take_parsed(c, plan, self.record) for c in choices])
            out = orjson.dumps(obj) if changed else data
            found = []
        finished = self._meter(choices, found, data, t)
        if isinstance(obj.get("usage"), dict):
            self.record.usage = obj["usage"]
        if plan.strip_usage and finished:
            if self.fingerprint is None:
                self._holding = True
            else:
                out, changed = _with_fingerprint(out, self.fingerprint), True
        if self._holding:
            self._held.append((out if changed else data, finished))
            return []
        return [b"data: " + out + b"\n\n" if changed else event]

    def _meter(
        self, choices: list[dict[str, Any]], found: list[tuple[int, int]], data: bytes, t: float
    ) -> bool:
        """Count tokens, keep raw logprobs and note finish reasons; True if a choice finished."""
        finished = has_token = False
        for position, choice in enumerate(choices):
            delta = choice.get("delta")
            if self.plan.fmt != CHAT or not (isinstance(delta, dict) and "role" in delta):
                has_token = True
                tokens = 1
                if found and self.plan.capture_logprobs:
                    raw = logprob_bytes.value(data, found[position])
                    tokens = (
                        capture_raw(self.record, self.plan.fmt, choice.get("index", 0), raw) or 1
                    )
                self.record.completion_tokens_seen += tokens
            reason = choice.get("finish_reason")
            if reason is not None:
                finished = True
                self.record.finish_reason = str(reason)
        if has_token:
            self.record.token_chunk_times.append(t)
        return finished

    def _release(self) -> list[bytes]:
        out = []
        for data, finished in self._held:
            chunk = (
                _with_fingerprint(data, self.fingerprint) if finished and self.fingerprint else data
            )
            out.append(b"data: " + chunk + b"\n\n")
        self._held.clear()
        self._holding = False
        return out

    def flush(self) -> list[bytes]:
        """Whatever is still held when the stream ends."""
        return self._release()
