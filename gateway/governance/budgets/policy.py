"""Checks of the budget settings an admin sets on a team or a key."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from gateway.errors import GatewayError
from gateway.governance.budgets.limits import MAX_BUDGET

BUDGET_FIELDS = ("budget_day", "budget_month")
TEAM_BUDGET_FIELDS = (*BUDGET_FIELDS, "budget_soft_fraction")
MICRO = Decimal("0.000001")


def _amount(value: Any, name: str) -> Decimal:
    try:
        # bool is an int: `true` is no amount.
        if isinstance(value, bool):
            raise InvalidOperation
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise GatewayError(400, f"`{name}` must be a number (or null).", name) from None
    if not amount.is_finite() or not Decimal(0) <= amount <= MAX_BUDGET:
        raise GatewayError(
            400, f"`{name}` must be between 0 and {MAX_BUDGET} (or null to remove it).", name
        )
    return amount.quantize(MICRO)


def check_budgets(values: dict[str, Any]) -> None:
    """Turn the budget fields of `values` into exact amounts (or None), or raise a 400."""
    for name in BUDGET_FIELDS:
        if values.get(name) is not None:
            values[name] = _amount(values[name], name)
    fraction = values.get("budget_soft_fraction")
    if fraction is not None and (
        isinstance(fraction, bool)
        or not isinstance(fraction, int | float | Decimal)
        or not 0 < float(fraction) <= 1
    ):
        raise GatewayError(
            400,
            "`budget_soft_fraction` must be above 0 and at most 1 (or null for 0.8).",
            "budget_soft_fraction",
        )
    if fraction is not None:
        values["budget_soft_fraction"] = float(fraction)


def audit_values(values: dict[str, Any]) -> dict[str, Any]:
    """`values` for the audit log's JSON: amounts as exact strings."""
    return {k: str(v) if isinstance(v, Decimal) else v for k, v in values.items()}
