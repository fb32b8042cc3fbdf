"""Routes: list teams, set their limits, body storage, retention and models (admin keys only)."""

from __future__ import annotations

from fastapi import APIRouter

from gateway.api.admin_schemas import TeamList, TeamOut, TeamPath, TeamPolicy
from gateway.api.deps import AdminDep, StateDep
from gateway.auth.teams import set_team_policy
from plumbline.repositories import teams as team_repo

router = APIRouter(prefix="/api/admin/teams", tags=["admin"])


@router.get("", response_model=TeamList)
def list_teams(caller: AdminDep, state: StateDep) -> TeamList:
    """Every team with its policies."""
    with state.sessions() as session:
        return TeamList(data=[TeamOut.model_validate(t) for t in team_repo.list_teams(session)])


@router.patch("/{team}", response_model=TeamOut)
def update_team(team: TeamPath, body: TeamPolicy, caller: AdminDep, state: StateDep) -> TeamOut:
    """Change the fields sent (null clears a limit); keys see the change at once here."""
    values = body.model_dump(include=body.model_fields_set)
    if values.get("store_bodies", False) is None:
        values.pop("store_bodies")
    with state.sessions() as session, session.begin():
        row = set_team_policy(session, team, values, actor=caller.actor)
        out = TeamOut.model_validate(row)
    state.keys.forget_all()
    return out
