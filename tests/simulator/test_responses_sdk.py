"""The simulated Responses API driven by the official openai SDK, as product teams call it
(plain HTTP where the SDK has no call: replaying a background stream)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest

from simulator.process import SimulatorProcess
from tests.simulator.conftest import CAPTURE_LIKE
from tests.simulator.route_records import finished, parse_events
from tests.support.waiting import wait_until


@pytest.fixture(scope="module")
def store_sim() -> Iterator[SimulatorProcess]:
    """A simulator that keeps its responses (VLLM_ENABLE_RESPONSES_API_STORE=1)."""
    # 5 ms a token: a 400-token background answer is still running when the test cancels it.
    timing = {"prefill_ms_per_token": 0.02, "decode_ms_per_token": 5.0}
    config = {**CAPTURE_LIKE, "enable_responses_store": True, "timing": timing}
    with SimulatorProcess(config) as process:
        yield process


@pytest.fixture
def sdk(store_sim: SimulatorProcess) -> Iterator[openai.OpenAI]:
    """The openai SDK pointed at it."""
    base = f"{store_sim.base_url}/v1"
    with openai.OpenAI(base_url=base, api_key="sim", max_retries=0) as client:
        yield client


def test_create_then_retrieve(sdk: openai.OpenAI) -> None:
    created = sdk.responses.create(model="tiny", input="Hello", max_output_tokens=5)
    assert created.status in ("completed", "incomplete")
    assert created.usage is not None and created.usage.output_tokens <= 5
    fetched = sdk.responses.retrieve(created.id)
    assert fetched.output_text == created.output_text


def test_stream_events_in_order_with_usage_at_the_end(sdk: openai.OpenAI) -> None:
    with sdk.responses.stream(model="tiny", input="Hello", max_output_tokens=5) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert kinds[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert final.usage is not None and final.usage.total_tokens > 0


def test_logprobs_only_when_included(sdk: openai.OpenAI) -> None:
    plain = sdk.responses.create(model="tiny", input="Hi", max_output_tokens=3, top_logprobs=2)
    assert plain.output[0].content[0].logprobs is None  # type: ignore[union-attr]
    asked = sdk.responses.create(
        model="tiny",
        input="Hi",
        max_output_tokens=3,
        top_logprobs=2,
        include=["message.output_text.logprobs"],
    )
    logprobs = asked.output[0].content[0].logprobs  # type: ignore[union-attr]
    assert logprobs and all(len(entry.top_logprobs) == 2 for entry in logprobs)


def test_chained_response_sees_the_previous_turn(sdk: openai.OpenAI) -> None:
    first = sdk.responses.create(model="tiny", input="Hello", max_output_tokens=4)
    second = sdk.responses.create(
        model="tiny", input="And then?", max_output_tokens=4, previous_response_id=first.id
    )
    assert first.usage is not None and second.usage is not None
    assert second.usage.input_tokens > first.usage.input_tokens + first.usage.output_tokens


def test_background_response_can_be_cancelled(sdk: openai.OpenAI) -> None:
    queued = sdk.responses.create(
        model="tiny",
        input="Hello",
        background=True,
        max_output_tokens=400,
        extra_body={"ignore_eos": True},
    )
    assert queued.status == "queued"
    cancelled = sdk.responses.cancel(queued.id)
    assert cancelled.status == "cancelled"
    assert sdk.responses.retrieve(queued.id).status == "cancelled"


def test_unknown_id_is_vllms_404(sdk: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        sdk.responses.retrieve("resp_nope")
    assert raised.value.body == {
        "message": "Response with id 'resp_nope' not found.",
        "type": "invalid_request_error",
        "param": "response_id",
        "code": 404,
    }


def test_streamed_background_response_replays_from_starting_after(
    store_sim: SimulatorProcess,
) -> None:
    with httpx.Client(base_url=store_sim.base_url, timeout=30) as http:
        body = {"model": "tiny", "input": "Hi", "max_output_tokens": 4, "background": True}
        first = parse_events(http.post("/v1/responses", json={**body, "stream": True}).text)
        response_id = first[0]["data"]["response"]["id"]
        wait_until(lambda: finished(http, response_id), timeout=30, what="background finishing")
        replayed = parse_events(http.get(f"/v1/responses/{response_id}?stream=true").text)
        later = http.get(f"/v1/responses/{response_id}?stream=true&starting_after=3")
    assert [e["data"] for e in replayed] == [e["data"] for e in first]
    assert [e["data"] for e in parse_events(later.text)] == [e["data"] for e in first[4:]]


def test_streaming_a_response_that_recorded_no_events_drops_the_connection(
    store_sim: SimulatorProcess,
) -> None:
    # What vLLM 0.32 does (seen on the CPU build): a 200 event stream, then its generator raises
    # "Unknown response_id" and the body is cut off.
    with httpx.Client(base_url=store_sim.base_url, timeout=30) as http:
        body = {"model": "tiny", "input": "Hi", "max_output_tokens": 3}
        response_id = http.post("/v1/responses", json=body).json()["id"]
        with http.stream("GET", f"/v1/responses/{response_id}?stream=true") as resp:
            assert resp.status_code == 200
            assert resp.headers["content-type"] == "text/event-stream; charset=utf-8"
            with pytest.raises(httpx.RemoteProtocolError):
                resp.read()
