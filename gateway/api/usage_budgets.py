"""Route: GET /api/usage/budgets, a team's spend against its budgets and its keys' budgets."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query

from gateway.api.deps import ReadCallerDep, StateDep
from gateway.api.schemas import BudgetOut, BudgetReport
from gateway.errors import GatewayError
from gateway.governance.budgets.lines import BudgetLine
from gateway.governance.budgets.report import budget_statuses, budgeted
from plumbline.repositories import teams as team_repo

router = APIRouter(prefix="/api/usage", tags=["usage"])


@router.get("/budgets", response_model=BudgetReport)
async def budgets(
    caller: ReadCallerDep,
    state: StateDep,
    team: Annotated[str | None, Query(max_length=128, description="admin keys only")] = None,
) -> BudgetReport:
    """Spent and held against each budget of the team (an admin key may name any team)."""
    name = team or caller.team_name
    if name != caller.team_name and not caller.is_admin:
        raise GatewayError(403, "Only admin keys may read another team's budgets.", "team")

    def load() -> list[tuple[str, BudgetLine]] | None:
        with state.sessions() as session:
            row = team_repo.team_by_name(session, name)
            return budgeted(session, row) if row is not None else None

    found = await asyncio.to_thread(load)
    if found is None:
        raise GatewayError(404, f"No team named `{name[:128]}`.", "team")
    statuses = await budget_statuses(state.budgets, found)
    return BudgetReport(team=name, budgets=[BudgetOut.model_validate(s) for s in statuses])
