"""The 429 of a spent budget, and the 503 of budgets that cannot be checked."""

from __future__ import annotations

import math
from datetime import datetime

import orjson

from gateway.errors import GatewayError
from gateway.governance.budgets.limits import from_micros
from gateway.governance.budgets.lines import Overrun

ERROR_TYPE = "budget_exceeded"
PERIOD_WORDS = {"day": "daily", "month": "monthly"}


class BudgetExceeded(GatewayError):
    """A 429 in OpenAI's shape naming the budget, its spend, its reset, with Retry-After."""

    def __init__(self, overrun: Overrun, owner_name: str, now: datetime, amount: int = 0) -> None:
        line = overrun.line
        self.overrun = overrun
        resets = line.period.resets_at
        wait = max(1, math.ceil((resets - now).total_seconds()))
        option = f"--budget-{line.period.kind}"
        how = (
            f"`plumbline teams set {owner_name} {option} AMOUNT`"
            if line.scope == "team"
            else f"`plumbline keys limits {owner_name} {option} AMOUNT`"
        )
        left = line.limit - overrun.spent - overrun.held
        fits = (
            f"this call may cost up to {from_micros(amount):.6f} (its prompt and max_tokens), "
            f"more than the {from_micros(max(0, left)):.6f} left: lower max_tokens, or"
            if left > 0
            else "nothing is left:"
        )
        super().__init__(
            429,
            f"The {PERIOD_WORDS[line.period.kind]} budget of {line.scope} `{owner_name}` "
            f"({line.period.name}) is reached: {from_micros(overrun.spent):.6f} of "
            f"{from_micros(line.limit):.6f} spent, {from_micros(overrun.held):.6f} held by "
            f"calls in progress; {fits} wait for the reset at {resets.isoformat()}. "
            f"An admin can raise it with {how}.",
        )
        self.headers = (
            (b"retry-after", str(wait).encode()),
            (b"x-plumbline-budget-resets", resets.isoformat().encode()),
        )

    @property
    def error_type(self) -> str:
        """Recorded and answered as `budget_exceeded`, not a rate limit."""
        return ERROR_TYPE

    def body(self) -> bytes:
        """OpenAI's error shape with the budget's own type and code."""
        error = {"message": self.message, "type": ERROR_TYPE, "param": None, "code": ERROR_TYPE}
        return orjson.dumps({"error": error})


class BudgetsUnavailable(GatewayError):
    """A 503 when budgets cannot be checked and the gateway is set to fail closed."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(
            503, "Spend budgets cannot be checked right now (their store is unreachable); retry."
        )
        self.headers = ((b"retry-after", str(max(1, math.ceil(retry_after_s))).encode()),)
