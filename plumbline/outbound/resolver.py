"""Name resolution the guard asks once per connection; tests inject their own."""

from __future__ import annotations

import ipaddress
import socket
from typing import Protocol

from plumbline.outbound.addresses import IPAddress
from plumbline.outbound.errors import OutboundRefused


class Resolver(Protocol):
    """Turns a host name into the addresses a connection may use."""

    def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Every address of `host` (raise OutboundRefused if it has none)."""
        ...


class SystemResolver:
    """The operating system's resolver (getaddrinfo), TCP addresses only."""

    def resolve(self, host: str, port: int) -> list[IPAddress]:
        """Every address of `host`, in the order getaddrinfo returns them."""
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            raise OutboundRefused("unresolvable", f"{host} does not resolve") from None
        addresses: dict[IPAddress, None] = {}
        for _family, _type, _proto, _name, sockaddr in infos:
            # An IPv6 sockaddr's text may carry a %scope; the address is checked without it.
            text = str(sockaddr[0]).split("%", 1)[0]
            addresses[ipaddress.ip_address(text)] = None
        return list(addresses)


class StaticResolver:
    """Fixed answers by host name, so tests can say "this name resolves to 169.254.169.254"."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = {h.lower(): [ipaddress.ip_address(a) for a in v] for h, v in answers.items()}

    def resolve(self, host: str, port: int) -> list[IPAddress]:
        """The configured addresses of `host` (an IP literal resolves to itself)."""
        try:
            return [ipaddress.ip_address(host)]
        except ValueError:
            pass
        found = self.answers.get(host.lower())
        if not found:
            raise OutboundRefused("unresolvable", f"{host} does not resolve")
        return list(found)
