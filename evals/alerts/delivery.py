"""Deliver one notification attempt: claim it, POST it, record the outcome, plan a retry.

A channel that is down never blocks an eval: each delivery is its own task, and a failed
attempt only schedules the next one (exponential backoff) until the attempts run out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import aiohttp
from sqlalchemy.orm import Session, sessionmaker

from evals.alerts import error_classes as errors
from evals.alerts.channels import Channel, resolve_channel, suite_policy
from evals.alerts.clients import DeliveryClients
from evals.alerts.repository import alerts as alert_repo
from evals.alerts.repository import notifications as notification_repo
from evals.suites import repository as suite_repo
from evals.transaction import in_transaction
from plumbline.outbound import OutboundRefused
from plumbline.settings import NotifySettings

# Client errors that a later attempt may not repeat; other 4xx mean the channel is misconfigured.
TRANSIENT_4XX = frozenset({408, 409, 425, 429})


@dataclass(frozen=True, slots=True)
class DeliveryOutcome:
    """Where a notification stands after one attempt; `retry_in_s` when another is due."""

    status: str
    retry_in_s: float | None = None


def deliver(
    sessions: sessionmaker[Session],
    notification_id: int,
    notify: NotifySettings,
    clients: DeliveryClients,
) -> DeliveryOutcome:
    """Make one delivery attempt of a notification (skipped if done or being sent)."""
    now = datetime.now(UTC)
    stale = now - timedelta(seconds=notify.timeout_s * 3)
    if not in_transaction(sessions, notification_repo.claim, notification_id, now, stale):
        return DeliveryOutcome("skipped")
    channel, payload, attempts = in_transaction(sessions, _target, notification_id, notify)
    started = time.perf_counter()
    status_code, error = _post(clients, channel, payload, notify.timeout_s)
    entry = {
        "at": now.isoformat(),
        "status_code": status_code,
        "error": error,
        "ms": round((time.perf_counter() - started) * 1000, 1),
    }
    attempts += 1
    delivered = status_code is not None and 200 <= status_code < 300
    permanent = error in errors.PERMANENT or (
        status_code is not None and 400 <= status_code < 500 and status_code not in TRANSIENT_4XX
    )
    if delivered:
        status, delay = "delivered", None
    elif permanent or attempts >= notify.max_attempts:
        status, delay = "failed", None
    else:
        status = "retrying"
        delay = min(notify.backoff_s * 2 ** (attempts - 1), notify.max_backoff_s)
    in_transaction(
        sessions, _record, notification_id, entry, attempts, status, status_code, error, delay
    )
    return DeliveryOutcome(status, delay)


def _target(
    session: Session, notification_id: int, notify: NotifySettings
) -> tuple[Channel | None, object, int]:
    row = notification_repo.notification_by_id(session, notification_id)
    assert row is not None
    alert = alert_repo.alert_by_id(session, row.alert_id, None)
    suite = suite_repo.suite_by_id(session, alert.suite_id, None) if alert else None
    policy = suite_policy(suite.settings if suite else {})
    return resolve_channel(row.channel, policy, notify), row.payload, row.attempts


def _post(
    clients: DeliveryClients, channel: Channel | None, payload: object, timeout_s: float
) -> tuple[int | None, str | None]:
    """POST and keep the status code and a fixed error class; the response body is never read."""
    if channel is None:
        return None, errors.UNKNOWN_CHANNEL
    url = channel.url
    if channel.kind == "alertmanager" and not url.rstrip("/").endswith("/api/v2/alerts"):
        url = url.rstrip("/") + "/api/v2/alerts"
    http = clients.team_supplied if channel.from_suite else clients.configured
    try:
        status_code = http.request(
            "POST", url, json=payload, headers=channel.headers, timeout_s=timeout_s
        ).status
    except OutboundRefused as refused:
        return None, refused.error_class
    except TimeoutError:
        return None, errors.TIMEOUT
    except aiohttp.ClientConnectorError:
        return None, errors.CONNECT_ERROR
    except aiohttp.ClientError:
        return None, errors.TRANSPORT_ERROR
    return status_code, None if 200 <= status_code < 300 else errors.HTTP_STATUS


def _record(
    session: Session,
    notification_id: int,
    entry: dict[str, object],
    attempts: int,
    status: str,
    status_code: int | None,
    error: str | None,
    delay: float | None,
) -> None:
    row = notification_repo.notification_by_id(session, notification_id)
    assert row is not None
    now = datetime.now(UTC)
    notification_repo.record_attempt(
        session,
        notification_id,
        attempts=attempts,
        status=status,
        last_status_code=status_code,
        last_error=error,
        attempt_log=[*row.attempt_log, entry],
        next_attempt_at=now + timedelta(seconds=delay) if delay is not None else None,
        delivered_at=now if status == "delivered" else None,
    )
