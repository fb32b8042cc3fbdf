"""vLLM's scale-out routes: POST /inference/v1/generate and the render routes.

Generation runs as a completion of the given token ids; render applies the chat template (or
the completions tokenizer) and answers the generate request vLLM would build, with no engine
work. Without `enable_scale_out` every one answers vLLM's 403.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import orjson
from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import Response

from simulator.chat_template import render_chat
from simulator.completion_route import prepare_completion
from simulator.errors import ApiError
from simulator.protocol import ChatCompletionRequest, CompletionRequest
from simulator.state import SimulatorState
from simulator.tokens_response import TokensFormatter
from simulator.validation import parse_body

SCALE_OUT_OFF = (
    "Scale-out endpoints are disabled. Restart vllm serve with --enable-scale-out to enable them."
)
# The sampling parameters vLLM's renderer writes when the request sets none.
DEFAULT_SAMPLING: dict[str, Any] = {
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "repetition_penalty": 1.0,
    "temperature": 1.0,
    "top_p": 1.0,
    "min_p": 0.0,
    "stop": [],
    "stop_token_ids": [],
}
SAMPLING_TAIL: dict[str, Any] = {
    "output_kind": 2,
    "skip_clone": True,
    "bad_words": [],
    "skip_reading_prefix_cache": False,
}
# The sampling fields a completion request carries over from `sampling_params`.
CARRIED = ("max_tokens", "temperature", "top_p", "top_k", "seed", "n", "stop", "ignore_eos")


class GenerateRequest(BaseModel):
    """Body of POST /inference/v1/generate (the fields the simulator acts on)."""

    model_config = ConfigDict(extra="allow")

    request_id: str | None = None
    token_ids: list[int] = Field(min_length=1)
    sampling_params: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None
    stream: bool | None = False
    stream_options: dict[str, Any] | None = None


def _state(request: Request) -> SimulatorState:
    state: SimulatorState = request.app.state.sim
    return state


def _scale_out(state: SimulatorState) -> None:
    if not state.config.enable_scale_out:
        raise ApiError(SCALE_OUT_OFF, status=403)


async def generate(request: Request) -> Response:
    """Generate from token ids, as a completion of them."""
    received = time.perf_counter()
    state = _state(request)
    try:
        _scale_out(state)
        body = parse_body(await request.body(), GenerateRequest)
        sampling = {k: body.sampling_params[k] for k in CARRIED if k in body.sampling_params}
        completion = CompletionRequest.model_validate(
            {
                "model": body.model,
                "prompt": body.token_ids,
                "stream": body.stream,
                "stream_options": body.stream_options,
                "request_id": body.request_id or secrets.token_hex(8),
                **sampling,
            }
        )
        state.stats.received += 1
        return prepare_completion(
            state, request, completion, received, TokensFormatter, "generate-tokens"
        )
    except ApiError as error:
        return error.response()


def _rendered(
    prefix: str, token_ids: list[int], model: str, sampling: dict[str, Any]
) -> dict[str, Any]:
    return {
        "request_id": f"{prefix}-{secrets.token_hex(8)}",
        "token_ids": token_ids,
        "token_offsets": None,
        "features": None,
        "content_parts": None,
        "sampling_params": {**DEFAULT_SAMPLING, **sampling, **SAMPLING_TAIL},
        "model": model,
        "reasoning_ended": None,
        "reasoning_parser_kwargs": None,
        "return_token_ids": None,
        "output_mode": "tokens",
        "stream": False,
        "stream_options": None,
        "cache_salt": None,
        "priority": 0,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
    }


async def render_chat_request(request: Request) -> Response:
    """The generate request a chat completion would become."""
    state = _state(request)
    try:
        _scale_out(state)
        body = parse_body(await request.body(), ChatCompletionRequest)
        model = state.check_model(body.model)
        ids = state.tokenizer.encode(render_chat(body.messages, body.add_generation_prompt))
        limit = body.max_completion_tokens or body.max_tokens
        max_tokens = limit if limit is not None else state.config.max_model_len - len(ids)
        rendered = _rendered("chatcmpl", ids, model, {"max_tokens": max_tokens})
    except ApiError as error:
        return error.response()
    return Response(orjson.dumps(rendered), media_type="application/json")


async def render_completion_request(request: Request) -> Response:
    """The generate requests a completion would become (one per prompt)."""
    state = _state(request)
    try:
        _scale_out(state)
        body = parse_body(await request.body(), CompletionRequest)
        model = state.check_model(body.model)
        prompts = [body.prompt] if isinstance(body.prompt, str) else list(body.prompt or [])
        tokenizer = state.tokenizer
        rendered = [
            _rendered("cmpl", [tokenizer.bos_id, *tokenizer.encode(str(prompt))], model, {})
            for prompt in prompts
        ]
    except ApiError as error:
        return error.response()
    return Response(orjson.dumps(rendered), media_type="application/json")


def build_tokens_router() -> APIRouter:
    """Router with the generate route and the chat and completions render routes."""
    router = APIRouter()
    router.add_api_route("/inference/v1/generate", generate, methods=["POST"])
    router.add_api_route("/v1/chat/completions/render", render_chat_request, methods=["POST"])
    router.add_api_route("/v1/completions/render", render_completion_request, methods=["POST"])
    return router
