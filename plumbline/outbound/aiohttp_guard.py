"""aiohttp, guarded: every request's URL checked, connections only to the addresses checked."""

from __future__ import annotations

import asyncio
import socket
from functools import partial
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from plumbline.blocking_http import BlockingHttp
from plumbline.outbound.guard import OutboundGuard


class GuardedResolver(AbstractResolver):
    """Use as `TCPConnector(resolver=GuardedResolver(guard))`, with `trust_env=False`."""

    def __init__(self, guard: OutboundGuard) -> None:
        self.guard = guard

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """The checked addresses of `host`; OutboundRefused if any is internal."""
        addresses, _ = await asyncio.to_thread(self.guard.check_host, host, port)
        return [_result(host, str(a), port, a.version) for a in addresses]

    async def close(self) -> None:
        """Nothing to release."""


def guarded_session(guard: OutboundGuard) -> aiohttp.ClientSession:
    """A session for team-supplied URLs: each request checked, pinned, no proxy settings.

    The URL check runs on every request, each redirect too: aiohttp connects to an IP-literal
    host without asking the resolver. The resolver then checks the name again where the
    connection is made, so a name that rebinds between the two is refused or pinned to a
    checked address. No DNS cache: each new connection resolves, as the check did. aiohttp
    moves a URL's user and password into a header before this check sees the URL, so callers
    parse the URL as given first: `guarded_http` does.
    """

    async def check_url(
        request: aiohttp.ClientRequest, send: aiohttp.ClientHandlerType
    ) -> aiohttp.ClientResponse:
        await asyncio.to_thread(guard.check_url, str(request.url))
        return await send(request)

    connector = aiohttp.TCPConnector(resolver=GuardedResolver(guard), use_dns_cache=False)
    return aiohttp.ClientSession(connector=connector, trust_env=False, middlewares=(check_url,))


def guarded_http(guard: OutboundGuard) -> BlockingHttp:
    """Blocking calls to team-supplied URLs: each URL parsed as given, then a guarded session."""
    return BlockingHttp(partial(guarded_session, guard), check_url=guard.check_url)


def _result(host: str, address: str, port: int, version: int) -> Any:
    family = socket.AF_INET6 if version == 6 else socket.AF_INET
    return ResolveResult(
        hostname=host, host=address, port=port, family=family, proto=0, flags=socket.AI_NUMERICHOST
    )
