"""The pooling runner's routes (`--runner pooling --convert embed`): embeddings, score, rerank.

Vectors come from a pseudo-embedder, so only their size, norm and determinism mean anything;
scores are cosine similarities of those vectors, as vLLM scores with an embedding model.
"""

from __future__ import annotations

import math
import secrets
import time
from typing import Any

import orjson
from fastapi import APIRouter, Request
from starlette.responses import Response

from simulator.chat_template import render_chat
from simulator.errors import ApiError
from simulator.pooling_protocol import EmbeddingRequest, RerankRequest, ScoreRequest
from simulator.pseudo_embedder import as_base64, cosine
from simulator.state import SimulatorState
from simulator.usage import usage_body
from simulator.validation import parse_body, resolve_max_tokens
from simulator.validation_errors import validation_error

# The pooling request is a union of five models; a body with neither field fails each branch.
_MISSING_PROMPT_FIELDS = ("input", "messages", "messages", "messages", "input", "messages", "input")


def _json(data: object) -> Response:
    return Response(orjson.dumps(data), media_type="application/json")


def _check_model(state: SimulatorState, model: str | None) -> None:
    if model is not None and model != state.config.model_name:
        raise ApiError(f"The model `{model}` does not exist.", status=404)


def _precheck_prompt(data: dict[str, Any]) -> None:
    if "input" not in data and "messages" not in data:
        missing = [
            {"type": "missing", "loc": ("body", name), "msg": "Field required", "input": data}
            for name in _MISSING_PROMPT_FIELDS
        ]
        raise validation_error(missing)


def _token_ids(state: SimulatorState, text: str, special: bool = True) -> list[int]:
    ids = state.tokenizer.encode(text)
    return [state.tokenizer.bos_id, *ids] if special else ids


def _prompts(state: SimulatorState, body: EmbeddingRequest) -> list[list[int]]:
    """Token ids of every prompt, each checked against the context length."""
    if body.messages is not None:
        prompts = [state.tokenizer.encode(render_chat(body.messages, False))]
    elif isinstance(body.input, str):
        prompts = [_token_ids(state, body.input, body.add_special_tokens)]
    else:
        items: list[Any] = list(body.input or [])
        if items and all(isinstance(item, int) for item in items):
            prompts = [items]
        else:
            prompts = [
                item if isinstance(item, list) else _token_ids(state, item, body.add_special_tokens)
                for item in items
            ]
    if not prompts:
        raise ApiError("You must pass at least one prompt")
    for ids in prompts:
        resolve_max_tokens(None, len(ids), state.config.max_model_len)
    return prompts


async def _pool(request: Request, prefix: str, item_object: str, key: str) -> Response:
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        body = parse_body(await request.body(), EmbeddingRequest, _precheck_prompt)
        _check_model(state, body.model)
        if body.dimensions is not None:
            raise ApiError(
                f"Model '{state.config.model_name}' does not support Matryoshka embeddings; "
                f"dimensions must be unset (received dimensions={body.dimensions})."
            )
        if body.encoding_format not in ("float", "base64"):
            raise ApiError(f"encoding_format {body.encoding_format!r} is not simulated.")
        prompts = _prompts(state, body)
    except ApiError as error:
        return error.response()
    data = []
    for index, ids in enumerate(prompts):
        vector = state.embedder.embed(ids)
        shown: list[float] | str = as_base64(vector) if body.encoding_format == "base64" else vector
        data.append({"index": index, "object": item_object, key: shown})
    tokens = sum(len(ids) for ids in prompts)
    return _json(
        {
            "id": f"{prefix}-{secrets.token_hex(8)}",
            "object": "list",
            "created": int(time.time()),
            "model": state.config.model_name,
            "data": data,
            "usage": usage_body(tokens, 0, None, None),
        }
    )


async def create_embeddings(request: Request) -> Response:
    """POST /v1/embeddings."""
    return await _pool(request, "embd", "embedding", "embedding")


async def create_pooling(request: Request) -> Response:
    """POST /pooling: the pooler's raw output, here the same vectors."""
    return await _pool(request, "pooling", "pooling", "data")


def _scores(state: SimulatorState, left: list[str], right: list[str]) -> tuple[list[float], int]:
    """Cosine scores of the pairs (one left text pairs with every right one) and tokens used."""
    if not left or not right:
        raise ApiError("At least one text_pair element must be given")
    if len(left) == 1:
        left = left * len(right)
    if len(left) != len(right):
        raise ApiError("text_1 and text_2 must have the same length, or text_1 a single text")
    ids = {text: _token_ids(state, text) for text in [*left, *right]}
    for tokens in ids.values():
        resolve_max_tokens(None, len(tokens), state.config.max_model_len)
    vectors = {text: state.embedder.embed(tokens) for text, tokens in ids.items()}
    scores = [cosine(vectors[a], vectors[b]) for a, b in zip(left, right, strict=True)]
    return scores, sum(len(tokens) for tokens in ids.values())


async def create_score(request: Request) -> Response:
    """POST /score and /v1/score."""
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        body = parse_body(await request.body(), ScoreRequest)
        _check_model(state, body.model)
        scores, tokens = _scores(state, *body.sides())
    except ApiError as error:
        return error.response()
    return _json(
        {
            "id": f"score-{secrets.token_hex(8)}",
            "object": "list",
            "created": int(time.time()),
            "model": state.config.model_name,
            "data": [{"index": i, "object": "score", "score": s} for i, s in enumerate(scores)],
            "usage": usage_body(tokens, 0, None, None),
        }
    )


async def create_rerank(request: Request) -> Response:
    """POST /rerank, /v1/rerank and /v2/rerank: documents by relevance, the best `top_n`."""
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        body = parse_body(await request.body(), RerankRequest)
        _check_model(state, body.model)
        documents = body.document_list()
        scores, tokens = _scores(state, [body.query], documents)
    except ApiError as error:
        return error.response()
    ranked = sorted(range(len(documents)), key=lambda i: scores[i], reverse=True)
    if body.top_n:
        ranked = ranked[: body.top_n]
    results = [
        {
            "index": i,
            "document": {"text": documents[i], "multi_modal": None},
            "relevance_score": scores[i],
        }
        for i in ranked
    ]
    return _json(
        {
            "id": f"score-{secrets.token_hex(8)}",
            "model": state.config.model_name,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            "results": results,
        }
    )


def _label_probs(vector: list[float]) -> list[float]:
    """Two labels' probabilities: a softmax of the vector's first two components."""
    first, second = math.exp(vector[0]), math.exp(vector[1] if len(vector) > 1 else 0.0)
    return [first / (first + second), second / (first + second)]


async def create_classification(request: Request) -> Response:
    """POST /classify (`--convert classify`): vLLM's ClassificationResponse, two labels."""
    state: SimulatorState = request.app.state.sim
    state.stats.received += 1
    try:
        body = parse_body(await request.body(), EmbeddingRequest, _precheck_prompt)
        _check_model(state, body.model)
        prompts = _prompts(state, body)
    except ApiError as error:
        return error.response()
    data = []
    for index, ids in enumerate(prompts):
        probs = _label_probs(state.embedder.embed(ids))
        label = f"LABEL_{probs.index(max(probs))}"
        data.append({"index": index, "label": label, "probs": probs, "num_classes": 2})
    return _json(
        {
            "id": f"classify-{secrets.token_hex(8)}",
            "object": "list",
            "created": int(time.time()),
            "model": state.config.model_name,
            "data": data,
            "usage": usage_body(sum(len(ids) for ids in prompts), 0, None, None),
        }
    )


def build_pooling_router(convert: str = "embed") -> APIRouter:
    """Router with the pooling runner's endpoints; a classifier has /classify, no embeddings."""
    router = APIRouter()
    if convert == "classify":
        router.add_api_route("/classify", create_classification, methods=["POST"])
    else:
        router.add_api_route("/v1/embeddings", create_embeddings, methods=["POST"])
    router.add_api_route("/pooling", create_pooling, methods=["POST"])
    for path in ("/score", "/v1/score"):
        router.add_api_route(path, create_score, methods=["POST"])
    for path in ("/rerank", "/v1/rerank", "/v2/rerank"):
        router.add_api_route(path, create_rerank, methods=["POST"])
    return router
