"""Parse an outbound URL strictly: http(s), a plain host, no credentials, nothing ambiguous."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from plumbline.outbound.errors import OutboundRefused

MAX_URL_LENGTH = 2048
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class OutboundUrl:
    """A URL that passed the strict parse: scheme, lower-case host (no brackets), port."""

    url: str
    scheme: str
    host: str
    port: int


def parse_outbound_url(url: str) -> OutboundUrl:
    """Split `url`, refusing anything two parsers could read differently."""
    if len(url) > MAX_URL_LENGTH:
        raise OutboundRefused("invalid_url", f"a URL may be at most {MAX_URL_LENGTH} characters")
    if any(ord(c) <= 0x20 or ord(c) == 0x7F or c == "\\" for c in url) or not url.isascii():
        raise OutboundRefused("invalid_url", "the URL has spaces, control or non-ASCII characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise OutboundRefused("invalid_url", f"the URL does not parse: {error}") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise OutboundRefused("invalid_url", "only http:// and https:// URLs are allowed")
    if "@" in parts.netloc:
        raise OutboundRefused("invalid_url", "the URL may not carry a user name or password")
    host = (parts.hostname or "").lower()
    if not host or not _valid_host(host):
        raise OutboundRefused("invalid_url", "the URL needs a DNS name or an IP address as host")
    return OutboundUrl(url, scheme, host, port or _DEFAULT_PORTS[scheme])


def _valid_host(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return True
    labels = host.removesuffix(".").split(".")
    # An all-numeric last label is an IPv4 shorthand (127.1, 2130706433) to some resolvers.
    return all(_LABEL.match(label) for label in labels) and not labels[-1].isdigit()
