"""Key scopes: what a key may do. inference, read and evals combine; an admin key holds all."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gateway.errors import GatewayError

if TYPE_CHECKING:
    from gateway.auth.keys import KeyInfo

INFERENCE = "inference"  # call models: every proxied route and /v1/models
READ = "read"  # the team's calls, usage, stability, alerts and dashboard JSON
EVALS = "evals"  # the team's suites, paraphrases, runs and their calls
ADMIN = "admin"  # /api/admin/*: held by admin keys only (`is_admin`), never granted as a scope
KEY_SCOPES: tuple[str, ...] = (INFERENCE, READ, EVALS)
ROUTE_SCOPES: tuple[str, ...] = (*KEY_SCOPES, ADMIN)
# Keys made before scopes existed (a NULL column) keep every power they had then.
LEGACY_SCOPES = frozenset(KEY_SCOPES)


def no_key_needed() -> None:
    """A route's declaration that it takes no key (health, metrics, static files, refusals)."""


def parse_scopes(stored: str | None) -> frozenset[str]:
    """A key's scopes from its `scopes` column; NULL (an older key) means all three."""
    if stored is None:
        return LEGACY_SCOPES
    return frozenset(name for name in stored.split(",") if name in KEY_SCOPES)


def stored_scopes(scopes: Iterable[str]) -> str:
    """The column value: the scopes in their canonical order, comma-separated."""
    chosen = set(scopes)
    return ",".join(name for name in KEY_SCOPES if name in chosen)


def checked_scopes(requested: Iterable[str] | None, *, admin: bool) -> frozenset[str] | None:
    """A new key's scopes, validated (400s); None for an admin key, which holds every scope."""
    choices = ", ".join(KEY_SCOPES)
    if requested is None:
        return None if admin else LEGACY_SCOPES
    names = list(requested)
    if admin:
        raise GatewayError(
            400,
            "An admin key holds every scope: leave out the scopes, or drop `admin` to make a "
            "key with only these.",
            "scopes",
        )
    if not names:
        raise GatewayError(400, f"A key needs at least one scope: choose from {choices}.", "scopes")
    for name in names:
        if name not in KEY_SCOPES:
            shown = name[:32]
            raise GatewayError(
                400,
                f"Unknown scope `{shown}`: choose from {choices} (admin keys: `admin`).",
                "scopes",
            )
    return frozenset(names)


def listed_scopes(stored: str | None, *, admin: bool) -> list[str]:
    """A key row's scopes as listings show them: `admin` alone for an admin key."""
    if admin:
        return [ADMIN]
    held = parse_scopes(stored)
    return [name for name in KEY_SCOPES if name in held]


def scope_names(info: KeyInfo) -> str:
    """The scopes a key holds, as shown in messages and listings."""
    if info.is_admin:
        return "admin (every scope)"
    return ", ".join(name for name in KEY_SCOPES if name in info.scopes) or "none"


def holds(info: KeyInfo, scope: str) -> bool:
    """Whether a key may use a route that needs `scope`."""
    if info.is_admin:
        return True
    return scope != ADMIN and scope in info.scopes


def check_scope(info: KeyInfo, scope: str) -> None:
    """A 403 naming the scope needed and the key's own, unless the key holds `scope`."""
    if holds(info, scope):
        return
    if scope == ADMIN:
        raise GatewayError(
            403, f"This route needs an admin key; this key has the scopes: {scope_names(info)}."
        )
    raise GatewayError(
        403,
        f"This route needs a key with the `{scope}` scope; this key has: {scope_names(info)}. "
        f"Ask an admin for one (`plumbline keys create --team {info.team_name} --scope {scope}`).",
    )
