"""The gateway's stream path in one process: upstream parser, relay and chat meter, per event.

A backend's real stream (the simulator's bytes, top-5 logprobs and usage) is fed, one
chunked event per loop turn, into an `UpstreamConnection` on a fake transport, relayed by a
`Relay` with the chat meter to an ASGI `send` that only keeps the bytes. What one event costs
there is the gateway's own per-chunk work, apart from sockets and uvicorn: CPU seconds per
event here, or instructions per event under callgrind (`--callgrind-events`).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import httpx
import orjson
import uvloop

from gateway.config import BackendLimits, Limits, LogprobCapture
from gateway.proxy.call_kinds.chat import ChatCompletions
from gateway.proxy.relay import Relay
from gateway.proxy.request_plan import MeasurementPlan, plan_request
from gateway.upstream.connection import UpstreamConnection
from gateway.upstream.headers import Headers
from gateway.upstream.response import UpstreamResponse
from simulator.process import SimulatorProcess

HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)


def client_payload(tokens: int) -> dict[str, Any]:
    """What vLLM's benchmark client sends: a chat stream with usage and top-5 logprobs."""
    return {
        "model": "tiny",
        "messages": [{"role": "user", "content": "Summarise the termination clause, please."}],
        "max_tokens": tokens,
        "ignore_eos": True,
        "stream": True,
        "stream_options": {"include_usage": True},
        "logprobs": True,
        "top_logprobs": 5,
        "seed": 7,
    }


def backend_events(tokens: int) -> tuple[MeasurementPlan, list[bytes]]:
    """The plan the gateway makes for the call, and the events the simulator streams for it."""
    payload = client_payload(tokens)
    plan = plan_request(payload, ChatCompletions(), LogprobCapture())
    timing = {"prefill_ms_per_token": 0.0, "decode_ms_per_token": 0.0}
    with SimulatorProcess({"timing": timing}) as simulator:
        url = simulator.base_url + "/v1/chat/completions"
        body = httpx.post(url, content=orjson.dumps(payload), timeout=30).content
    events = [event + b"\n\n" for event in body.split(b"\n\n") if event]
    return plan, events


class _Transport:
    """The transport calls the connection makes; writes are dropped."""

    def write(self, data: bytes) -> None:
        """Drop the request."""

    def is_closing(self) -> bool:
        """Never closing."""
        return False

    def pause_reading(self) -> None:
        """Nothing to pause."""

    def resume_reading(self) -> None:
        """Nothing to resume."""

    def abort(self) -> None:
        """Nothing to abort."""


async def _one_stream(plan: MeasurementPlan, chunks: list[bytes], limits: Limits) -> int:
    loop = asyncio.get_running_loop()
    connection = UpstreamConnection(loop, lambda _: None, limits.backends)
    connection.connection_made(_Transport())  # type: ignore[arg-type]
    sent: list[bytes] = []

    async def send(message: Any) -> None:
        if message["type"] == "http.response.body":
            sent.append(message["body"])

    async def feed() -> None:
        connection.data_received(HEAD)
        for chunk in chunks:
            await asyncio.sleep(0)  # one event per loop turn, as a backend's cadence gives
            connection.data_received(chunk)
        await asyncio.sleep(0)
        connection.data_received(b"0\r\n\r\n")

    feeder = asyncio.create_task(feed())
    await connection.request(b"POST / HTTP/1.1\r\n\r\n", 60.0)
    assert connection.headers is not None
    headers = Headers([(b"content-type", b"text/event-stream")])
    response = UpstreamResponse(200, headers, connection, lambda _: None)
    relay = Relay(send, ChatCompletions(), time.perf_counter(), ("r", "c"), limits)
    await relay.relay(response, plan, "fp", keep=False)
    await feeder
    return len(sent)


async def run_streams(plan: MeasurementPlan, events: list[bytes], streams: int) -> float:
    """CPU seconds of `streams` streams of `events`."""
    chunks = [b"%x\r\n%b\r\n" % (len(event), event) for event in events]
    limits = Limits(backends=BackendLimits())
    started = time.process_time()
    for _ in range(streams):
        await _one_stream(plan, chunks, limits)
    return time.process_time() - started


def _events(tokens: int, path: Path | None) -> tuple[MeasurementPlan, list[bytes]]:
    # A saved stream keeps the simulator out of a run under callgrind.
    if path is not None and path.exists():
        saved = orjson.loads(path.read_bytes())
        return MeasurementPlan(**saved["plan"]), [e.encode() for e in saved["events"]]
    plan, events = backend_events(tokens)
    if path is not None:
        saved = {"plan": asdict(plan), "events": [e.decode() for e in events]}
        path.write_bytes(orjson.dumps(saved))
    return plan, events


def main() -> None:
    """Print CPU microseconds per event (best of the rounds)."""
    parser = argparse.ArgumentParser(prog="python -m bench.stream_cpu.inprocess")
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--streams", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--events", type=Path, help="events file: written if missing, else read")
    args = parser.parse_args()
    plan, events = _events(args.tokens, args.events)
    print(f"{len(events)} events a stream, {sum(map(len, events)) // len(events)} bytes each")
    best = min(uvloop.run(run_streams(plan, events, args.streams)) for _ in range(args.rounds))
    per_event = best / (args.streams * len(events)) * 1e6
    print(
        f"best of {args.rounds}: {per_event:.1f} us CPU per event, "
        f"{best / args.streams * 1e6:.0f} us per stream"
    )


if __name__ == "__main__":
    main()
