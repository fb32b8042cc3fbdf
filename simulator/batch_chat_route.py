"""POST /v1/chat/completions/batch: one chat completion per conversation, never streamed."""

from __future__ import annotations

import time
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from simulator.chat_response import ChatFormatter
from simulator.chat_template import render_chat
from simulator.choices import PromptInfo
from simulator.errors import ApiError, engine_dead_error
from simulator.protocol import ChatCompletionRequest
from simulator.request_pipeline import build_job, response_id, response_options, sampling_settings
from simulator.state import SimulatorState
from simulator.streaming import GenerationResponse
from simulator.validation import (
    chat_max_tokens,
    check_logprob_counts,
    check_sampling,
    parse_body,
    resolve_max_tokens,
)


def _conversations(raw: bytes) -> tuple[dict[str, Any], list[Any]]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ApiError("Request body is not valid JSON") from None
    conversations = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(conversations, list) or not conversations:
        raise ApiError("`messages` must be a non-empty list of conversations", param="messages")
    return data, conversations


async def create_batch_chat_completion(request: Request) -> Response:
    """Each conversation becomes a prompt of one job; vLLM ignores `stream` here."""
    received = time.perf_counter()
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        data, conversations = _conversations(await request.body())
        bodies = [
            parse_body(
                orjson.dumps({**data, "messages": c, "stream": False}), ChatCompletionRequest
            )
            for c in conversations
        ]
        return _prepare(state, request, bodies, received)
    except ApiError as error:
        state.stats.rejected += 1
        return error.response()


def _prepare(
    state: SimulatorState, request: Request, bodies: list[ChatCompletionRequest], received: float
) -> Response:
    first = bodies[0]
    state.check_model(first.model)
    plan = state.fault_plan(request.headers)
    if plan.engine_dead:
        raise engine_dead_error()
    prompts = []
    for body in bodies:
        text = render_chat(body.messages, body.add_generation_prompt)
        prompts.append(
            PromptInfo(state.tokenizer.encode(text), text, [m.text() for m in body.messages])
        )
    limit = chat_max_tokens(first)
    max_tokens = min(
        resolve_max_tokens(limit, len(p.token_ids), state.config.max_model_len) for p in prompts
    )
    check_sampling(first, max_tokens)
    top = check_logprob_counts(
        (first.top_logprobs or 0) if first.logprobs else None,
        None,
        state.config.max_logprobs,
        state.tokenizer.vocab_size,
    )
    settings = sampling_settings(first, max_tokens, top)
    options = response_options(
        state, first, response_id("chatcmpl", request.headers, first), top, received
    )
    # vLLM's batch answer carries neither cached-token details nor per-request metrics.
    options.prompt_details = options.per_request_metrics = False
    job = build_job(state, prompts, settings, 1, options, first.cache_salt)
    return GenerationResponse(
        job, ChatFormatter(job, state.tokenizer), state.engine, state.stats, plan
    )


def build_batch_chat_router() -> APIRouter:
    """Router with the batch chat endpoint."""
    router = APIRouter()
    router.add_api_route(
        "/v1/chat/completions/batch", create_batch_chat_completion, methods=["POST"]
    )
    return router
