"""vLLM's token-in/token-out, batch chat and render routes through the gateway, and LoRA models.

Against the simulator as vLLM serves these with `--enable-scale-out` and a LoRA adapter: the
client gets vLLM's answer, each call is recorded with the backend's own usage, and bad input
gets an OpenAI-shaped 4xx that is recorded too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from simulator.process import SimulatorProcess
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.support.scenarios import simulator_config

pytestmark = pytest.mark.xdist_group("gateway-e2e")
TOKENS = [1, 20, 21, 22, 23]
GENERATE = {
    "model": "tiny",
    "token_ids": TOKENS,
    "sampling_params": {"max_tokens": 5, "temperature": 0},
}
HI = [{"role": "user", "content": "Hi"}]


@pytest.fixture(scope="module")
def adapter_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tiny-lora")


@pytest.fixture(scope="module")
def simulator(adapter_dir: Path) -> Iterator[SimulatorProcess]:
    config = simulator_config(
        enable_scale_out=True, dev_mode=True, lora_adapters={"tiny-lora": str(adapter_dir)}
    )
    with SimulatorProcess(config) as sim:
        yield sim


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database() as url:
        yield url


@pytest.fixture(scope="module")
def gateway(simulator: SimulatorProcess, database: str) -> Iterator[GatewayProcess]:
    config = gateway_config(simulator.base_url)
    legal = {**config["models"][0], "name": "legal-assistant", "upstream_model": "tiny-lora"}
    config["models"].append(legal)
    process = GatewayProcess(config, database)
    with process:
        yield process


@pytest.fixture(scope="module")
def key(database: str) -> str:
    return issue_key(database, "team-a")


@pytest.fixture(scope="module")
def http(gateway: GatewayProcess, key: str) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=gateway.url, headers=headers, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def direct(simulator: SimulatorProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=simulator.base_url, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def calls(database: str) -> Iterator[CallReader]:
    reader = CallReader(database)
    yield reader
    reader.close()


def _masked(body: Any) -> Any:
    volatile = {"request_id", "id", "created", "metrics", "cache_salt"}
    if isinstance(body, dict):
        return {k: None if k in volatile else _masked(v) for k, v in body.items()}
    if isinstance(body, list):
        return [_masked(v) for v in body]
    return body


def test_generate_answers_as_vllm_and_is_recorded_with_its_usage(
    http: httpx.Client, direct: httpx.Client, calls: CallReader
) -> None:
    resp = http.post("/inference/v1/generate", json=GENERATE)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert _masked(body) == _masked(direct.post("/inference/v1/generate", json=GENERATE).json())
    row = calls.wait(resp.headers["x-plumbline-call-id"])
    assert row.endpoint == "/inference/v1/generate" and row.status_code == 200
    usage = body["usage"]
    assert (row.prompt_tokens, row.completion_tokens) == (5, usage["completion_tokens"])
    assert row.completion_tokens == len(body["choices"][0]["token_ids"])
    assert row.input_cost is not None and row.input_cost > 0


@pytest.mark.parametrize("client_usage", [False, True])
def test_a_generate_stream_is_metered_from_its_usage_chunk(
    http: httpx.Client, direct: httpx.Client, calls: CallReader, client_usage: bool
) -> None:
    request: dict[str, Any] = {**GENERATE, "stream": True}
    if client_usage:
        request["stream_options"] = {"include_usage": True}
    with http.stream("POST", "/inference/v1/generate", json=request) as resp:
        text = resp.read().decode()
        call_id = resp.headers["x-plumbline-call-id"]
    chunks = [line[6:] for line in text.split("\n\n") if line.startswith("data: ")]
    assert chunks[-1] == "[DONE]"
    # The usage chunk the gateway asked for is not sent unless the client asked too.
    assert any('"choices":[]' in c for c in chunks) is client_usage
    expected = direct.post("/inference/v1/generate", json=request).text
    assert len(expected.split("\n\n")) == len(text.split("\n\n"))
    assert "system_fingerprint" not in text
    row = calls.wait(call_id)
    assert row.stream and row.prompt_tokens == 5 and row.completion_tokens == 5
    assert row.ttft_ms is not None and row.finish_reason == "length"


def test_batch_chat_is_recorded_as_one_call_of_all_conversations(
    http: httpx.Client, calls: CallReader
) -> None:
    request = {"model": "tiny", "messages": [HI, HI, HI], "max_tokens": 3}
    resp = http.post("/v1/chat/completions/batch", json=request)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert [c["index"] for c in body["choices"]] == [0, 1, 2]
    # The gateway asked for logprobs to capture; the client asked for none and gets none.
    assert all(c["logprobs"] is None for c in body["choices"])
    row = calls.wait(resp.headers["x-plumbline-call-id"])
    assert row.endpoint == "/v1/chat/completions/batch"
    assert row.completion_tokens == body["usage"]["completion_tokens"]
    assert row.prompt_tokens == body["usage"]["prompt_tokens"]


@pytest.mark.parametrize(
    ("path", "request_body"),
    [
        ("/v1/chat/completions/render", {"model": "tiny", "messages": HI}),
        ("/v1/completions/render", {"model": "tiny", "prompt": "Hello there"}),
    ],
)
def test_render_is_a_cheap_row(
    http: httpx.Client,
    direct: httpx.Client,
    calls: CallReader,
    path: str,
    request_body: dict[str, Any],
) -> None:
    resp = http.post(path, json=request_body)
    assert resp.status_code == 200, resp.text
    assert _masked(resp.json()) == _masked(direct.post(path, json=request_body).json())
    row = calls.wait(resp.headers["x-plumbline-call-id"])
    assert row.endpoint == path and row.status_code == 200
    assert row.prompt_tokens is None and row.input_cost in (None, 0)


def test_a_rendered_request_can_be_generated_through_the_gateway(http: httpx.Client) -> None:
    rendered = http.post("/v1/chat/completions/render", json={"model": "tiny", "messages": HI})
    request = {**rendered.json(), "sampling_params": {"max_tokens": 2}}
    resp = http.post("/inference/v1/generate", json=request)
    assert resp.status_code == 200, resp.text
    assert len(resp.json()["choices"][0]["token_ids"]) == 2


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/inference/v1/generate", {**GENERATE, "features": {"mm_hashes": {}}}, "features"),
        ("/inference/v1/generate", {**GENERATE, "content_parts": [{}]}, "content_parts"),
        ("/inference/v1/generate", {**GENERATE, "kv_transfer_params": {}}, "kv_transfer_params"),
        ("/inference/v1/generate", {**GENERATE, "sampling_params": [1]}, "sampling_params"),
        (
            "/inference/v1/generate",
            {**GENERATE, "sampling_params": {"extra_args": {"x": 1}}},
            "sampling_params.extra_args",
        ),
        ("/inference/v1/generate", {**GENERATE, "priority": -5}, "priority"),
        ("/inference/v1/generate", {"token_ids": TOKENS}, "model"),
        ("/inference/v1/generate", {**GENERATE, "model": "nope"}, "model"),
        ("/v1/chat/completions/batch", {"model": "tiny", "messages": []}, "messages"),
        ("/v1/chat/completions/batch", {"model": "tiny", "messages": [HI] * 257}, "messages"),
        ("/v1/chat/completions/batch", {"model": "tiny", "messages": "Hi"}, "messages"),
        (
            "/v1/chat/completions/batch",
            {"model": "tiny", "messages": [[{"role": "user", "content": [{"type": "image_url"}]}]]},
            "messages",
        ),
        (
            "/v1/chat/completions/batch",
            {"model": "tiny", "messages": [HI], "stream": True},
            "stream",
        ),
        ("/v1/chat/completions/render", {"model": "nope", "messages": HI}, "model"),
    ],
)
def test_hostile_input_is_a_recorded_openai_4xx(
    http: httpx.Client, calls: CallReader, path: str, body: dict[str, Any], param: str
) -> None:
    resp = http.post(path, json=body)
    assert 400 <= resp.status_code < 500, resp.text
    error = resp.json()["error"]
    assert error["param"] == param and error["code"] == resp.status_code
    row = calls.wait(resp.headers["x-plumbline-call-id"])
    assert row.endpoint == path and row.status_code == resp.status_code


@pytest.mark.parametrize("path", ["/inference/v1/generate", "/v1/chat/completions/batch"])
def test_bad_json_and_no_key(gateway: GatewayProcess, http: httpx.Client, path: str) -> None:
    resp = http.post(path, content=b"{nope", headers={"content-type": "application/json"})
    assert resp.status_code == 400 and resp.json()["error"]["param"] == "body"
    with httpx.Client(base_url=gateway.url, timeout=30) as anonymous:
        assert anonymous.post(path, json=GENERATE).status_code == 401


def test_a_lora_model_is_served_under_the_gateways_name(
    gateway: GatewayProcess, key: str, direct: httpx.Client, calls: CallReader
) -> None:
    # The backend lists the adapter beside its base model; the gateway lists its own config.
    listed = {m["id"]: m["parent"] for m in direct.get("/v1/models").json()["data"]}
    assert listed == {"tiny": None, "tiny-lora": "tiny"}
    with openai.OpenAI(base_url=f"{gateway.url}/v1", api_key=key, max_retries=0) as sdk:
        assert sorted(m.id for m in sdk.models.list().data) == ["legal-assistant", "tiny"]
        raw = sdk.chat.completions.with_raw_response.create(
            model="legal-assistant", messages=[{"role": "user", "content": "Hi"}], max_tokens=3
        )
        with pytest.raises(openai.NotFoundError):
            sdk.chat.completions.create(
                model="tiny-lora", messages=[{"role": "user", "content": "Hi"}], max_tokens=3
            )
    answer = raw.parse()
    assert answer.model == "tiny-lora" and answer.usage is not None
    row = calls.wait(raw.headers["x-plumbline-call-id"])
    assert (
        row.model == "legal-assistant" and row.completion_tokens == answer.usage.completion_tokens
    )
