"""What eval code sends to the gateway and gets back, independent of the HTTP client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


def eval_feature(suite: str) -> str:
    """The `X-Plumbline-Feature` of a suite's sample calls."""
    return f"eval:{suite}"


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat completion, attributed to a team and tagged with a feature."""

    model: str
    messages: list[dict[str, str]]
    feature: str
    team: str
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # `X-Plumbline-Trace-Link`: the eval question span this call's own trace links to.
    trace_link: str | None = None

    def body(self) -> dict[str, Any]:
        """The JSON body of the request."""
        body: dict[str, Any] = {"model": self.model, "messages": self.messages}
        for name in ("temperature", "top_p", "max_tokens", "seed"):
            value = getattr(self, name)
            if value is not None:
                body[name] = value
        return {**body, **self.extra}


@dataclass(frozen=True, slots=True)
class Completion:
    """The parts of a chat completion evals keep, and the gateway call that produced it."""

    text: str
    call_id: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None


class GatewayCallError(Exception):
    """A call the gateway (or the transport) failed; `retryable` says whether to try again."""

    def __init__(self, status: int | None, message: str, call_id: str | None = None) -> None:
        self.status = status
        self.message = message
        self.call_id = call_id
        super().__init__(f"{status or 'transport'}: {message}")

    @property
    def retryable(self) -> bool:
        """Transport failures and overload or server errors are worth another try."""
        return self.status is None or self.status in RETRYABLE_STATUSES

    @property
    def context_overflow(self) -> bool:
        """The backend refused the prompt as longer than the model's context."""
        text = self.message.lower()
        return self.status == 400 and ("context length" in text or "max_model_len" in text)
