"""What the gateway does with every route vLLM 0.32 serves (docs/routes.md gives the reasons).

Each vLLM path is metered (a call kind of the proxy), answered by the gateway itself, an
operator action (only through the admin API, audited), or refused with a 404 that says what to
use instead. Nothing is passed through: the gateway only ever sends a backend the path of a
call kind, or of an operator action an admin asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

METERED = "metered"
GATEWAY = "gateway"
OPERATOR = "operator"
REFUSED = "refused"


@dataclass(frozen=True)
class RouteDecision:
    """One vLLM path: what the gateway does with it, and what a client should use instead."""

    decision: str
    # For metered routes: the call kind; for refusals and operator routes: what to use.
    detail: str


def _refused(instead: str) -> RouteDecision:
    return RouteDecision(REFUSED, f"use {instead} instead")


def _operator(operation: str) -> RouteDecision:
    return RouteDecision(OPERATOR, operation)


_INFO = "the gateway's own `/health`, `/metrics` and `/v1/models`"
_INTERNAL = RouteDecision(
    REFUSED,
    "it acts on the engine's internals (workers, weights, parallelism, other requests) and is "
    "run against a backend on its own network, never through the gateway",
)
VLLM_ROUTES: dict[str, RouteDecision] = {
    # The proxy's call kinds (some built by other call kinds' modules).
    "/v1/chat/completions": RouteDecision(METERED, "ChatCompletions"),
    "/v1/completions": RouteDecision(METERED, "Completions"),
    "/v1/chat/completions/batch": RouteDecision(METERED, "BatchChatCompletions"),
    "/inference/v1/generate": RouteDecision(METERED, "TokensGenerate"),
    "/v1/chat/completions/render": RouteDecision(METERED, "Render"),
    "/v1/completions/render": RouteDecision(METERED, "Render"),
    "/v1/messages/render": RouteDecision(METERED, "Render"),
    "/v1/responses/render": RouteDecision(METERED, "Render"),
    "/v1/responses": RouteDecision(METERED, "Responses"),
    "/v1/responses/{response_id}": RouteDecision(METERED, "StoredResponses"),
    "/v1/responses/{response_id}/cancel": RouteDecision(METERED, "StoredResponses"),
    "/v1/messages": RouteDecision(METERED, "Messages"),
    "/v1/messages/count_tokens": RouteDecision(METERED, "CountTokens"),
    "/v1/embeddings": RouteDecision(METERED, "Embeddings"),
    "/pooling": RouteDecision(METERED, "Pooling"),
    "/classify": RouteDecision(METERED, "Classify"),
    "/score": RouteDecision(METERED, "Score"),
    "/v1/score": RouteDecision(METERED, "Score"),
    "/rerank": RouteDecision(METERED, "Rerank"),
    "/v1/rerank": RouteDecision(METERED, "Rerank"),
    "/v2/rerank": RouteDecision(METERED, "Rerank"),
    "/tokenize": RouteDecision(METERED, "Tokens"),
    "/detokenize": RouteDecision(METERED, "Tokens"),
    "/v1/audio/transcriptions": RouteDecision(METERED, "Transcriptions"),
    "/v1/audio/translations": RouteDecision(METERED, "Translations"),
    # The gateway's own answers.
    "/v1/models": RouteDecision(GATEWAY, "the gateway's configured models"),
    "/health": RouteDecision(GATEWAY, "the gateway's health"),
    "/metrics": RouteDecision(GATEWAY, "the gateway's Prometheus metrics"),
    # Operator actions: `POST /api/admin/backends/{model}/{operation}`, admin keys, audited.
    "/reset_prefix_cache": _operator("reset_prefix_cache"),
    "/reset_mm_cache": _operator("reset_mm_cache"),
    "/reset_encoder_cache": _operator("reset_encoder_cache"),
    "/sleep": _operator("sleep"),
    "/wake_up": _operator("wake_up"),
    "/is_sleeping": _operator("is_sleeping"),
    "/pause": _operator("pause"),
    "/resume": _operator("resume"),
    "/is_paused": _operator("is_paused"),
    "/start_profile": _operator("start_profile"),
    "/stop_profile": _operator("stop_profile"),
    "/v1/load_lora_adapter": _operator("load_lora_adapter"),
    "/v1/unload_lora_adapter": _operator("unload_lora_adapter"),
    # Refused, with what to use instead.
    "/v2/embed": _refused("`/v1/embeddings` (the OpenAI embeddings API)"),
    "/cohere/v2/chat": _refused("`/v1/chat/completions`"),
    "/invocations": _refused("the route itself, such as `/v1/chat/completions`"),
    "/generative_scoring": _refused("`/v1/completions` with `logprobs`"),
    "/v1/systemone": _refused("`/v1/chat/completions` with `structured_outputs`"),
    "/v1/chat/completions/derender": _refused("`/detokenize`"),
    "/v1/completions/derender": _refused("`/detokenize`"),
    "/v1/realtime": _refused("`/v1/audio/transcriptions` (the gateway proxies HTTP only)"),
    "/adapters": _refused("the admin API's `load_lora_adapter`"),
    "/adapters/{adapter_name}": _refused("the admin API's `unload_lora_adapter`"),
    "/ping": _refused("`/health`"),
    "/load": _refused(_INFO),
    "/version": _refused(_INFO),
    "/server_info": _refused(_INFO),
    "/tokenizer_info": _refused(_INFO),
    "/kv_event_sources": _refused(_INFO),
    "/get_world_size": _refused(_INFO),
    "/weight_info": _refused(_INFO),
    "/is_scaling_elastic_ep": _refused(_INFO),
    "/fault_tolerance/status": _refused(_INFO),
    "/abort_requests": _refused(
        "closing the connection (the gateway then aborts its own request upstream)"
    ),
    "/inference/v1/abort_requests": _refused(
        "closing the connection (the gateway then aborts its own request upstream)"
    ),
    "/collective_rpc": _INTERNAL,
    "/release_kv_cache_memory": _refused("the admin API's `sleep`"),
    "/scale_elastic_ep": _INTERNAL,
    "/fault_tolerance/apply": _INTERNAL,
    "/init_weight_transfer_engine": _INTERNAL,
    "/shutdown_weight_transfer_engine": _INTERNAL,
    "/start_weight_update": _INTERNAL,
    "/start_draft_weight_update": _INTERNAL,
    "/update_weights": _INTERNAL,
    "/finish_weight_update": _INTERNAL,
    "/update_weight_version": _INTERNAL,
    "/weight_checker": _INTERNAL,
}


def refusal_message(path: str, decision: RouteDecision) -> str:
    """The 404 message for a vLLM path the gateway does not forward."""
    if decision.decision == OPERATOR:
        return (
            f"`{path}` is an operator route of vLLM, never forwarded from a client. Admins: "
            f"`POST /api/admin/backends/{{model}}/{decision.detail}` (audited)."
        )
    return f"`{path}` is not served by this gateway: {decision.detail}."
