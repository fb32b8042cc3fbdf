"""Load generators: open loop at a fixed rate, and closed loop as fast as the server answers."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson


@dataclass(slots=True)
class Sample:
    """One request as the client saw it (seconds)."""

    status: int
    latency: float
    ttft: float | None = None
    gaps: list[float] = field(default_factory=list)


async def _one(
    session: aiohttp.ClientSession, url: str, body: bytes, headers: dict[str, str], stream: bool
) -> Sample:
    started = time.perf_counter()
    async with session.post(url, data=body, headers=headers) as response:
        if not stream:
            await response.read()
            return Sample(response.status, time.perf_counter() - started)
        ttft: float | None = None
        last: float | None = None
        gaps: list[float] = []
        async for line in response.content:
            if not line.startswith(b"data: {") or b'"choices":[]' in line:
                continue
            now = time.perf_counter()
            if b'"content":' in line and b'"role"' not in line:
                if ttft is None:
                    ttft = now - started
                elif last is not None:
                    gaps.append(now - last)
                last = now
        return Sample(response.status, time.perf_counter() - started, ttft, gaps)


def _session(limit: int = 0) -> aiohttp.ClientSession:
    timeout = aiohttp.ClientTimeout(total=120)
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=limit), timeout=timeout)


async def open_loop(
    url: str, body: dict[str, Any], headers: dict[str, str], rate: float, seconds: float
) -> list[Sample]:
    """Start requests at a fixed rate whatever the latency (no coordinated omission)."""
    payload = orjson.dumps(body)
    stream = bool(body.get("stream"))
    total = max(1, int(rate * seconds))
    async with _session() as session:
        begin = time.perf_counter()
        tasks = []
        for i in range(total):
            delay = begin + i / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(_one(session, url, payload, headers, stream)))
        return list(await asyncio.gather(*tasks, return_exceptions=False))


async def closed_loop(
    url: str, body: dict[str, Any], headers: dict[str, str], workers: int, requests: int
) -> list[Sample]:
    """`workers` clients send back to back until `requests` have been sent."""
    payload = orjson.dumps(body)
    stream = bool(body.get("stream"))
    samples: list[Sample] = []
    remaining = requests
    async with _session(workers) as session:

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                samples.append(await _one(session, url, payload, headers, stream))

        await asyncio.gather(*(worker() for _ in range(workers)))
    return samples
