"""A call's admission by its rate limits and spend budgets, and its settlement once answered:
one Redis script each when both are there, else each store on its own."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from gateway.auth.keys import KeyInfo
from gateway.config import ModelConfig
from gateway.governance.budgets.charges import recorded_cost
from gateway.governance.budgets.guard import BudgetGuard, BudgetPlan
from gateway.governance.budgets.lines import Hold, Overrun
from gateway.governance.budgets.refusal import BudgetExceeded, BudgetsUnavailable
from gateway.governance.budgets.store_joint import JointAdmission
from gateway.metering.record import CallRecord
from gateway.proxy.rate_limits import Grant
from gateway.proxy.rate_limits.buckets import Take, takes_of
from gateway.proxy.rate_limits.limiter import STORE_ERRORS, RateLimiter, shared_grant
from gateway.proxy.rate_limits.refusal import LimitsUnavailable, RateLimitExceeded, Refusal
from gateway.proxy.request_fields import tokens_used


@dataclass(frozen=True, slots=True)
class Admitted:
    """What the call took (each settled after it, whatever else refused) and the first refusal."""

    grant: Grant | None
    hold: Hold | None
    refusal: Exception | None


async def admit(
    limiter: RateLimiter,
    budgets: BudgetGuard,
    info: KeyInfo,
    model: ModelConfig,
    body_bytes: int,
    reserve: int,
) -> Admitted:
    """Take from the rate limits and hold on the budgets; a refusal of either wins."""
    if info.budget is None:
        return Admitted(await limiter.admit(info, reserve), None, None)
    joint = budgets.joint
    if joint is not None and limiter.shared_ready() and budgets.redis_up:
        takes = takes_of(info, reserve)
        plan = budgets.plan(info, model, body_bytes, reserve)
        if takes and plan is not None:
            return await _jointly(joint, limiter, budgets, info, (takes, plan))
    # Both are a Redis round trip with a shared store: run side by side, the call waits for
    # one trip, not two. A refused call settles what the other took, as if sent in turn.
    grant, hold = await asyncio.gather(
        limiter.admit(info, reserve),
        budgets.admit(info, model, body_bytes, reserve),
        return_exceptions=True,
    )
    refusal = next((o for o in (grant, hold) if isinstance(o, BaseException)), None)
    if refusal is not None and not isinstance(refusal, Exception):
        raise refusal  # cancelled: the call's own cancellation, not a refusal
    return Admitted(
        None if isinstance(grant, BaseException) else grant,
        None if isinstance(hold, BaseException) else hold,
        refusal,
    )


async def _jointly(
    joint: JointAdmission,
    limiter: RateLimiter,
    budgets: BudgetGuard,
    info: KeyInfo,
    asked: tuple[tuple[Take, ...], BudgetPlan],
) -> Admitted:
    """One script for both: a call refused by either took nothing from the other."""
    takes, plan = asked
    try:
        async with asyncio.timeout(limiter.config.redis_timeout_s):
            answer = await joint.admit(takes, plan.lines, plan.amount)
    except STORE_ERRORS as error:
        # One Redis: both stores failed, and each falls back by its own policy.
        limiter.store_failed(error)
        budgets.store_failed(error)
        return _unshared(limiter, budgets, info, asked)
    if isinstance(answer, Refusal):
        return Admitted(None, None, RateLimitExceeded(answer))
    if isinstance(answer, Overrun):
        return Admitted(None, None, budgets.refusal(info, plan, answer))
    return Admitted(shared_grant(takes), plan.hold(info, "redis"), None)


def _unshared(
    limiter: RateLimiter,
    budgets: BudgetGuard,
    info: KeyInfo,
    asked: tuple[tuple[Take, ...], BudgetPlan],
) -> Admitted:
    """Without Redis: the rate limits, then the budgets, each by its failure policy."""
    takes, plan = asked
    try:
        grant = limiter.unshared_admit(takes)
    except (RateLimitExceeded, LimitsUnavailable) as refusal:
        return Admitted(None, None, refusal)
    try:
        hold = budgets.unshared_admit(info, plan)
    except (BudgetExceeded, BudgetsUnavailable) as refusal:
        return Admitted(grant, None, refusal)
    return Admitted(grant, hold, None)


async def settle(
    limiter: RateLimiter,
    budgets: BudgetGuard,
    admitted: tuple[Grant | None, Hold | None],
    record: CallRecord,
) -> None:
    """Charge a finished call's tokens and cost on what it took (never raises)."""
    grant, hold = admitted
    joint = budgets.joint
    if grant is not None and hold is not None and joint is not None:
        owed = grant.owed(tokens_used(record))
        if owed and grant.store == hold.store == "redis":
            try:
                async with asyncio.timeout(budgets.config.settle_timeout_s):
                    levels = await joint.settle(
                        owed, hold.lines, hold.amount, recorded_cost(record)
                    )
            except STORE_ERRORS as error:
                limiter.settlement_lost(error)
                budgets.settlement_lost(error)
                return
            budgets.settled(hold, levels)
            return
    if grant is not None:
        await limiter.settle(grant, tokens_used(record))
    if hold is not None:
        await budgets.settle(hold, record)
