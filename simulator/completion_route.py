"""POST /v1/completions."""

from __future__ import annotations

import time
from collections.abc import Callable

from fastapi import APIRouter, Request
from starlette.responses import Response

from simulator.choices import PromptInfo, ResponseJob
from simulator.completion_response import CompletionFormatter
from simulator.errors import ApiError, engine_dead_error
from simulator.logprobs_format import prompt_logprobs_body, prompt_token_logprobs
from simulator.protocol import CompletionRequest
from simulator.request_pipeline import build_job, response_id, response_options, sampling_settings
from simulator.request_prechecks import precheck_completion
from simulator.state import SimulatorState
from simulator.streaming import Formatter, GenerationResponse
from simulator.tokenizer import Tokenizer
from simulator.validation import (
    check_logprob_counts,
    check_sampling,
    parse_body,
    resolve_max_tokens,
)


async def create_completion(request: Request) -> Response:
    """Validate like vLLM, prepare the choices, hand the job to the engine."""
    received = time.perf_counter()
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        body = parse_body(await request.body(), CompletionRequest, precheck_completion)
        return prepare_completion(state, request, body, received)
    except ApiError as error:
        state.stats.rejected += 1
        return error.response()


def _prompts(state: SimulatorState, body: CompletionRequest) -> list[PromptInfo]:
    raw = body.prompt
    items: list[str | list[int]]
    if isinstance(raw, str):
        items = [raw]
    elif raw and isinstance(raw[0], int):
        items = [[int(t) for t in raw if isinstance(t, int)]]
    else:
        items = list(raw or [])  # type: ignore[arg-type]
    if not items:
        raise ApiError("You must pass at least one prompt")
    tokenizer = state.tokenizer
    prompts = []
    for item in items:
        if isinstance(item, str):
            # Like a Llama tokenizer, a text prompt starts with BOS (so "" is a valid prompt).
            prompts.append(PromptInfo([tokenizer.bos_id, *tokenizer.encode(item)], item))
            continue
        if not item:
            raise ApiError("The decoder prompt cannot be empty")
        for token in item:
            if not 0 <= token < tokenizer.vocab_size:
                raise ApiError(f"Token id {token} is out of vocabulary")
        prompts.append(PromptInfo(list(item), tokenizer.decode(item)))
    return prompts


def prepare_completion(
    state: SimulatorState,
    request: Request,
    body: CompletionRequest,
    received: float,
    formatter: Callable[[ResponseJob, Tokenizer], Formatter] = CompletionFormatter,
    id_prefix: str = "cmpl",
) -> Response:
    config = state.config
    state.check_model(body.model)
    if body.suffix is not None:
        raise ApiError(
            "suffix is only supported for models with FIM completion rendering", param="suffix"
        )
    plan = state.fault_plan(request.headers)
    if plan.engine_dead:
        raise engine_dead_error()
    prompts = _prompts(state, body)
    max_tokens = min(
        resolve_max_tokens(body.max_tokens, len(p.token_ids), config.max_model_len) for p in prompts
    )
    check_sampling(body, max_tokens)
    prompt_top = body.prompt_logprobs
    if prompt_top is None and body.echo:
        prompt_top = body.logprobs
    logprobs = check_logprob_counts(
        body.logprobs, prompt_top, config.max_logprobs, state.tokenizer.vocab_size
    )
    settings = sampling_settings(body, max_tokens, logprobs)
    rid = response_id(id_prefix, request.headers, body)
    options = response_options(state, body, rid, logprobs, received)
    options.echo = bool(body.echo)
    options.prompt_logprobs = prompt_top
    model = state.pseudo_model
    for prompt in prompts:
        if body.echo and logprobs is not None:
            prompt.logprobs = prompt_token_logprobs(model, prompt.token_ids, logprobs)
        if prompt_top is not None:
            prompt.logprobs_body = prompt_logprobs_body(
                state.tokenizer, model, prompt.token_ids, prompt_top
            )
    job = build_job(state, prompts, settings, body.n or 1, options, body.cache_salt)
    return GenerationResponse(job, formatter(job, state.tokenizer), state.engine, state.stats, plan)


def build_completion_router() -> APIRouter:
    """Router with the completions endpoint."""
    router = APIRouter()
    router.add_api_route("/v1/completions", create_completion, methods=["POST"])
    return router
