"""The refusal a model outside a key's lists gets, from the proxy and from the eval routes."""

from __future__ import annotations

from gateway.errors import GatewayError
from gateway.governance.model_access import ModelAccess


def model_refusal(name: str, access: ModelAccess, configured: tuple[str, ...]) -> GatewayError:
    """The 404 for a model a key may not call: it reads as one that does not exist.

    The list names only the key's own models: nothing tells of other teams' models.
    """
    valid = ", ".join(access.visible(configured)) or "none for this key"
    return GatewayError(
        404, f"The model `{name[:200]}` does not exist. Valid models: {valid}.", "model"
    )


def require_model(name: str, access: ModelAccess, configured: tuple[str, ...]) -> None:
    """Refuse (404) a model outside the key's lists, as the proxy would refuse a call to it."""
    if not access.permits(name, configured):
        raise model_refusal(name, access, configured)
