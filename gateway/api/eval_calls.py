"""How eval work started through the API reaches the gateway: URL, key and shared limits."""

from __future__ import annotations

import os

from fastapi import Request

from evals.gateway_client import GatewayClient
from evals.run_trace import RunTracing, run_tracing_from_env
from evals.runs.limits import ConcurrencyLimits
from gateway.api.deps import get_state
from gateway.errors import GatewayError

MISSING_GATEWAY_URL = (
    "Eval work started through the API calls the gateway at the setting eval.gateway_url "
    "(PLUMBLINE_EVAL__GATEWAY_URL), which this gateway does not have; an operator must set it "
    "to this gateway's own address (for example http://127.0.0.1:8080)."
)
MISSING_EVAL_KEY = (
    "Eval work started through the API is sent with the eval key (PLUMBLINE_EVAL__API_KEY), "
    "which this gateway does not have: eval traffic is labelled `eval:<suite>`, a label only "
    "admin keys may set. An operator must set it to an admin key (`plumbline keys create "
    "--team ops --admin`)."
)


def eval_client(request: Request) -> GatewayClient:
    """A client of the configured gateway with the configured eval key; both are settings.

    The address is never the request's Host header (request.base_url is the client's to
    choose) and the key never the caller's: eval calls carry the `eval:` label, which only admin
    keys may set, and act for the suite's team, which the route has checked the caller owns.
    """
    settings = get_state(request).settings.eval
    if not settings.gateway_url:
        raise GatewayError(503, MISSING_GATEWAY_URL, "eval.gateway_url")
    if settings.api_key is None:
        raise GatewayError(503, MISSING_EVAL_KEY, "eval.api_key")
    key = settings.api_key.get_secret_value()
    return GatewayClient(settings.gateway_url, key, timeout_s=settings.request_timeout_s)


def shared_limits(request: Request) -> ConcurrencyLimits:
    """The app's eval concurrency limits, shared by every run this gateway executes."""
    limits: ConcurrencyLimits | None = getattr(request.app.state, "eval_limits", None)
    if limits is None:
        settings = get_state(request).settings.eval
        limits = ConcurrencyLimits(settings.concurrency, settings.backend_concurrency)
        request.app.state.eval_limits = limits
    return limits


def run_tracing(request: Request) -> RunTracing | None:
    """Where runs this gateway executes export their traces: its own OTEL_* variables.

    Read on first use (the gateway checked them at start-up), then kept on the app.
    """
    if not hasattr(request.app.state, "run_tracing"):
        request.app.state.run_tracing = run_tracing_from_env(os.environ, "plumbline-gateway")
    tracing: RunTracing | None = request.app.state.run_tracing
    return tracing
