"""OutboundGuard: parse a team-supplied URL, resolve it once, refuse internal addresses."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from plumbline.outbound.addresses import IPAddress, blocked_reason
from plumbline.outbound.errors import OutboundRefused
from plumbline.outbound.resolver import Resolver, SystemResolver
from plumbline.outbound.urls import OutboundUrl, parse_outbound_url


@dataclass(frozen=True, slots=True)
class CheckedTarget:
    """Where a connection may go: the parsed URL and the only addresses it may use."""

    url: OutboundUrl
    addresses: tuple[IPAddress, ...]
    allowlisted: bool


class OutboundGuard:
    """The one place that decides whether a team-supplied URL may be connected to."""

    def __init__(self, allowed_hosts: Iterable[str] = (), resolver: Resolver | None = None) -> None:
        self.allowed_hosts = frozenset(h.strip().lower().rstrip(".") for h in allowed_hosts)
        self.resolver: Resolver = resolver or SystemResolver()

    def is_allowlisted(self, host: str) -> bool:
        """Whether the operator allowlisted `host` (exact name or IP literal)."""
        return host.lower().rstrip(".") in self.allowed_hosts

    def check_url(self, url: str) -> CheckedTarget:
        """Parse `url` strictly, then check its host as `check_host` does."""
        parsed = parse_outbound_url(url)
        addresses, allowlisted = self.check_host(parsed.host, parsed.port)
        return CheckedTarget(parsed, addresses, allowlisted)

    def check_host(self, host: str, port: int) -> tuple[tuple[IPAddress, ...], bool]:
        """The addresses to connect to; refused if any is internal, unless allowlisted."""
        addresses = tuple(self._resolve(host, port))
        if not addresses:
            raise OutboundRefused("unresolvable", f"{host} does not resolve")
        if self.is_allowlisted(host):
            return addresses, True
        for address in addresses:
            # One internal answer refuses the name: a rebinding name mixes public and private.
            reason = blocked_reason(address)
            if reason is not None:
                raise OutboundRefused(
                    "blocked_address",
                    f"{host} resolves to {address} ({reason}); an operator can allowlist the host",
                )
        return addresses, False

    def _resolve(self, host: str, port: int) -> list[IPAddress]:
        try:
            return [ipaddress.ip_address(host)]
        except ValueError:
            return self.resolver.resolve(host, port)
