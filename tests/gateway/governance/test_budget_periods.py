"""A budget's period ends at UTC midnight (day) or the month's end: spend starts again at zero."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from redis.asyncio import Redis

from gateway.auth.keys import KeyInfo
from gateway.config import BackendConfig, ModelConfig, Price
from gateway.governance.budgets.config import BudgetConfig
from gateway.governance.budgets.guard import BudgetGuard
from gateway.governance.budgets.limits import BudgetLimits
from gateway.governance.budgets.periods import period_of
from gateway.governance.budgets.refusal import BudgetExceeded
from gateway.governance.budgets.store_redis import RedisBudgets
from gateway.metering.record import CallRecord
from gateway.rate_limit_config import RateLimitConfig

pytestmark = pytest.mark.anyio
REDIS = "redis://127.0.0.1:6379/0"
# One micro-unit per prompt token and none for output: a call's charge is its prompt tokens.
MODEL = ModelConfig(
    name="m",
    backends=[BackendConfig(url="http://127.0.0.1:9")],
    price=Price(input_per_million=1.0, output_per_million=0.0),
)
INFO = KeyInfo(
    key_id=7,
    team_id=3,
    team_name="periods",
    is_admin=False,
    store_bodies=False,
    prefix="abcdef0123",
    budget=BudgetLimits(team_day=100, key_month=250),
)


class Clock:
    """A settable UTC clock."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _record(prompt_tokens: int) -> CallRecord:
    return CallRecord(
        id="c",
        created_at=datetime.now(UTC),
        request_id="r",
        endpoint="/v1/chat/completions",
        usage={"prompt_tokens": prompt_tokens, "completion_tokens": 0},
        price_in=1.0,
    )


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[RedisBudgets | None]:
    if request.param == "memory":
        yield None
        return
    redis = Redis.from_url(REDIS)
    prefix = f"plumbline-test-periods-{uuid.uuid4().hex[:8]}:"
    yield RedisBudgets(redis, prefix)
    async for key in redis.scan_iter(f"{prefix}*"):
        await redis.delete(key)
    await redis.aclose()


def _next_year() -> int:
    return datetime.now(UTC).year + 1


async def _spend(guard: BudgetGuard, amount: int) -> None:
    hold = await guard.admit(INFO, MODEL, amount, 0)
    assert hold is not None
    await guard.settle(hold, _record(amount))


async def test_the_day_budget_resets_at_utc_midnight(store: RedisBudgets | None) -> None:
    # Dates ahead of now: Redis expires a period's spend an hour after the period ends.
    year = _next_year()
    clock = Clock(datetime(year, 12, 3, 23, 59, 30, tzinfo=UTC))
    guard = BudgetGuard(BudgetConfig(), RateLimitConfig(), store, clock=clock)
    await _spend(guard, 60)
    await _spend(guard, 40)  # exactly the day's 100
    with pytest.raises(BudgetExceeded) as refused:
        await guard.admit(INFO, MODEL, 1, 0)
    assert refused.value.overrun.line.scope == "team"
    assert f"nothing is left: wait for the reset at {year}-12-04T00:00:00+00:00" in (
        refused.value.message
    )
    assert refused.value.headers[0] == (b"retry-after", b"30")
    clock.now += timedelta(seconds=31)  # the next UTC day
    await _spend(guard, 100)
    # The key's month budget (250) kept counting across the day: 200 spent, 50 left.
    clock.now += timedelta(days=1)
    with pytest.raises(BudgetExceeded) as month:
        await guard.admit(INFO, MODEL, 60, 0)
    line = month.value.overrun.line
    assert (line.scope, line.period.kind, month.value.overrun.spent) == ("key", "month", 200)
    assert f"monthly budget of key `abcdef0123` ({year}-12)" in month.value.message
    assert "may cost up to 0.000060" in month.value.message
    assert "more than the 0.000050 left: lower max_tokens" in month.value.message
    await _spend(guard, 50)
    clock.now = datetime(year + 1, 1, 1, tzinfo=UTC)
    await _spend(guard, 60)


async def test_a_hold_settles_into_the_period_it_was_taken_in(store: RedisBudgets | None) -> None:
    clock = Clock(datetime(_next_year(), 12, 31, 23, 59, 59, tzinfo=UTC))
    guard = BudgetGuard(BudgetConfig(), RateLimitConfig(), store, clock=clock)
    hold = await guard.admit(INFO, MODEL, 90, 0)
    assert hold is not None
    clock.now += timedelta(seconds=2)
    await guard.settle(hold, _record(90))
    # December's hold was released in December; January's day starts empty.
    await _spend(guard, 100)


def test_periods_are_utc_days_and_calendar_months() -> None:
    late = datetime(2026, 2, 28, 23, 30, tzinfo=UTC)
    assert period_of("day", late).resets_at == datetime(2026, 3, 1, tzinfo=UTC)
    assert period_of("month", late).name == "2026-02"
    assert period_of("month", datetime(2026, 12, 15, tzinfo=UTC)).resets_at == datetime(
        2027, 1, 1, tzinfo=UTC
    )
    # New York's evening of the 3rd is already the 4th in UTC.
    evening = datetime(2026, 12, 3, 20, 0, tzinfo=ZoneInfo("America/New_York"))
    assert period_of("day", evening).name == "2026-12-04"
