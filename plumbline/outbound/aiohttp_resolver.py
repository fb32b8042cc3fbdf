"""An aiohttp resolver that hands the connector only addresses the guard checked."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

from aiohttp.abc import AbstractResolver, ResolveResult

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


def _result(host: str, address: str, port: int, version: int) -> Any:
    family = socket.AF_INET6 if version == 6 else socket.AF_INET
    return ResolveResult(
        hostname=host, host=address, port=port, family=family, proto=0, flags=socket.AI_NUMERICHOST
    )
