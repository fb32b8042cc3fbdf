"""Request parsing and checks, with vLLM 0.32's messages, types and `param` values."""

from __future__ import annotations

import json
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from simulator.errors import ApiError, with_parameter
from simulator.protocol import ChatCompletionRequest, CompletionRequest, SamplingFields
from simulator.sampling import GREEDY_BELOW

ModelT = TypeVar("ModelT", bound=BaseModel)


def _summarise(value: Any) -> Any:
    if isinstance(value, dict):
        return f"<dict of {len(value)} items>"
    if isinstance(value, list):
        return f"<list of {len(value)} items>"
    return value


def _validation_error(errors: list[dict[str, Any]]) -> ApiError:
    """Format errors as vLLM does: a count, then each error dict on its own line."""
    lines = []
    first_loc = ""
    for error in errors:
        loc = ".".join(str(part) for part in error["loc"])
        first_loc = first_loc or loc
        item: dict[str, Any] = {
            "type": error["type"],
            "loc": loc,
            "msg": error["msg"],
            "input": _summarise(error.get("input")),
        }
        if "ctx" in error:
            item["ctx"] = error["ctx"]
        lines.append(str(item))
    plural = "s" if len(errors) != 1 else ""
    message = f"{len(errors)} validation error{plural}:\n  " + "\n  ".join(lines)
    return ApiError(message, status=400, err_type="Bad Request", param=first_loc)


def parse_body(raw: bytes, model: type[ModelT]) -> ModelT:
    """Decode and validate a JSON body, raising vLLM's 400 `Bad Request` on failure."""
    if not raw:
        missing = {"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}
        raise _validation_error([missing])
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = _decode_with_stdlib(raw)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = [dict(e, loc=("body", *e["loc"])) for e in exc.errors(include_url=False)]
        raise _validation_error(errors) from None


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
        raise _validation_error([error]) from None
    except UnicodeDecodeError as exc:
        error = {
            "type": "json_invalid",
            "loc": ("body", exc.start),
            "msg": "JSON decode error",
            "input": {},
            "ctx": {"error": "Invalid UTF-8"},
        }
        raise _validation_error([error]) from None


def _bad(message: str, parameter: str, *value: Any) -> ApiError:
    return ApiError(with_parameter(message, parameter, *value), param=parameter)


def check_sampling(request: SamplingFields, max_logprobs: int) -> None:
    """Checks common to chat and completions (stream options, n, temperature, ...)."""
    if request.stream_options is not None and not request.stream:
        raise _bad("Stream options can only be defined when `stream=True`.", "stream_options")
    if request.prompt_logprobs is not None:
        if request.stream:
            raise _bad("`prompt_logprobs` are not available when `stream=True`.", "prompt_logprobs")
        if request.prompt_logprobs < 0 or request.prompt_logprobs > max_logprobs:
            raise _bad(
                f"Requested prompt logprobs of {request.prompt_logprobs}, which is greater "
                f"than max allowed: {max_logprobs}",
                "prompt_logprobs",
                request.prompt_logprobs,
            )
    if request.n is not None and request.n < 1:
        raise _bad(f"n must be at least 1, got {request.n}.", "n", request.n)
    greedy = request.temperature is not None and request.temperature < GREEDY_BELOW
    if (request.n or 1) > 1 and greedy:
        raise ApiError(f"n must be 1 when using greedy sampling, got {request.n}.")
    if request.temperature is not None and request.temperature < 0:
        raise _bad(
            f"temperature must be non-negative, got {request.temperature}.",
            "temperature",
            request.temperature,
        )
    if request.top_p is not None and not 0 < request.top_p <= 1:
        raise _bad(f"top_p must be in (0, 1], got {request.top_p}.", "top_p", request.top_p)
    if request.top_k is not None and request.top_k < -1:
        raise _bad(
            f"top_k must be 0 (disable), or at least 1, got {request.top_k}.",
            "top_k",
            request.top_k,
        )
    if request.min_tokens < 0:
        raise _bad(
            f"min_tokens must be greater than or equal to 0, got {request.min_tokens}.",
            "min_tokens",
            request.min_tokens,
        )


def _check_logprob_count(count: int, max_logprobs: int, parameter: str) -> None:
    if count < 0:
        raise _bad(f"`{parameter}` must be a positive value.", parameter, count)
    if count > max_logprobs:
        raise _bad(
            f"Requested sample logprobs of {count}, which is greater than max allowed: "
            f"{max_logprobs}",
            "logprobs",
            count,
        )


def check_chat(request: ChatCompletionRequest, max_logprobs: int) -> None:
    """Chat-specific checks, in vLLM's order."""
    if "top_logprobs" in request.model_fields_set and request.top_logprobs is not None:
        if not request.logprobs:
            raise _bad("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs")
        _check_logprob_count(request.top_logprobs, max_logprobs, "top_logprobs")
    check_sampling(request, max_logprobs)
    check_max_tokens(chat_max_tokens(request))


def check_completion(request: CompletionRequest, max_logprobs: int) -> None:
    """Completion-specific checks, in vLLM's order."""
    if request.prompt is None or request.prompt == [] or request.prompt == "":
        raise _bad("Either prompt or prompt_embeds must be provided and non-empty.", "prompt")
    if request.logprobs is not None:
        _check_logprob_count(request.logprobs, max_logprobs, "logprobs")
    check_sampling(request, max_logprobs)
    check_max_tokens(request.max_tokens)


def chat_max_tokens(request: ChatCompletionRequest) -> int | None:
    """`max_completion_tokens` wins over the deprecated `max_tokens`."""
    if request.max_completion_tokens is not None:
        return request.max_completion_tokens
    return request.max_tokens


def check_max_tokens(max_tokens: int | None) -> None:
    """A requested output length must be positive."""
    if max_tokens is not None and max_tokens < 1:
        raise _bad(f"max_tokens must be at least 1, got {max_tokens}.", "max_tokens", max_tokens)


def resolve_max_tokens(requested: int | None, prompt_len: int, max_model_len: int) -> int:
    """Context-length rules of vLLM 0.32: over-long prompt or max_tokens is a 400, else clamp."""
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
    granted = room if requested is None else min(requested, room)
    check_max_tokens(granted)
    return granted
