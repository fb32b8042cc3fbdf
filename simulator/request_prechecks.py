"""vLLM's checks on the raw JSON body, made before its schema is applied.

They are pydantic "before" model validators in vLLM, which run last-defined first, so their
errors win over schema errors and over each other in the order below. Values are read raw:
`stream_options: {}` counts as absent, a string where a count belongs gets its own message.
"""

from __future__ import annotations

from typing import Any

from simulator.errors import ApiError, with_parameter

MAX_CACHE_SALT = 128


def _bad(message: str, parameter: str, *value: Any) -> ApiError:
    return ApiError(with_parameter(message, parameter, *value), param=parameter)


def _require_numbers(data: dict[str, Any], fields: tuple[str, ...]) -> None:
    for field in fields:
        value = data.get(field)
        if value is not None and not isinstance(value, int | float):
            raise _bad(f"`{field}` must be an integer.", field, value)


def _check_prompt_logprobs(data: dict[str, Any]) -> None:
    count = data.get("prompt_logprobs")
    if count is None:
        return
    if data.get("stream") and (count > 0 or count == -1):
        raise _bad("`prompt_logprobs` are not available when `stream=True`.", "prompt_logprobs")
    if count < 0 and count != -1:
        raise _bad("`prompt_logprobs` must be a positive value or -1.", "prompt_logprobs", count)


def _check_stream_options(data: dict[str, Any]) -> None:
    if data.get("stream_options") and not data.get("stream"):
        raise _bad("Stream options can only be defined when `stream=True`.", "stream_options")


def _check_cache_salt(data: dict[str, Any]) -> None:
    salt = data.get("cache_salt")
    if salt is None:
        return
    if not isinstance(salt, str) or not salt:
        raise _bad("Parameter 'cache_salt' must be a non-empty string if provided.", "cache_salt")
    if len(salt) > MAX_CACHE_SALT or any(char in "@/\\\x00" for char in salt):
        raise _bad(
            "Parameter 'cache_salt' must be at most 128 characters and must "
            "not contain '@', '/', '\\\\', or NUL.",
            "cache_salt",
        )


def precheck_chat(data: dict[str, Any]) -> None:
    """Chat: logprob fields first, then stream options, then the cache salt."""
    _require_numbers(data, ("prompt_logprobs", "top_logprobs"))
    _check_prompt_logprobs(data)
    top = data.get("top_logprobs")
    if top is not None:
        if top < 0 and top != -1:
            raise _bad("`top_logprobs` must be a positive value or -1.", "top_logprobs", top)
        if (top == -1 or top > 0) and not data.get("logprobs"):
            raise _bad("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs")
    _check_stream_options(data)
    _check_cache_salt(data)


def precheck_completion(data: dict[str, Any]) -> None:
    """Completions: a prompt first, then stream options, logprob fields, the cache salt."""
    prompt = data.get("prompt")
    if prompt is None or prompt == "":
        raise _bad("Either prompt or prompt_embeds must be provided and non-empty.", "prompt")
    _check_stream_options(data)
    _require_numbers(data, ("prompt_logprobs", "logprobs"))
    _check_prompt_logprobs(data)
    count = data.get("logprobs")
    if count is not None and count < 0 and count != -1:
        raise _bad("`logprobs` must be a positive value or -1.", "logprobs", count)
    _check_cache_salt(data)
