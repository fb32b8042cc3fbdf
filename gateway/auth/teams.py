"""Team policies: rate limits, body storage, retention and models, set by an admin; audited."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from gateway.auth.audit import record_action
from gateway.auth.invalidation.changes import KeyChange, record_change
from gateway.errors import GatewayError
from gateway.governance.budgets.policy import TEAM_BUDGET_FIELDS, audit_values, check_budgets
from gateway.governance.model_lists import model_list
from gateway.retention.classes import check_retention_days, check_topk_retention_days
from plumbline.models import Team
from plumbline.repositories import teams as team_repo

POLICY_FIELDS = (
    "requests_per_minute",
    "tokens_per_minute",
    "store_bodies",
    "retention_days",
    *TEAM_BUDGET_FIELDS,
    "allowed_models",
    "topk_retention_days",
)


def _check(values: dict[str, Any]) -> None:
    unknown = set(values) - set(POLICY_FIELDS)
    if unknown:
        raise GatewayError(400, f"Unknown team settings: {', '.join(sorted(unknown))}.")
    for name in ("requests_per_minute", "tokens_per_minute"):
        value = values.get(name)
        if value is not None and not 1 <= value <= 1_000_000_000:
            raise GatewayError(400, f"`{name}` must be between 1 and 1000000000 (or null).", name)
    check_budgets(values)
    try:
        check_retention_days(values.get("retention_days"))
    except ValueError as error:
        raise GatewayError(400, str(error), "retention_days") from None
    if values.get("retention_days") == 0:
        values["retention_days"] = None  # 0 and null both mean: keep
    if "allowed_models" in values:
        values["allowed_models"] = model_list(values["allowed_models"])
    try:
        check_topk_retention_days(values.get("topk_retention_days"))
    except ValueError as error:
        raise GatewayError(400, str(error), "topk_retention_days") from None
    if values.get("topk_retention_days") == 0:
        values["topk_retention_days"] = None  # 0 and null: alternatives kept with the call


def set_team_policy(
    session: Session, name: str, values: dict[str, Any], *, create: bool = False, actor: str = "cli"
) -> Team:
    """Change some of a team's policies (others stay); audited with the old and new values."""
    _check(values)
    team = team_repo.team_by_name(session, name)
    if team is None and create:
        team = team_repo.add_team(session, name)
    if team is None:
        raise GatewayError(404, f"No team named `{name[:128]}`.", "team")
    before = {field: getattr(team, field) for field in values}
    team_repo.update_team(session, team, values)
    record_change(session, KeyChange(team_id=team.id))
    record_action(
        session,
        actor,
        "team.policy",
        team_id=team.id,
        target=team.name,
        details={"before": audit_values(before), "after": audit_values(values)},
    )
    return team
