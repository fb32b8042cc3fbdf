"""Model lists as the admin API, the CLI and key lookups handle them: checked, stored, read."""

from __future__ import annotations

from gateway.errors import GatewayError
from gateway.governance.model_access import ModelAccess, check_patterns, stored_patterns
from plumbline.models import ApiKey, Team

FIELD = "allowed_models"


def model_list(value: object, *, admin: bool = False) -> list[str] | None:
    """A team's or key's model list checked (a 400 says why); admin keys take none."""
    try:
        patterns = check_patterns(value)
    except ValueError as error:
        raise GatewayError(400, str(error), FIELD) from None
    if patterns is not None and admin:
        raise GatewayError(
            400,
            "Admin keys call every model: leave out `allowed_models`, or make the key not admin.",
            FIELD,
        )
    return patterns


def model_access(team: Team, key: ApiKey | None) -> ModelAccess:
    """The lists a call must pass: the team's and the key's (`key` None: the team's alone)."""
    key_list = stored_patterns(key.allowed_models) if key is not None else None
    return ModelAccess(team=stored_patterns(team.allowed_models), key=key_list)
