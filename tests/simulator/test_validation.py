"""Request validation with vLLM's messages: pydantic errors, JSON errors, context length."""

from __future__ import annotations

import pytest

from simulator.errors import ApiError
from simulator.protocol import ChatCompletionRequest, CompletionRequest
from simulator.validation import check_chat, check_completion, parse_body, resolve_max_tokens


def _error(raw: bytes) -> ApiError:
    with pytest.raises(ApiError) as caught:
        parse_body(raw, ChatCompletionRequest)
    return caught.value


def test_bad_json_reports_the_decoder_position() -> None:
    error = _error(b"{not json")
    assert error.param == "body.1"
    assert error.err_type == "Bad Request"
    assert "'ctx': {'error': 'Expecting property name enclosed in double quotes'}" in error.message


def test_empty_body_is_a_missing_body() -> None:
    error = _error(b"")
    assert error.param == "body"
    assert "'type': 'missing'" in error.message


def test_several_errors_are_counted_and_inputs_summarised() -> None:
    error = _error(b'{"messages": {"a": 1}, "n": "many"}')
    assert error.message.startswith("2 validation errors:\n  {")
    assert "'input': '<dict of 1 items>'" in error.message
    assert error.param == "body.messages"


def test_unknown_fields_are_accepted() -> None:
    request = parse_body(b'{"messages": [], "my_field": 1}', ChatCompletionRequest)
    assert request.model_extra == {"my_field": 1}


@pytest.mark.parametrize(
    ("body", "param", "message"),
    [
        ({"top_logprobs": 2}, "top_logprobs", "when using `top_logprobs`"),
        ({"logprobs": True, "top_logprobs": 21}, "logprobs", "max allowed: 20"),
        ({"stream_options": {}}, "stream_options", "Stream options can only"),
        ({"stream": True, "prompt_logprobs": 1}, "prompt_logprobs", "not available"),
        ({"n": 2, "temperature": 0}, None, "n must be 1 when using greedy sampling, got 2."),
        ({"max_tokens": 0}, "max_tokens", "max_tokens must be at least 1, got 0."),
        ({"temperature": -1}, "temperature", "temperature must be non-negative"),
        ({"top_p": 0}, "top_p", "top_p must be in (0, 1]"),
    ],
)
def test_chat_parameter_errors(body: dict[str, object], param: str | None, message: str) -> None:
    request = ChatCompletionRequest.model_validate({"messages": [], **body})
    with pytest.raises(ApiError) as caught:
        check_chat(request, max_logprobs=20)
    assert caught.value.param == param
    assert message in caught.value.message


def test_completion_logprobs_limit_and_missing_prompt() -> None:
    with pytest.raises(ApiError, match="greater than max allowed: 20"):
        check_completion(CompletionRequest(prompt="x", logprobs=25), max_logprobs=20)
    with pytest.raises(ApiError, match="Either prompt"):
        check_completion(CompletionRequest(prompt=""), max_logprobs=20)


def test_context_length_rules() -> None:
    assert resolve_max_tokens(500, 22, 512) == 490
    assert resolve_max_tokens(None, 22, 512) == 490
    with pytest.raises(ApiError, match="at least 513 input tokens") as too_long:
        resolve_max_tokens(4, 1500, 512)
    assert too_long.value.param == "input_tokens"
    with pytest.raises(ApiError, match="max_tokens must be at least 1, got 0"):
        resolve_max_tokens(1, 512, 512)
    with pytest.raises(ApiError, match="cannot be greater than max_model_len=512"):
        resolve_max_tokens(100000, 10, 512)
