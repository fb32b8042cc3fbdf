"""The outbound-URL guard: every connection to a URL a team supplied goes through it."""

from plumbline.outbound.addresses import blocked_reason
from plumbline.outbound.errors import OutboundRefused
from plumbline.outbound.guard import CheckedTarget, OutboundGuard
from plumbline.outbound.httpx_transport import GuardedTransport, guarded_client
from plumbline.outbound.resolver import Resolver, StaticResolver, SystemResolver
from plumbline.outbound.urls import OutboundUrl, parse_outbound_url

__all__ = [
    "CheckedTarget",
    "GuardedTransport",
    "OutboundGuard",
    "OutboundRefused",
    "OutboundUrl",
    "Resolver",
    "StaticResolver",
    "SystemResolver",
    "blocked_reason",
    "guarded_client",
    "parse_outbound_url",
]
