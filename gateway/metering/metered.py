"""What a call's response meter found (`Metered`), and how a call failed (`Failure`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

ERROR_MESSAGE_LIMIT = 2000
# What a record keeps of the backend's response `id` and `model`: the `calls` columns' length.
IDENTITY_CHARS = 256


def identity_text(value: Any) -> str | None:
    """A backend's response `id` or `model` as kept: a string, cut, NUL replaced; else None."""
    if type(value) is not str or not value:
        return None
    # Cut first: a hostile backend may send megabytes; Postgres text takes no NUL.
    return value[:IDENTITY_CHARS].replace("\x00", "\ufffd")


@dataclass(frozen=True, slots=True)
class Failure:
    """An OpenAI-style error a call ended with: status, type and (bounded) message."""

    status: int
    error_type: str
    message: str

    @classmethod
    def of(cls, status: int, error_type: str, message: str) -> Failure:
        """A failure whose message is cut to what a record keeps."""
        return cls(status, error_type, message[:ERROR_MESSAGE_LIMIT])

    @classmethod
    def upstream(cls, status: int, error: Any) -> Failure:
        """The failure an OpenAI-shaped upstream error (or anything else it sent) says."""
        if isinstance(error, dict):
            error_type, message = error.get("type"), error.get("message")
            return cls.of(status, str(error_type or "Error"), str(message or ""))
        return cls.of(status, "Error", str(error))


@dataclass(frozen=True, slots=True)
class Metered:
    """A response's measurements: usage, engine metrics, tokens and their times, logprobs."""

    usage: Any = None
    engine_metrics: Any = None
    finish_reason: str | None = None
    # Shared with the meter that filled them, not copied: the meter is done with them.
    token_chunk_times: list[float] = field(default_factory=list)
    completion_tokens_seen: int = 0
    logprob_chunks: list[tuple[int, Any]] = field(default_factory=list)
    # An error the backend answered (a status of 400 or more, or an error event).
    failure: Failure | None = None
    # Seconds of audio the call took in (speech-to-text calls).
    audio_seconds: float | None = None
    # The backend's response `id` and `model` (as `identity_text` keeps them).
    response_id: str | None = None
    response_model: str | None = None

    def with_audio_seconds(self, seconds: float) -> Metered:
        """The same measurements, with the audio's duration."""
        return replace(self, audio_seconds=seconds)
