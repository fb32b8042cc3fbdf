"""The official OpenAI SDK, sync and async, against the simulator in a uvicorn subprocess."""

from __future__ import annotations

import math

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from simulator.process import SimulatorProcess

QUESTION: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Tell me something."}]


def test_chat_nonstreaming_with_logprobs(client: openai.OpenAI) -> None:
    response = client.chat.completions.create(
        model="tiny", messages=QUESTION, max_tokens=6, logprobs=True, top_logprobs=4
    )
    choice = response.choices[0]
    assert response.id.startswith("chatcmpl-")
    assert response.system_fingerprint == "vllm-0.32.0-8e90816a"
    assert choice.message.role == "assistant"
    assert choice.logprobs is not None
    content = choice.logprobs.content or []
    assert 1 <= len(content) <= 6
    for entry in content:
        assert len(entry.top_logprobs) == 4
        assert entry.top_logprobs[0].token == entry.token
        assert entry.top_logprobs[0].logprob == entry.logprob
        assert entry.logprob <= 0
    assert response.usage is not None
    assert response.usage.completion_tokens == len(content)


def test_chat_streaming_reassembles_the_nonstreaming_text(client: openai.OpenAI) -> None:
    kwargs = {"model": "tiny", "messages": QUESTION, "max_tokens": 12, "seed": 3}
    full = client.chat.completions.create(**kwargs)  # type: ignore[call-overload]
    stream = client.chat.completions.create(
        **kwargs, stream=True, stream_options={"include_usage": True}
    )  # type: ignore[call-overload]
    pieces, usage, finish = [], None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            pieces.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    assert "".join(pieces) == full.choices[0].message.content
    assert finish == full.choices[0].finish_reason
    assert usage is not None
    assert usage.completion_tokens == full.usage.completion_tokens


def test_completions_legacy_logprobs(client: openai.OpenAI) -> None:
    response = client.completions.create(
        model="tiny",
        prompt="Once upon a time",
        max_tokens=5,
        logprobs=3,
        extra_body={"ignore_eos": True},
    )
    choice = response.choices[0]
    logprobs = choice.logprobs
    assert logprobs is not None
    assert logprobs.tokens is not None
    assert logprobs.top_logprobs is not None
    assert len(logprobs.tokens) == 5
    for token, top in zip(logprobs.tokens, logprobs.top_logprobs, strict=True):
        assert 1 <= len(top) <= 4
        assert token in top
    offsets = logprobs.text_offset or []
    assert offsets == sorted(offsets)
    assert offsets[0] == 0


def test_completions_streaming(client: openai.OpenAI) -> None:
    stream = client.completions.create(
        model="tiny",
        prompt="Once upon a time",
        max_tokens=4,
        stream=True,
        extra_body={"ignore_eos": True},
    )
    texts, finishes = [], []
    for chunk in stream:
        for choice in chunk.choices:
            texts.append(choice.text)
            finishes.append(choice.finish_reason)
    assert len(texts) == 4
    assert finishes[-1] == "length"
    assert finishes[:-1] == [None, None, None]


def test_n_choices_and_summed_usage(client: openai.OpenAI) -> None:
    response = client.chat.completions.create(
        model="tiny", messages=QUESTION, n=3, max_tokens=5, extra_body={"ignore_eos": True}
    )
    assert [choice.index for choice in response.choices] == [0, 1, 2]
    assert response.usage is not None
    assert response.usage.completion_tokens == 15
    assert response.model_extra is not None
    assert response.model_extra["metrics"] is None


def test_same_seed_same_output(client: openai.OpenAI) -> None:
    def ask(seed: int) -> list[str | None]:
        response = client.chat.completions.create(
            model="tiny", messages=QUESTION, n=2, seed=seed, max_tokens=16, temperature=1.0
        )
        return [choice.message.content for choice in response.choices]

    assert ask(11) == ask(11)
    assert ask(11) != ask(12)


def test_stop_strings_end_with_stop_reason(client: openai.OpenAI, sim: SimulatorProcess) -> None:
    sim.set_scenarios([{"match": "count", "answers": [{"text": "one, two, three", "p": 1}]}])
    ask: list[ChatCompletionMessageParam] = [{"role": "user", "content": "Please count."}]
    response = client.chat.completions.create(model="tiny", messages=ask, stop=[", three"])
    choice = response.choices[0]
    assert choice.message.content == "one, two"
    assert choice.finish_reason == "stop"
    assert choice.model_extra is not None
    assert choice.model_extra["stop_reason"] == ", three"
    kept = client.chat.completions.create(
        model="tiny",
        messages=ask,
        stop=[", three"],
        extra_body={"include_stop_str_in_output": True},
    )
    assert kept.choices[0].message.content == "one, two, three"
    ended = client.chat.completions.create(model="tiny", messages=ask)
    assert ended.choices[0].finish_reason == "stop"
    assert ended.choices[0].model_extra is not None
    assert ended.choices[0].model_extra["stop_reason"] is None


def test_length_errors_are_bad_requests(client: openai.OpenAI) -> None:
    long_prompt: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": "lorem ipsum dolor " * 400}
    ]
    with pytest.raises(openai.BadRequestError) as too_long:
        client.chat.completions.create(model="tiny", messages=long_prompt)
    assert "maximum context length is 512 tokens" in str(too_long.value)
    with pytest.raises(openai.BadRequestError, match="cannot be greater than max_model_len"):
        client.chat.completions.create(model="tiny", messages=QUESTION, max_tokens=4096)
    clamped = client.chat.completions.create(
        model="tiny", messages=QUESTION, max_completion_tokens=500, extra_body={"ignore_eos": True}
    )
    assert clamped.usage is not None
    assert clamped.usage.total_tokens == 512


def test_unknown_model_is_not_found(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError, match="Valid aliases: tiny"):
        client.chat.completions.create(model="gpt-4", messages=QUESTION)


def test_repeated_long_prompt_hits_the_prefix_cache(client: openai.OpenAI) -> None:
    shared = "Background: " + "the contract renews each year unless cancelled. " * 20
    ask: list[ChatCompletionMessageParam] = [{"role": "user", "content": shared + "Q?"}]
    first = client.chat.completions.create(model="tiny", messages=ask, max_tokens=2)
    second = client.chat.completions.create(model="tiny", messages=ask, max_tokens=2)
    assert first.usage is not None
    assert second.usage is not None
    assert first.usage.prompt_tokens_details is not None
    assert second.usage.prompt_tokens_details is not None
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    cached = second.usage.prompt_tokens_details.cached_tokens or 0
    assert cached > 0
    assert cached % 16 == 0
    assert second.usage.prompt_tokens - cached < 16


def test_models_list(client: openai.OpenAI) -> None:
    models = client.models.list()
    assert [model.id for model in models.data] == ["tiny"]
    assert models.data[0].owned_by == "vllm"


@pytest.mark.anyio
async def test_async_client_streams_and_reports_metrics(sim: SimulatorProcess) -> None:
    async with openai.AsyncOpenAI(
        base_url=f"{sim.base_url}/v1", api_key="sim", max_retries=0
    ) as sdk:
        full = await sdk.chat.completions.create(
            model="tiny", messages=QUESTION, max_tokens=5, extra_body={"ignore_eos": True}
        )
        assert full.model_extra is not None
        metrics = full.model_extra["metrics"]
        assert metrics["queue_time_ms"] >= 0
        assert metrics["time_to_first_token_ms"] > 0
        assert math.isclose(metrics["mean_itl_ms"], metrics["generation_time_ms"] / 4, rel_tol=1e-9)
        stream = await sdk.chat.completions.create(
            model="tiny",
            messages=QUESTION,
            max_tokens=5,
            stream=True,
            stream_options={"include_usage": True},
            extra_body={"ignore_eos": True},
        )
        chunks = [chunk async for chunk in stream]
    final = chunks[-1]
    assert final.choices == []
    assert final.usage is not None
    assert final.usage.completion_tokens == 5
    assert final.model_extra is not None
    assert set(final.model_extra["metrics"]) == {
        "time_to_first_token_ms",
        "generation_time_ms",
        "queue_time_ms",
        "mean_itl_ms",
        "tokens_per_second",
    }
