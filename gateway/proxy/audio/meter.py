"""AudioMeter: meter a transcription or translation (a body, or `*.chunk` events), unchanged.

The gateway adds nothing to an audio request, so every byte passes as the backend sent it.
A `json` transcription carries `usage: {type: "duration", seconds}` (vLLM rounds up),
`verbose_json` a `duration`; a stream's usage chunk (asked for with `stream_include_usage`)
carries tokens, and each chunk with text is a token time.
"""

from __future__ import annotations

from typing import Any

import orjson

from gateway.metering.metered import Failure, Metered, identity_text
from gateway.proxy.call_kinds.base import ResponseMeter

DONE_EVENT = b"data: [DONE]"


def _object(data: bytes) -> dict[str, Any] | None:
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _seconds(value: Any) -> float | None:
    if type(value) in (int, float) and 0 <= value < 1e9:
        return float(value)
    return None


def _duration(body: dict[str, Any]) -> float | None:
    usage = body.get("usage")
    if isinstance(usage, dict) and usage.get("type") == "duration":
        return _seconds(usage.get("seconds"))
    return _seconds(body.get("duration"))


class AudioMeter(ResponseMeter):
    """Meter of one speech-to-text response; nothing is restored, nothing was added."""

    def __init__(self, fingerprint: str | None) -> None:
        self.fingerprint = fingerprint
        self.done = False
        self._usage: Any = None
        self._finish_reason: str | None = None
        self._times: list[float] = []
        self._seen = 0
        self._failure: Failure | None = None
        self._seconds: float | None = None
        # The `id` and `model` of the first object that has them (stream chunks; bodies have none).
        self._identity: tuple[str | None, str | None] | None = None

    def _identify(self, obj: dict[str, Any]) -> None:
        if self._identity is None and "id" in obj:
            self._identity = identity_text(obj.get("id")), identity_text(obj.get("model"))

    def body(self, body: bytes, status: int) -> bytes:
        """Read the duration (or the error); `text` answers are plain text, passed as they are."""
        obj = _object(body)
        if status >= 400:
            error = obj.get("error") if obj is not None else None
            self._failure = Failure.upstream(status, error if error is not None else body[:2000])
        elif obj is not None:
            self._identify(obj)
            self._seconds = _duration(obj)
        return body

    def feed(self, event: bytes, t: float) -> list[bytes]:
        """Meter one `data:` event: text chunks are token times; errors and usage are kept."""
        data = event.strip()
        if data == DONE_EVENT:
            self.done = True
            return [event]
        obj = _object(data[5:]) if data.startswith(b"data:") else None
        if obj is None:
            return [event]
        self._identify(obj)
        if isinstance(error := obj.get("error"), dict):
            code = error.get("code")
            status = code if type(code) is int and 400 <= code < 600 else 500
            self._failure = Failure.upstream(status, error)
        if isinstance(usage := obj.get("usage"), dict) and not obj.get("choices"):
            self._usage = usage
        for choice in obj.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict) and delta.get("content"):
                self._times.append(t)
                self._seen += 1
            if isinstance(reason := choice.get("finish_reason"), str):
                self._finish_reason = reason[:32]
        return [event]

    def flush(self) -> list[bytes]:
        """Nothing is held back."""
        return []

    def result(self) -> Metered:
        """Usage (streams that asked for it), text times, the duration, a backend error."""
        return Metered(
            usage=self._usage,
            finish_reason=self._finish_reason,
            token_chunk_times=self._times,
            completion_tokens_seen=self._seen,
            failure=self._failure,
            audio_seconds=self._seconds,
            response_id=self._identity[0] if self._identity else None,
            response_model=self._identity[1] if self._identity else None,
        )
