"""Request parsing and checks, with vLLM 0.32's messages, types, `param` values and order.

vLLM checks a request in stages, and the first failing check answers: the raw body (see
request_prechecks), its schema, the model name, the context length, the sampling parameters,
then the logprob counts. The routes call these in that order.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from simulator.errors import ApiError, with_parameter
from simulator.protocol import ChatCompletionRequest, SamplingFields
from simulator.sampling import GREEDY_BELOW
from simulator.validation_errors import validation_error

ModelT = TypeVar("ModelT", bound=BaseModel)
RawCheck = Callable[[dict[str, Any]], None]


def parse_body(raw: bytes, model: type[ModelT], precheck: RawCheck | None = None) -> ModelT:
    """Decode and validate a JSON body, raising vLLM's 400 on failure.

    `precheck` sees the decoded object first, as vLLM's "before" validators do.
    """
    if not raw:
        missing = {"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}
        raise validation_error([missing])
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = _decode_with_stdlib(raw)
    if precheck is not None and isinstance(data, dict):
        precheck(data)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = [dict(e, loc=("body", *e["loc"])) for e in exc.errors(include_url=False)]
        raise validation_error(errors) from None


def _decode_with_stdlib(raw: bytes) -> Any:
    # The stdlib decoder gives the message and position FastAPI (and so vLLM) reports.
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        error = {
            "type": "json_invalid",
            "loc": ("body", exc.pos),
            "msg": "JSON decode error",
            "input": {},
            "ctx": {"error": exc.msg},
        }
        raise validation_error([error]) from None
    except UnicodeDecodeError as exc:
        error = {
            "type": "json_invalid",
            "loc": ("body", exc.start),
            "msg": "JSON decode error",
            "input": {},
            "ctx": {"error": "Invalid UTF-8"},
        }
        raise validation_error([error]) from None


def _bad(message: str, parameter: str, *value: Any) -> ApiError:
    return ApiError(with_parameter(message, parameter, *value), param=parameter)


def check_sampling(request: SamplingFields, max_tokens: int) -> None:
    """vLLM's SamplingParams checks, in its order; `max_tokens` after context clamping."""
    n = 1 if request.n is None else request.n
    if n < 1:
        raise ApiError(f"n must be at least 1, got {n}.")
    for name in ("presence_penalty", "frequency_penalty"):
        penalty = getattr(request, name) or 0.0
        if not -2.0 <= penalty <= 2.0:
            raise ApiError(f"{name} must be in [-2, 2], got {penalty}.")
    if request.repetition_penalty is not None and request.repetition_penalty <= 0.0:
        raise ApiError(
            f"repetition_penalty must be greater than zero, got {request.repetition_penalty}."
        )
    temperature = request.temperature
    if temperature is not None and temperature < 0:
        raise _bad(
            f"temperature must be non-negative, got {temperature}.", "temperature", temperature
        )
    if temperature is not None and temperature > 2:
        raise _bad(f"temperature must be in [0, 2], got {temperature}.", "temperature", temperature)
    if request.top_p is not None and not 0 < request.top_p <= 1:
        raise _bad(f"top_p must be in (0, 1], got {request.top_p}.", "top_p", request.top_p)
    if request.top_k is not None and request.top_k < -1:
        raise ApiError(f"top_k must be 0 (disable), or at least 1, got {request.top_k}.")
    if max_tokens < 1:
        raise _bad(f"max_tokens must be at least 1, got {max_tokens}.", "max_tokens", max_tokens)
    if request.min_tokens < 0:
        raise ApiError(f"min_tokens must be greater than or equal to 0, got {request.min_tokens}.")
    if request.min_tokens > max_tokens:
        raise ApiError(
            f"min_tokens must be less than or equal to max_tokens={max_tokens}, "
            f"got {request.min_tokens}."
        )
    if n > 1 and temperature is not None and temperature < GREEDY_BELOW:
        raise ApiError(f"n must be 1 when using greedy sampling, got {n}.")


def check_logprob_counts(
    sample: int | None, prompt: int | None, max_logprobs: int, vocab_size: int
) -> int | None:
    """vLLM's limits on logprob counts (-1: the whole vocabulary); the sample count to use."""
    if sample == -1:
        sample = vocab_size
    if sample and sample > max_logprobs:
        raise _bad(
            f"Requested sample logprobs of {sample}, which is greater than max allowed: "
            f"{max_logprobs}",
            "logprobs",
            sample,
        )
    if prompt == -1:
        prompt = vocab_size
    if prompt and prompt > max_logprobs:
        raise _bad(
            f"Requested prompt logprobs of {prompt}, which is greater than max allowed: "
            f"{max_logprobs}",
            "prompt_logprobs",
            prompt,
        )
    return sample


def chat_max_tokens(request: ChatCompletionRequest) -> int | None:
    """`max_completion_tokens` wins over the deprecated `max_tokens`."""
    if request.max_completion_tokens is not None:
        return request.max_completion_tokens
    return request.max_tokens


def resolve_max_tokens(requested: int | None, prompt_len: int, max_model_len: int) -> int:
    """Context-length rules of vLLM 0.32: over-long prompt or max_tokens is a 400, else clamp
    (check_sampling then refuses a clamp to 0)."""
    if prompt_len > max_model_len:
        shown = min(prompt_len, max_model_len + 1)
        raise _bad(
            f"This model's maximum context length is {max_model_len} tokens. However, your "
            f"prompt contains at least {shown} input tokens, which exceeds this limit even "
            "without any output tokens. Please reduce the length of the input prompt.",
            "input_tokens",
            shown,
        )
    if requested is not None and requested > max_model_len:
        raise _bad(
            f"max_tokens={requested} cannot be greater than max_model_len={max_model_len}. "
            "Please request fewer output tokens.",
            "max_tokens",
            requested,
        )
    room = max_model_len - prompt_len
    return room if requested is None else min(requested, room)
