"""The HTTP clients deliveries use: one for the operator's channels, one guarded for teams'."""

from __future__ import annotations

from dataclasses import dataclass

from plumbline.blocking_http import BlockingHttp
from plumbline.outbound import OutboundGuard, Resolver, guarded_http
from plumbline.settings import NotifySettings


@dataclass(frozen=True, slots=True)
class DeliveryClients:
    """Channels from the settings are trusted as configured; suite channels go through the guard."""

    configured: BlockingHttp
    team_supplied: BlockingHttp

    def close(self) -> None:
        """Close both clients' connections."""
        self.configured.close()
        self.team_supplied.close()


def delivery_clients(notify: NotifySettings, resolver: Resolver | None = None) -> DeliveryClients:
    """Both clients; `resolver` replaces the system's for the guarded one (tests)."""
    guard = OutboundGuard(notify.suite_channels.allowed_hosts, resolver)
    return DeliveryClients(BlockingHttp(), guarded_http(guard))
