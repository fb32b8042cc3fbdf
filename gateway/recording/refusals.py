"""Tell a batch the database refused for its content from a database that is away."""

from __future__ import annotations

from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, StatementError

# SQLSTATE classes of a statement's values: data exception, constraint violation, and program
# limits (a JSON document nested past the server's stack depth, say).
CONTENT_SQLSTATE_CLASSES = ("22", "23", "54")


def refused_for_content(error: Exception) -> bool:
    """True when retrying the same rows can never succeed; False for outages and unknowns."""
    if isinstance(error, DataError | IntegrityError):
        return True
    if isinstance(error, DBAPIError):
        state = getattr(error.orig, "sqlstate", None)
        return isinstance(state, str) and state[:2] in CONTENT_SQLSTATE_CLASSES
    # Raised while the values were bound, before anything was sent: the values are at fault.
    return isinstance(error, StatementError)
