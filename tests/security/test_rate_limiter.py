"""Token buckets per key and per team, on a clock the test moves by hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gateway.auth.keys import KeyInfo
from gateway.proxy.rate_limiter import RateLimiter, RateLimitExceeded, Refusal


class Clock:
    """A monotonic clock that only moves when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


KEY = KeyInfo(key_id=7, team_id=3, team_name="legal", is_admin=False, store_bodies=False)


def _admitted(limiter: RateLimiter, info: KeyInfo, calls: int) -> int:
    return sum(limiter.admit(info) is None for _ in range(calls))


def test_no_limits_admit_everything() -> None:
    assert _admitted(RateLimiter(clock=Clock()), KEY, 1000) == 1000


def test_team_requests_per_minute_with_refill_and_retry_after() -> None:
    clock = Clock()
    limiter = RateLimiter(clock=clock)
    info = replace(KEY, requests_per_minute=6)
    assert _admitted(limiter, info, 10) == 6
    refusal = limiter.admit(info)
    assert refusal == Refusal("requests", "team", 6, pytest.approx(10.0))
    clock.now += 10.0  # one request's worth at 6 per minute
    assert _admitted(limiter, info, 3) == 1


def test_the_team_bucket_is_shared_by_its_keys_and_key_limits_are_per_key() -> None:
    limiter = RateLimiter(clock=Clock())
    first = replace(KEY, requests_per_minute=5, key_requests_per_minute=3)
    second = replace(first, key_id=8)
    assert _admitted(limiter, first, 10) == 3
    refusal = limiter.admit(first)
    assert refusal is not None and refusal.scope == "key"
    assert _admitted(limiter, second, 10) == 2  # the team's 5 are spent
    other_team = replace(second, team_id=4, key_id=9)
    assert _admitted(limiter, other_team, 3) == 3


def test_tokens_are_charged_after_the_call_and_debt_is_waited_out() -> None:
    clock = Clock()
    limiter = RateLimiter(clock=clock)
    info = replace(KEY, tokens_per_minute=600)
    assert limiter.admit(info) is None
    limiter.charge_tokens(info, 900)  # 300 in debt
    refusal = limiter.admit(info)
    assert refusal is not None and refusal.unit == "tokens"
    assert refusal.retry_after_s == pytest.approx(30.1, abs=0.2)  # 300 at 10 per second, +1
    clock.now += 31
    assert limiter.admit(info) is None


def test_debt_is_bounded_by_one_minute() -> None:
    clock = Clock()
    limiter = RateLimiter(clock=clock)
    info = replace(KEY, tokens_per_minute=60)
    limiter.charge_tokens(info, 10**9)
    clock.now += 121
    assert limiter.admit(info) is None


def test_replicas_share_a_limit_and_changed_limits_apply_on_the_next_call() -> None:
    clock = Clock()
    limiter = RateLimiter(replicas=3, clock=clock)
    info = replace(KEY, requests_per_minute=30)
    assert _admitted(limiter, info, 100) == 10
    raised = replace(info, requests_per_minute=300)
    clock.now += 6  # six seconds at the new 100 per minute per replica: 10 requests
    assert _admitted(limiter, raised, 100) == 10


def test_a_tiny_share_still_admits_one_request() -> None:
    limiter = RateLimiter(replicas=4, clock=Clock())
    assert _admitted(limiter, replace(KEY, requests_per_minute=1), 5) == 1


def test_the_429_names_the_limit_and_carries_retry_after() -> None:
    error = RateLimitExceeded(Refusal("tokens", "key", 1000, 2.2))
    assert error.status == 429 and error.error_type == "RateLimitError"
    assert "tokens per minute" in error.message and "1000" in error.message
    headers = dict(error.headers)
    assert headers[b"retry-after"] == b"3" and headers[b"retry-after-ms"] == b"2200"
    assert headers[b"x-ratelimit-limit-tokens"] == b"1000"
