"""Load that remembers every call: open or closed loop over aiohttp, one outcome per request.

Thousands of calls a minute on a 2-CPU machine leave no room for the openai SDK's own cost
(it would take the CPU the gateway needs), so bulk traffic goes through aiohttp; the fault tests
check the SDK's view on a few calls of each kind.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

ERROR_KEYS = {"message", "type", "param", "code"}
DONE = b"data: [DONE]"


@dataclass(slots=True)
class CallOutcome:
    """One request as its client saw it (times from the shared monotonic clock)."""

    started: float
    finished: float = 0.0
    status: int | None = None
    call_id: str | None = None
    complete: bool = False
    error_code: int | None = None
    error_shape_ok: bool = True
    transport_error: str | None = None

    @property
    def served(self) -> bool:
        """A whole successful answer reached the client."""
        return self.status == 200 and self.complete and self.error_code is None

    @property
    def seconds(self) -> float:
        """Time from sending to the end of the answer."""
        return self.finished - self.started


def _error_of(payload: Any) -> tuple[int | None, bool]:
    """The code of an OpenAI-shaped error object and whether its shape is exact."""
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return None, False
    code = error.get("code")
    return (code if isinstance(code, int) else None), set(error) == ERROR_KEYS


def _read_stream(outcome: CallOutcome, body: bytes) -> None:
    events = [e for e in body.split(b"\n\n") if e.strip()]
    outcome.complete = bool(events) and events[-1] == DONE
    for event in events:
        if event.startswith(b'data: {"error"'):
            outcome.error_code, outcome.error_shape_ok = _error_of(orjson.loads(event[6:]))


def _read_body(outcome: CallOutcome, body: bytes) -> None:
    outcome.complete = True
    if outcome.status != 200:
        try:
            payload = orjson.loads(body)
        except orjson.JSONDecodeError:
            outcome.error_code, outcome.error_shape_ok = outcome.status, False
            return
        code, outcome.error_shape_ok = _error_of(payload)
        outcome.error_code = code if code is not None else outcome.status


class TrafficClient:
    """Sends chat calls to one gateway with one key, recording an outcome per call."""

    def __init__(self, base_url: str, key: str, timeout_s: float = 60.0) -> None:
        self.url = f"{base_url}/v1/chat/completions"
        self.headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)

    def session(self, limit: int = 0) -> aiohttp.ClientSession:
        """A client session with `limit` connections at most (0: unbounded)."""
        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=limit), timeout=self.timeout
        )

    async def call(self, session: aiohttp.ClientSession, body: bytes) -> CallOutcome:
        """Send one call and read its whole answer."""
        outcome = CallOutcome(started=time.monotonic())
        try:
            async with session.post(self.url, data=body, headers=self.headers) as response:
                outcome.status = response.status
                outcome.call_id = response.headers.get("x-plumbline-call-id")
                data = await response.read()
                stream = "event-stream" in response.headers.get("content-type", "")
                (_read_stream if stream else _read_body)(outcome, data)
        except (aiohttp.ClientError, TimeoutError) as error:
            outcome.transport_error = f"{type(error).__name__}: {error}"
        outcome.finished = time.monotonic()
        return outcome

    async def open_loop(
        self, payload: dict[str, Any], rate: float, seconds: float
    ) -> list[CallOutcome]:
        """Start `rate` calls a second for `seconds`, whatever the latency; all outcomes."""
        body = orjson.dumps(payload)
        total = max(1, round(rate * seconds))
        async with self.session() as session:
            begin = time.monotonic()
            tasks = []
            for i in range(total):
                delay = begin + i / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(self.call(session, body)))
            return list(await asyncio.gather(*tasks))

    async def closed_loop(
        self, payload: dict[str, Any], concurrency: int, count: int
    ) -> list[CallOutcome]:
        """`concurrency` clients back to back until `count` calls were made."""
        body = orjson.dumps(payload)
        outcomes: list[CallOutcome] = []
        remaining = count
        async with self.session(concurrency) as session:

            async def client() -> None:
                nonlocal remaining
                while remaining > 0:
                    remaining -= 1
                    outcomes.append(await self.call(session, body))

            await asyncio.gather(*(client() for _ in range(concurrency)))
        return outcomes


def achieved_rate(outcomes: list[CallOutcome]) -> float:
    """Calls started per second over the span in which they were started."""
    if len(outcomes) < 2:
        return 0.0
    starts = [o.started for o in outcomes]
    span = max(starts) - min(starts)
    return (len(starts) - 1) / span if span > 0 else 0.0


def served_rate(outcomes: list[CallOutcome]) -> float:
    """Whole answers per second, from the first call's start to the last one's end."""
    served = [o for o in outcomes if o.served]
    if not served:
        return 0.0
    span = max(o.finished for o in served) - min(o.started for o in outcomes)
    return len(served) / span if span > 0 else 0.0
