"""POST /v1/chat/completions."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from starlette.responses import Response

from simulator.chat_response import ChatFormatter
from simulator.chat_template import render_chat
from simulator.choices import PromptInfo
from simulator.errors import ApiError, engine_dead_error
from simulator.logprobs_format import prompt_logprobs_body
from simulator.protocol import ChatCompletionRequest
from simulator.request_pipeline import build_job, response_id, response_options, sampling_settings
from simulator.request_prechecks import precheck_chat
from simulator.state import SimulatorState
from simulator.streaming import GenerationResponse
from simulator.validation import (
    chat_max_tokens,
    check_logprob_counts,
    check_sampling,
    parse_body,
    resolve_max_tokens,
)


async def create_chat_completion(request: Request) -> Response:
    """Validate like vLLM, prepare the choices, hand the job to the engine."""
    received = time.perf_counter()
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        body = parse_body(await request.body(), ChatCompletionRequest, precheck_chat)
        return _prepare(state, request, body, received)
    except ApiError as error:
        state.stats.rejected += 1
        return error.response()


def _prepare(
    state: SimulatorState, request: Request, body: ChatCompletionRequest, received: float
) -> Response:
    config = state.config
    state.check_model(body.model)
    plan = state.fault_plan(request.headers)
    if plan.engine_dead:
        raise engine_dead_error()
    prompt_text = render_chat(body.messages, body.add_generation_prompt)
    prompt_ids = state.tokenizer.encode(prompt_text)
    max_tokens = resolve_max_tokens(chat_max_tokens(body), len(prompt_ids), config.max_model_len)
    check_sampling(body, max_tokens)
    # An echoed prompt gets prompt logprobs with top_logprobs alternatives unless asked otherwise.
    prompt_top = body.prompt_logprobs
    if prompt_top is None and body.echo:
        prompt_top = body.top_logprobs or 0
    top_logprobs = check_logprob_counts(
        (body.top_logprobs or 0) if body.logprobs else None,
        prompt_top,
        config.max_logprobs,
        state.tokenizer.vocab_size,
    )
    settings = sampling_settings(body, max_tokens, top_logprobs)
    rid = response_id("chatcmpl", request.headers, body)
    options = response_options(state, body, rid, top_logprobs, received)
    options.prompt_logprobs = prompt_top
    role = "assistant" if body.add_generation_prompt else body.messages[-1].role
    last = body.messages[-1] if body.messages else None
    if body.echo and last is not None and last.role == role:
        options.echo, options.echo_text = True, last.text()
    prompt = PromptInfo(prompt_ids, prompt_text, [m.text() for m in body.messages])
    if prompt_top is not None and not body.stream:
        prompt.logprobs_body = prompt_logprobs_body(
            state.tokenizer, state.pseudo_model, prompt_ids, prompt_top
        )
    job = build_job(state, [prompt], settings, body.n or 1, options, body.cache_salt)
    return GenerationResponse(
        job, ChatFormatter(job, state.tokenizer), state.engine, state.stats, plan
    )


def build_chat_router() -> APIRouter:
    """Router with the chat endpoint."""
    router = APIRouter()
    router.add_api_route("/v1/chat/completions", create_chat_completion, methods=["POST"])
    return router
