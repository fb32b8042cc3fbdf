"""A client cannot choose where a litellm model connects or which credentials it sends.

The model's provider is a listener this test owns (litellm's OpenAI-compatible provider, with
the configured `api_base` and `api_key`); a second listener plays the attacker whose address
the client writes into the body. The attacker must never be contacted, and only the configured
provider may ever see the provider key.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.security.provider_listener import ProviderListener
from tests.support.calls import CallReader
from tests.support.databases import sqlite_database
from tests.support.gateway_process import GatewayProcess, issue_key

pytestmark = pytest.mark.xdist_group("security-litellm-outbound")
PROVIDER_KEY = "sk-provider-secret-0123456789"
USER = {"role": "user", "content": "hello"}


@dataclass
class World:
    """The gateway, its configured provider, the attacker, a team key and the call log."""

    gateway: GatewayProcess
    provider: ProviderListener
    attacker: ProviderListener
    key: str
    calls: CallReader

    def post(self, body: dict[str, Any], path: str = "/v1/chat/completions") -> httpx.Response:
        """POST a raw JSON body with the team key."""
        headers = {"Authorization": f"Bearer {self.key}"}
        return httpx.post(f"{self.gateway.url}{path}", json=body, headers=headers, timeout=30)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with (
        ProviderListener() as provider,
        ProviderListener() as attacker,
        sqlite_database(tmp_path_factory.mktemp("litellm-outbound")) as database,
    ):
        config = {
            "models": [
                {
                    "name": "hosted",
                    "provider": "litellm",
                    "litellm_model": "openai/tiny",
                    "api_base": provider.url,
                    "api_key": PROVIDER_KEY,
                    "price": {"input_per_million": 1.0, "output_per_million": 2.0},
                }
            ],
            "recording": {"flush_interval_ms": 20},
        }
        with GatewayProcess(config, database) as gateway:
            calls = CallReader(database)
            yield World(gateway, provider, attacker, issue_key(database, "team-x"), calls)
            calls.close()
        assert attacker.seen() == (0, [])


def _hostile_bodies(attacker: str) -> list[tuple[str, dict[str, Any]]]:
    """(the field the 400 must name, a body that sets it)."""
    top = {
        "base_url": attacker,
        "api_base": attacker,
        "api_key": "sk-attacker",
        "extra_headers": {"X-Forwarded-Host": "attacker"},
        "headers": {"Authorization": "Bearer x"},
        "extra_body": {"api_base": attacker},
        "api_version": "2024-01-01",
        "custom_llm_provider": "openai",
        "organization": "org-attacker",
        "mock_response": "owned",
        "metadata": {"team": "other"},
        "callbacks": ["langfuse"],
        "success_callback": ["langfuse"],
        "litellm_call_id": "chosen",
        "num_retries": 50,
        "timeout": 0.001,
        "store": True,
        "service_tier": "priority",
    }
    bodies = [
        (name, {"model": "hosted", "messages": [USER], name: value}) for name, value in top.items()
    ]
    image = {"type": "image_url", "image_url": {"url": f"{attacker}/cat.png"}}
    mcp = {"type": "mcp", "server_url": attacker, "server_label": "x"}
    linked_file = {"type": "file", "file": {"file_data": f"{attacker}/report.pdf"}}
    nested: list[tuple[str, dict[str, Any]]] = [
        ("messages[0].api_base", {"messages": [{**USER, "api_base": attacker}]}),
        (
            "messages[0].content[0].image_url.url",
            {"messages": [{"role": "user", "content": [image]}]},
        ),
        ("tools[0].type", {"messages": [USER], "tools": [mcp]}),
        (
            "messages[0].content[0].file.file_data",
            {"messages": [{"role": "user", "content": [linked_file]}]},
        ),
        (
            "tool_choice.type",
            {
                "messages": [USER],
                "tool_choice": {
                    "type": "allowed_tools",
                    "allowed_tools": {"mode": "auto", "tools": [mcp]},
                },
            },
        ),
        (
            "stream_options.api_base",
            {"messages": [USER], "stream": True, "stream_options": {"api_base": attacker}},
        ),
    ]
    return bodies + [(param, {"model": "hosted", **body}) for param, body in nested]


HOSTILE = [param for param, _ in _hostile_bodies("http://x")]


@pytest.mark.parametrize("param", HOSTILE)
def test_a_field_that_is_not_a_sampling_parameter_is_refused_and_recorded(
    world: World, param: str
) -> None:
    body = dict(_hostile_bodies(world.attacker.url))[param]
    before = world.provider.seen()
    response = world.post(body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == param and param in error["message"]
    row = world.calls.wait(response.headers["x-plumbline-call-id"])
    assert row.status_code == 400 and row.team_id is not None
    assert world.attacker.seen() == (0, [])
    assert world.provider.seen() == before


def test_completions_refuse_them_too(world: World) -> None:
    body = {"model": "hosted", "prompt": "hi", "base_url": world.attacker.url}
    response = world.post(body, "/v1/completions")
    assert response.status_code == 400 and response.json()["error"]["param"] == "base_url"
    assert world.attacker.seen() == (0, [])


def test_sampling_parameters_reach_only_the_configured_provider_with_its_key(world: World) -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    text = {"type": "text", "text": "look"}
    pdf = {
        "type": "file",
        "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"},
    }
    body = {
        "model": "hosted",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [text, image, pdf]},
        ],
        "temperature": 0.5,
        "top_p": 0.9,
        "n": 1,
        "stop": ["\n\n"],
        "max_tokens": 8,
        "presence_penalty": 0.1,
        "frequency_penalty": 0.1,
        "seed": 7,
        "user": "u-1",
        "response_format": {"type": "text"},
        "tools": [tool],
        "tool_choice": {"type": "function", "function": {"name": "f"}},
    }
    _, before = world.provider.seen()
    response = world.post(body)
    assert response.status_code == 200, response.text
    _, after = world.provider.seen()
    (sent,) = after[len(before) :]
    assert sent.headers["authorization"] == f"Bearer {PROVIDER_KEY}"
    assert sent.body["temperature"] == 0.5 and sent.body["seed"] == 7
    assert world.attacker.seen() == (0, [])


def test_a_provider_error_does_not_echo_the_provider_key_or_address(world: World) -> None:
    world.provider.echo_errors = True
    try:
        response = world.post({"model": "hosted", "messages": [USER]})
    finally:
        world.provider.echo_errors = False
    assert response.status_code == 400, response.text
    message = response.json()["error"]["message"]
    assert "refused" in message and "[configured]" in message
    assert PROVIDER_KEY not in response.text
    assert world.provider.url.split("//")[1].split("/")[0] not in response.text
