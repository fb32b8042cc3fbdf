"""What spend budgets add to a call: admit + settle, memory and Redis, beside the rate limiter.

`python -m bench.budget_cost [--redis redis://127.0.0.1:6379/0] [--calls 5000]` prints the p50
and p95 in microseconds of each step as the proxy runs it (one call at a time, one loop), and
what a call with budgets waits for at admission (settling runs after the answer is sent): the
rate limits, then the budgets in turn, both at once, or both in one script as
`gateway/proxy/admission.py` asks when they share a Redis (and the rate limits alone, for scale).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from redis.asyncio import Redis

from gateway.auth.keys import KeyInfo
from gateway.config import BackendConfig, ModelConfig, Price
from gateway.governance.budgets.config import BudgetConfig
from gateway.governance.budgets.guard import BudgetGuard
from gateway.governance.budgets.limits import BudgetLimits
from gateway.governance.budgets.lines import Hold
from gateway.governance.budgets.store_joint import JointAdmission
from gateway.governance.budgets.store_redis import RedisBudgets
from gateway.metering.record import CallRecord
from gateway.proxy.admission import admit, settle
from gateway.proxy.rate_limits import Grant, RateLimiter
from gateway.proxy.rate_limits.redis_buckets import connect_buckets
from gateway.rate_limit_config import RateLimitConfig

MODEL = ModelConfig(
    name="m",
    backends=[BackendConfig(url="http://127.0.0.1:9")],
    price=Price(input_per_million=0.5, output_per_million=1.5),
)
BUDGET = BudgetLimits(team_day=10**15, team_month=10**15)
RECORD = CallRecord(
    id="c",
    created_at=datetime.now(UTC),
    request_id="r",
    endpoint="/v1/chat/completions",
    usage={"prompt_tokens": 40, "completion_tokens": 16},
    price_in=0.5,
    price_out=1.5,
)


def _info(budget: BudgetLimits | None, rpm: int | None) -> KeyInfo:
    return KeyInfo(
        key_id=1,
        team_id=1,
        team_name="bench",
        is_admin=False,
        store_bodies=False,
        requests_per_minute=rpm,
        tokens_per_minute=rpm,
        prefix="0123456789",
        budget=budget,
    )


async def _timed(step: Callable[[], Awaitable[None]], calls: int) -> tuple[float, float]:
    for _ in range(200):
        await step()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await step()
        samples.append((time.perf_counter() - started) * 1e6)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95)]


async def measure_costs(url: str, calls: int) -> dict[str, tuple[float, float]]:
    """p50 and p95 microseconds of admit + settle per row, one call at a time."""
    rates = RateLimitConfig(store="redis", redis_timeout_s=1.0)
    prefix = f"plumbline-bench-{uuid.uuid4().hex[:8]}:"
    limiter = RateLimiter(rates, connect_buckets(url, prefix, rates))
    redis = Redis.from_url(url)
    buckets = connect_buckets(url, prefix, rates)
    shared = RedisBudgets(buckets.redis, prefix)
    guards = {
        "memory": BudgetGuard(BudgetConfig(), rates),
        "redis": BudgetGuard(BudgetConfig(), rates, RedisBudgets(redis, prefix)),
        # As a gateway builds it: buckets and budgets admitted in one script.
        "joint": BudgetGuard(BudgetConfig(), rates, shared, joint=JointAdmission(buckets, shared)),
    }
    with_budget, without = _info(BUDGET, None), _info(None, None)

    async def budget_step(guard: BudgetGuard, info: KeyInfo) -> None:
        hold = await guard.admit(info, MODEL, 400, 16)
        if hold is not None:
            await guard.settle(hold, RECORD)

    async def limiter_step() -> None:
        grant = await limiter.admit(_info(None, 10**9), 16)
        await limiter.settle(grant, 56)

    limited = _info(BUDGET, 10**9)

    async def joint_step() -> None:
        admitted = await admit(limiter, guards["joint"], limited, MODEL, 400, 16)
        await settle(limiter, guards["joint"], (admitted.grant, admitted.hold), RECORD)

    async def in_turn() -> None:
        # The proxy's admission before it overlapped the two (timed: admission only).
        grant = await limiter.admit(limited, 16)
        hold = await guards["redis"].admit(limited, MODEL, 400, 16)
        held.append((grant, hold))

    async def at_once() -> None:
        admitted = await admit(limiter, guards["redis"], limited, MODEL, 400, 16)
        held.append((admitted.grant, admitted.hold))

    async def one_script() -> None:
        admitted = await admit(limiter, guards["joint"], limited, MODEL, 400, 16)
        held.append((admitted.grant, admitted.hold))

    async def limits_alone() -> None:
        grant = await limiter.admit(_info(None, 10**9), 16)
        held.append((grant, None))

    held: list[tuple[Grant | None, Hold | None]] = []

    rows = {
        "no budget (any store)": lambda: budget_step(guards["redis"], without),
        "budgets, memory store": lambda: budget_step(guards["memory"], with_budget),
        "budgets, redis store": lambda: budget_step(guards["redis"], with_budget),
        "rate limits, redis (for scale)": limiter_step,
        "rate limits + budgets, one script each": joint_step,
    }
    timed = {name: await _timed(step, calls) for name, step in rows.items()}
    for name, step in (
        ("admission: limits + budgets, in turn", in_turn),
        ("admission: limits + budgets, at once", at_once),
        ("admission: limits + budgets, one script", one_script),
        ("admission: rate limits alone", limits_alone),
    ):
        timed[name] = await _timed(step, calls)
        for grant, hold in held:
            if grant is not None:
                await limiter.settle(grant, 56)
            if hold is not None:
                await guards["redis"].settle(hold, RECORD)
        held.clear()
    async for key in redis.scan_iter(f"{prefix}*"):
        await redis.delete(key)
    await redis.aclose()
    await limiter.aclose()
    await guards["joint"].aclose()
    return timed


def main() -> None:
    """Run the measurement."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    timed = asyncio.run(measure_costs(args.redis, args.calls))
    print(f"{'admit + settle per call':42} {'p50 us':>8} {'p95 us':>8}")
    for name, (p50, p95) in timed.items():
        print(f"{name:42} {p50:8.1f} {p95:8.1f}")


if __name__ == "__main__":
    main()
