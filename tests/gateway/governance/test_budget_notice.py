"""The soft-level notice in each channel's shape, delivered to a real receiver or given up."""

from __future__ import annotations

from datetime import UTC, datetime

import aiohttp
import pytest

from gateway.governance.budgets.lines import BudgetLine, Crossing
from gateway.governance.budgets.notice import deliver_notice, notice_facts, notice_payload
from gateway.governance.budgets.periods import period_of
from plumbline.settings import ChannelSettings
from tests.support.otlp_receiver import free_port_url
from tests.support.webhook_receiver import WebhookReceiver

pytestmark = pytest.mark.anyio
LINE = BudgetLine(
    "team", 3, 3, period_of("month", datetime(2026, 12, 3, tzinfo=UTC)), 10**7, 8 * 10**6
)
FACTS = notice_facts(Crossing(LINE, 8_500_000), "search", "search")


def test_each_channel_kind_gets_its_own_shape() -> None:
    webhook = notice_payload("webhook", FACTS)
    assert webhook["event"] == "budget_soft_level" and webhook["spent"] == 8.5
    assert webhook["limit"] == 10.0 and webhook["resets_at"] == "2027-01-01T00:00:00+00:00"
    assert "calls are refused at the limit" in webhook["summary"]
    slack = notice_payload("slack", FACTS)
    assert set(slack) == {"text"} and "`search`" in slack["text"]
    (alert,) = notice_payload("alertmanager", FACTS)
    assert alert["labels"]["alertname"] == "PlumblineBudgetSoftLevel"
    assert alert["endsAt"] == FACTS["resets_at"]


async def test_a_notice_reaches_a_webhook_and_a_dead_channel_is_given_up() -> None:
    async with aiohttp.ClientSession() as http:
        with WebhookReceiver() as hook:
            channel = ChannelSettings(kind="webhook", url=hook.url)
            assert await deliver_notice(http, channel, FACTS, attempts=1, timeout_s=5)
            assert [body["name"] for body in hook.received()] == ["search"]
        dead = ChannelSettings(kind="webhook", url=free_port_url())
        assert not await deliver_notice(http, dead, FACTS, attempts=1, timeout_s=2)
