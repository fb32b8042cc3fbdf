"""The state a response writer keeps per request and per choice."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simulator.engine.sequence import EngineSequence, RequestHandle
from simulator.generation import GeneratedOutput, TokenLogprob
from simulator.usage import usage_body


@dataclass(slots=True)
class PromptInfo:
    """One prompt of the request (completions may carry several)."""

    token_ids: list[int]
    text: str
    messages: list[str] = field(default_factory=list)
    logprobs: list[tuple[TokenLogprob, int]] | None = None
    logprobs_body: list[dict[str, dict[str, Any]] | None] | None = None


@dataclass(slots=True)
class Choice:
    """One output: what it will say, its engine sequence and how much was streamed."""

    index: int
    output: GeneratedOutput
    sequence: EngineSequence
    prompt: PromptInfo
    sent: int = 0
    text_offset: int = 0

    def delta_text(self, start: int, end: int) -> str:
        """Text that becomes visible with tokens [start, end)."""
        ends = self.output.text_ends
        return self.output.text[(ends[start - 1] if start else 0) : ends[end - 1]]


@dataclass(slots=True)
class ResponseOptions:
    """How to shape a response, from the request and the server flags."""

    response_id: str
    created: int
    model: str
    fingerprint: str
    stream: bool
    include_usage: bool = False
    continuous_usage: bool = False
    per_request_metrics: bool = True
    prompt_details: bool = True
    top_logprobs: int | None = None
    as_token_ids: bool = False
    return_token_ids: bool = False
    echo: bool = False
    echo_text: str = ""
    prompt_logprobs: int | None = None
    received: float = 0.0
    # vLLM's `priority` (lower runs earlier under the priority scheduling policy).
    priority: int = 0


@dataclass(slots=True)
class ResponseJob:
    """A prepared generation: the choices, their engine handle and how to answer."""

    options: ResponseOptions
    handle: RequestHandle
    choices: list[Choice]
    prompts: list[PromptInfo]

    def usage(self, created_cache_tokens: int | None) -> dict[str, Any]:
        """Usage over all prompts and choices (cached tokens from each prompt's first choice)."""
        prompt_tokens = sum(len(p.token_ids) for p in self.prompts)
        completion = sum(c.sequence.emitted for c in self.choices)
        cached: int | None = None
        if self.options.prompt_details:
            firsts: dict[int, int] = {}
            for choice in self.choices:
                firsts.setdefault(id(choice.prompt), choice.sequence.cached_tokens)
            cached = sum(firsts.values())
        return usage_body(prompt_tokens, completion, cached, created_cache_tokens)

    def request_metrics(self) -> dict[str, float | None] | None:
        """Per-request timings, only for a single sequence and with the server flag."""
        if not self.options.per_request_metrics or len(self.choices) != 1:
            return None
        return self.choices[0].sequence.timings_ms()
