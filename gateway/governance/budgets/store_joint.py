"""A call's rate-limit buckets and spend budgets, taken and settled in one Redis script each.

With both in Redis a governed call would otherwise pay two round trips (and two commands'
client CPU) before it is sent, and two more once it is answered. One script checks the buckets,
then the budgets, and takes from all of them or from none: a call refused by either leaves the
other untouched. One more settles the tokens owed and charges the recorded cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gateway.governance.budgets.lines import BudgetLine, Overrun
from gateway.governance.budgets.store_redis import CHARGE_STEPS, HOLD_STEPS, RedisBudgets, charged
from gateway.proxy.rate_limits.buckets import Take
from gateway.proxy.rate_limits.redis_buckets import SETTLE_STEPS, TAKE_STEPS, RedisBuckets
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

# KEYS: the buckets, then the spend hashes, then their soft markers. ARGV[1]: the number of
# buckets; then limit and tokens owed per bucket; then held and cost, soft level and expiry per
# hash. Returns the charge's {spent, reached, ...} per hash.
SETTLE = (
    SETTLE_STEPS
    + CHARGE_STEPS
    + """
local buckets = tonumber(ARGV[1])
settle_buckets(1, buckets, 2)
return charge_budgets(buckets + 1, (#KEYS - buckets) / 2, 2 + 2 * buckets)
"""
)


class JointAdmission:
    """Buckets and budgets of one Redis and key prefix, taken together."""

    def __init__(self, buckets: RedisBuckets, budgets: RedisBudgets) -> None:
        self.buckets = buckets
        self.budgets = budgets
        self._admit: Any = budgets.redis.register_script(ADMIT)
        self._settle: Any = budgets.redis.register_script(SETTLE)

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

    async def settle(
        self, owed: dict[Take, int], lines: Sequence[BudgetLine], held: int, cost: int
    ) -> list[tuple[int, bool]]:
        """Charge the buckets what they are owed and the budgets the cost: each line's spend,
        and whether this call first reached its soft level."""
        args: list[int] = [len(owed)]
        for take, amount in owed.items():
            args += [take.limit, amount]
        charge_keys, charge_args = self.budgets.charge_arguments(lines, held, cost)
        keys = [self.buckets.key(take) for take in owed] + charge_keys
        return charged(await self._settle(keys=keys, args=args + charge_args))
