"""Which keys may label their calls as eval or live-sample traffic, or link them to a run."""

from __future__ import annotations

from gateway.auth.keys import KeyInfo
from gateway.errors import GatewayError

# Calls so labelled are left out of the product's figures, never resampled, and read by
# stability reports as the gateway's own measurements: only its workers (admin keys) send them.
RESERVED_FEATURE_PREFIXES = ("eval:", "resample:")


def check_traffic_label(key: KeyInfo, feature: str | None) -> None:
    """Refuse (403) a product key's call whose X-Plumbline-Feature is reserved for admin keys."""
    if key.is_admin or feature is None:
        return
    reserved = next((p for p in RESERVED_FEATURE_PREFIXES if feature.startswith(p)), None)
    if reserved is not None:
        raise GatewayError(
            403,
            f"X-Plumbline-Feature values starting with `{reserved}` label the gateway's own eval "
            "and live-sample traffic and need an admin key; name your feature otherwise.",
            "X-Plumbline-Feature",
        )


def check_trace_link(key: KeyInfo, present: bool) -> None:
    """Refuse (403) X-Plumbline-Trace-Link from a product key: it ties a call to an eval run."""
    if present and not key.is_admin:
        raise GatewayError(
            403,
            "Only admin keys may set X-Plumbline-Trace-Link: it links the gateway's own eval "
            "calls to their run's trace; send your trace context as traceparent instead.",
            "X-Plumbline-Trace-Link",
        )
