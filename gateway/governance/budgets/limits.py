"""A key's and its team's spend budgets, in micro-units of the price currency."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

MICROS = 1_000_000
DEFAULT_SOFT_FRACTION = 0.8
# Budgets above this (a trillion currency units) are refused: micro-units stay below 2**63.
MAX_BUDGET = Decimal("1000000000000")


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """Hard limits per UTC day and month (None: no budget), and the soft level's fraction."""

    key_day: int | None = None
    key_month: int | None = None
    team_day: int | None = None
    team_month: int | None = None
    soft_fraction: float = DEFAULT_SOFT_FRACTION

    def lines(self) -> tuple[tuple[str, str, int], ...]:
        """(scope, period, limit in micro-units) of every budget that is set."""
        found = (
            ("key", "day", self.key_day),
            ("key", "month", self.key_month),
            ("team", "day", self.team_day),
            ("team", "month", self.team_month),
        )
        return tuple((scope, period, limit) for scope, period, limit in found if limit is not None)


def to_micros(amount: Decimal | float | None) -> int | None:
    """A stored budget (currency units) in whole micro-units, rounded down."""
    if amount is None:
        return None
    return int(Decimal(amount) * MICROS)


def from_micros(micros: int) -> float:
    """Micro-units as currency units, for display."""
    return micros / MICROS


def budget_limits(
    key_day: Decimal | None,
    key_month: Decimal | None,
    team_day: Decimal | None,
    team_month: Decimal | None,
    soft_fraction: float | None,
) -> BudgetLimits | None:
    """The budgets of a key and its team, or None when neither has any (the fast path)."""
    if key_day is None and key_month is None and team_day is None and team_month is None:
        return None
    soft = soft_fraction if soft_fraction is not None else DEFAULT_SOFT_FRACTION
    return BudgetLimits(
        to_micros(key_day), to_micros(key_month), to_micros(team_day), to_micros(team_month), soft
    )


def soft_level(limit: int, fraction: float) -> int:
    """The spend at which the soft notice goes out (at least one micro-unit)."""
    return max(1, math.ceil(limit * fraction))
