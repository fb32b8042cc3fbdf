"""The outbound-URL guard: every connection to a URL a team supplied goes through it."""

from plumbline.outbound.addresses import blocked_reason
from plumbline.outbound.aiohttp_guard import GuardedResolver, guarded_http, guarded_session
from plumbline.outbound.errors import OutboundRefused
from plumbline.outbound.guard import CheckedTarget, OutboundGuard
from plumbline.outbound.resolver import Resolver, StaticResolver, SystemResolver
from plumbline.outbound.urls import OutboundUrl, parse_outbound_url

__all__ = [
    "CheckedTarget",
    "GuardedResolver",
    "OutboundGuard",
    "OutboundRefused",
    "OutboundUrl",
    "Resolver",
    "StaticResolver",
    "SystemResolver",
    "blocked_reason",
    "guarded_http",
    "guarded_session",
    "parse_outbound_url",
]
