"""Which IP addresses a team-supplied URL may never reach, and why."""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata endpoints (AWS, GCP, Azure, OpenStack share 169.254.169.254; AWS's IPv6 one).
METADATA = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
# Ranges named explicitly: Python's is_private does not cover CGNAT (RFC 6598), and the
# NAT64 prefix embeds an IPv4 address that must be checked in its own right.
CGNAT = ipaddress.ip_network("100.64.0.0/10")
NAT64 = ipaddress.ip_network("64:ff9b::/96")
SIX_TO_FOUR = ipaddress.ip_network("2002::/16")


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries for translation (NAT64, 6to4), if any."""
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    return None


def blocked_reason(address: IPAddress) -> str | None:
    """Why `address` is off limits to team-supplied URLs (None: a public address)."""
    if address in METADATA:
        return "metadata"
    if isinstance(address, ipaddress.IPv6Address):
        # A mapped address is how an IPv4 socket address reaches an IPv6 socket: refused outright.
        if address.ipv4_mapped is not None:
            return "ipv4-mapped"
        inner = embedded_ipv4(address)
        if inner is not None:
            reason = blocked_reason(inner)
            return f"ipv4-embedded {reason}" if reason else None
        if address.scope_id:
            return "link-local"
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("cgnat", isinstance(address, ipaddress.IPv4Address) and address in CGNAT),
        ("private", address.is_private),
        ("reserved", address.is_reserved),
        ("site-local", isinstance(address, ipaddress.IPv6Address) and address.is_site_local),
        ("not global", not address.is_global),
    )
    return next((name for name, hit in checks if hit), None)
