"""The refusals of a key lookup, in OpenAI's shape with Retry-After."""

from __future__ import annotations

import math
from datetime import datetime

from gateway.errors import GatewayError


def _retry_headers(seconds: float) -> tuple[tuple[bytes, bytes], ...]:
    return ((b"retry-after", str(max(1, math.ceil(seconds))).encode()),)


class FailedLookupsThrottled(GatewayError):
    """429: this client address presented too many keys that do not exist."""

    def __init__(self, retry_after_s: float) -> None:
        super().__init__(
            429,
            "Too many requests with unknown or revoked API keys from this address; check the "
            f"key and try again in {max(1, math.ceil(retry_after_s))}s.",
        )
        self.headers = _retry_headers(retry_after_s)


class KeyLookupsBusy(GatewayError):
    """503: every thread for verifying uncached keys is busy and the queue is full."""

    def __init__(self) -> None:
        super().__init__(
            503, "The gateway is verifying too many unknown API keys right now; retry shortly."
        )
        self.headers = _retry_headers(1.0)


class KeyExpired(GatewayError):
    """401: the key was valid but its `expires_at` has passed."""

    def __init__(self, expired_at: datetime) -> None:
        super().__init__(
            401,
            f"This API key expired at {expired_at.isoformat(timespec='seconds')}; ask an admin "
            "for a new one (`plumbline keys create --team NAME --expires 90d`) and use it instead.",
        )
