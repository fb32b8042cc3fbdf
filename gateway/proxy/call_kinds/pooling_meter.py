"""PoolingMeter: meter a pooling answer (embeddings, scores, rerank, tokens) without changing it.

These APIs answer one JSON body, never a stream, and the gateway adds nothing to their requests,
so the client gets the backend's bytes as they came. Only `usage` is read, found as bytes where
vLLM puts it (last, or before `results` in a rerank answer), so megabytes of vectors are never
parsed; anything laid out otherwise is parsed whole.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.metering.metered import Failure, Metered
from gateway.proxy.call_kinds.base import ResponseMeter
from gateway.proxy.call_kinds.response_identity import head_identity
from gateway.proxy.upstream_errors import UpstreamProtocolError

USAGE_KEY = b'"usage":'


def _object(data: bytes) -> dict[str, Any] | None:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def usage_of(body: bytes) -> Any:
    """The top-level `usage` of a JSON answer, read from its bytes where vLLM writes it."""
    # A quote inside a JSON string is escaped, so these bytes can only be a key.
    at = body.rfind(USAGE_KEY)
    if at < 0:
        return None
    start = at + len(USAGE_KEY)
    # Embeddings, pooling, classify and score: usage is the last key of the answer.
    usage = _object(body[start:-1]) if body.endswith(b"}") else None
    if usage is None:
        # Rerank: a flat usage object before `results`.
        end = body.find(b"}", start)
        usage = _object(body[start : end + 1]) if end > 0 else None
    if usage is None:
        whole = _object(body)
        usage = whole.get("usage") if whole is not None else None
    return usage


class PoolingMeter(ResponseMeter):
    """Meter of one pooling answer: its usage (when `counts_usage`), or the error it is."""

    def __init__(self, counts_usage: bool = True) -> None:
        self.counts_usage = counts_usage
        self.done = False
        self.fingerprint = None
        self.usage: Any = None
        self.failure: Failure | None = None
        self.identity: tuple[str | None, str | None] = (None, None)

    def result(self) -> Metered:
        """What was measured."""
        response_id, model = self.identity
        return Metered(
            self.usage, failure=self.failure, response_id=response_id, response_model=model
        )

    def body(self, body: bytes, status: int) -> bytes:
        """Record the usage or the error; the body goes to the client unchanged."""
        if status >= 400:
            error = _object(body)
            detail = error.get("error") if error is not None else None
            # vLLM answers a route its runner does not serve with a bare `{"detail": ...}`.
            text = body[:500].decode("utf-8", "replace")
            self.failure = Failure.upstream(status, detail if isinstance(detail, dict) else text)
            return body
        if not body.lstrip().startswith(b"{"):
            raise UpstreamProtocolError("backend sent an answer that is not a JSON object")
        self.identity = head_identity(body)
        if self.counts_usage:
            usage = usage_of(body)
            self.usage = usage if isinstance(usage, dict) else None
        return body

    def feed(self, event: bytes, t: float) -> list[bytes]:
        """Pooling answers are never streams; an event passes as it came."""
        return [event]

    def flush(self) -> list[bytes]:
        """Nothing is held back."""
        return []
