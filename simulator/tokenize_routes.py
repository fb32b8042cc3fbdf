"""POST /tokenize and /detokenize with the simulated model's tokenizer and chat template."""

from __future__ import annotations

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from simulator.chat_template import render_chat
from simulator.errors import ApiError
from simulator.protocol import DetokenizeRequest, TokenizeRequest
from simulator.state import SimulatorState
from simulator.validation import parse_body


def _json(data: object) -> Response:
    return Response(orjson.dumps(data), media_type="application/json")


async def tokenize(request: Request) -> Response:
    """Token ids (and GPT-2 style token strings on request) of a prompt or chat."""
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        body = parse_body(await request.body(), TokenizeRequest)
        state.check_model(body.model)
        if body.messages is not None:
            text = render_chat(body.messages, body.add_generation_prompt)
        elif body.prompt is not None:
            text = body.prompt
        else:
            raise ApiError("Either `prompt` or `messages` must be provided.", param="prompt")
    except ApiError as error:
        return error.response()
    tokenizer = state.tokenizer
    ids = tokenizer.encode(text)
    if body.messages is None and body.add_special_tokens:
        ids.insert(0, tokenizer.bos_id)  # a text prompt gets BOS, as in completions
    strs = [tokenizer.token_strs[i] for i in ids] if body.return_token_strs else None
    return _json(
        {
            "count": len(ids),
            "max_model_len": state.config.max_model_len,
            "tokens": ids,
            "token_strs": strs,
        }
    )


async def detokenize(request: Request) -> Response:
    """Text of token ids, special tokens included."""
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        body = parse_body(await request.body(), DetokenizeRequest)
        state.check_model(body.model)
        for token in body.tokens:
            if not 0 <= token < state.tokenizer.vocab_size:
                raise ApiError(f"Token id {token} is out of vocabulary", param="tokens")
    except ApiError as error:
        return error.response()
    return _json({"prompt": state.tokenizer.decode(body.tokens)})


def build_tokenize_router() -> APIRouter:
    """Router with the tokenizer endpoints."""
    router = APIRouter()
    router.add_api_route("/tokenize", tokenize, methods=["POST"])
    router.add_api_route("/detokenize", detokenize, methods=["POST"])
    return router
