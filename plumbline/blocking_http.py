"""BlockingHttp: aiohttp for blocking callers (Celery tasks, the CLI, process start-up waits).

aiohttp has no blocking API, so calls run on a private event loop in a daemon thread, started
on first use, with one session kept across calls (keep-alive). A thread rather than the
caller's own loop: a blocking caller may itself run inside another event loop's thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson


@dataclass(frozen=True, slots=True)
class Reply:
    """A response's status and as much of its body as was asked for."""

    status: int
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON."""
        return orjson.loads(self.body)


def plain_session() -> aiohttp.ClientSession:
    """A session for addresses the caller trusts (a local process, the operator's channels)."""
    return aiohttp.ClientSession(trust_env=True)


class BlockingHttp:
    """Blocking requests over one aiohttp session; `close()` stops its loop and thread."""

    def __init__(
        self,
        open_session: Callable[[], aiohttp.ClientSession] = plain_session,
        check_url: Callable[[str], object] | None = None,
    ) -> None:
        self._open = open_session
        # Called with each URL as the caller gave it, before aiohttp parses it.
        self._check_url = check_url
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._session: aiohttp.ClientSession | None = None

    def __enter__(self) -> BlockingHttp:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def request(
        self,
        method: str,
        url: str,
        *,
        timeout_s: float,
        json: Any = None,
        data: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str | int] | None = None,
        read_limit: int = 0,
        total_s: float | None = None,
    ) -> Reply:
        """Send one request, redirects not followed; the reply holds up to `read_limit` bytes.

        `json`, when given, is the body (else `data`, bytes sent as they are). The body is not
        read unless `read_limit` is set.
        Raises what aiohttp raises (aiohttp.ClientError, TimeoutError) and what `check_url` or
        the session's guard raise. `timeout_s` bounds the connection and each read; `total_s`,
        when given, the whole exchange (a peer that trickles bytes cannot hold it longer).
        """
        if self._check_url is not None:
            self._check_url(url)
        body = data
        if json is not None:
            body = orjson.dumps(json)
            given = dict(headers or {})
            if not any(name.lower() == "content-type" for name in given):
                given["Content-Type"] = "application/json"
            headers = given
        timeout = aiohttp.ClientTimeout(total=total_s, connect=timeout_s, sock_read=timeout_s)
        call = self._request(method, url, timeout, body, headers, params, read_limit)
        future: Future[Reply] = asyncio.run_coroutine_threadsafe(call, self._running_loop())
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def close(self) -> None:
        """Close the session's connections, then stop the loop and its thread."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._close_session(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=self._loop.run_forever, name="plumbline-blocking-http", daemon=True
                )
                self._thread.start()
            return self._loop

    async def _request(
        self,
        method: str,
        url: str,
        timeout: aiohttp.ClientTimeout,
        body: bytes | None,
        headers: Mapping[str, str] | None,
        params: Mapping[str, str | int] | None,
        read_limit: int,
    ) -> Reply:
        if self._session is None:
            self._session = self._open()
        async with self._session.request(
            method,
            url,
            data=body,
            headers=headers,
            params=params,
            timeout=timeout,
            allow_redirects=False,
        ) as response:
            return Reply(response.status, await _read_up_to(response, read_limit))

    async def _close_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()


async def _read_up_to(response: aiohttp.ClientResponse, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = await response.content.read(limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
