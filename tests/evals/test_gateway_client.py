"""GatewayClient against an in-process server: bodies, headers, errors, transport failures."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiohttp import web

from evals.gateway_client import ChatRequest, Completion, GatewayCallError, GatewayClient

SEEN = web.AppKey("seen", list[Any])
COMPLETION = {
    "choices": [{"message": {"content": "12 months"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 7, "completion_tokens": 3},
}


def request(model: str) -> ChatRequest:
    messages = [{"role": "user", "content": "cap?"}]
    return ChatRequest(model=model, messages=messages, feature="eval:s", team="legal", seed=3)


async def chat(incoming: web.Request) -> web.Response:
    body = await incoming.json()
    seen = incoming.app[SEEN]
    seen.append((dict(incoming.headers), body))
    headers = {"x-plumbline-call-id": f"call-{len(seen)}"}
    if body["model"] == "busy":
        error = {"error": {"message": "backend overloaded"}}
        return web.json_response(error, status=503, headers=headers)
    if body["model"] == "garbled":
        return web.Response(text="<html>oops</html>", headers=headers)
    if body["model"] == "moved":
        raise web.HTTPTemporaryRedirect("/elsewhere")
    return web.json_response(COMPLETION, headers=headers)


async def models(_: web.Request) -> web.Response:
    data = [{"id": "tiny", "max_model_len": 512}, {"id": "other"}]
    return web.json_response({"object": "list", "data": data})


@asynccontextmanager
async def server() -> AsyncIterator[tuple[str, list[Any]]]:
    app = web.Application()
    app[SEEN] = []
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/", app[SEEN]
    finally:
        await runner.cleanup()


def against_server(work: Callable[[GatewayClient, list[Any]], Awaitable[Any]]) -> Any:
    async def scenario() -> Any:
        async with server() as (url, seen), GatewayClient(url, "sk-test") as client:
            return await work(client, seen)

    return asyncio.run(scenario())


def test_a_chat_sends_the_body_key_feature_and_team_and_reads_the_answer() -> None:
    async def work(client: GatewayClient, seen: list[Any]) -> Completion:
        return await client.chat(request("tiny"))

    completion = against_server(work)
    assert completion == Completion("12 months", "call-1", "stop", 7, 3)


def test_headers_and_body_reach_the_gateway() -> None:
    async def work(client: GatewayClient, seen: list[Any]) -> list[Any]:
        await client.chat(request("tiny"))
        return seen

    [(headers, body)] = against_server(work)
    assert headers["Authorization"] == "Bearer sk-test"
    assert (headers["X-Plumbline-Feature"], headers["X-Plumbline-Team"]) == ("eval:s", "legal")
    assert body == {"model": "tiny", "messages": [{"role": "user", "content": "cap?"}], "seed": 3}


def test_errors_carry_status_message_and_call_id() -> None:
    async def work(client: GatewayClient, seen: list[Any]) -> list[GatewayCallError]:
        errors = []
        for model in ("busy", "garbled", "moved"):
            with pytest.raises(GatewayCallError) as caught:
                await client.chat(request(model))
            errors.append(caught.value)
        return errors

    busy, garbled, moved = against_server(work)
    assert (busy.status, busy.message, busy.call_id, busy.retryable) == (
        503,
        "backend overloaded",
        "call-1",
        True,
    )
    assert garbled.status == 502 and "<html>oops</html>" in garbled.message
    # Redirects are not followed (a POST must not turn into a GET elsewhere).
    assert moved.status == 502 and moved.call_id is None


def test_model_lengths_come_from_the_model_list() -> None:
    async def work(client: GatewayClient, seen: list[Any]) -> dict[str, int | None]:
        return await client.max_model_lens()

    assert against_server(work) == {"tiny": 512, "other": None}


def test_an_unreachable_gateway_is_a_retryable_transport_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def scenario() -> GatewayCallError:
        async with GatewayClient(f"http://127.0.0.1:{port}", "sk-test") as client:
            with pytest.raises(GatewayCallError) as caught:
                await client.chat(request("tiny"))
            return caught.value

    error = asyncio.run(scenario())
    assert error.status is None and error.retryable
