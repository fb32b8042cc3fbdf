"""Read the recorded request parameters out of a client's JSON body, defensively."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from gateway.metering.record import CallRecord
from gateway.proxy.lax_values import RequestFields

INT32 = 2**31
INT64 = 2**63


def _bounded_int(value: Any, bound: int) -> int | None:
    return value if type(value) is int and -bound <= value < bound else None


def _number(value: Any) -> float | None:
    if type(value) in (int, float) and abs(value) < 1e300:
        return float(value)
    return None


def source_of(feature: str | None) -> str:
    """Where a call came from, by the feature tag its client set."""
    if feature and feature.startswith("eval:"):
        return "eval"
    if feature and feature.startswith("resample:"):
        return "live_sample"
    return "product"


@dataclass(frozen=True, slots=True)
class RequestParams:
    """The model and sampling parameters a call's record keeps, as vLLM will read them."""

    model: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stream: bool = False
    n: int | None = None
    max_tokens: int | None = None
    # Inputs, documents or pairs of a pooling call (embeddings, score, rerank...).
    items: int | None = None


def sampling_params(payload: dict[str, Any]) -> RequestParams:
    """The model and the parameters read straight from the body.

    Read before the acted-on fields, so a call refused for a field vLLM cannot read still
    says which model it named.
    """
    model = payload.get("model")
    return RequestParams(
        model=model[:256] if isinstance(model, str) else None,
        temperature=_number(payload.get("temperature")),
        top_p=_number(payload.get("top_p")),
        seed=_bounded_int(payload.get("seed"), INT64),
    )


def with_fields(params: RequestParams, fields: RequestFields) -> RequestParams:
    """`params` completed with the acted-on fields (stream, n, max_tokens, items)."""
    return replace(
        params,
        stream=fields.stream,
        n=_bounded_int(fields.n, INT32),
        max_tokens=_bounded_int(fields.max_tokens, INT32),
        items=_bounded_int(fields.items, INT32),
    )


def tokens_used(record: CallRecord) -> int:
    """Tokens a finished call consumed (the backend's usage, else the tokens counted)."""
    usage = record.usage or {}
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if type(prompt) is int and type(completion) is int:
        return max(0, prompt) + max(0, completion)
    if type(prompt) is int and completion is None and record.items is not None:
        return max(0, prompt)  # a rerank answer's usage has input tokens only
    return record.completion_tokens_seen
