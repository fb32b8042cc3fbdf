"""FailedLookupThrottle's bounds: the burst, the refill rate and the number of addresses held."""

from __future__ import annotations

import pytest

from gateway.auth.lookup_throttle import FailedLookupThrottle


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_client_gets_its_burst_then_waits_for_the_refill() -> None:
    clock = Clock()
    throttle = FailedLookupThrottle(per_minute=6, max_clients=10, clock=clock)
    for _ in range(6):
        assert throttle.retry_after("a") is None
        throttle.failed("a")
    assert throttle.retry_after("a") == pytest.approx(10.0)  # one failure per 10 s
    assert throttle.retry_after("b") is None
    clock.now += 10.0
    assert throttle.retry_after("a") is None


def test_the_addresses_held_are_bounded_oldest_first() -> None:
    throttle = FailedLookupThrottle(per_minute=1, max_clients=3, clock=Clock())
    for client in ("a", "b", "c", "d"):
        throttle.failed(client)
    assert len(throttle._buckets) == 3
    assert throttle.retry_after("a") is None  # dropped, so it starts afresh
    assert throttle.retry_after("d") is not None


def test_calls_without_an_address_are_not_throttled() -> None:
    throttle = FailedLookupThrottle(per_minute=1, max_clients=3, clock=Clock())
    throttle.failed(None)
    throttle.failed(None)
    assert throttle.retry_after(None) is None
