"""Resolve a suite's notification channels: named ones from settings, inline ones from the suite."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evals.alerting import AlertPolicy, NotifyChannel
from plumbline.settings import NotifySettings


@dataclass(frozen=True, slots=True)
class Channel:
    """A resolved channel: its kind, where to POST, and whether a team wrote the URL."""

    name: str
    kind: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    # Written in the suite (a team's URL, connected to through the outbound guard), not in
    # the settings (the operator's, trusted as configured).
    from_suite: bool = False


def suite_policy(settings: dict[str, Any]) -> AlertPolicy:
    """The alert section of a suite's stored settings."""
    return AlertPolicy.model_validate(settings.get("alert") or {})


def channel_targets(policy: AlertPolicy, notify: NotifySettings) -> list[tuple[str, str]]:
    """(name, kind) of every channel the suite's alerts go to; kind "unknown" if undefined."""
    names = [t.name if isinstance(t, NotifyChannel) else t for t in policy.notify]
    targets = []
    for name in dict.fromkeys(names or notify.default_channels):
        channel = resolve_channel(name, policy, notify)
        targets.append((name, channel.kind if channel else "unknown"))
    return targets


def resolve_channel(name: str, policy: AlertPolicy, notify: NotifySettings) -> Channel | None:
    """The channel called `name`: written in the suite first, else defined in settings."""
    for target in policy.notify:
        if isinstance(target, NotifyChannel) and target.name == name:
            return Channel(
                target.name, target.kind, target.url, dict(target.headers), from_suite=True
            )
    configured = notify.channels.get(name)
    if configured is None:
        return None
    return Channel(name, configured.kind, configured.url, dict(configured.headers))
