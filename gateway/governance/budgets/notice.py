"""The soft-level notice: one message per budget and period, to the operator's channels.

The gateway sends it itself (the alert channels' shapes, no worker code): the Redis marker
that picked this process is the only record that it is due, so it is tried a few times here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import aiohttp

from gateway.governance.budgets.limits import from_micros
from gateway.governance.budgets.lines import Crossing
from plumbline.settings import ChannelSettings

log = logging.getLogger(__name__)
BACKOFF_S = 2.0


def notice_facts(crossing: Crossing, owner_name: str, team_name: str) -> dict[str, Any]:
    """What the notice says, machine-readable."""
    line = crossing.line
    return {
        "version": "1",
        "source": "plumbline",
        "event": "budget_soft_level",
        "scope": line.scope,
        "name": owner_name,
        "team": team_name,
        "period": line.period.kind,
        "period_name": line.period.name,
        "spent": from_micros(crossing.spent),
        "soft_level": from_micros(line.soft),
        "limit": from_micros(line.limit),
        "resets_at": line.period.resets_at.isoformat(),
    }


def _summary(facts: Mapping[str, Any]) -> str:
    return (
        f"{facts['scope'].capitalize()} `{facts['name']}` has spent {facts['spent']:.6f} of its "
        f"{facts['period']} budget {facts['limit']:.6f} ({facts['period_name']}, soft level "
        f"{facts['soft_level']:.6f}); calls are refused at the limit until {facts['resets_at']}."
    )


def notice_payload(kind: str, facts: dict[str, Any]) -> Any:
    """The body a channel of `kind` receives."""
    if kind == "slack":
        return {"text": f":warning: Budget: {_summary(facts)}"}
    if kind == "alertmanager":
        return [
            {
                "labels": {
                    "alertname": "PlumblineBudgetSoftLevel",
                    "scope": facts["scope"],
                    "name": facts["name"],
                    "team": facts["team"],
                    "period": facts["period"],
                    "severity": "warning",
                    "source": "plumbline",
                },
                "annotations": {"summary": _summary(facts)},
                "startsAt": datetime.now(UTC).isoformat(),
                "endsAt": facts["resets_at"],
            }
        ]
    return {**facts, "summary": _summary(facts)}


def _url(channel: ChannelSettings) -> str:
    url = channel.url
    if channel.kind == "alertmanager" and not url.rstrip("/").endswith("/api/v2/alerts"):
        url = url.rstrip("/") + "/api/v2/alerts"
    return url


async def deliver_notice(
    http: aiohttp.ClientSession,
    channel: ChannelSettings,
    facts: dict[str, Any],
    *,
    attempts: int,
    timeout_s: float,
) -> bool:
    """POST the notice to one channel, retrying with backoff; whether it was delivered."""
    payload = notice_payload(channel.kind, facts)
    for attempt in range(attempts):
        try:
            async with (
                asyncio.timeout(timeout_s),
                http.post(_url(channel), json=payload, headers=channel.headers) as reply,
            ):
                if 200 <= reply.status < 300:
                    return True
                failure = f"HTTP {reply.status}"
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            failure = type(error).__name__
        if attempt + 1 < attempts:
            await asyncio.sleep(BACKOFF_S * 2**attempt)
    # Never the URL: a webhook's URL is its secret.
    log.warning("budget notice to a %s channel not delivered (%s)", channel.kind, failure)
    return False
