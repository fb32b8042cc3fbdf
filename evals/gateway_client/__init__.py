"""Async client of the Plumbline gateway for eval traffic (tagged, team-attributed)."""

from evals.gateway_client.client import GatewayClient
from evals.gateway_client.messages import (
    ChatRequest,
    Completion,
    GatewayCallError,
    eval_feature,
)

__all__ = ["ChatRequest", "Completion", "GatewayCallError", "GatewayClient", "eval_feature"]
