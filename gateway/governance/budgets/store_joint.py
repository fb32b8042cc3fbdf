"""A call's rate-limit buckets and spend budgets, checked and taken in one Redis script.

With both in Redis a governed call would otherwise pay two round trips (and two commands'
client CPU) before it is sent. One script checks the buckets, then the budgets, and takes from
all of them or from none: a call refused by either leaves the other untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gateway.governance.budgets.lines import BudgetLine, Overrun
from gateway.governance.budgets.store_redis import HOLD_STEPS, RedisBudgets
from gateway.proxy.rate_limits.buckets import Take
from gateway.proxy.rate_limits.redis_buckets import TAKE_STEPS, RedisBuckets
from gateway.proxy.rate_limits.refusal import Refusal

# KEYS: the buckets, then the spend hashes. ARGV[1]: the number of buckets; then limit and
# amount per bucket; then the budget amount, then limit and expiry per hash. Returns {1} when
# taken, {0, i, microseconds to wait} for a bucket, {2, i, spent, held} for a budget.
ADMIT = (
    TAKE_STEPS
    + HOLD_STEPS
    + """
local buckets = tonumber(ARGV[1])
local levels, worst, wait_us = bucket_levels(1, buckets, 2)
if worst > 0 then
  return {0, worst, wait_us}
end
local at = 2 + 2 * buckets
local overrun = budget_overrun(buckets + 1, #KEYS - buckets, at)
if overrun then
  return {2, overrun[1], overrun[2], overrun[3]}
end
take_buckets(1, buckets, 2, levels)
hold_budgets(buckets + 1, #KEYS - buckets, at)
return {1}
"""
)


class JointAdmission:
    """Buckets and budgets of one Redis and key prefix, taken together."""

    def __init__(self, buckets: RedisBuckets, budgets: RedisBudgets) -> None:
        self.buckets = buckets
        self.budgets = budgets
        self._admit: Any = budgets.redis.register_script(ADMIT)

    async def admit(
        self, takes: Sequence[Take], lines: Sequence[BudgetLine], amount: int
    ) -> Refusal | Overrun | None:
        """Take every bucket's amount and hold `amount` on every budget, or nothing and why."""
        args: list[int | float] = [len(takes)]
        for take in takes:
            args += [take.limit, take.amount]
        args.append(amount)
        for line in lines:
            args += [line.limit, line.period.expire_at_ms]
        keys = [self.buckets.key(take) for take in takes]
        keys += [self.budgets.key(line) for line in lines]
        answer = await self._admit(keys=keys, args=args)
        kind = int(answer[0])
        if kind == 1:
            return None
        if kind == 0:
            worst = takes[int(answer[1]) - 1]
            return Refusal(worst.unit, worst.scope, worst.limit, int(answer[2]) / 1e6)
        return Overrun(lines[int(answer[1]) - 1], int(answer[2]), int(answer[3]))
