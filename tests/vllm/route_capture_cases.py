"""The requests captured from the real vLLM for the routes beyond chat (see route_captures.py).

`server` says which real server answers: `store` (generate runner with
VLLM_ENABLE_RESPONSES_API_STORE=1), `generate` (the default server) or `pooling`
(`--runner pooling --convert embed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

GREEDY = {"model": "tiny", "temperature": 0}
HELLO = "What is the capital of France?"
LONG_TEXT = "word " * 600
ANTHROPIC_HEADERS = {"x-api-key": "unused", "anthropic-version": "2023-06-01"}
WAV = "RIFF....WAVEfmt "


@dataclass(frozen=True)
class RouteCase:
    """One request to capture."""

    name: str
    server: str
    path: str
    json: dict[str, Any] | None = None
    method: str = "POST"
    content: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    files: dict[str, tuple[str, str, str]] | None = None
    data: dict[str, str] | None = None
    # A background response (by capture name) to wait for until it has finished.
    settle: str | None = None


def _responses(server: str) -> list[RouteCase]:
    base = {**GREEDY, "input": HELLO, "max_output_tokens": 6}
    prefix = "resp_" if server == "store" else "resp_nostore_"
    cases = [
        RouteCase(f"{prefix}plain", server, "/v1/responses", base),
        RouteCase(f"{prefix}stream", server, "/v1/responses", {**base, "stream": True}),
        RouteCase(f"{prefix}get_unknown", server, "/v1/responses/resp_nope", method="GET"),
        RouteCase(f"{prefix}cancel_unknown", server, "/v1/responses/resp_nope/cancel"),
        RouteCase(
            f"{prefix}get_plain", server, "/v1/responses/{id:" + prefix + "plain}", method="GET"
        ),
        RouteCase(f"{prefix}cancel_plain", server, "/v1/responses/{id:" + prefix + "plain}/cancel"),
        RouteCase(
            f"{prefix}previous_unknown",
            server,
            "/v1/responses",
            {**base, "previous_response_id": "resp_nope"},
        ),
        RouteCase(
            f"{prefix}background",
            server,
            "/v1/responses",
            {**base, "background": True, "max_output_tokens": 400, "ignore_eos": True},
        ),
    ]
    if server == "nostore":
        return cases
    return [
        *cases,
        # Cancelled at once, while its 400 tokens are being generated.
        RouteCase("resp_cancel_background", server, "/v1/responses/{id:resp_background}/cancel"),
        RouteCase(
            "resp_get_background", server, "/v1/responses/{id:resp_background}", method="GET"
        ),
        RouteCase("resp_background_short", server, "/v1/responses", {**base, "background": True}),
        RouteCase(
            "resp_get_background_done",
            server,
            "/v1/responses/{id:resp_background_short}",
            method="GET",
            settle="resp_background_short",
        ),
        RouteCase(
            "resp_cancel_background_done",
            server,
            "/v1/responses/{id:resp_background_short}/cancel",
        ),
        RouteCase(
            "resp_background_stream",
            server,
            "/v1/responses",
            {**base, "background": True, "stream": True},
        ),
        RouteCase(
            "resp_get_stream",
            server,
            "/v1/responses/{id:resp_background_stream}?stream=true",
            method="GET",
            settle="resp_background_stream",
        ),
        RouteCase(
            "resp_get_stream_after",
            server,
            "/v1/responses/{id:resp_background_stream}?stream=true&starting_after=3",
            method="GET",
        ),
        # `?stream=true` for a response that was not a streamed background one: vLLM 0.32 starts
        # a 200 event stream, then its generator raises and the connection drops mid-body, so
        # there is no record to keep (tests/simulator/test_responses_sdk.py pins the drop).
        RouteCase(
            "resp_logprobs",
            server,
            "/v1/responses",
            {**base, "top_logprobs": 2, "include": ["message.output_text.logprobs"]},
        ),
        RouteCase(
            "resp_stream_logprobs",
            server,
            "/v1/responses",
            {
                **base,
                "stream": True,
                "top_logprobs": 2,
                "include": ["message.output_text.logprobs"],
            },
        ),
        RouteCase(
            "resp_messages",
            server,
            "/v1/responses",
            {
                **base,
                "instructions": "Answer briefly.",
                "input": [{"role": "user", "content": HELLO}],
                "store": False,
            },
        ),
        RouteCase("resp_get_unstored", server, "/v1/responses/{id:resp_messages}", method="GET"),
        RouteCase(
            "resp_previous",
            server,
            "/v1/responses",
            {**base, "previous_response_id": "{id:resp_plain}"},
        ),
        RouteCase("resp_bad_model", server, "/v1/responses", {**base, "model": "nope"}),
        RouteCase("resp_too_long", server, "/v1/responses", {**base, "input": LONG_TEXT}),
        RouteCase("resp_no_input", server, "/v1/responses", {"model": "tiny"}),
        RouteCase("resp_top_logprobs_25", server, "/v1/responses", {**base, "top_logprobs": 25}),
        RouteCase(
            "resp_include_top_logprobs_25",
            server,
            "/v1/responses",
            {**base, "top_logprobs": 25, "include": ["message.output_text.logprobs"]},
        ),
        RouteCase(
            "resp_include_no_top",
            server,
            "/v1/responses",
            {**base, "include": ["message.output_text.logprobs"]},
        ),
        RouteCase("resp_bad_include", server, "/v1/responses", {**base, "include": ["nope"]}),
        RouteCase(
            "resp_badjson",
            server,
            "/v1/responses",
            content='{"model": "tiny", "input": ',
            headers={"content-type": "application/json"},
        ),
    ]


def _messages() -> list[RouteCase]:
    base = {
        **GREEDY,
        "max_tokens": 6,
        "messages": [{"role": "user", "content": HELLO}],
    }
    h = ANTHROPIC_HEADERS
    return [
        RouteCase("msg_plain", "generate", "/v1/messages", base, headers=h),
        RouteCase("msg_stream", "generate", "/v1/messages", {**base, "stream": True}, headers=h),
        RouteCase(
            "msg_system",
            "generate",
            "/v1/messages",
            {**base, "system": "Answer briefly.", "stop_sequences": ["\n"]},
            headers=h,
        ),
        RouteCase(
            "msg_count_tokens",
            "generate",
            "/v1/messages/count_tokens",
            {"model": "tiny", "messages": base["messages"], "system": "Answer briefly."},
            headers=h,
        ),
        RouteCase(
            "msg_bad_model", "generate", "/v1/messages", {**base, "model": "nope"}, headers=h
        ),
        RouteCase(
            "msg_stream_too_long",
            "generate",
            "/v1/messages",
            {**base, "stream": True, "messages": [{"role": "user", "content": LONG_TEXT}]},
            headers=h,
        ),
        RouteCase(
            "msg_count_tokens_no_messages",
            "generate",
            "/v1/messages/count_tokens",
            {"model": "tiny"},
            headers=h,
        ),
        RouteCase(
            "msg_stream_system",
            "generate",
            "/v1/messages",
            {**base, "stream": True, "system": [{"type": "text", "text": "Answer briefly."}]},
            headers=h,
        ),
        RouteCase(
            "msg_no_max_tokens",
            "generate",
            "/v1/messages",
            {"model": "tiny", "messages": base["messages"]},
            headers=h,
        ),
        RouteCase(
            "msg_too_long",
            "generate",
            "/v1/messages",
            {**base, "messages": [{"role": "user", "content": LONG_TEXT}]},
            headers=h,
        ),
        RouteCase(
            "msg_badjson",
            "generate",
            "/v1/messages",
            content='{"model": ',
            headers={**h, "content-type": "application/json"},
        ),
        RouteCase(
            "msg_count_tokens_bad_model",
            "generate",
            "/v1/messages/count_tokens",
            {"model": "nope", "messages": base["messages"]},
            headers=h,
        ),
    ]


_POOLING_BODIES: dict[str, tuple[str, dict[str, Any]]] = {
    "embeddings": ("/v1/embeddings", {"model": "tiny", "input": HELLO}),
    "pooling": ("/pooling", {"model": "tiny", "input": HELLO}),
    "score": ("/score", {"model": "tiny", "text_1": HELLO, "text_2": ["Paris", "Berlin"]}),
    "v1_score": ("/v1/score", {"model": "tiny", "text_1": HELLO, "text_2": "Paris"}),
    "rerank": ("/rerank", {"model": "tiny", "query": HELLO, "documents": ["Paris", "Berlin"]}),
    "v1_rerank": ("/v1/rerank", {"model": "tiny", "query": HELLO, "documents": ["Paris", "Rome"]}),
    "v2_rerank": (
        "/v2/rerank",
        {"model": "tiny", "query": HELLO, "documents": ["Paris", "Rome", "Oslo"], "top_n": 2},
    ),
    "classify": ("/classify", {"model": "tiny", "input": HELLO}),
}


def _pooling() -> list[RouteCase]:
    cases = [
        RouteCase(f"pool_{name}", "pooling", path, body)
        for name, (path, body) in _POOLING_BODIES.items()
    ]
    embed = {"model": "tiny", "input": [HELLO, "Paris"]}
    return [
        *cases,
        RouteCase("pool_embeddings_list", "pooling", "/v1/embeddings", embed),
        RouteCase(
            "pool_embeddings_base64",
            "pooling",
            "/v1/embeddings",
            {**embed, "encoding_format": "base64"},
        ),
        RouteCase(
            "pool_embeddings_tokens",
            "pooling",
            "/v1/embeddings",
            {"model": "tiny", "input": [1, 2, 3]},
        ),
        RouteCase(
            "pool_embeddings_dimensions",
            "pooling",
            "/v1/embeddings",
            {**embed, "dimensions": 16},
        ),
        RouteCase(
            "pool_embeddings_bad_model", "pooling", "/v1/embeddings", {**embed, "model": "nope"}
        ),
        RouteCase(
            "pool_embeddings_too_long",
            "pooling",
            "/v1/embeddings",
            {"model": "tiny", "input": LONG_TEXT},
        ),
        RouteCase("pool_embeddings_no_input", "pooling", "/v1/embeddings", {"model": "tiny"}),
        RouteCase(
            "pool_embeddings_messages",
            "pooling",
            "/v1/embeddings",
            {"model": "tiny", "messages": [{"role": "user", "content": HELLO}]},
        ),
        RouteCase(
            "pool_rerank_top_n",
            "pooling",
            "/rerank",
            {"model": "tiny", "query": HELLO, "documents": ["Paris", "Rome", "Oslo"], "top_n": 1},
        ),
        RouteCase(
            "pool_chat",
            "pooling",
            "/v1/chat/completions",
            {**GREEDY, "messages": [{"role": "user", "content": HELLO}], "max_tokens": 4},
        ),
        RouteCase("pool_completions", "pooling", "/v1/completions", {**GREEDY, "prompt": HELLO}),
        RouteCase("pool_responses", "pooling", "/v1/responses", {**GREEDY, "input": HELLO}),
        RouteCase(
            "pool_messages",
            "pooling",
            "/v1/messages",
            {**GREEDY, "max_tokens": 4, "messages": [{"role": "user", "content": HELLO}]},
        ),
        RouteCase(
            "pool_embeddings_bad_format",
            "pooling",
            "/v1/embeddings",
            {**embed, "encoding_format": "nope"},
        ),
        RouteCase(
            "pool_embeddings_empty", "pooling", "/v1/embeddings", {"model": "tiny", "input": []}
        ),
        RouteCase(
            "pool_score_queries",
            "pooling",
            "/score",
            {"model": "tiny", "queries": HELLO, "documents": ["Paris", "Rome"]},
        ),
        RouteCase(
            "pool_rerank_no_documents",
            "pooling",
            "/rerank",
            {"model": "tiny", "query": HELLO, "documents": []},
        ),
        RouteCase("pool_tokenize", "pooling", "/tokenize", {"model": "tiny", "prompt": HELLO}),
        RouteCase("pool_models", "pooling", "/v1/models", method="GET"),
    ]


def _generate_refusals() -> list[RouteCase]:
    refused = [
        RouteCase(f"gen_{name}", "generate", path, body)
        for name, (path, body) in _POOLING_BODIES.items()
    ]
    audio = {"file": ("hello.wav", WAV, "audio/wav")}
    return [
        *refused,
        RouteCase(
            "gen_transcriptions",
            "generate",
            "/v1/audio/transcriptions",
            files=audio,
            data={"model": "tiny"},
        ),
        RouteCase(
            "gen_translations",
            "generate",
            "/v1/audio/translations",
            files=audio,
            data={"model": "tiny"},
        ),
    ]


CASES: list[RouteCase] = [
    *_responses("store"),
    *_responses("nostore"),
    *_messages(),
    *_generate_refusals(),
    *_pooling(),
]
