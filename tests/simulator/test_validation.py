"""Request validation with vLLM's messages: raw-body checks, schema errors, sampling, context."""

from __future__ import annotations

import pytest

from simulator.errors import ApiError
from simulator.protocol import ChatCompletionRequest, CompletionRequest
from simulator.request_prechecks import precheck_chat, precheck_completion
from simulator.validation import (
    check_logprob_counts,
    check_sampling,
    parse_body,
    resolve_max_tokens,
)
from simulator.validation_errors import clean_loc, summarize_input


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
        ({"logprobs": True, "top_logprobs": -2}, "top_logprobs", "positive value or -1."),
        ({"logprobs": True, "top_logprobs": "x"}, "top_logprobs", "must be an integer."),
        ({"stream_options": {"include_usage": True}}, "stream_options", "Stream options can"),
        ({"stream": True, "prompt_logprobs": 1}, "prompt_logprobs", "not available"),
        ({"prompt_logprobs": -2}, "prompt_logprobs", "must be a positive value or -1."),
        # A raw-body check answers before the schema sees `messages`.
        ({"messages": "oops", "top_logprobs": 2}, "top_logprobs", "when using `top_logprobs`"),
    ],
)
def test_chat_raw_body_errors(body: dict[str, object], param: str, message: str) -> None:
    with pytest.raises(ApiError) as caught:
        precheck_chat({"messages": [], **body})
    assert caught.value.param == param
    assert message in caught.value.message


def test_raw_body_checks_let_vllms_accepted_values_pass() -> None:
    # An empty stream_options object counts as absent; prompt_logprobs 0 is fine in a stream.
    precheck_chat({"stream_options": {}, "stream": False})
    precheck_chat({"stream": True, "prompt_logprobs": 0, "logprobs": True, "top_logprobs": -1})
    precheck_completion({"prompt": "x", "logprobs": -1})


def test_completion_raw_body_errors_in_vllms_order() -> None:
    with pytest.raises(ApiError, match="Either prompt"):
        precheck_completion({"prompt": "", "stream_options": {"include_usage": True}})
    with pytest.raises(ApiError, match="Stream options") as caught:
        precheck_completion({"prompt": "x", "stream_options": {"a": 1}, "logprobs": -2})
    assert caught.value.param == "stream_options"
    with pytest.raises(ApiError, match=r"`logprobs` must be a positive value or -1\."):
        precheck_completion({"prompt": "x", "logprobs": -2})


@pytest.mark.parametrize(
    ("body", "max_tokens", "param", "message"),
    [
        ({"n": 0}, 5, None, "n must be at least 1, got 0."),
        ({"temperature": -1}, 5, "temperature", "temperature must be non-negative, got -1.0."),
        ({"temperature": 3}, 5, "temperature", "temperature must be in [0, 2], got 3.0."),
        ({"top_p": 0}, 5, "top_p", "top_p must be in (0, 1]"),
        ({"top_k": -2}, 5, None, "top_k must be 0 (disable), or at least 1, got -2."),
        ({}, 0, "max_tokens", "max_tokens must be at least 1, got 0."),
        ({"min_tokens": 9}, 5, None, "min_tokens must be less than or equal to max_tokens=5"),
        ({"presence_penalty": 3}, 5, None, "presence_penalty must be in [-2, 2], got 3.0."),
        # Greedy n is checked last: a bad max_tokens answers first.
        ({"n": 2, "temperature": 0}, 0, "max_tokens", "max_tokens must be at least 1"),
        ({"n": 2, "temperature": 0}, 5, None, "n must be 1 when using greedy sampling, got 2."),
    ],
)
def test_sampling_errors(
    body: dict[str, object], max_tokens: int, param: str | None, message: str
) -> None:
    request = ChatCompletionRequest.model_validate({"messages": [], **body})
    with pytest.raises(ApiError) as caught:
        check_sampling(request, max_tokens)
    assert caught.value.param == param
    assert message in caught.value.message


def test_logprob_counts_and_the_whole_vocabulary() -> None:
    assert check_logprob_counts(5, None, 20, 600) == 5
    with pytest.raises(ApiError, match="sample logprobs of 600, which is greater") as caught:
        check_logprob_counts(-1, None, 20, 600)
    assert caught.value.param == "logprobs"
    assert check_logprob_counts(-1, None, 1000, 600) == 600
    with pytest.raises(ApiError, match="prompt logprobs of 21, which is greater than max allowed"):
        check_logprob_counts(None, 21, 20, 600)


def test_schema_error_locs_and_inputs_as_vllm_shows_them() -> None:
    error = parse_body_error(b'{"prompt": {"a": 1}}', CompletionRequest)
    assert error.param == "body.prompt"
    assert "'loc': 'body.prompt.list" not in error.message
    assert clean_loc(("body", "function-after[x()]", "stop", "list[str]", 0)) == "body.stop.0"
    assert summarize_input(None) == "None"
    assert summarize_input("y" * 300) == "y" * 200 + "...[truncated]"
    assert summarize_input(b"abc") == "<bytes of 3 bytes>"


def test_many_schema_errors_are_capped_at_ten() -> None:
    body = b'{"messages": [' + b",".join([b"1"] * 12) + b"]}"
    error = parse_body_error(body, ChatCompletionRequest)
    assert error.message.startswith("12 validation errors:")
    assert error.message.endswith("...and 2 more errors")


def parse_body_error(
    raw: bytes, model: type[ChatCompletionRequest | CompletionRequest]
) -> ApiError:
    with pytest.raises(ApiError) as caught:
        parse_body(raw, model)
    return caught.value


def test_context_length_rules() -> None:
    assert resolve_max_tokens(500, 22, 512) == 490
    assert resolve_max_tokens(None, 22, 512) == 490
    with pytest.raises(ApiError, match="at least 513 input tokens") as too_long:
        resolve_max_tokens(4, 1500, 512)
    assert too_long.value.param == "input_tokens"
    assert resolve_max_tokens(1, 512, 512) == 0, "check_sampling refuses the clamp to 0"
    with pytest.raises(ApiError, match="cannot be greater than max_model_len=512"):
        resolve_max_tokens(100000, 10, 512)
