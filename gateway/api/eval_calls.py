"""How eval work started through the API reaches the gateway: URL, key and shared limits."""

from __future__ import annotations

from fastapi import Request

from evals.gateway_client import GatewayClient
from evals.service import ConcurrencyLimits
from gateway.api.deps import get_state
from gateway.auth.keys import bearer_token
from gateway.errors import GatewayError

MISSING_GATEWAY_URL = (
    "Eval work started through the API calls the gateway at the setting eval.gateway_url "
    "(PLUMBLINE_EVAL__GATEWAY_URL), which this gateway does not have; an operator must set it "
    "to this gateway's own address (for example http://127.0.0.1:8080)."
)


def eval_client(request: Request) -> GatewayClient:
    """A client of the configured gateway using the eval key, else the caller's own key.

    The address is only ever the setting: the request's Host header (request.base_url) is the
    client's to choose, and the eval key is an admin key. With no eval key configured, work runs
    under the caller's own key: its calls stay within the caller's team, which the route has
    already checked owns the suite.
    """
    settings = get_state(request).settings.eval
    if not settings.gateway_url:
        raise GatewayError(503, MISSING_GATEWAY_URL, "eval.gateway_url")
    key = settings.api_key.get_secret_value() if settings.api_key else None
    key = key or bearer_token(request.headers.get("authorization")) or ""
    return GatewayClient(settings.gateway_url, key, timeout_s=settings.request_timeout_s)


def shared_limits(request: Request) -> ConcurrencyLimits:
    """The app's eval concurrency limits, shared by every run this gateway executes."""
    limits: ConcurrencyLimits | None = getattr(request.app.state, "eval_limits", None)
    if limits is None:
        settings = get_state(request).settings.eval
        limits = ConcurrencyLimits(settings.concurrency, settings.backend_concurrency)
        request.app.state.eval_limits = limits
    return limits
