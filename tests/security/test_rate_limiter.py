"""Token buckets per key and per team in memory, on a clock the test moves by hand."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from gateway.auth.keys import KeyInfo
from gateway.config import GatewayConfig
from gateway.proxy.rate_limits import Grant, RateLimiter, RateLimitExceeded, Refusal
from gateway.rate_limit_config import RateLimitConfig


class Clock:
    """A monotonic clock that only moves when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


KEY = KeyInfo(key_id=7, team_id=3, team_name="legal", is_admin=False, store_bodies=False)


def _limiter(clock: Clock | None = None) -> RateLimiter:
    return RateLimiter(RateLimitConfig(), clock=clock or Clock())


def _admit(limiter: RateLimiter, info: KeyInfo, reserve: int = 0) -> Grant | Refusal:
    async def admit() -> Grant | Refusal:
        try:
            return await limiter.admit(info, reserve)
        except RateLimitExceeded as error:
            return error.refusal

    return asyncio.run(admit())


def _admitted(limiter: RateLimiter, info: KeyInfo, calls: int) -> int:
    return sum(isinstance(_admit(limiter, info), Grant) for _ in range(calls))


def test_no_limits_admit_everything() -> None:
    assert _admitted(_limiter(), KEY, 1000) == 1000


def test_team_requests_per_minute_with_refill_and_retry_after() -> None:
    clock = Clock()
    limiter = _limiter(clock)
    info = replace(KEY, requests_per_minute=6)
    assert _admitted(limiter, info, 10) == 6
    assert _admit(limiter, info) == Refusal("requests", "team", 6, pytest.approx(10.0))
    clock.now += 10.0  # one request's worth at 6 per minute
    assert _admitted(limiter, info, 3) == 1


def test_the_team_bucket_is_shared_by_its_keys_and_key_limits_are_per_key() -> None:
    limiter = _limiter()
    first = replace(KEY, requests_per_minute=5, key_requests_per_minute=3)
    second = replace(first, key_id=8)
    assert _admitted(limiter, first, 10) == 3
    refusal = _admit(limiter, first)
    assert isinstance(refusal, Refusal) and refusal.scope == "key"
    assert _admitted(limiter, second, 10) == 2  # the team's 5 are spent
    other_team = replace(second, team_id=4, key_id=9)
    assert _admitted(limiter, other_team, 3) == 3


def test_a_refused_call_takes_from_no_bucket() -> None:
    limiter = _limiter()
    info = replace(KEY, requests_per_minute=2, key_requests_per_minute=3)
    assert _admitted(limiter, info, 5) == 2  # the team's bucket refuses the third
    # The key's bucket gave only two: a key of its own team with a bigger budget is untouched.
    assert _admitted(limiter, replace(info, requests_per_minute=None), 5) == 1


def test_tokens_are_reserved_at_admission_and_settled_from_the_usage() -> None:
    clock = Clock()
    limiter = _limiter(clock)
    info = replace(KEY, tokens_per_minute=600)
    grant = _admit(limiter, info, 400)
    assert isinstance(grant, Grant)
    refusal = _admit(limiter, info, 400)  # 200 left
    assert isinstance(refusal, Refusal) and refusal.unit == "tokens"
    assert refusal.retry_after_s == pytest.approx(20.0)  # 200 more at 10 per second
    asyncio.run(limiter.settle(grant, 100))  # 300 handed back
    second = _admit(limiter, info, 400)
    assert isinstance(second, Grant)
    asyncio.run(limiter.settle(second, 1000))  # 600 more charged: 100 - 600 = 500 in debt
    refusal = _admit(limiter, info)
    assert isinstance(refusal, Refusal)
    assert refusal.retry_after_s == pytest.approx(50.1)  # out of debt, +1 token
    clock.now += 51
    assert isinstance(_admit(limiter, info), Grant)


def test_debt_and_reservations_are_bounded_by_one_minute() -> None:
    clock = Clock()
    limiter = _limiter(clock)
    info = replace(KEY, tokens_per_minute=60)
    grant = _admit(limiter, info, 10**30)  # a hostile max_tokens reserves a full bucket
    assert isinstance(grant, Grant) and grant.tokens[0].amount == 60
    assert isinstance(_admit(limiter, info), Refusal)
    asyncio.run(limiter.settle(grant, 10**30))
    clock.now += 121
    assert isinstance(_admit(limiter, info, -5), Grant)


def test_changed_limits_apply_on_the_next_call() -> None:
    clock = Clock()
    limiter = _limiter(clock)
    info = replace(KEY, requests_per_minute=10)
    assert _admitted(limiter, info, 100) == 10
    raised = replace(info, requests_per_minute=100)
    clock.now += 6  # six seconds at the new 100 per minute: 10 requests
    assert _admitted(limiter, raised, 100) == 10


def test_the_429_names_the_limit_and_carries_retry_after() -> None:
    error = RateLimitExceeded(Refusal("tokens", "key", 1000, 2.2))
    assert error.status == 429 and error.error_type == "RateLimitError"
    assert "tokens per minute" in error.message and "1000" in error.message
    headers = dict(error.headers)
    assert headers[b"retry-after"] == b"3" and headers[b"retry-after-ms"] == b"2200"
    assert headers[b"x-ratelimit-limit-tokens"] == b"1000"


def test_the_replicas_setting_is_refused_with_what_to_do_instead() -> None:
    config = {"models": [{"name": "m", "backends": [{"url": "http://127.0.0.1:1"}]}]}
    with pytest.raises(ValueError, match="rate_limit_replicas is gone") as refused:
        GatewayConfig.model_validate({**config, "limits": {"rate_limit_replicas": 3}})
    assert "limits.rate_limits.store: redis" in str(refused.value)
