"""ChoicesMeter: meter an OpenAI `choices` response (body or stream), restoring the client's bytes.

Chat completions and completions answer alike: a body or chunks of `choices`, each with its
`logprobs`, then usage. Bytes pass through unchanged unless the gateway changed the request:
then logprobs the client did not ask for are set back to null (cut out as bytes, never
parsed), and the usage chunk it did not ask for is dropped. Without usage, vLLM puts
`system_fingerprint` on every chunk that finishes a choice; the gateway does the same with the
backend's fingerprint, learnt from earlier responses. Until it is known, chunks from the first
finishing one on are held back until the usage chunk reveals it.

What differs between the two kinds (which chunks carry a token, the shape of a choice's
logprobs) is left to the subclasses in `chat.py` and `completions.py`.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

import orjson

from gateway.metering.metered import Failure, Metered, identity_text
from gateway.proxy import logprob_bytes
from gateway.proxy.call_kinds.base import ResponseMeter
from gateway.proxy.request_plan import MeasurementPlan
from gateway.proxy.upstream_errors import UpstreamProtocolError

DONE = b"[DONE]"


def encode_event(obj: Any) -> bytes:
    """One SSE `data:` event."""
    return b"data: " + orjson.dumps(obj) + b"\n\n"


def _with_fingerprint(data: bytes, fingerprint: str) -> bytes:
    # A chunk is a JSON object: the key goes last, as vLLM writes it.
    return data[:-1] + b',"system_fingerprint":' + orjson.dumps(fingerprint) + b"}"


def _parse_event(data: bytes) -> dict[str, Any]:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as bad:
        raise UpstreamProtocolError(f"backend sent a malformed stream event: {bad}") from None
    if not isinstance(obj, dict):
        raise UpstreamProtocolError("backend sent a stream event that is not a JSON object")
    return obj


def _parse_body(body: bytes) -> dict[str, Any]:
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise UpstreamProtocolError("backend sent a response that is not JSON") from None
    if not isinstance(obj, dict):
        raise UpstreamProtocolError("backend sent a response that is not a JSON object")
    return obj


def _choices(obj: dict[str, Any]) -> list[dict[str, Any]]:
    choices = obj.get("choices")
    return [c for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


class ChoicesMeter(ResponseMeter):
    """Meter of one `choices` response; subclasses say how their kind's choices are read."""

    def __init__(self, plan: MeasurementPlan, fingerprint: str | None = None) -> None:
        self.plan = plan
        self.fingerprint = fingerprint
        self.done = False
        self._holding = False
        # (chunk JSON as it will be sent, whether it finishes a choice)
        self._held: list[tuple[bytes, bool]] = []
        self.usage: Any = None
        self.engine_metrics: Any = None
        self.finish_reason: str | None = None
        self.token_chunk_times: list[float] = []
        self.completion_tokens_seen = 0
        self.logprob_chunks: list[tuple[int, Any]] = []
        self.failure: Failure | None = None
        # The response's `id` and `model`, read from the body or the first chunk (all repeat them).
        self._identified = False
        self.response_id: str | None = None
        self.response_model: str | None = None

    def result(self) -> Metered:
        """What was measured so far."""
        return Metered(
            self.usage,
            self.engine_metrics,
            self.finish_reason,
            self.token_chunk_times,
            self.completion_tokens_seen,
            self.logprob_chunks,
            self.failure,
            response_id=self.response_id,
            response_model=self.response_model,
        )

    def _identify(self, obj: dict[str, Any]) -> None:
        self._identified = True
        self.response_id = identity_text(obj.get("id"))
        self.response_model = identity_text(obj.get("model"))

    @abstractmethod
    def _capture_raw(self, index: int, raw: bytes, *, count: bool = True) -> int | None:
        """Keep one choice's raw logprobs object; the positions it covers, None if odd."""

    def _capture_span(self, index: int, data: bytes, span: tuple[int, int]) -> int | None:
        """`_capture_raw` of the logprobs object at `span` of `data` (a streamed chunk)."""
        return self._capture_raw(index, logprob_bytes.value(data, span))

    @abstractmethod
    def _take_parsed(self, choice: dict[str, Any]) -> bool:
        """Keep a parsed choice's logprobs; True if the choice was changed for the client."""

    def _is_token(self, choice: dict[str, Any]) -> bool:
        """Whether a streamed choice carries a token (chat's role-only delta does not)."""
        return True

    def _meter(
        self, choices: list[dict[str, Any]], found: list[tuple[int, int]], data: bytes, t: float
    ) -> bool:
        """Count a chunk's tokens, keep raw logprobs, note finish reasons; True if one finished."""
        finished = has_token = False
        for position, choice in enumerate(choices):
            if self._is_token(choice):
                has_token = True
                tokens = 1
                if found and self.plan.capture_logprobs:
                    tokens = self._capture_span(choice.get("index", 0), data, found[position]) or 1
                self.completion_tokens_seen += tokens
            reason = choice.get("finish_reason")
            if reason is not None:
                finished = True
                self.finish_reason = str(reason)
        if has_token:
            self.token_chunk_times.append(t)
        return finished

    # A whole body.

    def body(self, body: bytes, status: int) -> bytes:
        """Record usage, engine metrics, finish reason and logprobs; strip what was added."""
        if status < 400 and self.plan.client_top_k is None:
            out = self._fast_body(body)
            if out is not None:
                return out
        obj = _parse_body(body)
        if status >= 400 or "error" in obj:
            self.failure = Failure.upstream(status if status >= 400 else 500, obj.get("error", obj))
            return body
        self._describe(obj)
        modified = False
        for choice in _choices(obj):
            modified |= self._take_parsed(choice)
        return orjson.dumps(obj) if modified else body

    def _describe(self, obj: dict[str, Any]) -> None:
        self._identify(obj)
        fingerprint = obj.get("system_fingerprint")
        if isinstance(fingerprint, str):
            self.fingerprint = fingerprint
        usage, metrics = obj.get("usage"), obj.get("metrics")
        self.usage = usage if isinstance(usage, dict) else None
        self.engine_metrics = metrics if isinstance(metrics, dict) else None
        for choice in _choices(obj):
            if choice.get("finish_reason") is not None:
                self.finish_reason = str(choice["finish_reason"])
                break

    def _fast_body(self, body: bytes) -> bytes | None:
        # The logprobs (most of a 200-token top-5 body) are sliced out as bytes, never parsed;
        # only the rest of the body is parsed.
        found = logprob_bytes.spans(body)
        if found is None:
            return None
        client_body = logprob_bytes.without(body, found) if found else body
        obj = _parse_body(client_body)
        choices = _choices(obj)
        if found and len(found) != len(choices):
            return None
        if self.plan.capture_logprobs:
            for choice, span in zip(choices, found, strict=False):
                raw = logprob_bytes.value(body, span)
                if self._capture_raw(choice.get("index", 0), raw, count=False) is None:
                    self.logprob_chunks.clear()
                    return None
        self._describe(obj)
        return client_body if self.plan.strip_logprobs else body

    # A stream, event by event.

    def feed(self, event: bytes, t: float) -> list[bytes]:
        """Process one event that arrived at gateway time `t`."""
        if not event.startswith(b"data: "):
            return [*self._release(), event]
        data = event[6:].strip()
        if data == DONE:
            self.done = True
            return [*self._release(), event]
        if data.startswith(b'{"error"'):
            return self._error(_parse_event(data), event)
        if b'"choices":[]' in data:
            obj = _parse_event(data)
            if "usage" in obj:
                return self._usage_chunk(obj, event)
        return self._choice_chunk(data, event, t)

    def flush(self) -> list[bytes]:
        """Whatever is still held when the stream ends."""
        return self._release()

    def _error(self, obj: dict[str, Any], event: bytes) -> list[bytes]:
        error = obj["error"]
        status = error.get("code") if isinstance(error, dict) else None
        self.failure = Failure.upstream(status if type(status) is int else 500, error)
        return [*self._release(), event]

    def _usage_chunk(self, obj: dict[str, Any], event: bytes) -> list[bytes]:
        self.usage = obj.get("usage")
        self.engine_metrics = obj.get("metrics")
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
        obj = _parse_event(out)
        if "error" in obj:
            return self._error(obj, event)
        if obj.get("choices") == [] and "usage" in obj:
            return self._usage_chunk(obj, event)
        if not self._identified:
            self._identify(obj)
        choices = [c for c in obj.get("choices") or () if isinstance(c, dict)]
        changed = bool(found) and plan.strip_logprobs
        if not changed:
            out = data
        if found is None or (found and len(found) != len(choices)):
            obj = _parse_event(data)
            choices = [c for c in obj.get("choices") or () if isinstance(c, dict)]
            changed = any([self._take_parsed(c) for c in choices])
            out = orjson.dumps(obj) if changed else data
            found = []
        finished = self._meter(choices, found, data, t)
        if isinstance(obj.get("usage"), dict):
            self.usage = obj["usage"]
        if plan.strip_usage and finished:
            if self.fingerprint is None:
                self._holding = True
            else:
                out, changed = _with_fingerprint(out, self.fingerprint), True
        if self._holding:
            self._held.append((out if changed else data, finished))
            return []
        return [b"data: " + out + b"\n\n" if changed else event]

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
