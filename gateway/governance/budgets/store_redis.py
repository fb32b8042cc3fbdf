"""Spend in Redis, shared by every gateway process and replica; one script per step.

A budget of one period is a hash (`spent`, `held`, integer micro-units) that expires an hour
after its period ends. Each script checks and writes all of a call's budgets atomically: a
call holds on every budget or on none, whatever number of processes ask at once. The soft
notice's marker is set in the same script (SET NX), so one process in all sends it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from gateway.governance.budgets.lines import BudgetLine, Overrun

# The hold, in two steps that a script may run other checks between: the spend hashes at
# KEYS[first ...]; in ARGV from `at`, the amount, then limit and expiry (epoch ms) per hash.
HOLD_STEPS = """
local function budget_overrun(first, count, at)
  local amount = tonumber(ARGV[at])
  for i = 0, count - 1 do
    local state = redis.call('HMGET', KEYS[first + i], 'spent', 'held')
    local spent, held = tonumber(state[1]) or 0, tonumber(state[2]) or 0
    local limit = tonumber(ARGV[at + 1 + 2 * i])
    if spent + held >= limit or spent + held + amount > limit then
      return {i + 1, spent, held}
    end
  end
  return nil
end
local function hold_budgets(first, count, at)
  local amount = tonumber(ARGV[at])
  for i = 0, count - 1 do
    redis.call('HINCRBY', KEYS[first + i], 'held', amount)
    redis.call('PEXPIREAT', KEYS[first + i], ARGV[at + 2 + 2 * i])
  end
end
"""
# {1} when held on every key, else {0, i, spent, held} for the first budget that refuses.
RESERVE = (
    HOLD_STEPS
    + """
local overrun = budget_overrun(1, #KEYS, 1)
if overrun then
  return {0, overrun[1], overrun[2], overrun[3]}
end
hold_budgets(1, #KEYS, 1)
return {1}
"""
)
# The charge, as a step: n spend hashes at KEYS[first ...], then their n soft markers; in ARGV
# from `at`, what was held and the cost, then soft level and expiry per hash. Gives {spent,
# reached, ...} per hash: reached is 1 for the one call in all processes that first took it to
# its soft level this period.
CHARGE_STEPS = """
local function charge_budgets(first, n, at)
  local held, cost = tonumber(ARGV[at]), tonumber(ARGV[at + 1])
  local answer = {}
  for i = 0, n - 1 do
    local key = KEYS[first + i]
    local left = redis.call('HINCRBY', key, 'held', -held)
    if left < 0 then
      redis.call('HSET', key, 'held', 0)
    end
    local spent = redis.call('HINCRBY', key, 'spent', cost)
    local expire = ARGV[at + 3 + 2 * i]
    redis.call('PEXPIREAT', key, expire)
    local reached = 0
    if spent >= tonumber(ARGV[at + 2 + 2 * i]) then
      if redis.call('SET', KEYS[first + n + i], '1', 'NX', 'PXAT', expire) then
        reached = 1
      end
    end
    table.insert(answer, spent)
    table.insert(answer, reached)
  end
  return answer
end
"""
SETTLE = (
    CHARGE_STEPS
    + """
return charge_budgets(1, #KEYS / 2, 1)
"""
)


def charged(answer: Sequence[Any]) -> list[tuple[int, bool]]:
    """The charge step's answer: each line's spend, and whether this call first reached its soft
    level."""
    return [(int(answer[i]), int(answer[i + 1]) == 1) for i in range(0, len(answer), 2)]


class RedisBudgets:
    """The spend of every key and team, in one Redis, under one key prefix."""

    def __init__(self, redis: Redis, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix
        self._reserve: Any = redis.register_script(RESERVE)
        self._settle: Any = redis.register_script(SETTLE)

    def key(self, line: BudgetLine) -> str:
        """A budget's Redis key; `{t<team>}` keeps one call's budgets in one cluster slot."""
        period = line.period
        return (
            f"{self.prefix}budget:{{t{line.team}}}:{line.scope}:{line.owner}:"
            f"{period.kind}:{period.name}"
        )

    async def reserve(self, lines: Sequence[BudgetLine], amount: int) -> Overrun | None:
        """Hold `amount` on every line, or on none and say which budget refused."""
        args: list[int] = [amount]
        for line in lines:
            args += [line.limit, line.period.expire_at_ms]
        answer = await self._reserve(keys=[self.key(line) for line in lines], args=args)
        if int(answer[0]) == 1:
            return None
        return Overrun(lines[int(answer[1]) - 1], int(answer[2]), int(answer[3]))

    async def settle(
        self, lines: Sequence[BudgetLine], held: int, cost: int
    ) -> list[tuple[int, bool]]:
        """Release `held` and charge `cost` on every line: each one's spend, and whether this
        call was the first to reach its soft level."""
        keys, args = self.charge_arguments(lines, held, cost)
        return charged(await self._settle(keys=keys, args=args))

    def charge_arguments(
        self, lines: Sequence[BudgetLine], held: int, cost: int
    ) -> tuple[list[str], list[int]]:
        """The keys and arguments of the charge step (CHARGE_STEPS) for these lines."""
        keys = [self.key(line) for line in lines]
        args: list[int] = [held, cost]
        for line in lines:
            args += [line.soft, line.period.expire_at_ms]
        return [*keys, *(f"{k}:soft" for k in keys)], args

    async def spent(self, lines: Sequence[BudgetLine]) -> list[tuple[int, int]]:
        """(spent, held) on each line now."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for line in lines:
                pipe.hmget(self.key(line), "spent", "held")
            answers = await pipe.execute()
        return [(int(spent or 0), int(held or 0)) for spent, held in answers]

    async def aclose(self) -> None:
        """Close the connections."""
        await self.redis.aclose()
