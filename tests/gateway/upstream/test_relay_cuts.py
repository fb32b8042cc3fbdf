"""However a backend's stream is cut into reads, the relay sends and meters as whole events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from gateway.config import BackendLimits, Limits, LogprobCapture
from gateway.errors import GatewayError
from gateway.metering.metered import Metered
from gateway.proxy.call_kinds.chat import ChatCompletions
from gateway.proxy.relay import Relay
from gateway.proxy.request_plan import MeasurementPlan, plan_request
from gateway.upstream.origin_connections import OriginConnections
from tests.gateway.upstream.raw_server import CHUNKED_HEAD, LAST_CHUNK, RawServer, Request, chunk
from tests.support.captures import capture_events

pytestmark = pytest.mark.anyio
PATIENT = 5.0
EVENTS = capture_events("chat_stream_usage_logprobs.txt")
# What the client asked for: everything itself (bytes pass), or nothing (the gateway strips).
CLIENTS = {
    "asked": {
        "stream": True,
        "logprobs": True,
        "top_logprobs": 5,
        "stream_options": {"include_usage": True},
    },
    "plain": {"stream": True},
}


def _plan(client: str) -> MeasurementPlan:
    return plan_request(dict(CLIENTS[client]), ChatCompletions(), LogprobCapture())


def _reference(plan: MeasurementPlan) -> tuple[bytes, Metered]:
    """What feeding each event whole gives: the client's bytes and the measurements."""
    meter = ChatCompletions().meter(plan, "fp")
    out = [part for event in EVENTS for part in meter.feed(event, 0.0)]
    out += meter.flush()
    return b"".join(out), meter.result()


def _pieces(cut: str, plan: MeasurementPlan) -> list[tuple[bytes, bool]]:
    """The stream cut into reads, each with whether to wait until the relay sent it."""
    stream = b"".join(EVENTS)
    if cut == "events":
        # One event per read: each waits for its send (where the client gets anything of it).
        meter = ChatCompletions().meter(plan, "fp")
        return [(event, bool(meter.feed(event, 0.0))) for event in EVENTS]
    if cut == "pairs":
        pieces = [b"".join(EVENTS[i : i + 2]) for i in range(0, len(EVENTS), 2)]
    elif cut == "blank-line":
        # Each event's closing blank line is split between two reads.
        pieces = [part for event in EVENTS for part in (event[:-1], event[-1:])]
    else:
        pieces = [stream[i : i + 7] for i in range(0, len(stream), 7)]
    return [(piece, False) for piece in pieces]


@pytest.fixture
async def servers() -> AsyncIterator[list[RawServer]]:
    started: list[RawServer] = []
    yield started
    for server in started:
        await server.stop()


async def _relay(
    servers: list[RawServer],
    pieces: list[tuple[bytes, bool]],
    plan: MeasurementPlan,
    limits: Limits,
) -> tuple[bytes, Relay]:
    sent: list[bytes] = []
    seen = asyncio.Event()

    async def send(message: Any) -> None:
        if message["type"] == "http.response.body":
            sent.append(message["body"])
            seen.set()

    async def stream(_: Request, __: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(CHUNKED_HEAD)
        for piece, wait in pieces:
            seen.clear()
            writer.write(chunk(piece))
            await writer.drain()
            if wait:
                # The next read brings only the next piece: the relay has sent this one.
                await seen.wait()
        writer.write(LAST_CHUNK)
        await writer.drain()
        return True

    server = RawServer(stream)
    await server.start()
    servers.append(server)
    connections = OriginConnections(server.url, limits.backends)
    relay = Relay(send, ChatCompletions(), 0.0, ("request", "call"), limits)
    response = await connections.post("/v1/chat/completions", b"{}", {}, PATIENT, PATIENT)
    try:
        await relay.relay(response, plan, "fp", keep=True)
    finally:
        response.close()
        connections.close()
    return b"".join(sent), relay


@pytest.mark.parametrize("client", sorted(CLIENTS))
@pytest.mark.parametrize("cut", ["events", "pairs", "blank-line", "every-7-bytes"])
async def test_any_cut_relays_and_meters_as_whole_events(
    servers: list[RawServer], cut: str, client: str
) -> None:
    plan = _plan(client)
    expected, metered = _reference(plan)
    got, relay = await _relay(servers, _pieces(cut, plan), plan, Limits())
    assert got == expected
    assert relay.response_body == expected
    result = relay.metered()
    assert result.completion_tokens_seen == metered.completion_tokens_seen
    assert result.logprob_chunks == metered.logprob_chunks
    assert (result.usage, result.finish_reason) == (metered.usage, metered.finish_reason)
    assert len(result.token_chunk_times) == len(metered.token_chunk_times)


async def test_a_whole_event_over_its_bound_in_one_read_is_a_502(
    servers: list[RawServer],
) -> None:
    big = b'data: {"choices":[],"pad":"' + b"x" * 2048 + b'"}\n\n'
    limits = Limits(backends=BackendLimits(max_sse_event_bytes=1024))
    pieces = [(EVENTS[0], True), (big, False), *((e, False) for e in EVENTS[1:])]
    with pytest.raises(GatewayError, match="over 1024 bytes") as raised:
        await _relay(servers, pieces, _plan("asked"), limits)
    assert raised.value.status == 502
