"""A call's admission by its rate limits and its spend budgets, their Redis trips overlapped."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from gateway.auth.keys import KeyInfo
from gateway.config import ModelConfig
from gateway.governance.budgets.guard import BudgetGuard
from gateway.governance.budgets.lines import Hold
from gateway.proxy.rate_limits import Grant
from gateway.proxy.rate_limits.limiter import RateLimiter


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
    """Take from the rate limits and hold on the budgets at once; a refusal of either wins."""
    if info.budget is None:
        return Admitted(await limiter.admit(info, reserve), None, None)
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
