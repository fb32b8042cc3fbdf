"""Whether a suite may carry its own notification channels: checked when it is imported."""

from __future__ import annotations

from evals.alerting import NotifyChannel
from evals.errors import EvalServiceError
from evals.suite import Suite
from plumbline.outbound import OutboundGuard, OutboundRefused, parse_outbound_url
from plumbline.settings import NotifySettings

# Headers that decide where or how the request is framed are the client's (aiohttp's) to set.
RESERVED_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})
ALLOWED_HOSTS_SETTING = (
    "worker.notify.suite_channels.allowed_hosts "
    "(PLUMBLINE_WORKER__NOTIFY__SUITE_CHANNELS__ALLOWED_HOSTS)"
)


def check_suite_channels(suite: Suite, notify: NotifySettings, *, admin: bool) -> None:
    """Refuse inline channels with a bad URL, or on a host the operator did not allow."""
    guard = OutboundGuard(notify.suite_channels.allowed_hosts)
    for index, target in enumerate(suite.alert.notify):
        if not isinstance(target, NotifyChannel):
            continue
        param = f"alert.notify[{index}].url"
        try:
            host = parse_outbound_url(target.url).host
        except OutboundRefused as refused:
            raise EvalServiceError(f"Channel {target.name!r}: {refused.message}.", param) from None
        reserved = sorted(h for h in target.headers if h.strip().lower() in RESERVED_HEADERS)
        if reserved:
            raise EvalServiceError(
                f"Channel {target.name!r} may not set the header(s) {', '.join(reserved)}.",
                f"alert.notify[{index}].headers",
            )
        if not admin and not guard.is_allowlisted(host):
            raise EvalServiceError(
                f"Channel {target.name!r} is written in the suite with host {host!r}, which is "
                f"not on {ALLOWED_HOSTS_SETTING}. Name a channel defined in the settings "
                "instead, ask an operator to allow the host, or import the suite with an "
                "admin key.",
                param,
            )
