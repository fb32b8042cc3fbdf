"""POST /v1/messages and /v1/messages/count_tokens, the Anthropic Messages API of vLLM 0.32.

vLLM runs a Messages request as a chat completion (its ids start `chatcmpl-`). Errors the
handler raises have Anthropic's shape; a body the schema rejects gets vLLM's usual OpenAI-shaped
400, because FastAPI answers it before the handler runs.
"""

from __future__ import annotations

import time

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from simulator.chat_template import render_chat
from simulator.choices import PromptInfo
from simulator.errors import ApiError, engine_dead_error
from simulator.messages_protocol import CountTokensRequest, MessagesRequest
from simulator.messages_stream import MessagesFormatter
from simulator.protocol import ChatCompletionRequest
from simulator.request_pipeline import build_job, response_id, response_options, sampling_settings
from simulator.state import SimulatorState
from simulator.streaming import GenerationResponse
from simulator.validation import check_sampling, parse_body, resolve_max_tokens
from simulator.validation_errors import SCHEMA_ERROR_TYPE


def anthropic_error(error: ApiError) -> Response:
    """`{"type": "error", "error": {"type", "message"}}`, as vLLM translates its errors."""
    if error.err_type == SCHEMA_ERROR_TYPE:
        return error.response()
    body = {"type": "error", "error": {"type": error.err_type, "message": error.message}}
    return Response(orjson.dumps(body), error.status, media_type="application/json")


async def create_message(request: Request) -> Response:
    """Validate like vLLM, then stream or answer the message."""
    received = time.perf_counter()
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        body = parse_body(await request.body(), MessagesRequest)
        return _prepare(state, request, body, received)
    except ApiError as error:
        state.stats.rejected += 1
        return anthropic_error(error)


def _prepare(
    state: SimulatorState, request: Request, body: MessagesRequest, received: float
) -> Response:
    config = state.config
    state.check_model(body.model)
    plan = state.fault_plan(request.headers)
    if plan.engine_dead:
        raise engine_dead_error()
    messages = body.chat_messages(body.system)
    prompt_text = render_chat(messages, True)
    prompt_ids = state.tokenizer.encode(prompt_text)
    max_tokens = resolve_max_tokens(body.max_tokens, len(prompt_ids), config.max_model_len)
    chat = ChatCompletionRequest(
        messages=messages,
        model=body.model,
        max_tokens=body.max_tokens,
        stop=body.stop_sequences,
        stream=body.stream,
        temperature=body.temperature,
        top_p=body.top_p,
        top_k=body.top_k,
        cache_salt=body.cache_salt,
    )
    check_sampling(chat, max_tokens)
    settings = sampling_settings(chat, max_tokens, None)
    rid = response_id("chatcmpl", request.headers, chat)
    options = response_options(state, chat, rid, None, received)
    prompt = PromptInfo(prompt_ids, prompt_text, [m.text() for m in messages])
    job = build_job(state, [prompt], settings, 1, options, body.cache_salt)
    return GenerationResponse(job, MessagesFormatter(job), state.engine, state.stats, plan)


async def count_tokens(request: Request) -> Response:
    """The prompt's token count, as the chat template renders it."""
    state: SimulatorState = request.app.state.sim
    try:
        body = parse_body(await request.body(), CountTokensRequest)
        state.check_model(body.model)
    except ApiError as error:
        return anthropic_error(error)
    prompt = render_chat(body.chat_messages(body.system), True)
    count = len(state.tokenizer.encode(prompt))
    data = {"input_tokens": count, "context_management": {"original_input_tokens": count}}
    return Response(orjson.dumps(data), media_type="application/json")


def build_messages_router() -> APIRouter:
    """Router with the Anthropic Messages endpoints."""
    router = APIRouter()
    router.add_api_route("/v1/messages", create_message, methods=["POST"])
    router.add_api_route("/v1/messages/count_tokens", count_tokens, methods=["POST"])
    return router
