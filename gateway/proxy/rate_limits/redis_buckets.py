"""Token buckets in Redis, shared by every gateway process and replica; one script per step.

A bucket is a hash (`level`, `stamp`) refilled from Redis's own clock, so replicas' clocks do
not matter. Each script reads, checks and writes all of a call's buckets in one atomic step:
a call takes from every bucket or from none, whatever number of processes ask at once.
A bucket left alone until it is full again (two minutes at most) expires: absent means full.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from gateway.proxy.rate_limits.buckets import Take
from gateway.proxy.rate_limits.refusal import Refusal
from gateway.rate_limit_config import RateLimitConfig

# Refill one bucket (KEYS[i], limit per minute in `limit`) up to Redis's time `now`.
REFILL = """
local function refilled(key, limit, now)
  local capacity = math.max(limit, 1)
  local state = redis.call('HMGET', key, 'level', 'stamp')
  local level, stamp = tonumber(state[1]), tonumber(state[2])
  if level == nil or stamp == nil then
    return capacity, capacity
  end
  if now > stamp then
    level = level + (now - stamp) * limit / 60
  end
  return math.min(capacity, level), capacity
end
local function store(key, level, now)
  redis.call('HSET', key, 'level', level, 'stamp', now)
  redis.call('PEXPIRE', key, 121000)
end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
"""
# The take, in two steps that a script may run other checks between: the buckets at
# KEYS[first ...], their limit and amount in ARGV from `at`, two per bucket.
TAKE_STEPS = (
    REFILL
    + """
local function bucket_levels(first, count, at)
  local levels = {}
  local worst, worst_wait = 0, -1
  for i = 0, count - 1 do
    local limit, amount = tonumber(ARGV[at + 2 * i]), tonumber(ARGV[at + 2 * i + 1])
    local level, capacity = refilled(KEYS[first + i], limit, now)
    levels[i + 1] = level
    if level < amount or level <= 0 then
      local wait = (math.max(amount, math.min(1, capacity)) - level) * 60 / limit
      if wait > worst_wait then
        worst, worst_wait = i + 1, wait
      end
    end
  end
  return levels, worst, math.ceil(worst_wait * 1000000)
end
local function take_buckets(first, count, at, levels)
  for i = 0, count - 1 do
    store(KEYS[first + i], levels[i + 1] - tonumber(ARGV[at + 2 * i + 1]), now)
  end
end
"""
)
# ARGV: limit and amount per key. Returns {1} when taken, else {0, i, microseconds to wait}
# for the bucket that makes the call wait longest.
TAKE = (
    TAKE_STEPS
    + """
local levels, worst, wait_us = bucket_levels(1, #KEYS, 1)
if worst > 0 then
  return {0, worst, wait_us}
end
take_buckets(1, #KEYS, 1, levels)
return {1}
"""
)
# Charging what calls still owe, as a step: the buckets at KEYS[first ...], their limit and
# tokens owed (negative: handed back) in ARGV from `at`; debt is one minute's at most.
SETTLE_STEPS = (
    REFILL
    + """
local function settle_buckets(first, count, at)
  for i = 0, count - 1 do
    local limit, owed = tonumber(ARGV[at + 2 * i]), tonumber(ARGV[at + 2 * i + 1])
    local level, capacity = refilled(KEYS[first + i], limit, now)
    store(KEYS[first + i], math.min(capacity, math.max(-capacity, level - owed)), now)
  end
end
"""
)
# ARGV: limit and tokens still owed per key.
SETTLE = (
    SETTLE_STEPS
    + """
settle_buckets(1, #KEYS, 1)
return 1
"""
)


class RedisBuckets:
    """The buckets of every key and team, in one Redis, under one key prefix."""

    def __init__(self, redis: Redis, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix
        self._take: Any = redis.register_script(TAKE)
        self._settle: Any = redis.register_script(SETTLE)

    def key(self, take: Take) -> str:
        """A bucket's Redis key; `{t<team>}` keeps one call's buckets in one cluster slot."""
        return f"{self.prefix}ratelimit:{{t{take.team}}}:{take.scope}:{take.owner}:{take.unit}"

    async def take(self, takes: Sequence[Take]) -> Refusal | None:
        """Take every amount, or none of them and say which bucket makes the call wait longest."""
        args = [value for take in takes for value in (take.limit, take.amount)]
        answer = await self._take(keys=[self.key(take) for take in takes], args=args)
        if int(answer[0]) == 1:
            return None
        worst = takes[int(answer[1]) - 1]
        return Refusal(worst.unit, worst.scope, worst.limit, int(answer[2]) / 1e6)

    async def settle(self, owed: dict[Take, int]) -> None:
        """Charge (or hand back) what each token bucket is still owed."""
        args = [value for take, amount in owed.items() for value in (take.limit, amount)]
        await self._settle(keys=[self.key(take) for take in owed], args=args)

    async def aclose(self) -> None:
        """Close the connections."""
        await self.redis.aclose()


def connect_buckets(url: str, prefix: str, config: RateLimitConfig) -> RedisBuckets:
    """Buckets on a bounded pool of the running loop; connects on first use, so never blocks."""
    timeout = config.redis_timeout_s
    redis = Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        max_connections=config.max_redis_connections,
        # No retries: the call's deadline is the timeout, and the fallback decides after it.
        retry=Retry(NoBackoff(), 0),
    )
    return RedisBuckets(redis, prefix)
