"""The fixed error classes a delivery attempt stores: never text a channel sent back."""

from __future__ import annotations

UNKNOWN_CHANNEL = "no channel with this name in the suite or in the settings"
HTTP_STATUS = "http_status"
TIMEOUT = "timeout"
CONNECT_ERROR = "connect_error"
TRANSPORT_ERROR = "transport_error"
# Refused by the outbound guard before any connection (plumbline.outbound).
BLOCKED_ADDRESS = "blocked_address"
INVALID_URL = "invalid_url"
UNRESOLVABLE = "unresolvable"
WITHHELD = "error (detail withheld)"

ERROR_CLASSES = frozenset(
    {
        UNKNOWN_CHANNEL,
        HTTP_STATUS,
        TIMEOUT,
        CONNECT_ERROR,
        TRANSPORT_ERROR,
        BLOCKED_ADDRESS,
        INVALID_URL,
        UNRESOLVABLE,
    }
)
# A later attempt cannot succeed: the guard refused the URL itself or where it points.
PERMANENT = frozenset({UNKNOWN_CHANNEL, BLOCKED_ADDRESS, INVALID_URL})


def shown_error(stored: object) -> str | None:
    """A stored error as views show it: rows written before error classes show no detail."""
    if stored is None:
        return None
    return stored if isinstance(stored, str) and stored in ERROR_CLASSES else WITHHELD
