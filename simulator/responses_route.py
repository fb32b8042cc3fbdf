"""POST /v1/responses, GET /v1/responses/{id} and POST /v1/responses/{id}/cancel (vLLM 0.32).

Without `enable_responses_store` (vLLM's VLLM_ENABLE_RESPONSES_API_STORE), `store` is ignored,
nothing can be retrieved or chained, and `background` is refused.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from simulator.chat_template import render_chat
from simulator.choices import PromptInfo, ResponseJob
from simulator.errors import ApiError, engine_dead_error
from simulator.faults import FaultPlan
from simulator.protocol import ChatCompletionRequest, ChatMessage
from simulator.request_pipeline import build_job, response_options, sampling_settings
from simulator.responses_background import replay, start_in_background
from simulator.responses_body import ResponseHead, response_head
from simulator.responses_protocol import ResponsesRequest, precheck_responses
from simulator.responses_store import StoredResponse
from simulator.responses_stream import ResponsesFormatter
from simulator.state import SimulatorState
from simulator.streaming import GenerationResponse
from simulator.validation import (
    check_logprob_counts,
    check_sampling,
    parse_body,
    resolve_max_tokens,
)

NO_BACKGROUND = (
    "This vLLM engine does not support `store=True` and therefore does not support the "
    "background mode. To enable these features, set the environment variable "
    "`VLLM_ENABLE_RESPONSES_API_STORE=1` when launching the vLLM server."
)


def _json(data: object, status: int = 200) -> Response:
    return Response(orjson.dumps(data), status, media_type="application/json")


def not_found(response_id: str) -> ApiError:
    """vLLM's answer for an id its store does not hold."""
    return ApiError(
        f"Response with id '{response_id}' not found.",
        status=404,
        err_type="invalid_request_error",
        param="response_id",
    )


async def create_response(request: Request) -> Response:
    """Validate like vLLM, then stream, answer or (in the background) queue the response."""
    received = time.perf_counter()
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        body = parse_body(await request.body(), ResponsesRequest, precheck_responses)
        return _prepare(state, request, body, received)
    except ApiError as error:
        state.stats.rejected += 1
        return error.response()


def _history(state: SimulatorState, body: ResponsesRequest) -> list[ChatMessage]:
    if body.previous_response_id is None:
        return []
    stored = state.responses.get(body.previous_response_id)
    if stored is None:
        raise not_found(body.previous_response_id)
    return stored.conversation()


def _as_chat(body: ResponsesRequest, messages: list[ChatMessage]) -> ChatCompletionRequest:
    """The request in chat terms, for the sampling checks and settings chat uses too."""
    return ChatCompletionRequest(
        messages=messages,
        model=body.model,
        logprobs=body.wants_logprobs(),
        top_logprobs=body.top_logprobs,
        seed=body.seed,
        stop=body.stop,
        stream=body.stream,
        temperature=body.temperature,
        top_p=body.top_p,
        top_k=body.top_k,
        presence_penalty=body.presence_penalty,
        frequency_penalty=body.frequency_penalty,
        repetition_penalty=body.repetition_penalty,
        stop_token_ids=body.stop_token_ids,
        include_stop_str_in_output=body.include_stop_str_in_output,
        ignore_eos=body.ignore_eos,
        priority=body.priority,
        cache_salt=body.cache_salt,
    )


def _prepare(
    state: SimulatorState, request: Request, body: ResponsesRequest, received: float
) -> Response:
    config = state.config
    model = state.check_model(body.model)
    keep = config.enable_responses_store
    if body.store and not keep and body.background:
        raise ApiError(NO_BACKGROUND, err_type="invalid_request_error", param="background")
    store = bool(body.store) and keep
    messages = _history(state, body) + body.input_messages()
    plan = state.fault_plan(request.headers)
    if plan.engine_dead:
        raise engine_dead_error()
    prompt_text = render_chat(messages, True)
    prompt_ids = state.tokenizer.encode(prompt_text)
    max_tokens = resolve_max_tokens(None, len(prompt_ids), config.max_model_len)
    if body.max_output_tokens is not None:
        max_tokens = min(max_tokens, body.max_output_tokens)
    chat = _as_chat(body, messages)
    check_sampling(chat, max_tokens)
    top = check_logprob_counts(
        (body.top_logprobs or 0) if body.wants_logprobs() else None,
        None,
        config.max_logprobs,
        state.tokenizer.vocab_size,
    )
    settings = sampling_settings(chat, max_tokens, top)
    rid = body.request_id or f"resp_{secrets.token_hex(8)}"
    options = response_options(state, chat, rid, top, received)
    prompt = PromptInfo(prompt_ids, prompt_text, [m.text() for m in messages])
    job = build_job(state, [prompt], settings, 1, options, body.cache_salt)
    head = response_head(body, settings, model, rid)
    return _answer(state, body, job, head, messages, plan, store)


def _answer(
    state: SimulatorState,
    body: ResponsesRequest,
    job: ResponseJob,
    head: ResponseHead,
    messages: list[ChatMessage],
    plan: FaultPlan,
    store: bool,
) -> Response:
    """In the background (store on): queued at once; else streamed or answered, kept if asked."""
    responses = state.responses
    rid = head.response_id
    if store and body.background:
        formatter = ResponsesFormatter(
            job, state.tokenizer, head, lambda final: responses.finish(rid, final)
        )
        stored = StoredResponse(head.response("queued", []), messages, job.handle)
        stored.events = [] if body.stream else None
        responses.put(rid, stored)
        start_in_background(state, stored, formatter)
        return replay(stored, 0) if body.stream else _json(stored.response)

    def keep(final: dict[str, Any]) -> None:
        responses.put(rid, StoredResponse(final, messages))

    formatter = ResponsesFormatter(job, state.tokenizer, head, keep if store else None)
    return GenerationResponse(job, formatter, state.engine, state.stats, plan)


async def retrieve_response(
    request: Request, response_id: str, starting_after: int | None = None, stream: bool = False
) -> Response:
    """A stored response as it stands now, or (`stream`) a streamed background one's events.

    vLLM 0.32 answers `stream` for any other stored response with a 200 event stream that its
    generator then breaks ("Unknown response_id"), so the connection drops mid-body; so here.
    """
    state: SimulatorState = request.app.state.sim
    stored = state.responses.get(response_id)
    if stored is None:
        return not_found(response_id).response()
    if not stream:
        return _json(stored.response)
    return replay(stored, 0 if starting_after is None else starting_after + 1)


async def cancel_response(request: Request, response_id: str) -> Response:
    """Cancel a background response still queued or running; a finished one is a 400."""
    state: SimulatorState = request.app.state.sim
    stored = state.responses.get(response_id)
    if stored is None:
        return not_found(response_id).response()
    if stored.response["status"] not in ("queued", "in_progress"):
        error = ApiError(
            "Cannot cancel a synchronous response.",
            err_type="invalid_request_error",
            param="response_id",
        )
        return error.response()
    stored.response = {**stored.response, "status": "cancelled"}
    if stored.handle is not None:
        state.engine.abort(stored.handle)
    return _json(stored.response)


def build_responses_router() -> APIRouter:
    """Router with the Responses API endpoints."""
    router = APIRouter()
    router.add_api_route("/v1/responses", create_response, methods=["POST"])
    router.add_api_route("/v1/responses/{response_id}", retrieve_response, methods=["GET"])
    router.add_api_route("/v1/responses/{response_id}/cancel", cancel_response, methods=["POST"])
    return router
