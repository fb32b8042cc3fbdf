"""The budgets one call is charged against, and what it holds of each until it settles."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gateway.governance.budgets.limits import BudgetLimits, soft_level
from gateway.governance.budgets.periods import Period, period_of


@dataclass(frozen=True, slots=True)
class BudgetLine:
    """One budget of a call: whose (key or team), which period, its hard and soft levels."""

    scope: str  # "key" or "team"
    owner: int  # the key's or the team's id
    team: int  # the presented key's team: Redis keeps one call's budgets in one slot
    period: Period
    limit: int  # micro-units
    soft: int  # micro-units


@dataclass(frozen=True, slots=True)
class Hold:
    """What an admitted call reserved from its budgets, and where ("memory" or "redis")."""

    lines: tuple[BudgetLine, ...]
    amount: int  # micro-units reserved from each line
    store: str
    team_name: str
    key_prefix: str

    def owner_name(self, line: BudgetLine) -> str:
        """The key's prefix or the team's name, as admins know them."""
        return self.key_prefix if line.scope == "key" else self.team_name


@dataclass(frozen=True, slots=True)
class Overrun:
    """The budget that refused a call: its line and what was spent and held there."""

    line: BudgetLine
    spent: int
    held: int


@dataclass(frozen=True, slots=True)
class Crossing:
    """A budget whose soft level a settled call reached first in its period."""

    line: BudgetLine
    spent: int


def lines_of(limits: BudgetLimits, key_id: int, team_id: int, now: datetime) -> list[BudgetLine]:
    """The budget lines of a key and its team at `now`."""
    return lines_in(limits, key_id, team_id, current_periods(now))


def current_periods(now: datetime) -> dict[str, Period]:
    """The day and the month `now` falls in."""
    return {"day": period_of("day", now), "month": period_of("month", now)}


def lines_in(
    limits: BudgetLimits, key_id: int, team_id: int, periods: dict[str, Period]
) -> list[BudgetLine]:
    """The budget lines of a key and its team in the given day and month."""
    return [
        BudgetLine(
            scope,
            key_id if scope == "key" else team_id,
            team_id,
            periods[kind],
            limit,
            soft_level(limit, limits.soft_fraction),
        )
        for scope, kind, limit in limits.lines()
    ]
