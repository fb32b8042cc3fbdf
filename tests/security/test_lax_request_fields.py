"""The gateway reads stream, n, logprobs, max_tokens and stream_options as vLLM's pydantic does.

vLLM (and the simulator, which uses the same models) coerces `"stream": "yes"` to a stream and
`"n": "2"` to two choices. A gateway that read only JSON `true` expected a JSON body, met SSE and
answered 502; it also stripped usage a client asked for with `"include_usage": "yes"`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from gateway.recording import call_queries
from plumbline.models import Call
from simulator.process import SimulatorProcess
from tests.security.stack import SecurityStack
from tests.support.calls import CallReader
from tests.support.databases import sqlite_database
from tests.support.gateway_process import GatewayProcess, issue_key

pytestmark = pytest.mark.xdist_group("security-lax-fields")
CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
MESSAGES = [{"role": "user", "content": "Say something short."}]


def _events(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.headers["content-type"].startswith("text/event-stream"), response.text
    lines = [line for line in response.text.split("\n\n") if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]", lines[-1:]
    return [orjson.loads(line[6:]) for line in lines[:-1]]


def _post(stack: SecurityStack, path: str, body: dict[str, Any]) -> httpx.Response:
    with stack.api("alpha") as client:
        return client.post(path, json={"model": "tiny", **body})


def _captured_k(reader: CallReader, call: Call) -> int | None:
    with reader.sessions() as session:
        row = call_queries.logprobs_of(session, call)
    return row.top_k if row is not None else None


@pytest.fixture(scope="module")
def reader(stack: SecurityStack) -> Iterator[CallReader]:
    found = CallReader(stack.database_url)
    yield found
    found.close()


@pytest.mark.parametrize("spelling", ["yes", "true", "on", "1", 1, 1.0, "TRUE", "t", "y"])
def test_a_stream_spelled_any_way_vllm_accepts_is_relayed_as_a_stream(
    stack: SecurityStack, reader: CallReader, spelling: object
) -> None:
    response = _post(stack, CHAT, {"messages": MESSAGES, "max_tokens": 4, "stream": spelling})
    assert response.status_code == 200, response.text
    events = _events(response)
    assert events and all(e["object"] == "chat.completion.chunk" for e in events)
    # The gateway added include_usage for metering and took it out again.
    assert all("usage" not in e or e["usage"] is None for e in events)
    call = reader.wait(response.headers["x-plumbline-call-id"])
    assert call.stream is True and call.status_code == 200
    assert call.completion_tokens is not None and call.completion_tokens > 0


@pytest.mark.parametrize("spelling", ["no", "false", "off", "0", 0, 0.0, "f", "n"])
def test_a_stream_refused_any_way_vllm_accepts_is_a_json_body(
    stack: SecurityStack, reader: CallReader, spelling: object
) -> None:
    response = _post(stack, CHAT, {"messages": MESSAGES, "max_tokens": 4, "stream": spelling})
    assert response.status_code == 200, response.text
    assert response.json()["object"] == "chat.completion"
    assert reader.wait(response.headers["x-plumbline-call-id"]).stream is False


def test_completions_read_stream_and_logprobs_alike(
    stack: SecurityStack, reader: CallReader
) -> None:
    body = {"prompt": "Once upon", "max_tokens": "3", "stream": "yes", "logprobs": 2.0}
    response = _post(stack, COMPLETIONS, body)
    assert response.status_code == 200, response.text
    choices = [c for e in _events(response) for c in e["choices"]]
    assert sum(len(c["logprobs"]["tokens"]) for c in choices if c.get("logprobs")) <= 3
    call = reader.wait(response.headers["x-plumbline-call-id"])
    assert (call.stream, call.max_tokens, _captured_k(reader, call)) == (True, 3, 2)


def test_usage_asked_for_as_a_string_is_kept_for_the_client(stack: SecurityStack) -> None:
    body = {
        "messages": MESSAGES,
        "max_tokens": 4,
        "stream": True,
        "stream_options": {"include_usage": "yes"},
    }
    response = _post(stack, CHAT, body)
    usage = [e["usage"] for e in _events(response) if e.get("usage")]
    assert usage and usage[-1]["completion_tokens"] > 0


def test_string_counts_are_counts(stack: SecurityStack, reader: CallReader) -> None:
    body = {"messages": MESSAGES, "max_tokens": "4", "n": "2", "temperature": 1.0}
    response = _post(stack, CHAT, body)
    assert response.status_code == 200, response.text
    assert len(response.json()["choices"]) == 2
    call = reader.wait(response.headers["x-plumbline-call-id"])
    assert (call.n, call.max_tokens) == (2, 4)


def test_logprobs_spelled_as_strings_are_captured_and_trimmed(
    stack: SecurityStack, reader: CallReader
) -> None:
    body = {"messages": MESSAGES, "max_tokens": 4, "logprobs": "true", "top_logprobs": 2.0}
    response = _post(stack, CHAT, body)
    assert response.status_code == 200, response.text
    content = response.json()["choices"][0]["logprobs"]["content"]
    assert content and all(len(token["top_logprobs"]) == 2 for token in content)
    call = reader.wait(response.headers["x-plumbline-call-id"])
    # The gateway captured its own top 5 and trimmed them to the client's 2.
    assert _captured_k(reader, call) == 5


def test_a_false_stream_spelled_as_a_string_keeps_an_echo_valid(
    stack: SecurityStack, reader: CallReader
) -> None:
    # vLLM's raw check reads "no" as truthy, so prompt_logprobs added for metering would be
    # refused as "not available when stream=True".
    body = {"messages": MESSAGES, "max_tokens": 3, "echo": True, "stream": "no"}
    response = _post(stack, CHAT, {**body, "logprobs": True, "top_logprobs": 2})
    assert response.status_code == 200, response.text
    call = reader.wait(response.headers["x-plumbline-call-id"])
    assert call.stream is False and _captured_k(reader, call) == 2


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("stream", "maybe"),
        ("stream", 2),
        ("n", "two"),
        ("n", 1.5),
        ("max_tokens", "1e3"),
        ("logprobs", "sure"),
        ("top_logprobs", "2"),
        ("stream_options", {"include_usage": "perhaps"}),
        ("echo", None),
    ],
)
def test_values_vllm_refuses_are_a_400_that_names_the_field(
    stack: SecurityStack, reader: CallReader, field: str, value: object
) -> None:
    body: dict[str, Any] = {"messages": MESSAGES, "max_tokens": 4, "stream": True, field: value}
    response = _post(stack, CHAT, body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    # vLLM's own names: `body.<field>` for schema errors, the bare field for its own checks.
    assert error["param"].removeprefix("body.").split(".")[0] == field
    assert field in error["message"]
    assert error["type"] == "BadRequestError"
    call = reader.wait(response.headers["x-plumbline-call-id"])
    assert call.status_code == 400 and call.model == "tiny"
    assert call.backend is None, "refused before any backend saw it"


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A gateway whose model is served through litellm (on a simulator)."""
    with (
        SimulatorProcess() as sim,
        sqlite_database(tmp_path_factory.mktemp("lax-litellm")) as database,
    ):
        model = {"name": "hosted", "provider": "litellm", "litellm_model": "openai/tiny"}
        config = {"models": [{**model, "api_base": f"{sim.base_url}/v1"}]}
        env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        with GatewayProcess(config, database, env=env) as gateway:
            headers = {"Authorization": f"Bearer {issue_key(database, 'team-hosted')}"}
            with httpx.Client(base_url=gateway.url, headers=headers, timeout=30) as client:
                yield client


@pytest.mark.parametrize(("spelling", "streamed"), [("yes", True), (1, True), ("no", False)])
def test_a_litellm_model_gets_the_stream_decision_the_gateway_made(
    hosted: httpx.Client, spelling: object, streamed: bool
) -> None:
    body = {"model": "hosted", "messages": MESSAGES, "max_tokens": 4, "stream": spelling}
    response = hosted.post(CHAT, json=body)
    assert response.status_code == 200, response.text
    if streamed:
        assert _events(response)
    else:
        assert response.json()["object"] == "chat.completion"
