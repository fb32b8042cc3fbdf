"""ResponsesMeter: meter a Responses API body or its named event stream, restoring the client's.

vLLM's Responses stream is named events (`event: response.X` + `data:`), ending with
`response.completed` (no `[DONE]`). Token times come from the `*.delta` events; usage, the
status and vLLM's per-request metrics from the final response object. When the gateway asked
for logprobs the client did not, every non-empty `logprobs` list is set back to what vLLM sends
without them (`[]` in a delta, null elsewhere) and the echoed `top_logprobs` to null, as bytes;
an event in another layout is parsed and written again instead.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.metering.metered import Failure, Metered, identity_text
from gateway.proxy.call_kinds import responses_logprobs as lp
from gateway.proxy.call_kinds.base import ResponseMeter
from gateway.proxy.call_kinds.response_identity import event_field
from gateway.proxy.request_plan import MeasurementPlan
from gateway.proxy.upstream_errors import UpstreamProtocolError

DELTA = b".delta"
CREATED = b"response.created"
FINAL_EVENTS = frozenset({b"response.completed", b"response.incomplete", b"response.failed"})
# Events whose response object echoes the request's `top_logprobs`.
ECHO_EVENTS = frozenset({b"response.created", b"response.in_progress", b"response.queued"})


def responses_usage(usage: Any) -> dict[str, Any] | None:
    """A Responses usage object in the chat terms the recorder reads (prompt/completion)."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("input_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return {
        "prompt_tokens": usage.get("input_tokens"),
        "completion_tokens": usage.get("output_tokens"),
        "total_tokens": usage.get("total_tokens"),
        "prompt_tokens_details": {"cached_tokens": cached},
    }


def finish_reason(response: dict[str, Any]) -> str | None:
    """The chat-style finish reason of a response object (`stop`, `length`, or its status)."""
    status = response.get("status")
    details = response.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    if status == "completed":
        return "stop"
    if status == "incomplete" and reason == "max_output_tokens":
        return "length"
    named = reason or status
    return str(named) if named is not None else None


def _parse(data: bytes, what: str) -> dict[str, Any]:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise UpstreamProtocolError(f"backend sent a {what} that is not JSON") from None
    if not isinstance(obj, dict):
        raise UpstreamProtocolError(f"backend sent a {what} that is not a JSON object")
    return obj


def _output_logprobs(obj: dict[str, Any]) -> list[list[Any]]:
    """The non-empty logprobs lists of a delta event, or of a response object's text parts."""
    if isinstance(obj.get("logprobs"), list):
        return [obj["logprobs"]] if obj["logprobs"] else []
    found: list[list[Any]] = []
    for item in obj.get("output") or ():
        for part in (item.get("content") or ()) if isinstance(item, dict) else ():
            logprobs = part.get("logprobs") if isinstance(part, dict) else None
            if isinstance(logprobs, list) and logprobs:
                found.append(logprobs)
    return found


class ResponsesMeter(ResponseMeter):
    """Meter of one Responses API answer (a response object, or its event stream)."""

    def __init__(self, plan: MeasurementPlan, fingerprint: str | None = None) -> None:
        self.plan = plan
        self.fingerprint = fingerprint
        self.done = False
        self.usage: Any = None
        self.engine_metrics: Any = None
        self.finish_reason: str | None = None
        self.token_chunk_times: list[float] = []
        self.completion_tokens_seen = 0
        self.logprob_chunks: list[tuple[int, Any]] = []
        self.failure: Failure | None = None
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

    def _identify(self, response: Any) -> None:
        if isinstance(response, dict):
            self.response_id = identity_text(response.get("id"))
            self.response_model = identity_text(response.get("model"))

    def _describe(self, response: dict[str, Any]) -> None:
        self._identify(response)
        self.usage = responses_usage(response.get("usage"))
        metrics = response.get("metrics")
        self.engine_metrics = metrics if isinstance(metrics, dict) else None
        self.finish_reason = finish_reason(response)

    def _restored(self, data: bytes, empty: bytes, *, echo: bool, capture: bool) -> bytes:
        """`data` as the client would have had it; captures its logprobs when `capture`."""
        plan = self.plan
        found = lp.arrays(data)
        if found is not None:
            if capture and plan.capture_logprobs:
                for match in found:
                    self.logprob_chunks.append((0, match.group(1)))
            if not plan.strip_logprobs:
                return data
            out = lp.replaced(data, found, empty) if found else data
            if not echo:
                return out
            nulled = lp.echo_nulled(out, plan.captured_k)
            if nulled is not None:
                return nulled
            capture = False  # kept above already
        return self._restored_parsed(data, empty == lp.EMPTY, echo=echo, capture=capture)

    def _restored_parsed(self, data: bytes, empty: bool, *, echo: bool, capture: bool) -> bytes:
        obj = _parse(data, "response event")
        if capture and self.plan.capture_logprobs:
            for logprobs in _output_logprobs(obj):
                self.logprob_chunks.append((0, orjson.dumps(logprobs)[1:-1]))
        if not self.plan.strip_logprobs:
            return data
        lp.strip_parsed(obj, empty)
        if echo:
            response = obj.get("response", obj)
            if isinstance(response, dict) and "top_logprobs" in response:
                response["top_logprobs"] = None
        return orjson.dumps(obj)

    # A whole body.

    def body(self, body: bytes, status: int) -> bytes:
        """Record usage, metrics, finish reason and logprobs; strip what the gateway added."""
        obj = _parse(body, "response")
        if status >= 400 or isinstance(obj.get("error"), dict):
            self.failure = Failure.upstream(status if status >= 400 else 500, obj.get("error", obj))
            return body
        self._describe(obj)
        if not (self.plan.capture_logprobs or self.plan.strip_logprobs):
            return body
        return self._restored(body, lp.NULL, echo=True, capture=True)

    # A stream, event by event.

    def feed(self, event: bytes, t: float) -> list[bytes]:
        """Process one event that arrived at gateway time `t`."""
        if event.startswith(b"event: "):
            end = event.find(b"\n")
            name = event[7:end].rstrip(b"\r")
            if event[end + 1 : end + 7] != b"data: ":
                return [event]
            return [self._named(name, event[: end + 7], event[end + 7 : -2], t)]
        if not event.startswith(b"data: "):
            return [event]
        data = event[6:].strip()
        if data == b"[DONE]":
            self.done = True
        elif data.startswith(b'{"error"'):
            self._error(_parse(data, "stream event").get("error"))
        return [event]

    def _named(self, name: bytes, head: bytes, data: bytes, t: float) -> bytes:
        plan = self.plan
        if name.endswith(DELTA):
            self.token_chunk_times.append(t)
            if not (plan.capture_logprobs or plan.strip_logprobs):
                self.completion_tokens_seen += 1
                return head + data + b"\n\n"
            before = len(self.logprob_chunks)
            out = self._restored(data, lp.EMPTY, echo=False, capture=True)
            counted = sum(lp.positions(c[1]) for c in self.logprob_chunks[before:])
            self.completion_tokens_seen += counted or 1
            return head + out + b"\n\n"
        if name in FINAL_EVENTS:
            self.done = True
            out = self._restored(data, lp.NULL, echo=True, capture=False)
            response = _parse(out, "final response event").get("response")
            if isinstance(response, dict):
                self._describe(response)
            return head + out + b"\n\n"
        if name == CREATED and self.response_id is None:
            # The first event: a stream cut short still has its response's id and model.
            self._identify(event_field(data, "response"))
        if name == b"error":
            self._error(_parse(data, "error event"))
            self.done = True
            return head + data + b"\n\n"
        if plan.strip_logprobs and (name in ECHO_EVENTS or lp.OPEN in data):
            out = self._restored(data, lp.NULL, echo=name in ECHO_EVENTS, capture=False)
            return head + out + b"\n\n"
        return head + data + b"\n\n"

    def _error(self, error: Any) -> None:
        status = error.get("code") if isinstance(error, dict) else None
        self.failure = Failure.upstream(status if type(status) is int else 500, error)

    def flush(self) -> list[bytes]:
        """Nothing is held back."""
        return []
