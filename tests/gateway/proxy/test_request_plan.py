"""What the gateway adds upstream, and what it remembers to strip."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.config import LogprobCapture, LogprobMode
from gateway.errors import GatewayError
from gateway.proxy.call_kinds.chat import ChatCompletions
from gateway.proxy.call_kinds.completions import Completions
from gateway.proxy.request_plan import plan_request

TOP5 = LogprobCapture()


def test_chat_without_logprobs_gets_top5_and_strips_them() -> None:
    payload: dict[str, Any] = {"model": "m", "messages": []}
    plan = plan_request(payload, ChatCompletions(), TOP5)
    assert payload["logprobs"] is True and payload["top_logprobs"] == 5
    assert plan.strip_logprobs and plan.capture_logprobs and plan.captured_k == 5


def test_chat_client_top2_is_widened_then_trimmed() -> None:
    payload: dict[str, Any] = {"logprobs": True, "top_logprobs": 2}
    plan = plan_request(payload, ChatCompletions(), TOP5)
    assert payload["top_logprobs"] == 5
    assert plan.client_top_k == 2 and not plan.strip_logprobs


def test_chat_client_asking_more_than_capture_is_untouched() -> None:
    payload: dict[str, Any] = {"logprobs": True, "top_logprobs": 10}
    plan = plan_request(payload, ChatCompletions(), TOP5)
    assert payload["top_logprobs"] == 10 and not plan.changed and plan.captured_k == 10


def test_invalid_combinations_are_left_for_the_backend_to_reject() -> None:
    payload: dict[str, Any] = {"top_logprobs": 3}
    plan = plan_request(payload, ChatCompletions(), TOP5)
    assert payload == {"top_logprobs": 3} and not plan.changed


def test_booleans_spelled_as_vllm_reads_them_are_planned_alike() -> None:
    # vLLM's pydantic models read "yes" as true, so the gateway does too.
    odd: dict[str, Any] = {"logprobs": "yes", "top_logprobs": 2.0, "stream": "1"}
    plan = plan_request(odd, ChatCompletions(), TOP5)
    assert plan.stream and plan.client_top_k == 2 and odd["top_logprobs"] == 5
    assert odd["stream_options"] == {"include_usage": True} and plan.strip_usage


def test_stream_gets_usage_which_is_stripped() -> None:
    payload: dict[str, Any] = {"stream": True}
    plan = plan_request(payload, ChatCompletions(), LogprobCapture(mode=LogprobMode.OFF))
    assert payload["stream_options"] == {"include_usage": True}
    assert plan.strip_usage and not plan.capture_logprobs


def test_continuous_usage_without_include_usage_stays_off_upstream() -> None:
    payload: dict[str, Any] = {"stream": True, "stream_options": {"continuous_usage_stats": True}}
    plan = plan_request(payload, ChatCompletions(), TOP5)
    assert payload["stream_options"] == {"include_usage": True, "continuous_usage_stats": False}
    assert plan.strip_usage


def test_client_usage_request_is_kept() -> None:
    payload: dict[str, Any] = {"stream": True, "stream_options": {"include_usage": True}}
    assert not plan_request(payload, ChatCompletions(), TOP5).strip_usage


def test_completion_logprobs() -> None:
    payload: dict[str, Any] = {"prompt": "x"}
    plan = plan_request(payload, Completions(), TOP5)
    assert payload["logprobs"] == 5 and plan.strip_logprobs
    client: dict[str, Any] = {"prompt": "x", "logprobs": 1}
    plan = plan_request(client, Completions(), TOP5)
    assert client["logprobs"] == 1 and not plan.changed and plan.captured_k == 1


def test_sampled_only_capture_asks_for_zero_alternatives() -> None:
    payload: dict[str, Any] = {}
    plan_request(payload, ChatCompletions(), LogprobCapture(mode=LogprobMode.SAMPLED))
    assert payload["top_logprobs"] == 0


def test_echoed_chat_prompt_keeps_the_clients_prompt_logprobs() -> None:
    # vLLM gives an echoed prompt `top_logprobs` alternatives unless prompt_logprobs is set.
    bare: dict[str, Any] = {"echo": True}
    plan_request(bare, ChatCompletions(), TOP5)
    assert (bare["top_logprobs"], bare["prompt_logprobs"]) == (5, 0)
    top2: dict[str, Any] = {"echo": True, "logprobs": True, "top_logprobs": 2}
    plan_request(top2, ChatCompletions(), TOP5)
    assert (top2["top_logprobs"], top2["prompt_logprobs"]) == (5, 2)
    asked: dict[str, Any] = {"echo": True, "prompt_logprobs": 1}
    plan_request(asked, ChatCompletions(), TOP5)
    assert asked["prompt_logprobs"] == 1
    # A stream has no prompt logprobs to keep, and refuses an explicit positive value.
    stream: dict[str, Any] = {"echo": True, "stream": True, "logprobs": True, "top_logprobs": 2}
    plan_request(stream, ChatCompletions(), TOP5)
    assert "prompt_logprobs" not in stream and stream["top_logprobs"] == 5


def test_echo_spelled_as_a_number_is_an_echo() -> None:
    payload: dict[str, Any] = {"echo": 1}
    plan = plan_request(payload, ChatCompletions(), TOP5)
    assert payload["prompt_logprobs"] == 0 and plan.strip_logprobs and plan.capture_logprobs


def test_values_vllm_cannot_read_are_refused() -> None:
    with pytest.raises(GatewayError) as refused:
        plan_request({"stream": "maybe"}, ChatCompletions(), TOP5)
    assert (refused.value.status, refused.value.param) == (400, "body.stream")


def test_whole_vocabulary_top_logprobs_is_left_to_the_backend() -> None:
    payload: dict[str, Any] = {"logprobs": True, "top_logprobs": -1}
    plan = plan_request(payload, ChatCompletions(), TOP5)
    assert payload["top_logprobs"] == -1 and not plan.changed and not plan.capture_logprobs


def test_echoed_completion_without_logprobs_is_not_captured() -> None:
    # Adding logprobs would make vLLM compute (and return) prompt logprobs as well.
    payload: dict[str, Any] = {"prompt": "x", "echo": True}
    plan = plan_request(payload, Completions(), TOP5)
    assert payload == {"prompt": "x", "echo": True} and not plan.capture_logprobs
    asked: dict[str, Any] = {"prompt": "x", "echo": True, "logprobs": 2}
    assert plan_request(asked, Completions(), TOP5).captured_k == 2


def test_a_false_stream_spelled_as_a_string_does_not_get_prompt_logprobs() -> None:
    # vLLM's raw check reads "no" as truthy and refuses positive prompt_logprobs with a stream.
    payload: dict[str, Any] = {"echo": True, "stream": "no", "logprobs": True, "top_logprobs": 2}
    plan = plan_request(payload, ChatCompletions(), TOP5)
    assert "prompt_logprobs" not in payload and payload["top_logprobs"] == 2
    assert not plan.changed and plan.captured_k == 2
