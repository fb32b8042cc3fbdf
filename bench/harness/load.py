"""Load generators: open loop at a fixed rate, and closed loop as fast as the server answers."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson


@dataclass(frozen=True, slots=True)
class TokenEvents:
    """How a stream's token events look: a pattern of fixed length, matched in raw chunks."""

    pattern: re.Pattern[bytes]
    # Bytes kept from one read to the next: one less than a match, so a match split across
    # two reads is found once and never twice.
    carry: int


# A chat (or completions-style) delta whose content is not empty (the role chunk carries "").
CHAT_TOKENS = TokenEvents(re.compile(rb'"delta":\{"content":"[^"]'), len(b'"delta":{"content":"'))
# A Responses API text delta event (one per token in vLLM's stream).
RESPONSES_TOKENS = TokenEvents(
    re.compile(rb'"type":"response\.output_text\.delta"'),
    len(b'"type":"response.output_text.delta"') - 1,
)


@dataclass(slots=True)
class Sample:
    """One request as the client saw it (seconds); status 0 means no HTTP answer."""

    status: int
    latency: float
    ttft: float | None = None
    gaps: list[float] = field(default_factory=list)
    # How late the request left against the schedule (open loop): the client's own lag.
    lag: float = 0.0
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Request:
    """A request body, encoded once, and whether it streams."""

    payload: bytes
    stream: bool
    tokens: TokenEvents = CHAT_TOKENS

    @classmethod
    def of(cls, body: dict[str, Any], tokens: TokenEvents = CHAT_TOKENS) -> Request:
        """Encode a JSON body."""
        return cls(orjson.dumps(body), bool(body.get("stream")), tokens)


async def _read_stream(
    response: aiohttp.ClientResponse, started: float, tokens: TokenEvents
) -> Sample:
    # Reading whole socket chunks (not lines) keeps the client's CPU per event small; tokens
    # that arrive in one chunk arrived together, so their gaps are 0, as the client saw them.
    ttft: float | None = None
    last = 0.0
    gaps: list[float] = []
    carry = b""
    async for chunk in response.content.iter_any():
        now = time.perf_counter()
        data = carry + chunk
        count = len(tokens.pattern.findall(data))
        carry = data[-tokens.carry :]
        for _ in range(count):
            if ttft is None:
                ttft = now - started
            else:
                gaps.append(now - last)
            last = now
    return Sample(response.status, time.perf_counter() - started, ttft, gaps)


async def send(
    session: aiohttp.ClientSession, url: str, request: Request, headers: dict[str, str]
) -> Sample:
    """Send one request and time it; transport failures come back as status 0."""
    started = time.perf_counter()
    try:
        async with session.post(url, data=request.payload, headers=headers) as response:
            if request.stream and response.status == 200:
                return await _read_stream(response, started, request.tokens)
            await response.read()
            return Sample(response.status, time.perf_counter() - started)
    except (aiohttp.ClientError, TimeoutError) as error:
        return Sample(0, time.perf_counter() - started, error=type(error).__name__)


def client_session(limit: int = 0, timeout_s: float = 60.0) -> aiohttp.ClientSession:
    """A session with JSON headers, `limit` connections (0: unbounded) and a total timeout."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=limit),
        timeout=aiohttp.ClientTimeout(total=timeout_s),
        headers={"Content-Type": "application/json"},
    )


async def open_loop(
    url: str,
    requests: Sequence[Request],
    headers: dict[str, str],
    rate: float,
    seconds: float,
    timeout_s: float = 60.0,
) -> list[Sample]:
    """Start requests (cycling through `requests`) at a fixed rate whatever the latency."""
    total = max(1, int(rate * seconds))
    async with client_session(timeout_s=timeout_s) as session:
        begin = time.perf_counter()
        tasks = []

        async def timed(index: int) -> Sample:
            lag = time.perf_counter() - (begin + index / rate)
            sample = await send(session, url, requests[index % len(requests)], headers)
            sample.lag = lag
            return sample

        for i in range(total):
            delay = begin + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(timed(i)))
        return list(await asyncio.gather(*tasks))


async def closed_loop(
    url: str, request: Request, headers: dict[str, str], workers: int, count: int
) -> list[Sample]:
    """`workers` clients send back to back until `count` requests have been sent."""
    samples: list[Sample] = []
    remaining = count
    async with client_session(workers) as session:

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                samples.append(await send(session, url, request, headers))

        await asyncio.gather(*(worker() for _ in range(workers)))
    return samples
