"""A real vLLM with its operator routes, scale-out and the LoRA adapter `tiny-lora`
(`scripts/vllm-server --dev`): the dev records still describe it, and through a real gateway
the generate, batch chat and render routes answer as vLLM does, recorded with its usage; a LoRA
model and the admin API's operator actions work against it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.simulator.route_records import Replayer, differences
from tests.support.calls import CallReader
from tests.support.databases import postgres_database
from tests.support.gateway_process import GatewayProcess, gateway_config, issue_key
from tests.vllm.runners.servers import launched_server

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]
DEV = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_routes" / "dev"
HI = [{"role": "user", "content": "Hi"}]
GENERATE = {
    "model": "tiny",
    "token_ids": [1, 20, 21, 22, 23],
    "sampling_params": {"max_tokens": 4, "temperature": 0},
}
CHAT = {"model": "tiny", "max_tokens": 3, "temperature": 0}
SAME_ANSWER = [
    ("/inference/v1/generate", GENERATE),
    ("/v1/chat/completions/batch", {**CHAT, "messages": [HI, HI]}),
    ("/v1/chat/completions/render", {"model": "tiny", "messages": HI}),
    ("/v1/completions/render", {"model": "tiny", "prompt": "Hello there"}),
    ("/v1/messages/render", {"model": "tiny", "max_tokens": 4, "messages": HI}),
    ("/v1/responses/render", {"model": "tiny", "input": "Hello there"}),
]  # fmt: skip
# Where scripts/vllm-server --dev builds the adapter.
ADAPTER = Path(os.environ.get("PLUMBLINE_CACHE") or Path.home() / ".cache" / "plumbline")
ADAPTER = ADAPTER / "tiny-lora" / "seed0"
# Ids and times differ per call; the gateway salts each team's prefix cache.
VOLATILE = {"id", "request_id", "created", "metrics", "cache_salt"}


@pytest.fixture(scope="module")
def dev_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[httpx.Client]:
    """A real vLLM started with --dev."""
    yield from launched_server(request, tmp_path_factory, "--dev")


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with postgres_database("plumbline_vllm") as url:
        yield url


@pytest.fixture(scope="module")
def gateway(dev_server: httpx.Client, database: str) -> Iterator[GatewayProcess]:
    config = gateway_config(str(dev_server.base_url).rstrip("/"))
    config["models"].append({**config["models"][0], "name": "legal", "upstream_model": "tiny-lora"})
    process = GatewayProcess(config, database)
    with process:
        yield process


@pytest.fixture(scope="module")
def keys(database: str) -> dict[str, str]:
    return {"team": issue_key(database, "team-a"), "admin": issue_key(database, "ops", admin=True)}


@pytest.fixture(scope="module")
def calls(database: str) -> Iterator[CallReader]:
    reader = CallReader(database)
    yield reader
    reader.close()


def _masked(body: Any) -> Any:
    if isinstance(body, dict):
        return {k: None if k in VOLATILE else _masked(v) for k, v in body.items()}
    if isinstance(body, list):
        return [_masked(v) for v in body]
    return body


def test_the_dev_records_still_describe_vllm(dev_server: httpx.Client) -> None:
    records = sorted(
        (json.loads(p.read_text()) for p in DEV.glob("*.json")), key=lambda r: r["order"]
    )
    replayer = Replayer(dev_server)
    found = [f"{r['name']}: {d}" for r in records for d in differences(r, replayer.replay(r), {})]
    assert not found, "\n".join(found[:30])


@pytest.mark.parametrize(("path", "body"), SAME_ANSWER, ids=[p for p, _ in SAME_ANSWER])
def test_through_the_gateway_as_directly(
    dev_server: httpx.Client,
    gateway: GatewayProcess,
    keys: dict[str, str],
    calls: CallReader,
    path: str,
    body: dict[str, Any],
) -> None:
    direct = dev_server.post(path, json=body)
    with httpx.Client(base_url=gateway.url, timeout=60) as http:
        proxied = http.post(path, json=body, headers={"Authorization": f"Bearer {keys['team']}"})
    assert (proxied.status_code, direct.status_code) == (200, 200), proxied.text
    assert _masked(proxied.json()) == _masked(direct.json())
    row = calls.wait(proxied.headers["x-plumbline-call-id"])
    usage = proxied.json().get("usage") if isinstance(proxied.json(), dict) else None
    if usage:
        assert (row.prompt_tokens, row.completion_tokens) == (
            usage["prompt_tokens"],
            usage["completion_tokens"],
        )
    else:
        assert row.prompt_tokens is None  # a render row


def test_a_generate_stream_is_recorded_with_vllms_usage(
    gateway: GatewayProcess, keys: dict[str, str], calls: CallReader
) -> None:
    with (
        httpx.Client(base_url=gateway.url, timeout=60) as http,
        http.stream(
            "POST",
            "/inference/v1/generate",
            json={**GENERATE, "stream": True},
            headers={"Authorization": f"Bearer {keys['team']}"},
        ) as resp,
    ):
        text = resp.read().decode()
        call_id = resp.headers["x-plumbline-call-id"]
    assert text.endswith("data: [DONE]\n\n") and '"choices":[]' not in text
    row = calls.wait(call_id)
    assert (row.prompt_tokens, row.completion_tokens) == (5, 4)


def test_a_lora_model_and_the_operator_actions(
    gateway: GatewayProcess, keys: dict[str, str]
) -> None:
    admin = {"Authorization": f"Bearer {keys['admin']}"}
    team = {"Authorization": f"Bearer {keys['team']}"}
    chat = {"model": "legal", "messages": HI, "max_tokens": 2}
    operate = "/api/admin/backends/tiny/"
    with httpx.Client(base_url=gateway.url, timeout=60) as http:
        assert http.post("/reset_prefix_cache", headers=admin).status_code == 404
        done = http.post(operate + "reset_prefix_cache", headers=admin).json()
        assert done["backends"] == [{"backend": 0, "status": 200, "answer": {"success": True}}]
        # The dev records' replay unloaded the adapter: load it, use it, unload it, load it.
        load = {"lora_name": "tiny-lora", "lora_path": str(ADAPTER)}
        first = http.post(operate + "load_lora_adapter", json=load, headers=admin).json()
        assert first["backends"][0]["status"] in (200, 400), first
        answer = http.post("/v1/chat/completions", json=chat, headers=team)
        assert answer.status_code == 200 and answer.json()["model"] == "tiny-lora"
        unload = {"lora_name": "tiny-lora"}
        gone = http.post(operate + "unload_lora_adapter", json=unload, headers=admin).json()
        assert gone["backends"][0]["status"] == 200 and "removed" in gone["backends"][0]["answer"]
        assert http.post("/v1/chat/completions", json=chat, headers=team).status_code == 404
        back = http.post(operate + "load_lora_adapter", json=load, headers=admin).json()
        assert back["backends"][0]["status"] == 200
        assert http.post("/v1/chat/completions", json=chat, headers=team).status_code == 200
