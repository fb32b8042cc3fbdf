"""How eval work started through the API reaches the gateway: URL, key and shared limits."""

from __future__ import annotations

from fastapi import Request

from evals.gateway_client import GatewayClient
from evals.service import ConcurrencyLimits
from gateway.api.deps import get_state
from gateway.auth.keys import bearer_token


def eval_client(request: Request) -> GatewayClient:
    """A client of this gateway (or the configured one) using the eval key, else the caller's.

    With no eval key configured, work runs under the caller's own key: its calls stay within
    the caller's team, which the route has already checked owns the suite.
    """
    settings = get_state(request).settings.eval
    base_url = settings.gateway_url or str(request.base_url).rstrip("/")
    key = settings.api_key.get_secret_value() if settings.api_key else None
    key = key or bearer_token(request.headers.get("authorization")) or ""
    return GatewayClient(base_url, key, timeout_s=settings.request_timeout_s)


def shared_limits(request: Request) -> ConcurrencyLimits:
    """The app's eval concurrency limits, shared by every run this gateway executes."""
    limits: ConcurrencyLimits | None = getattr(request.app.state, "eval_limits", None)
    if limits is None:
        settings = get_state(request).settings.eval
        limits = ConcurrencyLimits(settings.concurrency, settings.backend_concurrency)
        request.app.state.eval_limits = limits
    return limits
