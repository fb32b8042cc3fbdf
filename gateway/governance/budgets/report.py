"""Spend against budget of one team and its keys, now, for the usage API and the dashboard."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.orm import Session

from gateway.governance.budgets.guard import BudgetGuard
from gateway.governance.budgets.limits import budget_limits, from_micros
from gateway.governance.budgets.lines import BudgetLine, lines_of
from plumbline.models import ApiKey, Team
from plumbline.repositories import teams as team_repo


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """One budget in its current period: limit, soft level, spent, held, reset (currency units)."""

    scope: str
    name: str
    period: str
    period_name: str
    limit: float
    soft_level: float
    spent: float | None  # None: the store could not be read
    held: float | None
    resets_at: datetime


def budgeted(session: Session, team: Team) -> list[tuple[str, BudgetLine]]:
    """(name, line) of the team's budgets and of its usable keys' own ones."""
    now = datetime.now(UTC)
    found: list[tuple[str, BudgetLine]] = []
    limits = budget_limits(
        None, None, team.budget_day, team.budget_month, team.budget_soft_fraction
    )
    if limits is not None:
        found += [(team.name, line) for line in lines_of(limits, 0, team.id, now)]
    for key, _ in team_repo.list_keys(session, team.id):
        if not _usable(key, now):
            continue
        own = budget_limits(key.budget_day, key.budget_month, None, None, team.budget_soft_fraction)
        if own is not None:
            found += [(key.prefix, line) for line in lines_of(own, key.id, team.id, now)]
    return found


def _usable(key: ApiKey, now: datetime) -> bool:
    if key.revoked_at is None:
        return True
    revoked = key.revoked_at if key.revoked_at.tzinfo else key.revoked_at.replace(tzinfo=UTC)
    return revoked > now


async def budget_statuses(
    guard: BudgetGuard, budgets: list[tuple[str, BudgetLine]]
) -> list[BudgetStatus]:
    """Each budget with its spend as the store calls are admitted by has it now."""
    levels = await guard.spent([line for _, line in budgets]) if budgets else []
    statuses = []
    for index, (name, line) in enumerate(budgets):
        spent = held = None
        if levels is not None:
            spent, held = (from_micros(v) for v in levels[index])
        statuses.append(
            BudgetStatus(
                line.scope,
                name,
                line.period.kind,
                line.period.name,
                from_micros(line.limit),
                from_micros(line.soft),
                spent,
                held,
                line.period.resets_at,
            )
        )
    return statuses
