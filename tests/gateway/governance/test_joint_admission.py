"""Rate limits and budgets admitted in one Redis script: all taken or none, each refusal as its
own store gives it, and each store's failure policy when that Redis is down."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from redis.asyncio import Redis

from gateway.auth.keys import KeyInfo
from gateway.config import BackendConfig, ModelConfig, Price
from gateway.governance.budgets.charges import reservation
from gateway.governance.budgets.config import BudgetConfig
from gateway.governance.budgets.guard import BudgetGuard
from gateway.governance.budgets.limits import BudgetLimits
from gateway.governance.budgets.refusal import BudgetExceeded, BudgetsUnavailable
from gateway.governance.budgets.store_joint import JointAdmission
from gateway.governance.budgets.store_redis import RedisBudgets
from gateway.metering.record import CallRecord
from gateway.proxy.admission import Admitted, admit, settle
from gateway.proxy.rate_limits import RateLimiter, RateLimitExceeded
from gateway.proxy.rate_limits.redis_buckets import connect_buckets
from gateway.rate_limit_config import RateLimitConfig
from tests.support.otlp_receiver import free_port_url

pytestmark = pytest.mark.anyio
REDIS = "redis://127.0.0.1:6379/0"
# One micro-unit per prompt token and none for output: a call holds what its body may be.
MODEL = ModelConfig(
    name="m",
    backends=[BackendConfig(url="http://127.0.0.1:9")],
    price=Price(input_per_million=1.0, output_per_million=0.0),
)


BODY = 400
HOLD = reservation(MODEL, BODY, 0, BudgetConfig().body_bytes_per_prompt_token)


def _record(prompt_tokens: int, completion_tokens: int) -> CallRecord:
    return CallRecord(
        id="c",
        created_at=datetime.now(UTC),
        request_id="r",
        endpoint="/v1/chat/completions",
        usage={"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
        price_in=1.0,
        price_out=0.0,
    )


def _info(**limits: int) -> KeyInfo:
    return KeyInfo(
        key_id=11,
        team_id=5,
        team_name="joint",
        is_admin=False,
        store_bodies=False,
        prefix="joint01234",
        requests_per_minute=limits.get("rpm"),
        tokens_per_minute=limits.get("tpm"),
        budget=BudgetLimits(team_day=limits.get("budget", 10 * HOLD)),
    )


class Stores:
    """A limiter and a budget guard on one Redis and prefix, as a gateway builds them."""

    def __init__(self, url: str, prefix: str, policy: str = "open") -> None:
        config = RateLimitConfig.model_validate(
            {"store": "redis", "on_redis_failure": policy, "redis_timeout_s": 0.5}
        )
        self.redis = Redis.from_url(REDIS)
        self.limiter = RateLimiter(config, connect_buckets(url, prefix, config))
        buckets = connect_buckets(url, prefix, config)
        shared = RedisBudgets(buckets.redis, prefix)
        budget_config = BudgetConfig.model_validate({"on_redis_failure": policy})
        self.budgets = BudgetGuard(
            budget_config, config, shared, joint=JointAdmission(buckets, shared)
        )
        self.prefix = prefix

    async def admit(self, info: KeyInfo, body_bytes: int = BODY, reserve: int = 0) -> Admitted:
        return await admit(self.limiter, self.budgets, info, MODEL, body_bytes, reserve)

    async def spent(self) -> int:
        """What is spent on the team's day budget now."""
        keys = [key async for key in self.redis.scan_iter(f"{self.prefix}budget:*:day:*")]
        values = [await self.redis.hget(key, "spent") for key in keys if b":soft" not in key]
        return sum(int(value or 0) for value in values)

    async def tokens_level(self) -> float | None:
        """The level of the team's token bucket (None: never taken from)."""
        keys = [key async for key in self.redis.scan_iter(f"{self.prefix}ratelimit:*tokens")]
        level = await self.redis.hget(keys[0], "level") if keys else None
        return float(level) if level is not None else None

    async def held(self) -> int:
        """What is held on the team's day budget now."""
        keys = [key async for key in self.redis.scan_iter(f"{self.prefix}budget:*")]
        values = [await self.redis.hget(key, "held") for key in keys]
        return sum(int(value or 0) for value in values)

    async def requests_level(self) -> float | None:
        """The level of the key's request bucket (None: never taken from, so full)."""
        keys = [key async for key in self.redis.scan_iter(f"{self.prefix}ratelimit:*requests")]
        if not keys:
            return None
        level = await self.redis.hget(keys[0], "level")
        return float(level) if level is not None else None

    async def close(self) -> None:
        async for key in self.redis.scan_iter(f"{self.prefix}*"):
            await self.redis.delete(key)
        await self.limiter.aclose()
        await self.budgets.aclose()
        await self.redis.aclose()


@pytest.fixture
async def stores() -> AsyncIterator[Stores]:
    built = Stores(REDIS, f"plumbline-test-joint-{uuid.uuid4().hex[:8]}:")
    yield built
    await built.close()


async def test_an_admitted_call_takes_from_both_in_one_script(stores: Stores) -> None:
    admitted = await stores.admit(_info(rpm=5))
    assert admitted.refusal is None and admitted.grant is not None and admitted.hold is not None
    assert (admitted.grant.store, admitted.hold.store) == ("redis", "redis")
    assert await stores.held() == HOLD
    assert await stores.requests_level() == pytest.approx(4, abs=0.01)


async def test_a_rate_limit_refusal_holds_nothing_on_the_budget(stores: Stores) -> None:
    info = _info(rpm=1)
    first = await stores.admit(info)
    assert first.refusal is None
    second = await stores.admit(info)
    assert isinstance(second.refusal, RateLimitExceeded)
    # Nothing taken to settle later: the budget shows only the first call's hold.
    assert second.grant is None and second.hold is None
    assert await stores.held() == HOLD


async def test_a_budget_refusal_takes_nothing_from_the_buckets(stores: Stores) -> None:
    info = _info(rpm=5, budget=HOLD * 3 // 2)
    assert (await stores.admit(info)).refusal is None
    refused = await stores.admit(info)
    assert isinstance(refused.refusal, BudgetExceeded)
    assert refused.grant is None and refused.hold is None
    assert "daily budget of team `joint`" in refused.refusal.message
    assert await stores.requests_level() == pytest.approx(4, abs=0.01)  # one request taken
    assert stores.budgets.counts.refusals == {("team", "day"): 1}


@pytest.mark.parametrize("policy", ["open", "closed"])
async def test_with_that_redis_down_each_store_follows_its_policy(policy: str) -> None:
    down = Stores(free_port_url().replace("http", "redis"), "plumbline-test-joint-down:", policy)
    try:
        admitted = await down.admit(_info(rpm=5))
        if policy == "open":
            assert admitted.refusal is None and admitted.grant is not None
            assert admitted.grant.store == "memory"
            assert admitted.hold is not None and admitted.hold.store == "memory"
        else:
            assert admitted.grant is None and admitted.hold is None
            assert admitted.refusal is not None and admitted.refusal.status == 503  # type: ignore[attr-defined]
        assert down.limiter.counts["error"] + down.limiter.counts["timeout"] == 1
        assert sum(down.budgets.counts.store[r] for r in ("error", "timeout")) == 1
        # Redis is then left alone; the next call goes by policy straight away, both stores.
        assert not down.limiter.shared_ready() and not down.budgets.redis_up
        again = await down.admit(_info(rpm=5))
        if policy == "closed":
            assert again.refusal is not None
        else:
            assert again.refusal is None
    finally:
        await down.limiter.aclose()
        await down.budgets.aclose()
        await down.redis.aclose()


async def test_a_budget_refusal_without_redis_still_settles_the_rate_limit_taken() -> None:
    down = Stores(free_port_url().replace("http", "redis"), "plumbline-test-joint-down2:")
    try:
        info = _info(rpm=5, budget=HOLD // 2)  # less than one call holds: refused locally
        admitted = await down.admit(info)
        assert isinstance(admitted.refusal, BudgetExceeded)
        assert admitted.grant is not None and admitted.grant.store == "memory"
        assert not isinstance(admitted.refusal, BudgetsUnavailable)
    finally:
        await down.limiter.aclose()
        await down.budgets.aclose()
        await down.redis.aclose()


async def test_a_call_settles_its_tokens_and_its_cost_in_one_script(stores: Stores) -> None:
    info = _info(tpm=1000)
    admitted = await stores.admit(info, reserve=100)
    assert admitted.grant is not None and admitted.hold is not None
    assert await stores.tokens_level() == pytest.approx(900, abs=1)
    # 30 prompt and 10 completion tokens were used: 60 of the 100 reserved are handed back,
    # and the hold is replaced by the recorded cost (30 prompt tokens at a micro-unit each).
    await settle(stores.limiter, stores.budgets, (admitted.grant, admitted.hold), _record(30, 10))
    assert await stores.tokens_level() == pytest.approx(960, abs=1)
    assert (await stores.held(), await stores.spent()) == (0, 30)
    assert stores.budgets.counts.shown  # the spend is shown on /metrics as before


async def test_a_settlement_to_a_dead_redis_is_counted_lost_on_both(stores: Stores) -> None:
    info = _info(tpm=1000)
    admitted = await stores.admit(info, reserve=100)
    await stores.limiter.aclose()
    await stores.budgets.aclose()
    down = Stores(free_port_url().replace("http", "redis"), stores.prefix)
    try:
        await settle(down.limiter, down.budgets, (admitted.grant, admitted.hold), _record(30, 10))
        assert down.limiter.settlements_lost == 1 and down.budgets.counts.settlements_lost == 1
    finally:
        await down.limiter.aclose()
        await down.budgets.aclose()
        await down.redis.aclose()
    assert await stores.held() == HOLD  # the hold stands until its period's spend expires
